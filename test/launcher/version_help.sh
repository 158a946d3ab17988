#!/bin/sh
# --version names bmpi's version, the MPI standard level (mpi.h's) and the
# PMIx versions; --help documents every flag.
. "$top_srcdir/test/launcher/lib.sh"

bmpirun --version
expect_rc 0 "bmpirun --version"
level=$(sed -n 's/^#define MPI_VERSION  *\([0-9]*\).*/\1/p; s/^#define MPI_SUBVERSION  *\([0-9]*\).*/.\1/p' \
    "$top_srcdir/include/mpi.h" | tr -d '\n')
grep -q "^bmpirun (bmpi) [0-9]*\.[0-9]*\.[0-9]*, MPI $level\$" "$SCRATCH/out" ||
    fail "--version: no bmpi version and MPI level $level"
grep -q '^PMIx built with [0-9]*\.[0-9]*\.[0-9]*, running with .*[0-9]' "$SCRATCH/out" || fail "--version: no PMIx versions"

bmpirun --help
expect_rc 0 "bmpirun --help"
for flag in "-n, -np" --oversubscribe "-x VAR" --tag-output "--timeout SECONDS" "--bind-to core|none" \
    --allow-run-as-root --version --help "\[3\] text"; do
    grep -q -- "$flag" "$SCRATCH/out" || fail "--help does not mention $flag"
done
[ ! -s "$SCRATCH/err" ] || fail "--help wrote to stderr"

# Accepted compatibility flags change nothing.
bmpirun -np 2 --oversubscribe --allow-run-as-root -- "$CLIENT"
expect_rc 0
[ "$(grep -c 'exchange ok' "$SCRATCH/out")" -eq 2 ] || fail "compatibility flags broke the job"
check_clean
echo "ok"
