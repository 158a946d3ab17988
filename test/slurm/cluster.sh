#!/bin/bash
# bmpi on a Slurm cluster of three nodes, simulated on this one machine
# (issue 31): a private munged, slurmctld in a head network namespace
# (192.0.2.254, on a bridge) and one slurmd per simulated host, each in a
# network namespace of its own (192.0.2.1-3 on a veth pair to the bridge)
# under a UTS namespace with its own hostname (node1-3). See
# ../shared/FIELD-NOTES.md, "Slurm on one machine" and "Simulated hosts".
# The cluster comes and goes with test/slurm/cluster-lib.sh.
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

# ---- the cluster: state and cleanup --------------------------------------------
. "$srcdir/test/slurm/cluster-lib.sh"
out=
runpid=
cleanup() {
    trap '' EXIT INT TERM HUP
    # a job still running (interrupted): its timeout passes the signal on
    if [ -n "$runpid" ]; then
        kill -TERM "$runpid" 2>/dev/null
        sleep 1
    fi
    slurm_cluster_down
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
fail() {
    [ -n "$out" ] && cat "$out"
    echo "FAIL: $*"
    exit 1
}

# ---- simulated hosts, munge, slurm --------------------------------------------------
# 3 nodes of 2 CPUs: 6 ranks, 2 a node
slurm_cluster_up 3 2
case $? in
0) ;;
77) skip "$SLURM_CLUSTER_ERROR" ;;
*) fail "$SLURM_CLUSTER_ERROR" ;;
esac
dir=$SLURM_CLUSTER_DIR
out=$dir/out
: >"$out"
echo "Slurm cluster up: $(printf '%s\n' "$SLURM_CLUSTER_STATES" | tr '\n' ' ')(slurmctld in $SLURM_CLUSTER_HEAD, slurmd's in ${SLURM_CLUSTER_TAG}h1-3)"

# ---- running jobs -------------------------------------------------------------
# run COMMAND...: in the head namespace, with a timeout, output to $out.
# In the background, so that a signal to this script runs its trap now.
# On a timeout, the stacks of the jobs' ranks (SLURM_CLUSTER_STEP_PROCS).
run() {
    "$srcdir/test/with-timeout" -p "$SLURM_CLUSTER_STEP_PROCS" "$timeout_s" \
        ip netns exec "$SLURM_CLUSTER_HEAD" "$@" >"$out" 2>&1 </dev/null &
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
# what may still run in a host namespace: its slurmd (not a leftover); a
# step's slurmstepd and ranks get a few seconds to go
for _ in $(seq 50); do
    [ -z "$(slurm_cluster_leftovers)" ] && break
    sleep 0.2
done
left=$(slurm_cluster_leftovers)
[ -z "$left" ] || fail "(c) processes left in the host namespaces 10 s after MPI_Abort:
$left"
left=$(pgrep -af "$marker")
[ -z "$left" ] || fail "(c) ranks left after MPI_Abort: $left"
segs=$(slurm_cluster_segments)
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
        [ -z "$(slurm_cluster_leftovers)" ] && [ -z "$(pgrep -f "$marker")" ] && break
        sleep 0.2
    done
    left=$(slurm_cluster_leftovers)
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
