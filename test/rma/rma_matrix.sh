#!/bin/sh
# One window flavor per run, so that each run stays short at 8 ranks.
set -u
. "$top_srcdir/test/rma/lib.sh"
for f in $rma_flavors; do
    rma_run "the default transports" rma_matrix "1 2 3 4 8" "$f"
done
