# test/unit/check_shm_owner: shared-memory names end in a random tag, and a
# file another user owns or others may open is refused, naming its owner.
# Links segment.c alone with fake_world.h (check_shm uses it too).
if HAVE_CHECK
check_PROGRAMS += test/unit/check_shm_owner
TESTS += test/unit/check_shm_owner
test_unit_check_shm_owner_SOURCES = test/unit/check_shm_owner.c test/unit/run_suite.h \
	test/unit/fake_world.h transport/shm/shm.h \
	transport/shm/segment.c
test_unit_check_shm_owner_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
test_unit_check_shm_owner_LDADD = $(CHECK_LIBS)
endif
# test/unit/check_env: the strict parsing of BMPI_* variables
# (transport/env.c): switches, numbers, sizes, names, lists, devices.
if HAVE_CHECK
check_PROGRAMS += test/unit/check_env
TESTS += test/unit/check_env
test_unit_check_env_SOURCES = test/unit/check_env.c test/unit/run_suite.h \
	test/unit/fake_world.h transport/env.c
test_unit_check_env_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
test_unit_check_env_LDADD = $(CHECK_LIBS)
endif
