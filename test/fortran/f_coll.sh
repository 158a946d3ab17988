#!/bin/sh
exec "$top_srcdir/test/fortran/frt-run" f_coll mpifh mpi f08
