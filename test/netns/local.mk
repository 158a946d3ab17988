# test/netns: bmpi across simulated hosts (network namespaces joined by a
# bridge, ranks started by Open MPI's mpirun through test/netns/agent.sh).
# Root only; skips (77) without ip, unshare, mpirun.openmpi or ofi.
TESTS += test/netns/multihost.sh
EXTRA_DIST += test/netns/multihost.sh test/netns/agent.sh
