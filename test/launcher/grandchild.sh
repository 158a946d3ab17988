#!/bin/sh
# What a rank starts dies with it: nothing of the job survives bmpirun,
# whether the job succeeds, fails or is interrupted.
. "$top_srcdir/test/launcher/lib.sh"

bmpirun -n 2 "$CLIENT" forksleep=60 "$MARKER"
expect_rc 0
[ "$(grep -c '^forked ' "$SCRATCH/out")" -eq 2 ] || fail "ranks did not fork"
check_clean
echo "ok: grandchildren of a successful job"

bmpirun -n 3 "$CLIENT" forksleep=60 exit=5@1 sleep=30 "$MARKER"
expect_rc 5
check_clean
echo "ok: grandchildren of a failed job"

bmpirun_bg -n 2 "$CLIENT" forksleep=60 shm sleep=30 "$MARKER"
wait_for "$SCRATCH/out" '^shm ' 2
kill -INT "$BPID"
bg_wait
expect_rc 130
check_clean
echo "ok: grandchildren of an interrupted job"

# bmpirun itself killed hard: the ranks get SIGKILL from the kernel, and
# the next bmpirun in the same TMPDIR removes what the first one left.
bmpirun_bg -n 2 "$CLIENT" shm sleep=30 "$MARKER"
wait_for "$SCRATCH/out" '^shm ' 2
kill -KILL "$BPID"
bg_wait
sleep 0.3
left=$(pgrep -f -- "$MARKER" || true)
[ -z "$left" ] || fail "ranks survived SIGKILL of bmpirun: $left"
[ -n "$(ls -A "$JOBTMP")" ] || fail "expected leftovers of the killed bmpirun"
cp "$SCRATCH/out" "$SCRATCH/killed.out"
bmpirun -n 1 "$CLIENT"
expect_rc 0
cp "$SCRATCH/killed.out" "$SCRATCH/out"
check_clean
echo "ok: ranks die with bmpirun; the next bmpirun removes its leftovers"
