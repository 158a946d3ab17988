#!/bin/sh
# MPI_Type_get_name of predefined, derived and duplicated types.
exec "$top_srcdir/test/mpi/run-ranks" "$top_builddir/test/mpi/type_names" 1
