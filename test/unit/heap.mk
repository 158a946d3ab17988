# test/unit/check_heap: the shared heap and the mapping of a peer's heap.
# It links heap.c itself (so its malloc is the heap's) and fakes
# bmpi_err_set and bmpi_world, like check_shm (segment.c checks the owner
# of a peer's heap).
if HAVE_CHECK
check_PROGRAMS += test/unit/check_heap
TESTS += test/unit/check_heap
test_unit_check_heap_SOURCES = test/unit/check_heap.c transport/shm/heap.h \
	transport/shm/heap.c transport/shm/peer_heap.c transport/shm/cma.c transport/shm/segment.c \
	transport/env.c
test_unit_check_heap_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
test_unit_check_heap_LDADD = $(CHECK_LIBS)
endif
