# test/unit/check_bootstrap: the daemon's bootstrap text (launcher/bootstrap.c),
# written as the head does and read back as a daemon does, through a pipe.
# tree.c for the secret's hex, iof.c for bmpi_say, hosts.c and placement.c
# to free what the reader fills; none of them needs PMIx.
if HAVE_CHECK
check_PROGRAMS += test/unit/check_bootstrap
TESTS += test/unit/check_bootstrap
test_unit_check_bootstrap_SOURCES = test/unit/check_bootstrap.c launcher/bootstrap.c launcher/bootstrap.h \
	launcher/tree.c launcher/tree.h launcher/iof.c launcher/iof.h launcher/hosts.c launcher/hosts.h \
	launcher/placement.c launcher/placement.h launcher/job.h launcher/options.h
test_unit_check_bootstrap_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
test_unit_check_bootstrap_LDADD = $(CHECK_LIBS)
endif
