# test/unit/check_rma_atomic: the element-wise atomics of RMA accumulates
# (runtime/rma_atomic.c), single-process against op.c and as a storm of
# forked processes on one shared page; links the core library.
if HAVE_CHECK
check_PROGRAMS += test/unit/check_rma_atomic
TESTS += test/unit/check_rma_atomic
test_unit_check_rma_atomic_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(PMIX_CFLAGS)
test_unit_check_rma_atomic_LDADD = libbmpi_core.la $(CHECK_LIBS)
endif
