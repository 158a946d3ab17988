#!/bin/sh
# Split, create, split_type and the dups of intercommunicators.
"$top_srcdir/test/mpi/run-ranks" "$top_builddir/test/mpi/interctor_construct" 1 2 3 4 5 7 8
