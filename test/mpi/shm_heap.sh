#!/bin/sh
# The shared heap: the program at several rank counts, then (where strace
# can trace) a count of the large process_vm_readv calls it makes: none
# with the heap, some with BMPI_SHM_HEAP=0 (which shows the count can see
# them). BMPI_SHM_RGET_MIN=1 makes point-to-point take single copy with
# the heap off too, whatever this machine's default.
prog=$top_builddir/test/mpi/shm_heap
"$top_srcdir/test/mpi/run-ranks" "$prog" 1 2 3 4 || exit 1
# More ranks than cores turn collective slots by reference off; as on a
# node with a core for each rank (alltoall in rounds, own slot read back):
BMPI_OVERSUBSCRIBED=0 "$top_srcdir/test/mpi/run-ranks" "$prog" 3 4 || exit 1

if ! command -v strace >/dev/null || ! strace -f -o /dev/null true 2>/dev/null; then
    echo "SKIP strace part: strace is missing or cannot trace here"
    exit 0
fi
# A sanitizer build has no shared heap (its allocator must see every
# block): libbmpi then defines no malloc.
if ! nm -D "$top_builddir/.libs/libbmpi.so" 2>/dev/null | grep -q ' T malloc$'; then
    echo "SKIP strace part: this libbmpi has no shared heap (sanitizer build)"
    exit 0
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
large_reads() { # heap setting: count of process_vm_readv calls of >= 64 KiB
    BMPI_SHM_HEAP=$1 BMPI_SHM_RGET_MIN=1 "$top_srcdir/test/with-timeout" 120 \
        strace -f -qq -e trace=process_vm_readv -o "$log" "${BMPIRUN:-bmpirun}" -n 2 "$prog" \
        >/dev/null || { echo "FAIL: run under strace (BMPI_SHM_HEAP=$1)"; exit 1; }
    grep -cE 'iov_len=([0-9]{6,}|6[5-9][0-9]{3}|[7-9][0-9]{4})' "$log" || : # 0 found is fine
}
with=$(large_reads 1) || exit 1
without=$(large_reads 0) || exit 1
echo "process_vm_readv calls of 64 KiB or more: $with with the shared heap, $without without"
[ "$with" -eq 0 ] || { echo "FAIL: the shared heap did not replace process_vm_readv"; exit 1; }
[ "$without" -gt 0 ] || { echo "FAIL: no large process_vm_readv even without the heap"; exit 1; }
