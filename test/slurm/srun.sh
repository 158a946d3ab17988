#!/bin/bash
# bmpi ranks started by Slurm's `srun --mpi=pmix` (Slurm's PMIx plugin is
# the PMIx server; no bmpirun involved). A private munged, slurmctld and
# slurmd run from a temporary directory (../shared/FIELD-NOTES.md,
# "Slurm on one machine") with their own ports and sockets, so nothing of
# the machine's own Slurm, if any, is touched. Checks:
#   (a) hello at 2 and 4 ranks: every rank once, the right size;
#   (b) point-to-point and collective programs of test/mpi at 3 ranks;
#   (c) MPI_Abort(7) in one rank ends the job with a non-zero status and
#       leaves no process and no /dev/shm segment behind.
# Root only; skips (77) without srun, slurmctld, slurmd, munged or Slurm's
# pmix plugin. Everything it starts and creates goes on any exit.
set -u
top_builddir=${top_builddir:-.}
timeout_s=${BMPI_TEST_TIMEOUT:-120}

skip() {
    echo "SKIP: $*"
    exit 77
}
fail() {
    echo "FAIL: $*"
    exit 1
}
[ "$(id -u)" = 0 ] || skip "a private slurmctld/slurmd needs root"
for c in srun sinfo slurmctld slurmd munged timeout; do
    command -v "$c" >/dev/null 2>&1 ||
        skip "$c not found (apt-get install slurm-wlm slurmctld slurmd slurm-client munge)"
done
bin=$top_builddir/test/mpi
[ -x "$bin/hello" ] || skip "test programs not built"

dir=$(mktemp -d /tmp/bmpi-slurm.XXXXXX)
pids=
# The daemons run as children of this shell (munged in the foreground too),
# so they are stopped with SIGTERM and reaped here: slurmctld then takes
# its slurmscriptd along, and no zombie is left to init.
cleanup() {
    [ -n "${SLURM_CONF:-}" ] && scancel --quiet --user=root >/dev/null 2>&1
    for p in $pids; do kill "$p" 2>/dev/null; done
    for _ in $(seq 50); do
        alive=
        for p in $pids; do kill -0 "$p" 2>/dev/null && alive=1; done
        [ -z "$alive" ] && break
        sleep 0.1
    done
    for p in $pids; do kill -9 "$p" 2>/dev/null; done
    wait 2>/dev/null
    pkill -9 -f "$dir" 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# ---- munge ------------------------------------------------------------------
mkdir -p "$dir/munge" "$dir/spool/localhost" "$dir/state"
chmod 755 "$dir/munge"
dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 2>/dev/null
chmod 400 "$dir/munge/munge.key"
sock=$dir/munge/munge.socket
munged --foreground --socket="$sock" --key-file="$dir/munge/munge.key" \
    --log-file="$dir/munge/log" --pid-file="$dir/munge/pid" --seed-file="$dir/munge/seed" \
    --force >"$dir/munge/out" 2>&1 &
pids="$pids $!"
for _ in $(seq 50); do
    [ -S "$sock" ] && break
    sleep 0.1
done
[ -S "$sock" ] || fail "munged did not start: $(tail -3 "$dir/munge/log" "$dir/munge/out" 2>/dev/null)"

# ---- slurm ------------------------------------------------------------------
# Two ports below the kernel's ephemeral range that nothing listens on or
# is connected from (another test's connection can hold any port).
free_ports() {
    local p
    for _ in $(seq 100); do
        p=$((10000 + RANDOM % 20000))
        ss -Htan "( sport = :$p or sport = :$((p + 1)) )" 2>/dev/null | grep -q . || {
            echo "$p"
            return
        }
    done
    echo $((10000 + $$ % 20000))
}
port=$(free_ports)
export SLURM_CONF=$dir/slurm.conf
cat >"$SLURM_CONF" <<EOF
ClusterName=bmpitest
SlurmctldHost=localhost
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$sock
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=localhost Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE
EOF
slurmctld -D -i -f "$SLURM_CONF" >"$dir/slurmctld.out" 2>&1 &
ctld=$!
pids="$pids $ctld"
slurmd -D -N localhost -f "$SLURM_CONF" >"$dir/slurmd.out" 2>&1 &
pids="$pids $!"
# sinfo waits for a dead controller until its message timeout: bound each
# call, and stop at once if slurmctld has exited (a port taken meanwhile).
idle() { timeout 3 sinfo -h -o %t 2>/dev/null | grep -q idle; }
for _ in $(seq 100); do
    idle && break
    kill -0 "$ctld" 2>/dev/null ||
        fail "slurmctld exited: $(tail -n 3 "$dir/slurmctld.log" 2>/dev/null)"
    sleep 0.2
done
idle || fail "Slurm did not come up: $(tail -n 5 "$dir/slurmctld.log" "$dir/slurmd.log" 2>/dev/null)"

srun --mpi=list 2>&1 | grep -q pmix || skip "Slurm has no pmix plugin (srun --mpi=list)"

# A run that times out prints the stacks of its ranks too, which are not
# under srun (slurmstepd detaches from slurmd): the children of job steps
# of this test's Slurm.
step_ranks='for p in $(pgrep -P "$(pgrep -d, -x slurmstepd)"); do
    tr "\0" "\n" <"/proc/$p/environ" | grep -qx "SLURM_CONF=$SLURM_CONF" && echo "$p"
done'
run() {
    "$top_srcdir/test/with-timeout" -p "$step_ranks" "$timeout_s" srun --mpi=pmix --overcommit "$@"
}

# ---- (a) hello ---------------------------------------------------------------
for n in 2 4; do
    out=$(run -n "$n" "$bin/hello" 2>&1) || fail "hello at $n ranks under srun: $out"
    for r in $(seq 0 $((n - 1))); do
        [ "$(printf '%s\n' "$out" | grep -c "rank $r of $n ")" = 1 ] ||
            fail "hello at $n ranks: rank $r not seen once in: $out"
    done
    echo "ok: hello at $n ranks under srun --mpi=pmix"
done

# ---- (b) programs of the MPI battery --------------------------------------
for p in p2p_storm p2p_fanin p2p_truncate coll_data comm_split intercomm; do
    out=$(run -n 3 "$bin/$p" 2>&1) || fail "$p at 3 ranks under srun: $(printf '%s\n' "$out" | tail -5)"
    printf '%s\n' "$out" | grep -q "^PASS" || fail "$p at 3 ranks printed no PASS: $out"
    echo "ok: $p at 3 ranks"
done

# ---- (c) abort -----------------------------------------------------------------
# Slurm names a step's PMIx namespace slurm.pmix.<job>.<step>, and bmpi's
# segments carry it; other tests running in parallel have their own.
job_segments() { ls /dev/shm | grep '^bmpi\.slurm\.' || true; }
before=$(job_segments | wc -l)
marker=bmpi-srun-crash-$$
run -n 3 "$bin/crash" abort "$marker" >"$dir/crash.out" 2>&1
rc=$?
[ "$rc" -ne 0 ] || fail "MPI_Abort under srun: exit status 0"
sleep 1
left=$(pgrep -f "$marker" | head -3)
[ -z "$left" ] || fail "processes left after MPI_Abort: $left"
after=$(job_segments | wc -l)
[ "$after" -le "$before" ] || fail "/dev/shm segments left after MPI_Abort: $(job_segments)"
echo "ok: MPI_Abort under srun: exit $rc, nothing left"

# ---- (d) dynamic processes (docs/dynamic.md) -----------------------------------
# Slurm's PMIx plugin cannot spawn: MPI_ERR_SPAWN naming the launcher, no
# hang. Two steps connect through a port, as two bmpirun jobs do.
dpm=$top_builddir/test/dpm
out=$(run -n 2 "$dpm/spawn" parent "$dpm/spawn" refused 2>&1) || fail "spawn under srun: $out"
printf '%s\n' "$out" | grep -q '^spawn refused: ok' || fail "spawn under srun: $out"
printf '%s\n' "$out" | grep -q 'Slurm srun' || fail "the refused spawn does not name Slurm: $out"
echo "ok: MPI_Comm_spawn under srun: MPI_ERR_SPAWN ($(printf '%s\n' "$out" | sed -n 's/^rank 0: //p'))"
run -n 2 "$dpm/ports" server "$dir/port" >"$dir/server.out" 2>&1 &
server=$!
run -n 2 "$dpm/ports" client "$dir/port" >"$dir/client.out" 2>&1
crc=$?
wait $server
src=$?
[ $src -eq 0 ] && [ $crc -eq 0 ] && grep -q '^ports client: ok' "$dir/client.out" ||
    fail "accept/connect between two srun steps ($src, $crc): $(cat "$dir/server.out" "$dir/client.out")"
echo "ok: accept/connect between two srun steps"
echo "PASS: bmpi under srun --mpi=pmix"
