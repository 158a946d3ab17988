#!/bin/sh
exec "$top_srcdir/test/mpi/run-ranks" "$top_builddir/test/io/io_shared" 1 2 3 4 8
