#!/bin/sh
# The ofi transport alone over tcp (tcp;ofi_rxm), loopback: all pairs,
# oneself included, with ofi_sanity and the test/mpi programs.
set -u
. "$top_srcdir/test/ofi/lib.sh"
ofi_setup tcp
ofi_socket_battery
echo "ok: ofi over tcp"
