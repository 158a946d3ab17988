#!/bin/sh
# Truncation with single copy for every rendezvous (BMPI_SHM_RGET_MIN=1,
# whatever this machine's default), then with CMA off (pipelined fragments).
BMPI_SHM_RGET_MIN=1 "$top_srcdir/test/mpi/run-ranks" "$top_builddir/test/mpi/p2p_truncate" 1 2 3 4 8 || exit 1
BMPI_SHM_CMA=0
export BMPI_SHM_CMA
exec "$top_srcdir/test/mpi/run-ranks" "$top_builddir/test/mpi/p2p_truncate" 1 2 3 4 8
