# Simulated hosts for the tests and benchmarks that span hosts: network
# namespaces joined by a bridge (../shared/FIELD-NOTES.md, "Simulated
# hosts"). Sourced, POSIX sh; root only (netns_require_tools checks).
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
#       the job whose pid is in NETNS_JOB_PID (netns_job_start sets it while
#       one runs) gets SIGTERM and a second, then the namespaces go, then
#       the shm segments of the recorded jobs and NETNS_TMP.
#
# What such a test checks first; each prints "SKIP: WHY" and exits 77 when
# the test cannot run here (they read top_srcdir and top_builddir, "."
# when unset, as the jobs below do):
#   netns_skip WHY...         that line, and exit 77
#   netns_require_tools [COMMAND...]
#                             root; ip, unshare, timeout and the COMMANDs
#   netns_require_ofi_build   bmpi built with the ofi transport (config.h,
#                             or tools/bmpi_info listing it)
#   netns_require_bmpirun     BMPIRUN (default launcher/bmpirun) built
#
# Jobs across the hosts, after netns_test_setup:
#   netns_job_start [-i FILE] COMMAND [ARGS...]
#       runs COMMAND under test/with-timeout (NETNS_TIMEOUT seconds: the
#       environment's BMPI_TEST_TIMEOUT or 120; the processes of the host
#       namespaces count as the command's) in the background, so that a
#       signal to the test runs its trap at once, not when the job has
#       ended; NETNS_JOB_PID is its pid. stdin is FILE (default
#       /dev/null); stdout and stderr are those of the call.
#   netns_job_wait            waits for that job; its exit status (124:
#                             timed out)
#   netns_run_job [-i FILE] COMMAND [ARGS...]
#                             both
#   netns_bmpirun_setup
#       for jobs that bmpirun starts through test/netns/host-agent.sh (after
#       netns_require_bmpirun): the job's temporary directories in NETNS_TMP,
#       NETNS_HEAD_TMPDIR (bmpirun's TMPDIR) and NETNS_HOST_TMPDIR
#       (exported: host-agent.sh gives host H the TMPDIR
#       NETNS_HOST_TMPDIR/H); NETNS_AGENT, a copy of host-agent.sh; and
#       NETNS_BMPIRUN, a command that runs `BMPIRUN --launch-agent
#       NETNS_AGENT ARGS...` in the head namespace with that TMPDIR (a
#       --launch-agent among the ARGS replaces the agent). Prints the hosts.
#   netns_host_list SLOTS     H1:SLOTS,H2:SLOTS,... over every host
#   netns_host_count          the number of hosts
#   netns_bmpirun_check SLOTS WHAT COMMAND [ARGS...]
#       NETNS_BMPIRUN --host "$(netns_host_list SLOTS)" runs COMMAND
#       through NETNS_TMP/rank, its output into NETNS_TMP/out; then "ok:
#       WHAT at S+S ranks across two hosts" (S+S+S ... across K hosts for
#       another K), or the last 30 lines of the output and "FAIL: WHAT at
#       S+S ranks across two hosts exited with STATUS", and exit 1.
#
# The functions keep their own variables under the prefix netns_.
#
# The namespaces share the file system, /dev/shm, the pid space and the
# hostname. test/netns/host-agent.sh runs a command on one of them under a
# hostname of its own, as a launch agent would on a real host.

NETNS_HEAD=
NETNS_HOSTS=
NETNS_ALL=
NETNS_PREFIX=
NETNS_PIDS_COMMAND=:
NETNS_TIMEOUT=${BMPI_TEST_TIMEOUT:-120}

netns_name() {
    echo "$NETNS_PREFIX$$h$1"
}

netns_addr() {
    if [ "$1" -eq 0 ]; then echo 192.0.2.254; else echo "192.0.2.$1"; fi
}

netns_pids() {
    for netns_ns in $NETNS_ALL; do
        ip netns pids "$netns_ns" 2>/dev/null
    done
}

netns_teardown() {
    # Twice: a process may fork while the first round is being killed.
    for netns_round in 1 2; do
        netns_left=$(netns_pids)
        [ -z "$netns_left" ] && break
        kill -9 $netns_left 2>/dev/null
        sleep 0.1
    done
    for netns_ns in $NETNS_ALL; do
        ip netns del "$netns_ns" 2>/dev/null
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
    netns_ns=$(netns_name "$1")
    ip netns add "$netns_ns" || return 1
    NETNS_ALL="$NETNS_ALL $netns_ns"
    ip -n "$netns_ns" link set lo up &&
        ip -n "$netns_ns" link add eth0 type veth peer name "veth$1" netns "$NETNS_HEAD" &&
        ip -n "$netns_ns" addr add "$(netns_addr "$1")/24" dev eth0 &&
        ip -n "$netns_ns" link set eth0 up &&
        ip -n "$NETNS_HEAD" link set "veth$1" master br0 &&
        ip -n "$NETNS_HEAD" link set "veth$1" up
}

netns_setup() {
    NETNS_PREFIX=$1
    [ "$2" -ge 1 ] && [ "$2" -le 253 ] || { echo "netns_setup: $2 hosts (1 to 253)"; return 1; }
    trap netns_on_exit EXIT
    trap 'exit 1' INT TERM HUP
    NETNS_HEAD=$(netns_name 0)
    if ! netns_err=$(ip netns add "$NETNS_HEAD" 2>&1); then
        echo "cannot create a network namespace: $netns_err"
        return 77
    fi
    NETNS_ALL=$NETNS_HEAD
    ip -n "$NETNS_HEAD" link set lo up &&
        ip -n "$NETNS_HEAD" link add br0 type bridge &&
        ip -n "$NETNS_HEAD" addr add "$(netns_addr 0)/24" dev br0 &&
        ip -n "$NETNS_HEAD" link set br0 up || { echo "netns_setup: the head namespace $NETNS_HEAD"; return 1; }
    NETNS_HOSTS=
    netns_i=1
    while [ "$netns_i" -le "$2" ]; do
        netns_add_host "$netns_i" || { echo "netns_setup: host namespace $(netns_name "$netns_i")"; return 1; }
        NETNS_HOSTS="${NETNS_HOSTS:+$NETNS_HOSTS }$(netns_name "$netns_i")"
        netns_i=$((netns_i + 1))
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
        for netns_n in $(sort -u "$NETNS_TMP/nspaces"); do
            rm -f /dev/shm/bmpi."$netns_n".* 2>/dev/null
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

netns_skip() {
    echo "SKIP: $*"
    exit 77
}

netns_require_tools() {
    [ "$(id -u)" = 0 ] || netns_skip "network namespaces need root"
    for netns_cmd in ip unshare timeout "$@"; do
        command -v "$netns_cmd" >/dev/null 2>&1 || netns_skip "$netns_cmd not found"
    done
}

netns_require_ofi_build() {
    grep -q '^#define BMPI_HAVE_OFI 1' "${top_builddir:-.}/config.h" 2>/dev/null ||
        "${top_builddir:-.}/tools/bmpi_info" 2>/dev/null | grep -q '^ *ofi ' ||
        netns_skip "bmpi was built without the ofi transport"
}

netns_require_bmpirun() {
    BMPIRUN=${BMPIRUN:-${top_builddir:-.}/launcher/bmpirun}
    [ -x "$BMPIRUN" ] || netns_skip "$BMPIRUN not built"
}

netns_job_start() {
    netns_input=
    if [ "$1" = -i ]; then
        netns_input=$2
        shift 2
    fi
    if [ -n "$netns_input" ]; then
        # with-timeout starts the command in the background, where the
        # shell gives it /dev/null as stdin: the input comes on fd 3
        "${top_srcdir:-.}/test/with-timeout" -p "$NETNS_PIDS_COMMAND" "$NETNS_TIMEOUT" \
            sh -c 'exec <&3 3<&-; exec "$@"' sh "$@" 3<"$netns_input" </dev/null &
    else
        "${top_srcdir:-.}/test/with-timeout" -p "$NETNS_PIDS_COMMAND" "$NETNS_TIMEOUT" "$@" </dev/null &
    fi
    NETNS_JOB_PID=$!
}

netns_job_wait() {
    wait "$NETNS_JOB_PID"
    netns_status=$?
    NETNS_JOB_PID=
    return $netns_status
}

netns_run_job() {
    netns_job_start "$@"
    netns_job_wait
}

netns_bmpirun_setup() {
    NETNS_HEAD_TMPDIR=$NETNS_TMP/jobtmp/head
    NETNS_HOST_TMPDIR=$NETNS_TMP/jobtmp
    export NETNS_HOST_TMPDIR
    NETNS_AGENT=$NETNS_TMP/agent
    NETNS_BMPIRUN=$NETNS_TMP/bmpirun
    mkdir -p "$NETNS_HEAD_TMPDIR" || exit 1
    cp "${top_srcdir:-.}/test/netns/host-agent.sh" "$NETNS_AGENT" && chmod +x "$NETNS_AGENT" || exit 1
    cat >"$NETNS_BMPIRUN" <<EOF
#!/bin/sh
exec ip netns exec "$NETNS_HEAD" env TMPDIR="$NETNS_HEAD_TMPDIR" "$BMPIRUN" --launch-agent "$NETNS_AGENT" "\$@"
EOF
    chmod +x "$NETNS_BMPIRUN" || exit 1
    echo "simulated hosts: $NETNS_HOSTS (192.0.2.1-$(netns_host_count)), bmpirun in $NETNS_HEAD"
}

netns_host_count() {
    netns_count=0
    for netns_host in $NETNS_HOSTS; do
        netns_count=$((netns_count + 1))
    done
    echo "$netns_count"
}

netns_host_list() {
    netns_list=
    for netns_host in $NETNS_HOSTS; do
        netns_list="${netns_list:+$netns_list,}$netns_host:$1"
    done
    echo "$netns_list"
}

netns_bmpirun_check() {
    netns_slots=$1 netns_what=$2
    shift 2
    netns_run_job "$NETNS_BMPIRUN" --host "$(netns_host_list "$netns_slots")" "$NETNS_TMP/rank" "$@" \
        >"$NETNS_TMP/out" 2>&1
    netns_status=$?
    netns_ranks=
    for netns_host in $NETNS_HOSTS; do
        netns_ranks="${netns_ranks:+$netns_ranks+}$netns_slots"
    done
    netns_across="$(netns_host_count) hosts"
    [ "$netns_across" = "2 hosts" ] && netns_across="two hosts"
    netns_what="$netns_what at $netns_ranks ranks across $netns_across"
    if [ $netns_status -ne 0 ]; then
        tail -n 30 "$NETNS_TMP/out"
        [ $netns_status -eq 124 ] && echo "(timed out after ${NETNS_TIMEOUT}s)"
        echo "FAIL: $netns_what exited with $netns_status"
        exit 1
    fi
    echo "ok: $netns_what"
}
