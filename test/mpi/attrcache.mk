# test/mpi: attribute caching at the edges of the standard's caching
# chapter (re-entrant callbacks, keyval lifetime, callback errors,
# MPI_COMM_SELF at MPI_Finalize); test/mpi/attr covers the common paths.

check_PROGRAMS += test/mpi/attr_cb
test_mpi_attr_cb_SOURCES = test/mpi/attr_cb.c test/mpi/testutil.h
test_mpi_attr_cb_LDADD = libbmpi.la
TESTS += test/mpi/attr_cb.sh
EXTRA_DIST += test/mpi/attr_cb.sh
