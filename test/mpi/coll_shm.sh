#!/bin/sh
# The shared-memory path of the blocking collectives at 1..8 ranks, with the
# default slots (and reductions in two phases where the node has a core
# for each rank), with small ones (so the counts just above a slot's
# capacity are cheap), direct (CMA) calls from 1 KiB and never, then the
# same checks on point-to-point only; last, a direct call in which one
# rank's copy fails must fail on both ranks.
prog="$top_builddir/test/mpi/coll_shm"
run() { "$top_srcdir/test/mpi/run-ranks" "$prog" "$@" || exit 1; }
run 1 2 3 4 8
# On a 2-core machine 3 or more ranks outnumber the cores, and a reduce
# takes one phase; as on a node with a core for each rank, two:
BMPI_OVERSUBSCRIBED=0 run 3 4
BMPI_COLL_SHM_SLOT=2048 run 2 5 6 7
BMPI_COLL_SHM_DIRECT=1k run 2 3 8
BMPI_SHM_CMA=0 run 2
BMPI_COLL_SHM=0 BMPI_COLL_SHM_SLOT=2048 run 3

# The failed copy is the shm transport's process_vm_writev: this part runs
# on shm whatever transports the rest of the suite is restricted to, and
# without the shared heap, whose blocks are written by memcpy instead.
fault="$top_builddir/test/mpi/.libs/libcma-fault.so"
out=$(LD_PRELOAD=$fault BMPI_SHM_HEAP=0 env -u BMPI_TRANSPORT "$top_srcdir/test/mpi/run-ranks" "$prog"_fault 2) ||
    { printf '%s\n' "$out"; exit 1; }
for what in "rank 0: bcast" "rank 1: bcast" "rank 0: reduce" "rank 1: reduce"; do
    printf '%s\n' "$out" | grep -q "^$what failed: " || {
        printf '%s\n' "$out"
        echo "FAIL: no error on $what after a failed process_vm_writev"
        exit 1
    }
done
