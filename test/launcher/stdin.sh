#!/bin/sh
# stdin of bmpirun goes to rank 0 (all of it, in order); the others read
# /dev/null.
. "$top_srcdir/test/launcher/lib.sh"

printf 'first line\nsecond line\nno newline' >"$SCRATCH/in"
RC=0
timeout 60 "$BMPIRUN" -n 3 "$CLIENT" noexchange stdin <"$SCRATCH/in" >"$SCRATCH/out" 2>"$SCRATCH/err" || RC=$?
hung_check
expect_rc 0
grep -q '^stdin 0: first line$' "$SCRATCH/out" || fail "rank 0 did not get line 1"
grep -q '^stdin 0: second line$' "$SCRATCH/out" || fail "rank 0 did not get line 2"
grep -q '^stdin 0: no newline$' "$SCRATCH/out" || fail "rank 0 did not get the partial line"
grep -q '^stdin 0 eof 33$' "$SCRATCH/out" || fail "rank 0 did not read exactly 33 bytes"
grep -q '^stdin 1 eof 0$' "$SCRATCH/out" || fail "rank 1 read something"
grep -q '^stdin 2 eof 0$' "$SCRATCH/out" || fail "rank 2 read something"
echo "ok: small stdin"

# More than a pipe holds, through a pipe.
seq 1 200000 >"$SCRATCH/big"
RC=0
cat "$SCRATCH/big" | timeout 60 "$BMPIRUN" -n 2 /bin/sh -c 'if [ "$PMIX_RANK" = 0 ]; then cat; else cat >/dev/null; echo "rank $PMIX_RANK done" >&2; fi' \
    >"$SCRATCH/out" 2>"$SCRATCH/err" || RC=$?
hung_check
expect_rc 0
cmp -s "$SCRATCH/big" "$SCRATCH/out" || fail "rank 0 did not get the 1.2 MB of stdin intact"
grep -q '^rank 1 done$' "$SCRATCH/err" || fail "rank 1 did not see EOF"
echo "ok: large stdin"

# A rank 0 that never reads does not block the job.
RC=0
timeout 60 "$BMPIRUN" -n 2 /bin/true <"$SCRATCH/big" >"$SCRATCH/out" 2>"$SCRATCH/err" || RC=$?
hung_check
expect_rc 0
check_clean
echo "ok: unread stdin"
