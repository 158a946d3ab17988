#!/bin/sh
# More than 2^31 one-byte elements through mpi_f08's large-count specifics,
# at 2 ranks only; about 2 GiB per rank, hence the longer timeout (as
# test/mpi/large_count.sh).
BMPI_TEST_TIMEOUT=${BMPI_TEST_TIMEOUT:-300}
export BMPI_TEST_TIMEOUT
exec "$top_srcdir/test/mpi/run-ranks" "$top_builddir/test/fortran/f08_large" 2
