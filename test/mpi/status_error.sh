#!/bin/sh
# Single-completion calls leave status.MPI_ERROR alone.
exec "$top_srcdir/test/mpi/run-ranks" "$top_builddir/test/mpi/status_error" 1 2 3
