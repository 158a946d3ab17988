#!/bin/sh
exec "$top_srcdir/test/mpi/run-ranks" "$top_builddir/test/io/io_atomic" 2 4 8
