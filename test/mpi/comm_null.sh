#!/bin/sh
# MPI_Comm_get_name(MPI_COMM_NULL) and MPI_Comm_disconnect.
exec "$top_srcdir/test/mpi/run-ranks" "$top_builddir/test/mpi/comm_null" 1 2 3
