#!/bin/sh
# heap_libc at 1 and 2 ranks with the shared heap (BMPI_SHM_HEAP=1: on
# also where huge-page settings make it stand down by default), then at 2
# ranks with BMPI_SHM_HEAP=0: glibc's own allocator must pass the same
# checks, which shows that they ask for what glibc does and no more.
prog=$top_builddir/test/mpi/heap_libc
BMPI_SHM_HEAP=1 "$top_srcdir/test/mpi/run-ranks" "$prog" 1 2 || exit 1
BMPI_SHM_HEAP=0 "$top_srcdir/test/mpi/run-ranks" "$prog" 2
