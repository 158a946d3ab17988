#!/bin/sh
# Every rma program over the ofi transport alone, tcp provider
# (tcp;ofi_rxm) on loopback, at 2 and 4 ranks (RMA_COUNTS). Skips (77)
# like test/ofi/ofi_tcp.sh when libfabric or the provider is missing.
set -u
. "$top_srcdir/test/ofi/lib.sh"
. "$top_srcdir/test/rma/lib.sh"
ofi_setup tcp
rma_run_all ofi/tcp ${RMA_COUNTS:-2 4}
# tcp;ofi_rxm applies atomics on the target's CPU: accumulates to other
# ranks' MPI_Win_create memory go through them, beside the target's own
# CPU atomics on the same elements
rma_check_net_atomics ofi/tcp 3 rma_acc_order
rma_check_pulled ofi/tcp 3
echo "ok: rma over ofi/tcp"
