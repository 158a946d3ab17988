#!/bin/sh
# A program with its own malloc: libbmpi's shared heap stands down.
"$top_srcdir/test/mpi/run-ranks" "$top_builddir/test/mpi/heap_own_malloc" 1 2 3
