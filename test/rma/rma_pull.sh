#!/bin/sh
exec "$top_srcdir/test/mpi/run-ranks" "$top_builddir/test/rma/rma_pull" 1 2 3 4 8
