#!/bin/sh
# Collectives on intercommunicators of unequal groups; then with the local
# parts' other algorithms forced.
prog="$top_builddir/test/mpi/inter_coll"
run() { "$top_srcdir/test/mpi/run-ranks" "$prog" "$@" || exit 1; }
run 2 3 4 5 8
BMPI_COLL_ALLREDUCE=ring BMPI_COLL_REDUCE=pipeline BMPI_COLL_BCAST=scatter_allgather \
    BMPI_COLL_GATHER=binomial BMPI_COLL_BARRIER=dissemination run 5
