#!/bin/sh
exec "$top_srcdir/test/fortran/frt-run" f_comm mpifh mpi f08
