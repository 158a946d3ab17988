#!/bin/sh
# MPI_Finalize frees what the program left behind (intercommunicators and
# what derives from them, groups, ...): at 2-5 ranks, then at 2 and 3 ranks
# under valgrind, which fails on any access to freed memory. Valgrind
# turns the shared heap off by itself (docs/shm.md).
prog="$top_builddir/test/mpi/interctor_leftover"
"$top_srcdir/test/mpi/run-ranks" "$prog" 2 3 4 5 || exit 1
if ! command -v valgrind >/dev/null 2>&1; then
    echo "SKIP valgrind part: valgrind is not installed"
    exit 0
fi
# A sanitizer build checks the same by itself, and valgrind cannot run it.
if nm -D "$top_builddir/.libs/libbmpi.so" 2>/dev/null | grep -q '__asan_init\|__ubsan_'; then
    echo "SKIP valgrind part: this libbmpi is built with sanitizers"
    exit 0
fi
for n in 2 3; do
    echo "== $prog at $n ranks under valgrind"
    "$top_srcdir/test/with-timeout" 300 "$BMPIRUN" -n "$n" \
        "$top_builddir/libtool" --mode=execute valgrind -q --error-exitcode=1 "$prog" ||
        { echo "FAIL: $prog at $n ranks under valgrind exited with $?"; exit 1; }
done
exit 0
