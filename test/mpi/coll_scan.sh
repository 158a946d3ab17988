#!/bin/sh
# Reduce_scatter/Scan/Exscan and nonblocking collectives in flight together.
# A run at 8 ranks covers communicators of 1..8 ranks (cu_each_subcomm).
prog="$top_builddir/test/mpi/coll_scan"
run() { "$top_srcdir/test/mpi/run-ranks" "$prog" "$@" || exit 1; }
BMPI_COLL_REDUCE_SCATTER=basic run 2 3 5 8
BMPI_COLL_REDUCE_SCATTER=ring run 2 8
run 1 2 3 4 6 8
