#!/bin/sh
# Under Open MPI's mpirun (its PMIx server): MPI_Comm_spawn, whose
# children its daemon starts, and MPI_Comm_accept/connect between two
# mpirun jobs. The spawn test leaves out the missing command: mpirun ends
# the whole job when it cannot start a process.
set -u
command -v mpirun.openmpi >/dev/null 2>&1 || { echo "SKIP: Open MPI's mpirun is not installed"; exit 77; }
# 90 s, under the ranks' 120 s bootstrap timeout: a rank that hangs in
# MPI_Init is then caught alive by with-timeout, which prints every
# process's stacks (a spawn here hung once in a CI run, where a child's
# fence timing out first ended the job with no stacks to read).
# Each mpirun gets a session directory of its own: two started at once
# (the ports server and client below) race to create the shared default
# /tmp/ompi.HOST.UID, and the loser fails orte_init ("mkdir ... File
# exists"), leaving the other job waiting for a peer that never comes.
dir=$(mktemp -d "${TMPDIR:-/tmp}/bmpi-ompi-ports.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
mpirun() {
    session=$(mktemp -d "$dir/session.XXXXXX") || return 1
    OMPI_MCA_plm_rsh_agent=false "$top_srcdir/test/with-timeout" 90 mpirun.openmpi --allow-run-as-root \
        --oversubscribe --mca orte_tmpdir_base "$session" "$@"
}
prog=$top_builddir/test/dpm/spawn
spawn_under_mpirun() {
    out=$(mpirun -n 2 "$prog" parent "$prog" keep-job 2>&1)
    rc=$?
    printf '%s\n' "$out"
}
spawn_under_mpirun
# Open MPI 4.1.4 over Debian's external PMIx 4.2 now and then leaves a
# spawned child in PMIx_Init, its connection to mpirun's PMIx server
# never answered, while the parents wait for it in MPI_Comm_spawn (a
# clean-clone CI run on 2026-12-08, one in about 20 runs of this test;
# upstream: openpmix/openpmix#2735, intermittent spawn hangs of Open MPI
# 4.1 over external PMIx 4.x). That hang, and only that one, is tried
# once more.
if [ $rc -eq 124 ] && printf '%s\n' "$out" | grep -q ' in PMIx_Init ('; then
    echo "spawn under mpirun: a process hung in PMIx_Init (openpmix/openpmix#2735); once more"
    spawn_under_mpirun
fi
[ $rc -eq 0 ] && printf '%s\n' "$out" | grep -q '^spawn: ok' || { echo "FAIL: spawn under mpirun ($rc)"; exit 1; }

ports=$top_builddir/test/dpm/ports
mpirun -n 2 "$ports" server "$dir/port" > "$dir/server.out" 2>&1 &
server=$!
mpirun -n 2 "$ports" client "$dir/port" > "$dir/client.out" 2>&1
crc=$?
wait $server
src=$?
cat "$dir/server.out" "$dir/client.out"
[ $src -eq 0 ] && [ $crc -eq 0 ] && grep -q '^ports server: ok' "$dir/server.out" &&
    grep -q '^ports client: ok' "$dir/client.out" || { echo "FAIL: ports under mpirun ($src, $crc)"; exit 1; }
exit 0
