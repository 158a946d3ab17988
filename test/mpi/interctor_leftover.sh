#!/bin/sh
# MPI_Finalize frees what the program left behind (intercommunicators and
# what derives from them, groups, ...): at 2-5 ranks, then at 2 and 3 ranks
# under valgrind, which fails on any access to freed memory and on any
# block an MPI call of the program allocated and finalize did not free.
# Valgrind turns the shared heap off by itself (docs/shm.md).
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
# A block still allocated at exit by an MPI call of the program (other
# than MPI_Init, and not libpmix's own) is an object MPI_Finalize left.
left_by_finalize='
/loss record/ { if (rec && mpi && !pmix) { print rec; bad++ } rec = $0; mpi = pmix = 0; next }
rec && /(at|by) 0x/ {
    rec = rec "\n" $0
    if ($0 ~ /: P?MPI_[A-Za-z_]+ \(/ && $0 !~ /MPI_Init/) mpi = 1
    if ($0 ~ /PMIx_|pmix_/) pmix = 1
}
END { if (rec && mpi && !pmix) { print rec; bad++ } exit bad > 0 }'
logs=$(mktemp -d "${TMPDIR:-/tmp}/interctor_leftover.XXXXXX") || exit 1
trap 'rm -rf "$logs"' EXIT
for n in 2 3; do
    echo "== $prog at $n ranks under valgrind"
    "$top_srcdir/test/with-timeout" 300 "$BMPIRUN" -n "$n" \
        "$top_builddir/libtool" --mode=execute valgrind -q --error-exitcode=1 \
        --leak-check=full --show-leak-kinds=all --errors-for-leak-kinds=none \
        --log-file="$logs/vg.$n.%p" "$prog" ||
        { cat "$logs"/vg.*; echo "FAIL: $prog at $n ranks under valgrind exited with $?"; exit 1; }
    for log in "$logs"/vg.$n.*; do
        awk "$left_by_finalize" "$log" ||
            { echo "FAIL: $prog at $n ranks: MPI_Finalize left the blocks above"; exit 1; }
    done
done
exit 0
