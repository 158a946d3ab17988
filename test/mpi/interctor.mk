# test/mpi: communicator construction on intercommunicators, nonblocking
# dups, and what MPI_Finalize frees (docs/communicators.md).

check_PROGRAMS += test/mpi/interctor_leftover
test_mpi_interctor_leftover_SOURCES = test/mpi/interctor_leftover.c test/mpi/coll_util.h
test_mpi_interctor_leftover_LDADD = libbmpi.la
TESTS += test/mpi/interctor_leftover.sh
EXTRA_DIST += test/mpi/interctor_leftover.sh

check_PROGRAMS += test/mpi/interctor_construct
test_mpi_interctor_construct_SOURCES = test/mpi/interctor_construct.c test/mpi/coll_util.h
test_mpi_interctor_construct_LDADD = libbmpi.la
TESTS += test/mpi/interctor_construct.sh
EXTRA_DIST += test/mpi/interctor_construct.sh

check_PROGRAMS += test/mpi/interctor_idup
test_mpi_interctor_idup_SOURCES = test/mpi/interctor_idup.c test/mpi/coll_util.h
test_mpi_interctor_idup_LDADD = libbmpi.la
TESTS += test/mpi/interctor_idup.sh
EXTRA_DIST += test/mpi/interctor_idup.sh
