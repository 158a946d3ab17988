#!/bin/sh
# Random-size storms between all pairs; then again with single-copy CMA off
# (forces the pipelined RNDV fragments on shm).
"$top_srcdir/test/mpi/run-ranks" "$top_builddir/test/mpi/p2p_storm" 1 2 3 4 8 || exit 1
BMPI_SHM_CMA=0
export BMPI_SHM_CMA
exec "$top_srcdir/test/mpi/run-ranks" "$top_builddir/test/mpi/p2p_storm" 1 2 3 4 8
