# test/unit/check_shm_owner: shared-memory names end in a random tag, and a
# file another user owns or others may open is refused, naming its owner.
# Links segment.c alone with fake_world.h (check_shm uses it too).
if HAVE_CHECK
check_PROGRAMS += test/unit/check_shm_owner
TESTS += test/unit/check_shm_owner
test_unit_check_shm_owner_SOURCES = test/unit/check_shm_owner.c test/unit/fake_world.h transport/shm/shm.h \
	transport/shm/segment.c
test_unit_check_shm_owner_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
test_unit_check_shm_owner_LDADD = $(CHECK_LIBS)
endif
