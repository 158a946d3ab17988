#!/bin/sh
# Collective data access at 1 2 3 4 8 ranks (test/io/io_coll.c).
set -u
exec "$top_srcdir/test/mpi/run-ranks" "$top_builddir/test/io/io_coll" 1 2 3 4 8
