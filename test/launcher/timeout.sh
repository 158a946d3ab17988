#!/bin/sh
# --timeout kills the job with a clear message and status 124; a job that
# ends in time is not affected.
. "$top_srcdir/test/launcher/lib.sh"

start=$(now)
bmpirun -n 3 --timeout 1 "$CLIENT" shm sleep=30 "$MARKER"
t=$(elapsed "$start")
expect_rc 124 "bmpirun --timeout 1"
lt "$t" 4 || fail "--timeout 1 took $t s"
grep -q "^bmpirun: the job reached its time limit (--timeout 1 s); terminating the 3 running ranks\$" "$SCRATCH/err" ||
    fail "no line about the time limit"
check_clean
echo "ok: --timeout 1 ended the job in $t s"

bmpirun -n 2 --timeout=30 "$CLIENT"
expect_rc 0 "a job within its --timeout"
bmpirun -n 2 --timeout 0.5 "$CLIENT" noinit sleep=10 "$MARKER"
expect_rc 124 "--timeout 0.5"
check_clean
echo "ok: fractional and unreached timeouts"
