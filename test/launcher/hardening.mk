# test/launcher: bmpirun under faults and hostile neighbours (issue 29):
# a rank failing at every phase of a real MPI job, a client of another
# user at the PMIx port.
HARDENING_TESTS = test/launcher/intruder.sh
TESTS += $(HARDENING_TESTS)
EXTRA_DIST += $(HARDENING_TESTS)
