#!/bin/sh
# The name service (docs/dynamic.md "Name service") at several rank counts.
"$top_srcdir/test/mpi/run-ranks" "$top_builddir/test/dpm/names" 1 2 3
