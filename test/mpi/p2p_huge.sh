#!/bin/sh
# A message above 2 GiB (count x 1 MiB type), at 2 ranks only.
exec "$top_srcdir/test/mpi/run-ranks" "$top_builddir/test/mpi/p2p_huge" 2
