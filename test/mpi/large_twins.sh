#!/bin/sh
# Every implemented _c function against its int twin, small counts.
exec "$top_srcdir/test/mpi/run-ranks" "$top_builddir/test/mpi/large_twins" 1 2 3 4
