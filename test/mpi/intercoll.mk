# test/mpi/inter_coll: every collective on intercommunicators (issue 29),
# blocking, nonblocking and persistent, at 2 3 4 5 8 ranks.
check_PROGRAMS += test/mpi/inter_coll
test_mpi_inter_coll_SOURCES = test/mpi/inter_coll.c test/mpi/coll_util.h
test_mpi_inter_coll_LDADD = libbmpi.la
TESTS += test/mpi/inter_coll.sh
EXTRA_DIST += test/mpi/inter_coll.sh
