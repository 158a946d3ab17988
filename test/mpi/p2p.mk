# test/mpi/p2p_*: the multi-rank point-to-point battery (issue 3); each
# program runs through run-ranks at 1 2 3 4 8 ranks (p2p_huge at 2 only).
# testutil.h: checks, seeded sizes and patterns, a barrier from p2p alone.

check_PROGRAMS += test/mpi/p2p_bsend
test_mpi_p2p_bsend_SOURCES = test/mpi/p2p_bsend.c test/mpi/testutil.h
test_mpi_p2p_bsend_LDADD = libbmpi.la
TESTS += test/mpi/p2p_bsend.sh
EXTRA_DIST += test/mpi/p2p_bsend.sh

check_PROGRAMS += test/mpi/p2p_cancel
test_mpi_p2p_cancel_SOURCES = test/mpi/p2p_cancel.c test/mpi/testutil.h
test_mpi_p2p_cancel_LDADD = libbmpi.la
TESTS += test/mpi/p2p_cancel.sh
EXTRA_DIST += test/mpi/p2p_cancel.sh

check_PROGRAMS += test/mpi/p2p_complete
test_mpi_p2p_complete_SOURCES = test/mpi/p2p_complete.c test/mpi/testutil.h
test_mpi_p2p_complete_LDADD = libbmpi.la
TESTS += test/mpi/p2p_complete.sh
EXTRA_DIST += test/mpi/p2p_complete.sh

check_PROGRAMS += test/mpi/p2p_errors
test_mpi_p2p_errors_SOURCES = test/mpi/p2p_errors.c test/mpi/testutil.h
test_mpi_p2p_errors_LDADD = libbmpi.la
TESTS += test/mpi/p2p_errors.sh
EXTRA_DIST += test/mpi/p2p_errors.sh

check_PROGRAMS += test/mpi/p2p_fanin
test_mpi_p2p_fanin_SOURCES = test/mpi/p2p_fanin.c test/mpi/testutil.h
test_mpi_p2p_fanin_LDADD = libbmpi.la
TESTS += test/mpi/p2p_fanin.sh
EXTRA_DIST += test/mpi/p2p_fanin.sh

check_PROGRAMS += test/mpi/p2p_finalize
test_mpi_p2p_finalize_SOURCES = test/mpi/p2p_finalize.c test/mpi/testutil.h
test_mpi_p2p_finalize_LDADD = libbmpi.la
TESTS += test/mpi/p2p_finalize.sh
EXTRA_DIST += test/mpi/p2p_finalize.sh

check_PROGRAMS += test/mpi/p2p_huge
test_mpi_p2p_huge_SOURCES = test/mpi/p2p_huge.c test/mpi/testutil.h
test_mpi_p2p_huge_LDADD = libbmpi.la
TESTS += test/mpi/p2p_huge.sh
EXTRA_DIST += test/mpi/p2p_huge.sh

check_PROGRAMS += test/mpi/p2p_persist
test_mpi_p2p_persist_SOURCES = test/mpi/p2p_persist.c test/mpi/testutil.h
test_mpi_p2p_persist_LDADD = libbmpi.la
TESTS += test/mpi/p2p_persist.sh
EXTRA_DIST += test/mpi/p2p_persist.sh

check_PROGRAMS += test/mpi/p2p_probe
test_mpi_p2p_probe_SOURCES = test/mpi/p2p_probe.c test/mpi/testutil.h
test_mpi_p2p_probe_LDADD = libbmpi.la
TESTS += test/mpi/p2p_probe.sh
EXTRA_DIST += test/mpi/p2p_probe.sh

check_PROGRAMS += test/mpi/p2p_self
test_mpi_p2p_self_SOURCES = test/mpi/p2p_self.c test/mpi/testutil.h
test_mpi_p2p_self_LDADD = libbmpi.la
TESTS += test/mpi/p2p_self.sh
EXTRA_DIST += test/mpi/p2p_self.sh

check_PROGRAMS += test/mpi/p2p_ssend
test_mpi_p2p_ssend_SOURCES = test/mpi/p2p_ssend.c test/mpi/testutil.h
test_mpi_p2p_ssend_LDADD = libbmpi.la
TESTS += test/mpi/p2p_ssend.sh
EXTRA_DIST += test/mpi/p2p_ssend.sh

check_PROGRAMS += test/mpi/p2p_storm
test_mpi_p2p_storm_SOURCES = test/mpi/p2p_storm.c test/mpi/testutil.h
test_mpi_p2p_storm_LDADD = libbmpi.la
TESTS += test/mpi/p2p_storm.sh
EXTRA_DIST += test/mpi/p2p_storm.sh

check_PROGRAMS += test/mpi/p2p_truncate
test_mpi_p2p_truncate_SOURCES = test/mpi/p2p_truncate.c test/mpi/testutil.h
test_mpi_p2p_truncate_LDADD = libbmpi.la
TESTS += test/mpi/p2p_truncate.sh
EXTRA_DIST += test/mpi/p2p_truncate.sh

check_PROGRAMS += test/mpi/shm_heap
test_mpi_shm_heap_SOURCES = test/mpi/shm_heap.c test/mpi/testutil.h
test_mpi_shm_heap_LDADD = libbmpi.la
TESTS += test/mpi/shm_heap.sh
EXTRA_DIST += test/mpi/shm_heap.sh
