#!/bin/sh
exec "$top_srcdir/test/fortran/frt-run" f_io mpifh mpi f08
