#!/bin/sh
# Random storms of nonblocking collectives in flight together.
prog="$top_builddir/test/mpi/coll_storm"
run() { "$top_srcdir/test/mpi/run-ranks" "$prog" "$@" || exit 1; }
BMPI_COLL_ALLREDUCE=ring BMPI_COLL_ALLTOALL=pairwise BMPI_COLL_BCAST=scatter_allgather \
    BMPI_COLL_ALLGATHER=bruck BMPI_COLL_REDUCE=rabenseifner run 3 4
run 1 2 3 5 8
