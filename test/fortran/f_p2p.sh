#!/bin/sh
exec "$top_srcdir/test/fortran/frt-run" f_p2p mpifh mpi f08
