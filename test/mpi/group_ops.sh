#!/bin/sh
exec "$top_srcdir/test/mpi/run-ranks" "$top_builddir/test/mpi/group_ops" 1 2 3 4 8
