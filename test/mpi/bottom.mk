# test/mpi/bottom: MPI_BOTTOM with absolute-address datatypes in the
# collectives (shared-memory path and schedules), the neighbourhood
# collectives and point-to-point.
check_PROGRAMS += test/mpi/bottom
test_mpi_bottom_SOURCES = test/mpi/bottom.c test/mpi/coll_util.h
test_mpi_bottom_LDADD = libbmpi.la
TESTS += test/mpi/bottom.sh
EXTRA_DIST += test/mpi/bottom.sh
