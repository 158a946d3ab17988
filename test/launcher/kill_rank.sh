#!/bin/sh
# SIGKILL of one rank mid-run: the job ends within 2 s, status 137, with no
# rank, PMIx directory or /dev/shm segment of the job left.
. "$top_srcdir/test/launcher/lib.sh"

bmpirun_bg -n 4 "$CLIENT" shm sleep=30 "$MARKER"
wait_for "$SCRATCH/out" '^shm ' 4
victim=$(sed -n 's/^rank 2 size .* pid \([0-9]*\)$/\1/p' "$SCRATCH/out")
[ -n "$victim" ] || fail "no pid for rank 2"
start=$(now)
kill -KILL "$victim"
bg_wait
t=$(elapsed "$start")
expect_rc 137 "the job whose rank 2 was killed"
lt "$t" 2 || fail "the job took $t s to end after rank 2 was killed (limit 2 s)"
grep -q "^bmpirun: rank 2 (pid $victim) was killed by signal 9 (Killed); terminating the job\$" "$SCRATCH/err" ||
    fail "no line naming rank 2, pid $victim and signal 9"
check_clean
echo "ok: job ended $t s after SIGKILL of a rank"
