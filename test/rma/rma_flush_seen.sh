#!/bin/sh
exec "$top_srcdir/test/mpi/run-ranks" "$top_builddir/test/rma/rma_flush_seen" 1 2 3 4 8
