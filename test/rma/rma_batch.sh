#!/bin/sh
# rma_batch over the default transports at 1 2 3 4 8 ranks, then with
# gathering off (BMPI_RMA_BATCH=0) and with a bound of 64 bytes (most
# Puts then go alone, the smallest are gathered) at 3 ranks: the
# program must pass whatever bmpi gathers; and at 2 ranks that messages
# are gathered, fill up and refer to data (rma_check_gathered).
# rma_ofi_tcp.sh, rma_ofi_shm.sh and rma_verbs.sh run it over those
# transports (test/rma/lib.sh).
set -u
run="$top_srcdir/test/mpi/run-ranks"
prog="$top_builddir/test/rma/rma_batch"
"$run" "$prog" 1 2 3 4 8 || exit 1
for bound in 0 64; do
    BMPI_RMA_BATCH=$bound "$run" "$prog" 3 || {
        echo "FAIL: rma_batch with BMPI_RMA_BATCH=$bound"
        exit 1
    }
done
# On one node Win_create memory outside the shared heap is reached
# through the shm transport, whose messages carry 32 KiB less the headers.
. "$top_srcdir/test/rma/lib.sh"
rma_check_gathered "shm" 2 24576
echo "ok: rma_batch"
