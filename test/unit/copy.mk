# test/unit/check_copy: the bulk copies of transport/copy.h (header only).
if HAVE_CHECK
check_PROGRAMS += test/unit/check_copy
TESTS += test/unit/check_copy
test_unit_check_copy_SOURCES = test/unit/check_copy.c test/unit/run_suite.h transport/copy.h
test_unit_check_copy_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
test_unit_check_copy_LDADD = $(CHECK_LIBS)
endif
