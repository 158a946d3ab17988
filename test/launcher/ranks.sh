#!/bin/sh
# Every rank learns its rank, the job size, its local rank, the local size
# and peers, its node and host through PMIx, at 1, 4 and 64 ranks (64 on
# two cores: oversubscription needs no flag), and exchanges keys.
. "$top_srcdir/test/launcher/lib.sh"

for n in 1 4 64; do
    start=$(now)
    bmpirun -n $n "$CLIENT"
    expect_rc 0 "bmpirun -n $n"
    t=$(elapsed "$start")
    peers=$(seq -s, 0 $((n - 1)))
    r=0
    while [ $r -lt $n ]; do
        c=$(grep -c "^rank $r size $n local_rank $r local_size $n nodeid 0 host [^ ]* peers $peers pid [0-9]*\$" "$SCRATCH/out")
        [ "$c" -eq 1 ] || fail "-n $n: rank $r reported itself $c times, expected once"
        grep -q "^rank $r exchange ok\$" "$SCRATCH/out" || fail "-n $n: rank $r did not finish the exchange"
        r=$((r + 1))
    done
    [ "$(wc -l <"$SCRATCH/out")" -eq $((2 * n)) ] || fail "-n $n: unexpected output lines"
    [ ! -s "$SCRATCH/err" ] || fail "-n $n: unexpected stderr"
    check_clean
    echo "ok: -n $n in $t s"
done

# Ranks that do not speak PMIx at all run too.
bmpirun -n 3 /bin/echo plain
expect_rc 0
[ "$(grep -c '^plain$' "$SCRATCH/out")" -eq 3 ] || fail "3 plain ranks should print 3 lines"
check_clean
echo "ok: plain program"
