#!/bin/sh
# bmpi_info names what the network transports find on this machine: the
# libfabric providers (tcp among them, with its verdict in the preference
# list), the RDMA devices or why there are none, and what would be chosen.
set -u
# What the machine has, not what a suite-wide run restricts or emulates
# (the verbs emulation preloaded by make check-transports).
unset BMPI_TRANSPORT BMPI_OFI_PROVIDER LD_PRELOAD
info=$top_builddir/tools/bmpi_info
[ -x "$info" ] || { echo "SKIP: tools/bmpi_info not built"; exit 77; }
out=$("$info" 2>&1) || { printf '%s\n' "$out"; echo "FAIL: bmpi_info exited with $?"; exit 1; }
printf '%s\n' "$out"
fail() { echo "FAIL: $*"; exit 1; }
has() { printf '%s\n' "$out" | grep -q -- "$1"; }

has '^  self   usable$' || fail "self is not listed as usable"
has "^would be chosen" || fail "no 'would be chosen' section"
has "^  oneself: *self$" || fail "self is not chosen for oneself"

if grep -q '^#define BMPI_HAVE_OFI 1' "$top_builddir/config.h" 2>/dev/null &&
    command -v fi_info >/dev/null 2>&1 && fi_info -p tcp -t FI_EP_RDM >/dev/null 2>&1; then
    # Outside a job ofi answers for a job spanning nodes, not "0 ranks".
    has '^  ofi    usable$' || fail "ofi is not usable although libfabric's tcp provider is"
    has '^    tcp;ofi_rxm *fabrics: ' || fail "the tcp provider is not among the FI_EP_RDM providers"
    has '^    tcp;ofi_rxm *usable: fabric ' || fail "tcp;ofi_rxm has no verdict in the preference list"
    has '^    verbs;ofi_rxm *unusable: ' ||
        { fi_info -p verbs -t FI_EP_RDM >/dev/null 2>&1 || fail "verbs;ofi_rxm is not said to be unusable"; }
    has '^  provider for peers on other nodes: ' || fail "no provider named for other nodes"
    # A forced provider that does not exist: named, with libfabric's reason.
    out=$(BMPI_OFI_PROVIDER=no-such-provider "$info" 2>&1)
    has 'no-such-provider *unusable: fi_getinfo' || { printf '%s\n' "$out"; fail "BMPI_OFI_PROVIDER not reported"; }
else
    echo "note: no ofi transport or no libfabric tcp provider here: ofi checks skipped"
fi

if grep -q '^#define BMPI_HAVE_VERBS 1' "$top_builddir/config.h" 2>/dev/null; then
    if [ -z "$(ls /sys/class/infiniband 2>/dev/null)" ]; then
        # No RDMA device on this machine: verbs must say so, and why.
        has '^  verbs  unusable: no RDMA device found (' || fail "verbs does not give its reason"
        has '^verbs: no RDMA device found (' || fail "the verbs section does not say why there is no device"
        printf '%s\n' "$out" | grep -q '^  a peer on another node: *verbs' && fail "verbs chosen without a device"
    else
        has '^verbs: [0-9]* RDMA device' || fail "RDMA devices present but not listed"
        has '^    [^ ]* port [0-9]*: ' || fail "no port listed"
    fi
fi
echo "ok: bmpi_info lists the providers and devices found and what would be chosen"
