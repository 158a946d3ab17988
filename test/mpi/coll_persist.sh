#!/bin/sh
# Persistent collectives: the default algorithms, then others forced.
prog="$top_builddir/test/mpi/coll_persist"
run() { "$top_srcdir/test/mpi/run-ranks" "$prog" "$@" || exit 1; }
run 1 2 3 4 8
BMPI_COLL_ALLREDUCE=ring BMPI_COLL_ALLTOALL=bruck BMPI_COLL_BCAST=scatter_allgather \
    BMPI_COLL_REDUCE_SCATTER=ring BMPI_COLL_GATHER=binomial run 3 5
