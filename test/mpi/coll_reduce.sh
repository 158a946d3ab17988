#!/bin/sh
# Barrier/Bcast/Reduce/Allreduce under each forced algorithm, then by size.
# A run at 8 ranks covers communicators of 1..8 ranks (cu_each_subcomm).
prog="$top_builddir/test/mpi/coll_reduce"
run() { "$top_srcdir/test/mpi/run-ranks" "$prog" "$@" || exit 1; }
for a in recursive_doubling rabenseifner ring; do
    BMPI_COLL_ALLREDUCE=$a BMPI_COLL_REDUCE=binomial BMPI_COLL_BCAST=binomial run 2 5 8
done
BMPI_COLL_REDUCE=rabenseifner BMPI_COLL_BCAST=scatter_allgather run 3 8
BMPI_COLL_REDUCE=pipeline BMPI_COLL_BCAST=pipeline run 3 8
BMPI_COLL_BCAST=linear run 5 8
BMPI_COLL_REDUCE=halves run 2 3
run 1 2 3 6
