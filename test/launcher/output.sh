#!/bin/sh
# Output of ranks that exit at once is not lost: stdout to stdout, stderr
# to stderr, partial last lines included; a big burst just before exit too.
. "$top_srcdir/test/launcher/lib.sh"

bmpirun -n 16 /bin/sh -c 'echo "out-$PMIX_RANK"; echo "err-$PMIX_RANK" >&2; printf "tail-$PMIX_RANK"'
expect_rc 0
r=0
while [ $r -lt 16 ]; do
    grep -q "out-$r\$" "$SCRATCH/out" || fail "stdout of rank $r lost"
    grep -q "tail-$r" "$SCRATCH/out" || fail "partial last line of rank $r lost"
    grep -q "^err-$r\$" "$SCRATCH/err" || fail "stderr of rank $r lost"
    grep -q "out-$r" "$SCRATCH/err" && fail "stdout of rank $r went to stderr"
    r=$((r + 1))
done
echo "ok: 16 quick ranks"

# 16 ranks x 1 MB written right before exit.
bmpirun -n 16 /bin/sh -c 'head -c 1000000 /dev/zero | tr "\0" "x" | fold -w 99'
expect_rc 0
[ "$(wc -c <"$SCRATCH/out")" -eq $((16 * (1000000 + 1000000 / 99))) ] ||
    fail "expected 16 MB of output, got $(wc -c <"$SCRATCH/out") bytes"
[ "$(grep -c -v '^x*$' "$SCRATCH/out")" -eq 0 ] || fail "mixed lines in the burst"
check_clean
echo "ok: 16 MB burst at exit"

# A reader that goes away (| head) does not hang or break the job.
RC=0
timeout 60 "$BMPIRUN" -n 4 "$CLIENT" lines=100000 2>"$SCRATCH/err" | head -n 1 >/dev/null || true
check_clean
echo "ok: reader gone"
