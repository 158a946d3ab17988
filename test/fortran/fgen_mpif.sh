#!/bin/sh
# mpif.h (fixed form) and `use mpi`: the generated bindings at 1-4 ranks.
for prog in fgen_mpif fgen_mpi; do
    "$top_srcdir/test/mpi/run-ranks" "$top_builddir/test/fortran/$prog" 1 2 3 4 || exit 1
done
