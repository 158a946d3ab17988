# test/launcher: bmpirun under faults and hostile neighbours (issue 29):
# a rank failing at every phase of a real MPI job, a client of another
# user at the PMIx port.
check_PROGRAMS += test/launcher/fault
test_launcher_fault_LDADD = libbmpi.la -lpthread
HARDENING_TESTS = test/launcher/fault.sh test/launcher/intruder.sh
TESTS += $(HARDENING_TESTS)
EXTRA_DIST += $(HARDENING_TESTS)
