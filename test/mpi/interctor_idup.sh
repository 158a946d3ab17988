#!/bin/sh
# MPI_Comm_idup that completes only if it is really nonblocking (a hang
# fails through run-ranks' timeout).
BMPI_TEST_TIMEOUT=${BMPI_TEST_TIMEOUT:-60} \
    "$top_srcdir/test/mpi/run-ranks" "$top_builddir/test/mpi/interctor_idup" 1 2 3 4 5 8
