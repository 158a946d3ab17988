#!/bin/sh
# Launch agent for Open MPI's mpirun on simulated hosts (network
# namespaces), given as `--mca plm_rsh_agent agent.sh`: mpirun calls it as
# ssh, `agent.sh HOST COMMAND...`, with the daemon's command as one shell
# string. BMPI_NETNS_HOSTS maps each host name mpirun knows to a namespace
# and the hostname the host gets, as space-separated HOST=NETNS=HOSTNAME
# (test/netns/multihost.sh exports it). The command then runs in that
# namespace under a UTS namespace of its own with that hostname: the
# namespaces share one hostname otherwise, and Open MPI (session
# directories in the shared /tmp, vader) needs distinct ones.
host=$1
shift
for m in ${BMPI_NETNS_HOSTS:-}; do
    case $m in
    "$host="*)
        rest=${m#*=}
        ns=${rest%%=*}
        name=${rest#*=}
        exec ip netns exec "$ns" unshare --uts /bin/sh -c 'hostname "$0" && exec /bin/sh -c "$1"' "$name" "$*"
        ;;
    esac
done
echo "agent.sh: no simulated host '$host' in BMPI_NETNS_HOSTS='${BMPI_NETNS_HOSTS:-}'" >&2
exit 255
