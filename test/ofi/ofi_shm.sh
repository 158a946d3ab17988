#!/bin/sh
# The ofi transport alone over libfabric's shm provider: all pairs, oneself
# included, with ofi_sanity and the test/mpi programs.
set -u
. "$top_srcdir/test/ofi/lib.sh"
ofi_setup shm
ofi_run "$top_builddir/test/ofi/ofi_sanity"
for p in $(ofi_mpi_programs); do
    ofi_run_mpi "$p"
done
BMPI_OFI_TX_BUFS=2 BMPI_OFI_RX_BUFS=2 OFI_COUNTS="2 4" ofi_run "$top_builddir/test/ofi/ofi_sanity" 2
# Without FI_MULTI_RECV: one message per posted receive buffer, few of them.
BMPI_OFI_MULTI_RECV=0 BMPI_OFI_RX_BUFS=2 OFI_COUNTS="3" ofi_run "$top_builddir/test/ofi/ofi_sanity" 2
# As for a provider that requires local registrations (FI_MR_LOCAL).
BMPI_OFI_MR_LOCAL=1 OFI_COUNTS="3" ofi_run "$top_builddir/test/ofi/ofi_sanity" 2
# Gets and the sender's puts of the shared copy (from 32 KiB) in bounded
# pieces, as over sockets.
BMPI_OFI_RMA_PIECE=16k BMPI_OFI_RMA_INFLIGHT=32k OFI_COUNTS="2 3" ofi_run "$top_builddir/test/ofi/ofi_sanity" 2
echo "ok: ofi over shm"
