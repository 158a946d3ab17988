# test/netns: bmpi across simulated hosts (network namespaces joined by a
# bridge, made by test/netns/lib.sh). multihost.sh starts the ranks with
# Open MPI's mpirun through test/netns/agent.sh; bmpirun.sh with bmpirun's
# own multi-host runner through test/netns/host-agent.sh.
# Root only; skip (77) without ip, unshare, mpirun.openmpi (multihost.sh)
# or ofi.
TESTS += test/netns/multihost.sh test/netns/bmpirun.sh
EXTRA_DIST += test/netns/multihost.sh test/netns/bmpirun.sh test/netns/agent.sh test/netns/lib.sh test/netns/host-agent.sh
