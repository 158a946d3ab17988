#!/bin/sh
# Random-size storms between all pairs with single copy for every rendezvous
# (BMPI_SHM_RGET_MIN=1, whatever this machine's default); then again with
# CMA off (forces the pipelined RNDV fragments on shm).
BMPI_SHM_RGET_MIN=1 "$top_srcdir/test/mpi/run-ranks" "$top_builddir/test/mpi/p2p_storm" 1 2 3 4 8 || exit 1
BMPI_SHM_CMA=0
export BMPI_SHM_CMA
exec "$top_srcdir/test/mpi/run-ranks" "$top_builddir/test/mpi/p2p_storm" 1 2 3 4 8
