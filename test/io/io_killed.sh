#!/bin/sh
# A rank SIGKILLed in the middle of a large write loop (test/io/io_killed.c,
# 3 ranks writing one file): the launcher must exit non-zero within a few
# seconds, not hang; the file must exist afterwards; no rank process may
# be left. The launcher is $BMPIRUN (validate-with-mpich.sh sets it to
# mpiexec.mpich, and top_builddir to its own build of the program).
: "${top_builddir:?run through make check (top_builddir not set)}"
prog="$top_builddir/test/io/io_killed"
launcher=${BMPIRUN:-bmpirun}
limit=10 # seconds the job may take to end after the kill
scratch=$(mktemp -d "${TMPDIR:-/tmp}/bmpi-io-killed.XXXXXX") || exit 1
trap 'rm -rf "$scratch"' EXIT
trap 'exit 1' INT TERM HUP

fail() {
    echo "FAIL: io_killed: $*"
    for f in "$scratch/out" "$scratch/err"; do
        [ -s "$f" ] && { echo "--- $f (last lines)"; tail -n 20 "$f"; }
    done
    exit 1
}

mkdir "$scratch/files"
# the output file exists before the job starts, so that counting its lines
# never races with the background redirection creating it
: >"$scratch/out"
BMPI_IO_TEST_DIR="$scratch/files" timeout -k 5 90 "$launcher" -n 3 "$prog" >"$scratch/out" 2>"$scratch/err" </dev/null &
job=$!
i=0
started() {
    n=$(grep -c '^writing ' "$scratch/out" 2>/dev/null)
    [ "${n:-0}" -ge 3 ]
}
until started; do
    i=$((i + 1))
    [ $i -lt 600 ] || { kill -TERM $job; fail "the ranks did not all start writing within 60 s"; }
    sleep 0.1
done
pids=$(sed -n 's/^writing [0-9]* \([0-9]*\)$/\1/p' "$scratch/out")
victim=$(sed -n 's/^writing 1 \([0-9]*\)$/\1/p' "$scratch/out")
[ -n "$victim" ] || fail "no pid for rank 1"
sleep 0.5 # well inside the loop
start=$(date +%s.%N)
kill -KILL "$victim"
rc=0
wait $job || rc=$?
took=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
# (a launcher may pass on the killed rank's status, 137, so the time tells
# a hang from an answer, not the status)
awk -v t="$took" -v l="$limit" 'BEGIN { exit !(t < l) }' || fail "the job took $took s to end (limit $limit s, status $rc)"
[ $rc -ne 0 ] || fail "the launcher exited 0 after rank 1 was killed"
ls "$scratch"/files/bmpi-io-io_killed.*/data >/dev/null 2>&1 || fail "the file is gone after the kill"
sleep 0.2
for p in $pids; do
    # a zombie has ended (its reaper, outside the job, may be slow)
    state=$(ps -o stat= -p "$p" 2>/dev/null || true)
    case $state in "" | Z*) ;; *) fail "rank process $p is still there ($state)" ;; esac
done
echo "ok: io_killed: rank 1 killed mid-write, the job ended in $took s with $rc, the file is there, no rank left"
