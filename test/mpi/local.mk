# test/mpi: MPI programs run through the real launcher (test/mpi/run-ranks
# runs one at several rank counts, each under a timeout).
check_PROGRAMS += test/mpi/hello
test_mpi_hello_LDADD = libbmpi.la
TESTS += test/mpi/hello.sh test/mpi/singleton.sh test/mpi/ompi.sh
EXTRA_DIST += test/mpi/run-ranks test/mpi/hello.sh test/mpi/singleton.sh test/mpi/ompi.sh
include test/mpi/p2p.mk
include test/mpi/coll.mk
include test/mpi/comm.mk
include test/mpi/interctor.mk
check_PROGRAMS += test/mpi/crash
test_mpi_crash_LDADD = libbmpi.la
TESTS += test/mpi/crash.sh
EXTRA_DIST += test/mpi/crash.sh
check_PROGRAMS += test/mpi/req_misc
test_mpi_req_misc_SOURCES = test/mpi/req_misc.c test/mpi/coll_util.h
test_mpi_req_misc_LDADD = libbmpi.la
TESTS += test/mpi/req_misc.sh
EXTRA_DIST += test/mpi/req_misc.sh
include test/mpi/attrcache.mk
include test/mpi/intercoll.mk
include test/mpi/p2pmisc.mk
include test/mpi/shmenv.mk
include test/mpi/bottom.mk
include test/mpi/heap.mk
include test/mpi/large.mk
# windows as objects: attributes, error handlers, names
check_PROGRAMS += test/mpi/win_attr
test_mpi_win_attr_SOURCES = test/mpi/win_attr.c test/mpi/testutil.h
test_mpi_win_attr_LDADD = libbmpi.la
TESTS += test/mpi/win_attr.sh
EXTRA_DIST += test/mpi/win_attr.sh
