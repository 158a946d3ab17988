#!/bin/sh
# Every rma program over the ofi transport alone, libfabric's shm
# provider, at 2 and 4 ranks (RMA_COUNTS). Skips (77) like
# test/ofi/ofi_shm.sh when libfabric or the provider is missing.
set -u
. "$top_srcdir/test/ofi/lib.sh"
. "$top_srcdir/test/rma/lib.sh"
ofi_setup shm
rma_run_all ofi/shm ${RMA_COUNTS:-2 4}
rma_check_net_atomics ofi/shm 3 rma_acc_order
echo "ok: rma over ofi/shm"
