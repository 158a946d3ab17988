#!/bin/sh
# The ofi transport's remote atomics through the transport contract
# (test/ofi/ofi_amo.c) over the providers here that do them (shm,
# tcp;ofi_rxm, sockets), with FI_MR_LOCAL's code paths forced; and
# amo_native saying no where there are none: RMA off, and net, whose
# FI_ATOMIC has no operation behind it in libfabric 1.17 (docs/ofi.md,
# "RMA and atomics"). Skips (77) without libfabric or its shm provider.
set -u
. "$top_srcdir/test/ofi/lib.sh"
ofi_setup shm
prog=$top_builddir/test/ofi/ofi_amo
# More ranks than the 2 cores of CI's machines: fewer operations (each
# waits for its target to be scheduled).
OFI_COUNTS="1 2" ofi_run "$prog" native 2000
OFI_COUNTS="4" ofi_run "$prog" native 200
BMPI_OFI_MR_LOCAL=1 OFI_COUNTS="2" ofi_run "$prog" native 300
BMPI_OFI_RMA=0 OFI_COUNTS="2" ofi_run "$prog" none
for p in tcp sockets; do
    if ! fi_info -p "$p" -t FI_EP_RDM >/dev/null 2>&1; then
        echo "note: provider $p is not available here, skipped"
        continue
    fi
    BMPI_OFI_PROVIDER=$p
    OFI_COUNTS="2" ofi_run "$prog" native 1000
    OFI_COUNTS="3" ofi_run "$prog" native 200
    BMPI_OFI_MR_LOCAL=1 OFI_COUNTS="2" ofi_run "$prog" native 200
done
BMPI_OFI_PROVIDER=tcp
BMPI_OFI_RMA=0 OFI_COUNTS="2" ofi_run "$prog" none
if fi_info -p net -t FI_EP_RDM >/dev/null 2>&1; then
    BMPI_OFI_PROVIDER=net
    OFI_COUNTS="2" ofi_run "$prog" auto 500
fi
echo "ok: ofi atomics"
