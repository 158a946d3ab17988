# test/unit/check_place: bmpirun's host lists and placement (launcher/hosts.c,
# launcher/placement.c), pure functions linked on their own.
if HAVE_CHECK
check_PROGRAMS += test/unit/check_place
TESTS += test/unit/check_place
test_unit_check_place_SOURCES = test/unit/check_place.c launcher/hosts.c launcher/hosts.h \
	launcher/placement.c launcher/placement.h
test_unit_check_place_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
test_unit_check_place_LDADD = $(CHECK_LIBS)
endif
