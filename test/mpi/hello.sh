#!/bin/sh
# bmpirun -n N hello prints N distinct ranks, at 1, 4 and 64 ranks (64 on
# 2 cores: oversubscribed), and the ring token went all the way round.
set -u
prog="$top_builddir/test/mpi/hello"
for n in 1 4 64; do
    out=$(timeout -k 5 120 "$BMPIRUN" -n "$n" "$prog") || { echo "FAIL: bmpirun -n $n hello exited $?"; exit 1; }
    distinct=$(printf '%s\n' "$out" | grep -c "^hello from rank [0-9]* of $n on ")
    ranks=$(printf '%s\n' "$out" | sed -n "s/^hello from rank \([0-9]*\) of $n on .*/\1/p" | sort -un | wc -l)
    if [ "$distinct" -ne "$n" ] || [ "$ranks" -ne "$n" ]; then
        printf '%s\n' "$out"
        echo "FAIL: expected $n distinct ranks, got $ranks in $distinct lines"
        exit 1
    fi
    echo "ok: $n ranks"
done
