#!/bin/sh
# The ofi transport over the other FI_EP_RDM providers libfabric may have
# (sockets, udp;ofi_rxd): different inject sizes, registration modes and
# segmentation, same results expected. Skips (77) when none is available.
set -u
. "$top_srcdir/test/ofi/lib.sh"
ran=0
for prov in sockets "udp;ofi_rxd"; do
    if (ofi_setup "$prov" >/dev/null); then
        ofi_setup "$prov"
        OFI_COUNTS="1 3" ofi_run "$top_builddir/test/ofi/ofi_sanity" 2
        ran=1
    else
        echo "note: provider $prov not available"
    fi
done
[ $ran -eq 1 ] || { echo "SKIP: neither sockets nor udp;ofi_rxd available"; exit 77; }
echo "ok: ofi over the other providers"
