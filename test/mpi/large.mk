# test/mpi/large_*: the large-count (_c) calls (docs/large-counts.md).
# large_count moves more than 2^31 one-byte elements at 2 ranks;
# large_twins checks every _c function against its int twin, small counts.

check_PROGRAMS += test/mpi/large_count
test_mpi_large_count_SOURCES = test/mpi/large_count.c test/mpi/testutil.h
test_mpi_large_count_LDADD = libbmpi.la
TESTS += test/mpi/large_count.sh
EXTRA_DIST += test/mpi/large_count.sh

check_PROGRAMS += test/mpi/large_twins
test_mpi_large_twins_SOURCES = test/mpi/large_twins.c test/mpi/testutil.h
test_mpi_large_twins_LDADD = libbmpi.la
TESTS += test/mpi/large_twins.sh
EXTRA_DIST += test/mpi/large_twins.sh
