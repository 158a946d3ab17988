#!/bin/sh
exec "$top_srcdir/test/mpi/run-ranks" "$top_builddir/test/io/io_views" 1 2 3 4 8
