#!/bin/sh
exec "$top_srcdir/test/mpi/run-ranks" "$top_builddir/test/mpi/attr_cb" 1 2 4
