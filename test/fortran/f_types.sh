#!/bin/sh
exec "$top_srcdir/test/fortran/frt-run" f_types mpifh mpi f08
