#!/bin/sh
exec "$top_srcdir/test/mpi/run-ranks" "$top_builddir/test/fortran/lang_cb" 1 2 4
