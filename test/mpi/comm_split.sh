#!/bin/sh
exec "$top_srcdir/test/mpi/run-ranks" "$top_builddir/test/mpi/comm_split" 1 2 3 4 8
