# test/launcher: host lists, hostfiles, -N, --map-by and the Slurm
# allocation through the real bmpirun (issue 31), with a small MPI program
# that says where MPI thinks each rank runs.
check_PROGRAMS += test/launcher/where
test_launcher_where_LDADD = libbmpi.la
PLACE_TESTS = test/launcher/hosts.sh
TESTS += $(PLACE_TESTS)
EXTRA_DIST += $(PLACE_TESTS)
