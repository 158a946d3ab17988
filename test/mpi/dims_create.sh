#!/bin/sh
# MPI_Dims_create on large and awkward inputs (local: one rank is enough).
exec "$top_srcdir/test/mpi/run-ranks" "$top_builddir/test/mpi/dims_create" 1
