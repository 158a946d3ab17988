#!/bin/sh
# A message above 2 GiB (count x 1 MiB type), at 2 ranks only. Faulting in
# 2 x 2 GiB of fresh memory is slow on a loaded machine: a longer timeout
# than the others.
BMPI_TEST_TIMEOUT=${BMPI_TEST_TIMEOUT:-300}
export BMPI_TEST_TIMEOUT
exec "$top_srcdir/test/mpi/run-ranks" "$top_builddir/test/mpi/p2p_huge" 2
