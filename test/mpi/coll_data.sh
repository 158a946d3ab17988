#!/bin/sh
# Gather/Scatter/Allgather/Alltoall (and v/w) under each forced algorithm,
# then chosen by size. A run at 8 ranks covers communicators of 1..8 ranks
# (cu_each_subcomm).
prog="$top_builddir/test/mpi/coll_data"
run() { "$top_srcdir/test/mpi/run-ranks" "$prog" "$@" || exit 1; }
BMPI_COLL_ALLGATHER=recursive_doubling BMPI_COLL_ALLTOALL=pairwise BMPI_COLL_GATHER=binomial \
    BMPI_COLL_SCATTER=binomial run 2 4 8
BMPI_COLL_ALLGATHER=bruck BMPI_COLL_ALLTOALL=bruck BMPI_COLL_GATHER=linear \
    BMPI_COLL_SCATTER=linear run 3 8
BMPI_COLL_ALLGATHER=ring BMPI_COLL_ALLTOALL=linear run 2 8
BMPI_COLL_ALLGATHER=linear run 2 5 8
run 1 3 6
