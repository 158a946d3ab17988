#!/bin/sh
# MPI_BOTTOM with absolute-address datatypes: the blocking collectives on
# the shared-memory path (by default; reductions in two phases as on a
# node with a core per rank; small slots, so big calls go in rounds), then
# on the point-to-point schedules.
prog="$top_builddir/test/mpi/bottom"
run() { "$top_srcdir/test/mpi/run-ranks" "$prog" "$@" || exit 1; }
run 1 2 3 4
BMPI_OVERSUBSCRIBED=0 run 3
BMPI_COLL_SHM_SLOT=2048 run 2 5
BMPI_COLL_SHM=0 run 2 3 4
# every schedule algorithm
BMPI_COLL_REDUCE=rabenseifner BMPI_COLL_ALLREDUCE=rabenseifner BMPI_COLL_ALLGATHER=bruck \
    BMPI_COLL_ALLTOALL=bruck BMPI_COLL_BCAST=scatter_allgather \
    BMPI_COLL_REDUCE_SCATTER=recursive_halving BMPI_COLL_GATHER=binomial \
    BMPI_COLL_SCATTER=binomial run 3 4
BMPI_COLL_REDUCE=pipeline BMPI_COLL_ALLREDUCE=ring BMPI_COLL_ALLGATHER=ring \
    BMPI_COLL_ALLTOALL=pairwise BMPI_COLL_BCAST=pipeline BMPI_COLL_REDUCE_SCATTER=basic run 2 3
BMPI_COLL_REDUCE=halves BMPI_COLL_ALLREDUCE=recursive_doubling BMPI_COLL_ALLGATHER=linear \
    BMPI_COLL_ALLTOALL=linear BMPI_COLL_BCAST=linear BMPI_COLL_REDUCE_SCATTER=ring run 2
