#!/bin/sh
# Once as is, once with single-copy CMA off (shm's pipelined fragments).
"$top_srcdir/test/mpi/run-ranks" "$top_builddir/test/mpi/p2p_persist" 1 2 3 4 8 || exit 1
BMPI_SHM_CMA=0
export BMPI_SHM_CMA
exec "$top_srcdir/test/mpi/run-ranks" "$top_builddir/test/mpi/p2p_persist" 1 2 3 4 8
