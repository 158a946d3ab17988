#!/bin/sh
# MPI_UNIVERSE_SIZE is the slots given to bmpirun (PMIX_UNIV_SIZE), at
# least the job's size; a singleton's is 1.
set -u
with_timeout=$top_srcdir/test/with-timeout
prog=$top_builddir/test/dpm/universe
fails=0
check() {
    want=$1
    shift
    out=$("$with_timeout" 60 "$@" 2>&1)
    rc=$?
    printf '%s\n' "$out"
    bad=$(printf '%s\n' "$out" | grep 'universe' | grep -vc "universe $want\$")
    got=$(printf '%s\n' "$out" | grep -c 'universe')
    if [ $rc -ne 0 ] || [ "$bad" -ne 0 ] || [ "$got" -eq 0 ]; then
        echo "FAIL: $* gave rc $rc, want universe $want everywhere"
        fails=1
    fi
}
check 5 "$BMPIRUN" --host localhost:5 -n 2 "$prog"
check 3 "$BMPIRUN" -n 3 "$prog"
check 4 "$BMPIRUN" -H localhost,localhost:3 "$prog"
check 1 env -u PMIX_NAMESPACE -u PMIX_RANK "$prog"
exit $fails
