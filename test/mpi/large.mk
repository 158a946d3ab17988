# test/mpi/large_*: the large-count (_c) calls (docs/large-counts.md).
# large_count moves more than 2^31 one-byte elements at 2 ranks.

check_PROGRAMS += test/mpi/large_count
test_mpi_large_count_SOURCES = test/mpi/large_count.c test/mpi/testutil.h
test_mpi_large_count_LDADD = libbmpi.la
TESTS += test/mpi/large_count.sh
EXTRA_DIST += test/mpi/large_count.sh
