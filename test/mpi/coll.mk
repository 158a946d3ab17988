# test/mpi/coll_*: the collectives and reduction ops (issue 4). Each .sh
# runs its program at several rank counts once per algorithm, forcing it
# with the BMPI_COLL_* variables (docs/collectives.md).
check_PROGRAMS += test/mpi/coll_reduce
test_mpi_coll_reduce_SOURCES = test/mpi/coll_reduce.c test/mpi/coll_util.h
test_mpi_coll_reduce_LDADD = libbmpi.la
TESTS += test/mpi/coll_reduce.sh
EXTRA_DIST += test/mpi/coll_reduce.sh
