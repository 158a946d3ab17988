# test/unit/check_tree: the launch tree of a job across hosts (launcher/tree.c)
# over loopback, each vertex a forked process; iof.c for bmpi_say.
if HAVE_CHECK
check_PROGRAMS += test/unit/check_tree
TESTS += test/unit/check_tree
test_unit_check_tree_SOURCES = test/unit/check_tree.c launcher/tree.c launcher/tree.h \
	launcher/iof.c launcher/iof.h
test_unit_check_tree_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
test_unit_check_tree_LDADD = $(CHECK_LIBS)
endif
