#!/bin/sh
# Buffered and freed sends still in flight at MPI_Finalize, with single copy
# for every rendezvous (BMPI_SHM_RGET_MIN=1); again with CMA off (the
# rendezvous then needs the sender's progress).
BMPI_TEST_TIMEOUT=${BMPI_TEST_TIMEOUT:-60}
export BMPI_TEST_TIMEOUT
BMPI_SHM_RGET_MIN=1 "$top_srcdir/test/mpi/run-ranks" "$top_builddir/test/mpi/p2p_finalize" 1 2 3 4 8 || exit 1
BMPI_SHM_CMA=0
export BMPI_SHM_CMA
exec "$top_srcdir/test/mpi/run-ranks" "$top_builddir/test/mpi/p2p_finalize" 1 2 3 4 8
