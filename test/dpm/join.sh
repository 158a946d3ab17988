#!/bin/sh
# MPI_Comm_join over TCP loopback (docs/dynamic.md).
"$top_srcdir/test/mpi/run-ranks" "$top_builddir/test/dpm/join" 2 3
