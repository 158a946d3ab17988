#!/bin/sh
exec "$top_srcdir/test/mpi/run-ranks" "$top_builddir/test/mpi/info_err" 1 2 3 4 8
