# Simulated hosts for the tests and benchmarks that span hosts: network
# namespaces joined by a bridge (../shared/FIELD-NOTES.md, "Simulated
# hosts"). Sourced, POSIX sh; root only (the caller checks).
#
#   netns_setup PREFIX K
#       makes a head namespace ${PREFIX}$$h0 holding a bridge br0 with
#       192.0.2.254/24, and K host namespaces ${PREFIX}$$h1 .. hK, each with
#       eth0 192.0.2.I/24 (a veth pair whose other end vethI is a port of
#       the bridge); lo is up everywhere. Sets NETNS_HEAD (the head's name),
#       NETNS_HOSTS (the K host names, blank-separated) and NETNS_ALL (head
#       and hosts), and NETNS_PIDS_COMMAND, a shell command that prints the
#       pids of the processes in the host namespaces (for test/with-timeout
#       -p, which runs it in a shell of its own). Returns 77 after a line saying why when namespaces
#       cannot be made here, 1 on another failure.
#   netns_name I      the name of host I (0: the head)
#   netns_addr I      its address (192.0.2.I; the head's is .254)
#   netns_pids        the pids of every process in any of the namespaces
#   netns_teardown    kills (SIGKILL) whatever runs in the namespaces and
#                     deletes them; idempotent
#
# netns_setup installs a trap that runs on any exit of the shell (also on
# INT, TERM and HUP): first the command in NETNS_BEFORE_TEARDOWN, if set,
# while the hosts still exist (end a running job gently), then
# netns_teardown, then the command in NETNS_AFTER_TEARDOWN (remove files
# the processes held: shm segments, the work directory). A script that
# needs its own traps sets these instead.
#
# The namespaces share the file system, /dev/shm, the pid space and the
# hostname. test/netns/host-agent.sh runs a command on one of them under a
# hostname of its own, as a launch agent would on a real host.

NETNS_HEAD=
NETNS_HOSTS=
NETNS_ALL=
NETNS_PREFIX=
NETNS_PIDS_COMMAND=:

netns_name() {
    echo "$NETNS_PREFIX$$h$1"
}

netns_addr() {
    if [ "$1" -eq 0 ]; then echo 192.0.2.254; else echo "192.0.2.$1"; fi
}

netns_pids() {
    for ns in $NETNS_ALL; do
        ip netns pids "$ns" 2>/dev/null
    done
}

netns_teardown() {
    # Twice: a process may fork while the first round is being killed.
    for round in 1 2; do
        pids=$(netns_pids)
        [ -z "$pids" ] && break
        kill -9 $pids 2>/dev/null
        sleep 0.1
    done
    for ns in $NETNS_ALL; do
        ip netns del "$ns" 2>/dev/null
    done
    NETNS_ALL=
}

netns_on_exit() {
    trap '' EXIT INT TERM HUP
    [ -n "${NETNS_BEFORE_TEARDOWN:-}" ] && eval "$NETNS_BEFORE_TEARDOWN"
    netns_teardown
    [ -n "${NETNS_AFTER_TEARDOWN:-}" ] && eval "$NETNS_AFTER_TEARDOWN"
}

# One host namespace, number $1, joined to the bridge.
netns_add_host() {
    ns=$(netns_name "$1")
    ip netns add "$ns" || return 1
    NETNS_ALL="$NETNS_ALL $ns"
    ip -n "$ns" link set lo up &&
        ip -n "$ns" link add eth0 type veth peer name "veth$1" netns "$NETNS_HEAD" &&
        ip -n "$ns" addr add "$(netns_addr "$1")/24" dev eth0 &&
        ip -n "$ns" link set eth0 up &&
        ip -n "$NETNS_HEAD" link set "veth$1" master br0 &&
        ip -n "$NETNS_HEAD" link set "veth$1" up
}

netns_setup() {
    NETNS_PREFIX=$1
    [ "$2" -ge 1 ] && [ "$2" -le 253 ] || { echo "netns_setup: $2 hosts (1 to 253)"; return 1; }
    trap netns_on_exit EXIT
    trap 'exit 1' INT TERM HUP
    NETNS_HEAD=$(netns_name 0)
    if ! err=$(ip netns add "$NETNS_HEAD" 2>&1); then
        echo "cannot create a network namespace: $err"
        return 77
    fi
    NETNS_ALL=$NETNS_HEAD
    ip -n "$NETNS_HEAD" link set lo up &&
        ip -n "$NETNS_HEAD" link add br0 type bridge &&
        ip -n "$NETNS_HEAD" addr add "$(netns_addr 0)/24" dev br0 &&
        ip -n "$NETNS_HEAD" link set br0 up || { echo "netns_setup: the head namespace $NETNS_HEAD"; return 1; }
    NETNS_HOSTS=
    i=1
    while [ "$i" -le "$2" ]; do
        netns_add_host "$i" || { echo "netns_setup: host namespace $(netns_name "$i")"; return 1; }
        NETNS_HOSTS="${NETNS_HOSTS:+$NETNS_HOSTS }$(netns_name "$i")"
        i=$((i + 1))
    done
    NETNS_PIDS_COMMAND="for ns in $NETNS_HOSTS; do ip netns pids \$ns; done"
}
