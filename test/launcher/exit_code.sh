#!/bin/sh
# bmpirun's exit status is the first failing rank's, with one line naming
# the rank, its pid and how it ended; the other ranks are terminated.
. "$top_srcdir/test/launcher/lib.sh"

bmpirun -n 4 "$CLIENT"
expect_rc 0 "a job where every rank exits 0"

start=$(now)
bmpirun -n 4 "$CLIENT" exit=7@2 sleep=30 "$MARKER"
expect_rc 7 "rank 2 exiting 7"
lt "$(elapsed "$start")" 5 || fail "the others were not terminated promptly"
grep -q "^bmpirun: rank 2 (pid [0-9]*) exited with status 7; terminating the job\$" "$SCRATCH/err" ||
    fail "no line naming rank 2 and status 7"
[ "$(grep -c '^bmpirun:' "$SCRATCH/err")" -eq 1 ] || fail "expected exactly one bmpirun line"
check_clean
echo "ok: exit status 7"

bmpirun -n 4 "$CLIENT" segv@1 sleep=30 "$MARKER"
expect_rc 139 "rank 1 crashing with SIGSEGV"
grep -q "^bmpirun: rank 1 (pid [0-9]*) was killed by signal 11 (Segmentation fault" "$SCRATCH/err" ||
    fail "no line naming rank 1 and signal 11"
check_clean
echo "ok: SIGSEGV gives 139"

bmpirun -n 3 "$CLIENT" nofinalize sleep=30@1 "$MARKER"
expect_rc 1 "a rank ending without PMIx_Finalize"
grep -q "without PMIx_Finalize" "$SCRATCH/err" || fail "no line about the missing PMIx_Finalize"
check_clean
echo "ok: missing PMIx_Finalize is a failure"

bmpirun -n 3 "$CLIENT" noinit exit=3
expect_rc 3 "a plain program exiting 3"
check_clean
echo "ok: plain program status"
