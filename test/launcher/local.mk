# test/launcher: bmpirun's own behaviour, as shell scripts run by make check
# (exit 0 pass, 1 fail, 77 skip), with a small PMIx client as the rank.
check_PROGRAMS += test/launcher/pmix_client
test_launcher_pmix_client_SOURCES = test/launcher/pmix_client.c
test_launcher_pmix_client_CFLAGS = $(AM_CFLAGS) $(PMIX_CFLAGS)
test_launcher_pmix_client_LDADD = $(PMIX_LIBS)
test_launcher_pmix_client_LDFLAGS = -Wl,-rpath,$(PMIX_LIBDIR)

LAUNCHER_TESTS = \
	test/launcher/ranks.sh \
	test/launcher/exchange.sh \
	test/launcher/exit_code.sh \
	test/launcher/kill_rank.sh \
	test/launcher/abort.sh \
	test/launcher/signals.sh \
	test/launcher/timeout.sh \
	test/launcher/env.sh \
	test/launcher/tag_output.sh \
	test/launcher/stdin.sh \
	test/launcher/output.sh \
	test/launcher/bad_input.sh \
	test/launcher/bind.sh \
	test/launcher/grandchild.sh \
	test/launcher/version_help.sh \
	test/launcher/with_timeout.sh
TESTS += $(LAUNCHER_TESTS)
EXTRA_DIST += $(LAUNCHER_TESTS) test/launcher/lib.sh
include test/launcher/hardening.mk
include test/launcher/place.mk
include test/launcher/noconn.mk
