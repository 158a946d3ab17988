#!/bin/sh
# Put/Commit/Fence(PMIX_COLLECT_DATA)/Get across 8 ranks: each rank reads
# every peer's key and node id and checks them (pmix_client exits 3 on a
# mismatch), also with the modex done twice in a row by two jobs at once.
. "$top_srcdir/test/launcher/lib.sh"

bmpirun -n 8 "$CLIENT"
expect_rc 0
for r in 0 1 2 3 4 5 6 7; do
    grep -q "^rank $r exchange ok\$" "$SCRATCH/out" || fail "rank $r did not finish the exchange"
done
[ ! -s "$SCRATCH/err" ] || fail "unexpected stderr"
check_clean
echo "ok: 8-rank exchange"

# Two jobs side by side must not see each other (unique namespaces, dirs).
timeout 60 "$BMPIRUN" -n 8 "$CLIENT" >"$SCRATCH/out2" 2>&1 &
p=$!
bmpirun -n 8 "$CLIENT"
expect_rc 0 "first of two concurrent jobs"
wait $p || fail "second of two concurrent jobs failed: $(tail -n 5 "$SCRATCH/out2")"
[ "$(grep -c 'exchange ok' "$SCRATCH/out2")" -eq 8 ] || fail "second concurrent job incomplete"
check_clean
echo "ok: two concurrent jobs"
