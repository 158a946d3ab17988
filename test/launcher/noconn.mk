# test/launcher: ranks that never connect to bmpirun (issue 31).
check_PROGRAMS += test/launcher/noconn
test_launcher_noconn_LDADD = libbmpi.la
NOCONN_TESTS = test/launcher/noconn.sh
TESTS += $(NOCONN_TESTS)
EXTRA_DIST += $(NOCONN_TESTS)
# mpirun and Hydra spellings that work on one host
FLAGS31_TESTS = test/launcher/flags31.sh
TESTS += $(FLAGS31_TESTS)
EXTRA_DIST += $(FLAGS31_TESTS)
