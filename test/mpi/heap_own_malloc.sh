#!/bin/sh
# A program with its own malloc: libbmpi's shared heap stands down, even
# when BMPI_SHM_HEAP=1 asks for it.
# A sanitizer build has no shared heap, and its runtime cannot share the
# process with a malloc the program defines.
if ! nm -D "$top_builddir/.libs/libbmpi.so" 2>/dev/null | grep -q ' T malloc$'; then
    echo "SKIP: this libbmpi has no shared heap (sanitizer build)"
    exit 77
fi
BMPI_SHM_HEAP=1 "$top_srcdir/test/mpi/run-ranks" "$top_builddir/test/mpi/heap_own_malloc" 1 2 3
