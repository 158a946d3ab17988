#!/bin/sh
# Intercommunicators between the even and the odd ranks of the world.
"$top_srcdir/test/mpi/run-ranks" "$top_builddir/test/mpi/intercomm" 1 2 3 4 5 8
