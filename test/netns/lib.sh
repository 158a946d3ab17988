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
#   netns_test_setup PREFIX K
#       what a test across simulated hosts does first: netns_setup PREFIX K
#       (SKIP and exit 77 when namespaces cannot be made here, FAIL and exit
#       1 on another failure), then a temporary directory NETNS_TMP holding
#       rank, a wrapper to start every rank through: it records the job's
#       PMIx namespace in NETNS_TMP/nspaces and runs its arguments. On exit,
#       the job whose pid is in NETNS_JOB_PID (set it while one runs) gets
#       SIGTERM and a second, then the namespaces go, then the shm segments
#       of the recorded jobs and NETNS_TMP.
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

# The teardown hooks of netns_test_setup.
netns_stop_job() {
    [ -n "${NETNS_JOB_PID:-}" ] || return 0
    kill -TERM "$NETNS_JOB_PID" 2>/dev/null
    sleep 1
}

# shm segments of the jobs (named /bmpi.<nspace>...), left by a rank that
# was killed; then the directory
netns_remove_files() {
    [ -n "${NETNS_TMP:-}" ] || return 0
    if [ -f "$NETNS_TMP/nspaces" ]; then
        for n in $(sort -u "$NETNS_TMP/nspaces"); do
            rm -f /dev/shm/bmpi."$n".* 2>/dev/null
        done
    fi
    rm -rf -- "$NETNS_TMP"
}

netns_test_setup() {
    NETNS_JOB_PID=
    NETNS_TMP=
    NETNS_BEFORE_TEARDOWN=netns_stop_job
    NETNS_AFTER_TEARDOWN=netns_remove_files
    netns_setup "$1" "$2"
    case $? in
    0) ;;
    77) echo "SKIP: network namespaces cannot be made here"; exit 77 ;;
    *) echo "FAIL: simulated hosts"; exit 1 ;;
    esac
    NETNS_TMP=$(mktemp -d "${TMPDIR:-/tmp}/bmpi-netns-$1.$$.XXXXXX") || { echo "FAIL: mktemp"; exit 1; }
    : >"$NETNS_TMP/nspaces"
    cat >"$NETNS_TMP/rank" <<EOF
#!/bin/sh
echo "\${PMIX_NAMESPACE:-}" >>"$NETNS_TMP/nspaces"
exec "\$@"
EOF
    chmod +x "$NETNS_TMP/rank"
}
