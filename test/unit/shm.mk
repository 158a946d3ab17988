# test/unit/check_shm: the shared-memory transport with forked ranks.
# It builds the transport's sources itself and fakes the few runtime pieces
# it needs (bmpi_world, PMIx put/get/fence, bmpi_am_deliver, bmpi_err_set),
# so it does not link libbmpi_core.la, whose real definitions would clash.
if HAVE_CHECK
check_PROGRAMS += test/unit/check_shm
TESTS += test/unit/check_shm
test_unit_check_shm_SOURCES = test/unit/check_shm.c \
	transport/shm/shm.h transport/shm/shm.c transport/shm/segment.c transport/shm/cma.c \
	transport/shm/heap.h transport/shm/heap.c transport/shm/peer_heap.c transport/env.c
test_unit_check_shm_CPPFLAGS = $(AM_CPPFLAGS) $(PMIX_CFLAGS)
test_unit_check_shm_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
test_unit_check_shm_LDADD = $(CHECK_LIBS)
endif
