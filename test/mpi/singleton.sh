#!/bin/sh
# Started without any launcher, a program runs as a singleton (size 1).
set -u
out=$(env -u PMIX_NAMESPACE -u PMIX_RANK timeout 30 "$top_builddir/test/mpi/hello" 2>&1)
rc=$?
printf '%s\n' "$out"
[ $rc -eq 0 ] || { echo "FAIL: singleton exited $rc"; exit 1; }
printf '%s\n' "$out" | grep -q '^hello from rank 0 of 1 on ' || { echo "FAIL: not a singleton"; exit 1; }
