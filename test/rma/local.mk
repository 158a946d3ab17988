# test/rma: one-sided communication (issue 32, MPI 4.1 chapter 12). Each
# program runs through test/mpi/run-ranks at 1 2 3 4 8 ranks over the
# default transports; rma_ofi_tcp.sh, rma_ofi_shm.sh and rma_verbs.sh run
# them again over ofi (tcp, shm providers) and the verbs emulation,
# rma_netns.sh across two simulated hosts (root only, test/netns/lib.sh).
# rma_util.h: the RMA helpers over test/mpi/testutil.h, plain MPI only, so that
# validate-with-mpich.sh builds the same sources against MPICH or Open MPI
# (not a test: run by hand; see test/rma/README).

check_PROGRAMS += test/rma/rma_matrix
test_rma_rma_matrix_SOURCES = test/rma/rma_matrix.c test/rma/rma_util.h test/mpi/testutil.h
test_rma_rma_matrix_LDADD = libbmpi.la

check_PROGRAMS += test/rma/rma_atomic
test_rma_rma_atomic_SOURCES = test/rma/rma_atomic.c test/rma/rma_util.h test/mpi/testutil.h
test_rma_rma_atomic_LDADD = libbmpi.la

check_PROGRAMS += test/rma/rma_pscw
test_rma_rma_pscw_SOURCES = test/rma/rma_pscw.c test/rma/rma_util.h test/mpi/testutil.h
test_rma_rma_pscw_LDADD = libbmpi.la

check_PROGRAMS += test/rma/rma_lock
test_rma_rma_lock_SOURCES = test/rma/rma_lock.c test/rma/rma_util.h test/mpi/testutil.h
test_rma_rma_lock_LDADD = libbmpi.la

check_PROGRAMS += test/rma/rma_shared
test_rma_rma_shared_SOURCES = test/rma/rma_shared.c test/rma/rma_util.h test/mpi/testutil.h
test_rma_rma_shared_LDADD = libbmpi.la

check_PROGRAMS += test/rma/rma_dynamic
test_rma_rma_dynamic_SOURCES = test/rma/rma_dynamic.c test/rma/rma_util.h test/mpi/testutil.h
test_rma_rma_dynamic_LDADD = libbmpi.la

check_PROGRAMS += test/rma/rma_info_attr
test_rma_rma_info_attr_SOURCES = test/rma/rma_info_attr.c test/rma/rma_util.h test/mpi/testutil.h
test_rma_rma_info_attr_LDADD = libbmpi.la

check_PROGRAMS += test/rma/rma_large
test_rma_rma_large_SOURCES = test/rma/rma_large.c test/rma/rma_util.h test/mpi/testutil.h
test_rma_rma_large_LDADD = libbmpi.la

check_PROGRAMS += test/rma/rma_misc
test_rma_rma_misc_SOURCES = test/rma/rma_misc.c test/rma/rma_util.h test/mpi/testutil.h
test_rma_rma_misc_LDADD = libbmpi.la

check_PROGRAMS += test/rma/rma_errors
test_rma_rma_errors_SOURCES = test/rma/rma_errors.c test/rma/rma_util.h test/mpi/testutil.h
test_rma_rma_errors_LDADD = libbmpi.la

check_PROGRAMS += test/rma/rma_acc_order
test_rma_rma_acc_order_SOURCES = test/rma/rma_acc_order.c test/mpi/testutil.h
test_rma_rma_acc_order_LDADD = libbmpi.la

check_PROGRAMS += test/rma/rma_batch
test_rma_rma_batch_SOURCES = test/rma/rma_batch.c test/rma/rma_util.h test/mpi/testutil.h
test_rma_rma_batch_LDADD = libbmpi.la

check_PROGRAMS += test/rma/rma_flush_seen
test_rma_rma_flush_seen_SOURCES = test/rma/rma_flush_seen.c test/rma/rma_util.h test/mpi/testutil.h
test_rma_rma_flush_seen_LDADD = libbmpi.la

check_PROGRAMS += test/rma/rma_pull
test_rma_rma_pull_SOURCES = test/rma/rma_pull.c test/rma/rma_util.h test/mpi/testutil.h
test_rma_rma_pull_LDADD = libbmpi.la

RMA_TESTS = test/rma/rma_matrix.sh test/rma/rma_atomic.sh test/rma/rma_pscw.sh test/rma/rma_lock.sh \
	test/rma/rma_shared.sh test/rma/rma_dynamic.sh test/rma/rma_info_attr.sh test/rma/rma_errors.sh test/rma/rma_large.sh \
	test/rma/rma_misc.sh test/rma/rma_acc_order.sh test/rma/rma_batch.sh test/rma/rma_flush_seen.sh test/rma/rma_pull.sh \
	test/rma/rma_ofi_tcp.sh test/rma/rma_ofi_shm.sh test/rma/rma_verbs.sh test/rma/rma_netns.sh
TESTS += $(RMA_TESTS)
EXTRA_DIST += $(RMA_TESTS) test/rma/lib.sh test/rma/README test/rma/validate-with-mpich.sh
