#!/bin/bash
# bmpi on a Slurm cluster of three nodes, simulated on this one machine
# (issue 31): a private munged, slurmctld in a head network namespace
# (192.0.2.254, on a bridge) and one slurmd per simulated host, each in a
# network namespace of its own (192.0.2.1-3 on a veth pair to the bridge)
# under a UTS namespace with its own hostname (node1-3). See
# ../shared/FIELD-NOTES.md, "Slurm on one machine" and "Simulated hosts".
# Checks, each job at 6 ranks on the 3 nodes:
#   (a) srun --mpi=pmix of hello with BMPI_VERBOSE=1: every rank once, on
#       3 distinct nodes; a rank reaches itself with self, a rank of its
#       node with shm, a rank of another node with ofi (the simulated nodes
#       share /dev/shm: shm must still decline them);
#   (b) the point-to-point and collective programs of test/mpi that
#       test/netns/multihost.sh runs, and a few more collectives;
#   (c) MPI_Abort in one rank ends the job on every node: a non-zero
#       status, and no process of the job nor /dev/shm segment is left;
#   (d) bmpirun inside an allocation, `salloc -N 3 -n 6 bmpirun -n 6 PROGRAM`
#       (bmpirun starts its per-node daemons with srun): hello as in (a),
#       the programs of (b) and the abort of (c). BMPI_TEST_SLURM_BMPIRUN=0
#       skips (d).
# Root only; skips (77) without ip, unshare, Slurm (srun, salloc, sinfo,
# slurmctld, slurmd), munged, Slurm's pmix plugin or bmpi's ofi transport.
# Everything it starts and creates (daemons, jobs, namespaces and what runs
# in them, bmpi shm segments of its jobs, its temporary directory) goes on
# any exit.
set -u
# The checks choose their transports themselves: a suite-wide
# BMPI_TRANSPORT or BMPI_OFI_PROVIDER must not decide them, nor an RDMA
# device emulated for the suite (make check-transports).
unset BMPI_TRANSPORT BMPI_OFI_PROVIDER LD_PRELOAD
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
timeout_s=${BMPI_TEST_TIMEOUT:-120}

skip() {
    echo "SKIP: $*"
    exit 77
}
[ "$(id -u)" = 0 ] || skip "a private Slurm in network namespaces needs root"
for c in ip unshare nsenter srun salloc sinfo scancel slurmctld slurmd munged timeout; do
    command -v "$c" >/dev/null 2>&1 ||
        skip "$c not found (apt-get install iproute2 slurm-wlm slurmctld slurmd slurm-client munge)"
done
if ! grep -q '^#define BMPI_HAVE_OFI 1' "$top_builddir/config.h" 2>/dev/null &&
    ! "$top_builddir/tools/bmpi_info" 2>/dev/null | grep -q '^ *ofi '; then
    skip "bmpi was built without the ofi transport"
fi
# absolute paths: the jobs run from wherever slurmstepd puts them
builddir=$(cd "$top_builddir" && pwd)
srcdir=$(cd "$top_srcdir" && pwd)
bin=$builddir/test/mpi
[ -x "$bin/hello" ] || skip "test programs not built (make check TESTS=)"
[ -x "$builddir/launcher/bmpirun" ] || skip "bmpirun not built"

# ---- state and cleanup ----------------------------------------------------
tag=bmpi$$
head=${tag}h0
nodes="1 2 3"
dir=
daemons= # slurmctld, slurmd's and munged: children of this shell
runpid=
# Job ids of this test's Slurm start at first_job, so that its jobs'
# PMIx namespaces (slurm.pmix.<job>.<step>), which name bmpi's segments,
# are told apart from those of another private Slurm (test/slurm/srun.sh)
# running at the same time: pids are unique, job ids stay below 2^26.
first_job=$((1000000 + ($$ % 1000000) * 64))
# /dev/shm segments of this test's jobs
our_segments() {
    ls /dev/shm 2>/dev/null | awk -F. -v lo="$first_job" -v hi=$((first_job + 64)) \
        '$1 == "bmpi" && $2 == "slurm" && $3 == "pmix" && $4 >= lo && $4 < hi'
}
cleanup() {
    trap '' EXIT INT TERM HUP
    # a job still running (interrupted): its timeout passes the signal on
    if [ -n "$runpid" ]; then
        kill -TERM "$runpid" 2>/dev/null
        sleep 1
    fi
    if [ -n "$dir" ] && ip netns list 2>/dev/null | grep -q "^$head\b"; then
        timeout 5 ip netns exec "$head" scancel --quiet --user=root >/dev/null 2>&1
    fi
    # SIGTERM and reaped here, so that slurmctld takes its slurmscriptd
    # along and no zombie is left to init
    for p in $daemons; do kill "$p" 2>/dev/null; done
    for _ in $(seq 50); do
        alive=
        for p in $daemons; do kill -0 "$p" 2>/dev/null && alive=1; done
        [ -z "$alive" ] && break
        sleep 0.1
    done
    for p in $daemons; do kill -9 "$p" 2>/dev/null; done
    wait 2>/dev/null
    # what is left in our namespaces: slurmstepd and ranks of a job that
    # was cut short
    for ns in "$head" $(for i in $nodes; do echo "${tag}h$i"; done); do
        ip netns list 2>/dev/null | grep -q "^$ns\b" || continue
        pids=$(ip netns pids "$ns" 2>/dev/null)
        [ -n "$pids" ] && kill -9 $pids 2>/dev/null
        ip netns del "$ns" 2>/dev/null
    done
    for s in $(our_segments); do rm -f "/dev/shm/$s"; done
    [ -n "$dir" ] && rm -rf -- "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

dir=$(mktemp -d "${TMPDIR:-/tmp}/bmpi-slurm3.XXXXXX") || { echo "FAIL: mktemp"; exit 1; }
out=$dir/out
: >"$out"
fail() {
    cat "$out"
    echo "FAIL: $*"
    exit 1
}

# ---- simulated hosts --------------------------------------------------------
ip netns add "$head" 2>"$out" || skip "cannot create a network namespace: $(cat "$out")"
ip -n "$head" link set lo up &&
    ip -n "$head" link add br0 type bridge &&
    ip -n "$head" addr add 192.0.2.254/24 dev br0 &&
    ip -n "$head" link set br0 up || fail "head namespace $head"
for i in $nodes; do
    ns=${tag}h$i
    ip netns add "$ns" &&
        ip -n "$ns" link set lo up &&
        ip -n "$ns" link add eth0 type veth peer name veth$i netns "$head" &&
        ip -n "$ns" addr add 192.0.2.$i/24 dev eth0 &&
        ip -n "$ns" link set eth0 up &&
        ip -n "$head" link set veth$i master br0 &&
        ip -n "$head" link set veth$i up || fail "host namespace $ns"
done
# start_daemon NETNS HOSTNAME LOG COMMAND...: COMMAND in the background in
# NETNS under a UTS namespace of its own named HOSTNAME; its pid (nsenter,
# unshare and sh exec it) joins $daemons. nsenter, not `ip netns exec`:
# that one mounts a sysfs of the namespace over /sys, without
# /sys/fs/cgroup, and slurmd will not start without its cgroup mounts.
start_daemon() {
    local ns=$1 name=$2 log=$3
    shift 3
    nsenter --net="/run/netns/$ns" unshare --uts /bin/sh -c 'hostname "$0" && exec "$@"' "$name" "$@" \
        >"$log" 2>&1 &
    daemons="$daemons $!"
}

# ---- munge --------------------------------------------------------------------
mkdir -p "$dir/munge" "$dir/state"
chmod 755 "$dir/munge"
dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 2>/dev/null
chmod 400 "$dir/munge/munge.key"
sock=$dir/munge/munge.socket
# a Unix socket: reachable from every network namespace
munged --foreground --socket="$sock" --key-file="$dir/munge/munge.key" \
    --log-file="$dir/munge/log" --pid-file="$dir/munge/pid" --seed-file="$dir/munge/seed" \
    --force >"$dir/munge/out" 2>&1 &
daemons="$daemons $!"
for _ in $(seq 50); do
    [ -S "$sock" ] && break
    sleep 0.1
done
[ -S "$sock" ] || fail "munged did not start: $(tail -3 "$dir/munge/log" "$dir/munge/out" 2>/dev/null)"

# ---- slurm ------------------------------------------------------------------
# The ports are private: the namespaces are new, nothing else listens there.
# %n is the node's name: each slurmd has its own spool directory (where
# Slurm's pmix plugin puts its server directory) and TmpFS (where it puts
# the client directory spmix_appdir_<job>.<step>), which on one machine
# would otherwise be the same directory for the three nodes of a step.
export SLURM_CONF=$dir/slurm.conf
for i in $nodes; do mkdir -p "$dir/spool/node$i" "$dir/tmpfs/node$i"; done
cat >"$SLURM_CONF" <<EOF
ClusterName=bmpi3
SlurmctldHost=bmpictl(192.0.2.254)
SlurmctldPort=6817
SlurmdPort=6818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$sock
CredType=cred/munge
FirstJobId=$first_job
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
TmpFS=$dir/tmpfs/%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.%n.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
NodeName=node1 NodeAddr=192.0.2.1 CPUs=2 State=UNKNOWN
NodeName=node2 NodeAddr=192.0.2.2 CPUs=2 State=UNKNOWN
NodeName=node3 NodeAddr=192.0.2.3 CPUs=2 State=UNKNOWN
PartitionName=test Nodes=node[1-3] Default=YES MaxTime=10 State=UP OverSubscribe=FORCE
EOF
start_daemon "$head" bmpictl "$dir/slurmctld.out" slurmctld -D -i -f "$SLURM_CONF"
ctld=$!
for i in $nodes; do
    start_daemon "${tag}h$i" "node$i" "$dir/slurmd.node$i.out" slurmd -D -N "node$i" -f "$SLURM_CONF"
done
# sinfo waits for a dead controller until its message timeout: bound each
# call, and stop at once if slurmctld has exited.
in_head() { ip netns exec "$head" "$@"; }
node_states() { in_head timeout 3 sinfo -h -N -o '%N %t' 2>/dev/null | sort -u; }
for _ in $(seq 150); do
    [ "$(node_states | grep -c ' idle$')" = 3 ] && break
    kill -0 "$ctld" 2>/dev/null ||
        fail "slurmctld exited: $(tail -n 3 "$dir/slurmctld.log" "$dir/slurmctld.out" 2>/dev/null)"
    sleep 0.2
done
states=$(node_states)
if [ "$(printf '%s\n' "$states" | grep -c ' idle$')" != 3 ]; then
    for i in $nodes; do
        printf '%s\n' "$states" | grep -qx "node$i idle" && continue
        echo "== node$i never came up idle (sinfo: $(printf '%s\n' "$states" | grep "^node$i " ||
            echo 'not listed')); its slurmd log:"
        tail -n 5 "$dir/slurmd.node$i.log" "$dir/slurmd.node$i.out" 2>/dev/null
    done
    echo "== slurmctld log:"
    tail -n 5 "$dir/slurmctld.log" 2>/dev/null
    fail "the 3 Slurm nodes did not all come up idle within 30 s"
fi
# (srun reads slurm.conf even for this)
in_head srun --mpi=list 2>&1 | grep -q pmix || skip "Slurm has no pmix plugin (srun --mpi=list)"
echo "Slurm cluster up: $(printf '%s\n' "$states" | tr '\n' ' ')(slurmctld in $head, slurmd's in ${tag}h1-3)"

# ---- running jobs -------------------------------------------------------------
# The ranks of this test's jobs, for the stacks of a run that times out:
# what runs in the host namespaces but Slurm's daemons (slurmstepd
# detaches from slurmd, and so from the run's process tree). Not slurmstepd
# itself: killed, it would leave its job completing, and the nodes busy.
step_procs="for n in $(for i in $nodes; do printf '%s ' "${tag}h$i"; done); do ip netns pids \$n; done |
    xargs -r ps -o pid= -o comm= -p | awk '\$2 !~ /^slurm/ { print \$1 }'"
# run COMMAND...: in the head namespace, with a timeout, output to $out.
# In the background, so that a signal to this script runs its trap now.
run() {
    "$srcdir/test/with-timeout" -p "$step_procs" "$timeout_s" \
        ip netns exec "$head" "$@" >"$out" 2>&1 </dev/null &
    runpid=$!
    wait "$runpid"
    rc=$?
    runpid=
    [ $rc -eq 124 ] && echo "(timed out after ${timeout_s}s)" >>"$out"
    return $rc
}
# Slurm's own limit on every job too (minutes), below the partition's
job_limit=$(((timeout_s + 59) / 60 + 1))
srun6() { run srun --mpi=pmix -N 3 -n 6 --time="$job_limit" "$@"; }

# check_hello WHAT: $out holds hello's output at 6 ranks with
# BMPI_VERBOSE=1. Every rank once, on 3 nodes (told apart by the hostnames
# this test gave them), and every pair on the transport its nodes call for.
check_hello() {
    map=$(sed -n 's/^hello from rank \([0-9]*\) of 6 on \(.*\)$/\1 \2/p' "$out" | sort -n)
    [ "$(printf '%s\n' "$map" | awk '{print $1}' | tr '\n' ' ')" = "0 1 2 3 4 5 " ] ||
        fail "$1: expected one hello line from each of the ranks 0-5, got: $(printf '%s\n' "$map" | tr '\n' ';')"
    [ "$(printf '%s\n' "$map" | awk '{print $2}' | sort -u | wc -l)" -eq 3 ] ||
        fail "$1: the 6 ranks are not on 3 nodes: $(printf '%s\n' "$map" | tr '\n' ';')"
    bad=$(printf '%s\n' "$map" | awk -v out="$out" '
        { host[$1] = $2 }
        END {
            while ((getline line < out) > 0) {
                if (line !~ /^bmpi: rank [0-9]+ -> rank [0-9]+: /) continue
                split(line, w, /[ :]+/)   # bmpi rank A -> rank B T
                a = w[3]; b = w[6]; t = w[7]
                n++
                want = a == b ? "self" : host[a] == host[b] ? "shm" : "ofi"
                if (t != want) printf "rank %s (%s) -> rank %s (%s): %s, expected %s\n", a, host[a], b, host[b], t, want
            }
            if (n != 36) printf "%d transport lines instead of 36\n", n
        }')
    [ -z "$bad" ] || fail "$1: transport selection:
$bad"
    echo "ok: $1: ranks on $(printf '%s\n' "$map" | awk '{print $2}' | sort -u | tr '\n' ' ')self/shm within a node, ofi across"
}

# ---- (a) hello ---------------------------------------------------------------
srun6 --export=ALL,BMPI_VERBOSE=1 "$bin/hello" || fail "(a) hello under srun -N 3 -n 6 exited with $rc"
check_hello "(a) srun --mpi=pmix -N 3 -n 6 hello"

# ---- (b) the batteries ----------------------------------------------------------
# those of multihost.sh, then collectives whose node-aware paths (shm
# within a node) now meet nodes of two ranks each
battery="p2p_storm p2p_fanin p2p_truncate p2p_probe p2p_complete p2p_ssend
coll_reduce coll_data coll_ops coll_scan coll_storm coll_shm"
for p in $battery; do
    [ -x "$bin/$p" ] || fail "(b) $p not built"
    srun6 "$bin/$p" || fail "(b) $p under srun -N 3 -n 6 exited with $rc"
    grep -q '^PASS' "$out" || fail "(b) $p under srun -N 3 -n 6 printed no PASS"
    echo "ok: (b) $p at 6 ranks on 3 nodes"
done

# ---- (c) MPI_Abort -------------------------------------------------------------
# crash: rank 1 (node1) calls MPI_Abort(7) while every rank passes a token
# around the ring, so the ranks of node2 and node3 are busy in MPI calls.
marker=bmpi-slurm3-crash-$$
srun6 "$bin/crash" abort "$marker"
[ "$rc" -ne 0 ] || fail "(c) MPI_Abort under srun -N 3 -n 6: exit status 0"
[ "$rc" -ne 124 ] || fail "(c) MPI_Abort under srun -N 3 -n 6: the job did not end"
# what may still run in a host namespace: its slurmd; a step's slurmstepd
# and ranks get a few seconds to go
leftovers() {
    for i in $nodes; do
        for p in $(ip netns pids "${tag}h$i" 2>/dev/null); do
            case " $daemons " in *" $p "*) continue ;; esac
            echo "node$i: pid $p $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)"
        done
    done
}
for _ in $(seq 50); do
    [ -z "$(leftovers)" ] && break
    sleep 0.2
done
left=$(leftovers)
[ -z "$left" ] || fail "(c) processes left in the host namespaces 10 s after MPI_Abort:
$left"
left=$(pgrep -af "$marker")
[ -z "$left" ] || fail "(c) ranks left after MPI_Abort: $left"
segs=$(our_segments)
[ -z "$segs" ] || fail "(c) /dev/shm segments left after MPI_Abort: $segs"
echo "ok: (c) MPI_Abort in rank 1: exit $rc, no process nor segment left on any node"

# ---- (d) bmpirun inside an allocation ----------------------------------------
if [ "${BMPI_TEST_SLURM_BMPIRUN:-1}" = 0 ]; then
    echo "note: (d) bmpirun inside salloc skipped (BMPI_TEST_SLURM_BMPIRUN=0)"
else
    # -n 6: bmpirun's slots are the allocation's tasks (SLURM_TASKS_PER_NODE)
    salloc3() { run salloc -N 3 -n 6 --time="$job_limit" "$builddir/launcher/bmpirun" -n 6 "$@"; }
    what="salloc -N 3 -n 6 bmpirun -n 6"
    hint="(BMPI_TEST_SLURM_BMPIRUN=0 skips (d))"
    salloc3 -x BMPI_VERBOSE=1 "$bin/hello" || fail "(d) $what hello exited with $rc $hint"
    check_hello "(d) $what hello"
    for p in $battery; do
        salloc3 "$bin/$p" || fail "(d) $what $p exited with $rc $hint"
        grep -q '^PASS' "$out" || fail "(d) $what $p printed no PASS $hint"
        echo "ok: (d) $what $p"
    done
    # MPI_Abort in rank 1 (node1): bmpirun passes the status on and its
    # daemons leave nothing on any node
    # (through sh, which notes the job's PMIx namespace for the segment check)
    salloc3 /bin/sh -c 'echo "$PMIX_NAMESPACE" >>"$0"; exec "$@"' "$dir/nspaces" "$bin/crash" abort "$marker"
    [ "$rc" -eq 7 ] || fail "(d) MPI_Abort under $what: exit status $rc, expected 7"
    for _ in $(seq 50); do
        [ -z "$(leftovers)" ] && [ -z "$(pgrep -f "$marker")" ] && break
        sleep 0.2
    done
    left=$(leftovers)
    [ -z "$left" ] || fail "(d) processes left in the host namespaces 10 s after MPI_Abort:
$left"
    left=$(pgrep -af "$marker")
    [ -z "$left" ] || fail "(d) ranks left after MPI_Abort: $left"
    segs=
    for n in $(sort -u "$dir/nspaces" 2>/dev/null); do
        segs="$segs$(ls /dev/shm 2>/dev/null | grep -F "bmpi.$n." || true)"
    done
    [ -z "$segs" ] || fail "(d) /dev/shm segments of bmpirun jobs left after MPI_Abort: $segs"
    echo "ok: (d) MPI_Abort under $what: exit 7, nothing left on any node"
fi
echo "PASS: bmpi on a 3-node Slurm cluster (simulated hosts)"
