#!/bin/sh
# Completion calls on invalid request handles report MPI_ERR_REQUEST.
exec "$top_srcdir/test/mpi/run-ranks" "$top_builddir/test/mpi/req_garbage" 1 2
