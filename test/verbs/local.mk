# test/verbs: the verbs transport over libibverbs-emu, a test-only
# emulation of the verbs it calls (shared memory and CMA), loaded with
# LD_PRELOAD so that transport/verbs runs unchanged on machines without an
# RDMA device. The emulation is never installed nor linked into libbmpi.
if HAVE_VERBS
check_LTLIBRARIES += test/verbs/libibverbs-emu.la
test_verbs_libibverbs_emu_la_SOURCES = test/verbs/emu.c
test_verbs_libibverbs_emu_la_CPPFLAGS = $(VERBS_CFLAGS)
test_verbs_libibverbs_emu_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere
test_verbs_libibverbs_emu_la_LIBADD = -ldl -lpthread
endif
check_PROGRAMS += test/verbs/verbs_rdma
test_verbs_verbs_rdma_LDADD = libbmpi.la
TESTS += test/verbs/verbs_emu.sh
EXTRA_DIST += test/verbs/verbs_emu.sh
if HAVE_VERBS
# The transport alone, connected to itself, with the runtime faked (run by
# verbs_emu.sh under the emulation).
check_PROGRAMS += test/verbs/verbs_unit
test_verbs_verbs_unit_SOURCES = test/verbs/verbs_unit.c test/unit/fake_world.h \
	transport/verbs/verbs.h transport/verbs/verbs.c transport/verbs/verbs_qp.c \
	transport/verbs/verbs_mr.c transport/env.c
test_verbs_verbs_unit_CPPFLAGS = $(AM_CPPFLAGS) $(VERBS_CFLAGS)
test_verbs_verbs_unit_LDADD = $(VERBS_LIBS)
# Remote atomics from several processes at once on one process's memory
# (run by verbs_emu.sh under the emulation).
check_PROGRAMS += test/verbs/verbs_amo
test_verbs_verbs_amo_SOURCES = test/verbs/verbs_amo.c test/unit/fake_world.h \
	transport/verbs/verbs.h transport/verbs/verbs.c transport/verbs/verbs_qp.c \
	transport/verbs/verbs_mr.c transport/env.c
test_verbs_verbs_amo_CPPFLAGS = $(AM_CPPFLAGS) $(VERBS_CFLAGS)
test_verbs_verbs_amo_LDADD = $(VERBS_LIBS)
endif
