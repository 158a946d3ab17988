#!/bin/sh
exec "$top_srcdir/test/mpi/run-ranks" "$top_builddir/test/io/io_datarep" 1 2 4
