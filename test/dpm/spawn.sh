#!/bin/sh
# MPI_Comm_spawn and MPI_Comm_spawn_multiple under bmpirun: a parent of 2
# ranks spawns copies of itself (docs/dynamic.md "Spawning").
set -u
out=$("$top_srcdir/test/with-timeout" 120 "$BMPIRUN" -n 2 "$top_builddir/test/dpm/spawn" parent \
    "$top_builddir/test/dpm/spawn" 2>&1)
rc=$?
printf '%s\n' "$out"
[ $rc -eq 0 ] || { echo "FAIL: exited $rc"; exit 1; }
printf '%s\n' "$out" | grep -q '^spawn: ok' || { echo "FAIL: no ok"; exit 1; }
printf '%s\n' "$out" | grep -q 'FAIL' && { echo "FAIL: a child failed"; exit 1; }
exit 0
