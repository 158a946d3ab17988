#!/bin/sh
# Reductions on MPI_CHAR.
exec "$top_srcdir/test/mpi/run-ranks" "$top_builddir/test/mpi/reduce_char" 1 2 3 4
