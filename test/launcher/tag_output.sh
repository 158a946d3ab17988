#!/bin/sh
# Many ranks printing many lines fast: every line arrives whole and in
# order per rank; with --tag-output each line starts with "[rank] ".
. "$top_srcdir/test/launcher/lib.sh"

n=8 lines=3000 errlines=300
payload='abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ.end'

# check FILE TAGGED COUNT: every line well-formed, COUNT lines per rank in order
check() {
    awk -v n=$n -v count="$3" -v tagged="$2" -v payload="$payload" '
        {
            line = $0
            if (tagged) {
                if (match(line, /^\[[0-9]+\] /) == 0) { print "untagged: " $0; bad++; next }
                tag = substr(line, 2, RLENGTH - 3) + 0
                line = substr(line, RLENGTH + 1)
            }
            if (line ~ /^rank [0-9]+ (size|exchange) /) next
            if (split(line, f, " ") != 5 || f[1] != "rank" || f[3] != "line" || f[5] != payload) {
                print "malformed: " $0; bad++; next
            }
            r = f[2] + 0
            if (tagged && tag != r) { print "tag " tag " on a line of rank " r; bad++ }
            if (f[4] + 0 != next_line[r]) { print "rank " r ": line " f[4] " after " next_line[r] - 1; bad++ }
            next_line[r] = f[4] + 1
        }
        END {
            for (r = 0; r < n; r++)
                if (next_line[r] != count) { print "rank " r ": " next_line[r] + 0 " lines, expected " count; bad++ }
            exit bad > 0
        }' "$1" | head -n 5
}

for tagged in 1 0; do
    if [ $tagged = 1 ]; then flag=--tag-output; else flag=; fi
    bmpirun -n $n $flag "$CLIENT" lines=$lines errlines=$errlines
    expect_rc 0 "bmpirun $flag"
    out=$(check "$SCRATCH/out" $tagged $lines)
    [ -z "$out" ] || fail "stdout $flag: $out"
    out=$(check "$SCRATCH/err" $tagged $errlines)
    [ -z "$out" ] || fail "stderr $flag: $out"
    check_clean
    echo "ok: ${flag:-untagged}: $n ranks x $lines lines, all whole and in order"
done

# A partial last line is passed on too; tagged, it is ended with a newline.
bmpirun -n 3 --tag-output /bin/sh -c 'printf "tail-$PMIX_RANK"'
expect_rc 0
for r in 0 1 2; do
    grep -q "^\[$r\] tail-$r\$" "$SCRATCH/out" || fail "partial line of rank $r lost"
done
echo "ok: partial last lines"
