#!/bin/sh
# Generalized requests, Request_get_status_*, status accessors, Alloc_mem.
"$top_srcdir/test/mpi/run-ranks" "$top_builddir/test/mpi/req_misc" 1 2 3
