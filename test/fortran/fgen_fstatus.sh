#!/bin/sh
# MPI_F_STATUS_IGNORE and friends, seen from C.
exec "$top_srcdir/test/mpi/run-ranks" "$top_builddir/test/fortran/fgen_fstatus" 1
