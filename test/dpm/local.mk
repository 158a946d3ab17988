# test/dpm: MPI's dynamic-process chapter (docs/dynamic.md): the name
# service, MPI_UNIVERSE_SIZE.
check_PROGRAMS += test/dpm/names test/dpm/universe
test_dpm_names_LDADD = libbmpi.la
test_dpm_universe_LDADD = libbmpi.la
TESTS += test/dpm/names.sh test/dpm/universe.sh
EXTRA_DIST += test/dpm/names.sh test/dpm/universe.sh
check_PROGRAMS += test/dpm/ports
test_dpm_ports_LDADD = libbmpi.la
TESTS += test/dpm/ports.sh
EXTRA_DIST += test/dpm/ports.sh
check_PROGRAMS += test/dpm/join
test_dpm_join_LDADD = libbmpi.la
TESTS += test/dpm/join.sh
EXTRA_DIST += test/dpm/join.sh
check_PROGRAMS += test/dpm/spawn
test_dpm_spawn_LDADD = libbmpi.la
TESTS += test/dpm/spawn.sh
EXTRA_DIST += test/dpm/spawn.sh
TESTS += test/dpm/ompi.sh
EXTRA_DIST += test/dpm/ompi.sh
