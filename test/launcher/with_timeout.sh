#!/bin/sh
# test/with-timeout, the timeout around every launch of the multi-rank
# tests: a job that hangs ends with status 124 once the stacks of its
# ranks are printed, and nothing of it is left; a command that ends in
# time keeps its own status and is not held up.
. "$top_srcdir/test/launcher/lib.sh"
with_timeout=$top_srcdir/test/with-timeout

RC=0
"$with_timeout" 2 "$BMPIRUN" -n 2 "$CLIENT" shm sleep=30 "$MARKER" \
    >"$SCRATCH/out" 2>"$SCRATCH/err" </dev/null || RC=$?
expect_rc 124 "with-timeout 2 around a job that sleeps 30 s"
grep -q "timed out after 2s; stacks of the processes under it:\$" "$SCRATCH/err" ||
    fail "no line about the timeout"
ranks=$(grep -c "^-- pid [0-9]*: .*/pmix_client\$" "$SCRATCH/err")
[ "$ranks" -eq 2 ] || fail "stacks of $ranks ranks, expected 2"
if command -v gdb >/dev/null 2>&1; then
    grep -q "^#0 .* in .*sleep" "$SCRATCH/err" || fail "no stack frame in sleep"
fi
check_clean
echo "ok: a hung job: status 124, the stacks of its 2 ranks, nothing left"

start=$(now)
RC=0
"$with_timeout" 30 sh -c 'exit 3' || RC=$?
expect_rc 3 "with-timeout 30 sh -c 'exit 3'"
t=$(elapsed "$start")
lt "$t" 2 || fail "a command that exits at once took $t s"
echo "ok: a command that ends in time keeps its status ($t s)"
