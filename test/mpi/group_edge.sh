#!/bin/sh
# Group calls on MPI_GROUP_EMPTY, MPI_GROUP_NULL, n = 0 and bad ranks.
exec "$top_srcdir/test/mpi/run-ranks" "$top_builddir/test/mpi/group_edge" 1 2 3
