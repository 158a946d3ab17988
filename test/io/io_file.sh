#!/bin/sh
exec "$top_srcdir/test/mpi/run-ranks" "$top_builddir/test/io/io_file" 1 2 4
