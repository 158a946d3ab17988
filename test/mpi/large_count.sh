#!/bin/sh
# More than 2^31 one-byte elements through the _c calls, at 2 ranks only.
# About 2 GiB per rank to fault in and check: a longer timeout than the
# others, as test/mpi/p2p_huge.sh.
BMPI_TEST_TIMEOUT=${BMPI_TEST_TIMEOUT:-300}
export BMPI_TEST_TIMEOUT
exec "$top_srcdir/test/mpi/run-ranks" "$top_builddir/test/mpi/large_count" 2
