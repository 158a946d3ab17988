#!/bin/sh
# Nonblocking and persistent point-to-point calls with request NULL fail.
exec "$top_srcdir/test/mpi/run-ranks" "$top_builddir/test/mpi/p2p_nullreq" 1 2 3
