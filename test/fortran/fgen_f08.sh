#!/bin/sh
# `use mpi_f08` at 1-4 ranks.
exec "$top_srcdir/test/mpi/run-ranks" "$top_builddir/test/fortran/fgen_f08" 1 2 3 4
