#!/bin/sh
# Every predefined op on every predefined type, MINLOC/MAXLOC on the pairs.
exec "$top_srcdir/test/mpi/run-ranks" "$top_builddir/test/mpi/coll_ops" 1 2 3 8
