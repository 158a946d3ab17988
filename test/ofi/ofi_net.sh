#!/bin/sh
# The ofi transport alone over net (libfabric 1.17's native RDM over TCP,
# first choice after the RDMA providers), loopback: all pairs,
# oneself included, with ofi_sanity and the test/mpi programs.
set -u
. "$top_srcdir/test/ofi/lib.sh"
ofi_setup net
ofi_socket_battery
echo "ok: ofi over net"
