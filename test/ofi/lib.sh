# Shared by the test/ofi scripts: skip unless bmpi was built with the ofi
# transport and the provider ($1) is usable here; then run every program
# given with BMPI_TRANSPORT=ofi BMPI_OFI_PROVIDER=$1 at the rank counts of
# OFI_COUNTS.
#   ofi_setup PROVIDER
#   ofi_run PROGRAM [ARGS...]
ofi_setup() {
    prov=$1
    if ! grep -q '^#define BMPI_HAVE_OFI 1' "$top_builddir/config.h" 2>/dev/null; then
        echo "SKIP: bmpi was built without libfabric"
        exit 77
    fi
    if ! command -v fi_info >/dev/null 2>&1; then
        echo "SKIP: fi_info not found (Debian package libfabric-bin)"
        exit 77
    fi
    if ! fi_info -p "$prov" -t FI_EP_RDM >/dev/null 2>&1; then
        echo "SKIP: libfabric provider $prov is not available here (fi_info -p $prov -t FI_EP_RDM)"
        exit 77
    fi
    BMPI_TRANSPORT=ofi
    BMPI_OFI_PROVIDER=$prov
    export BMPI_TRANSPORT BMPI_OFI_PROVIDER
}

ofi_run() {
    prog=$1
    shift
    if [ ! -x "$prog" ]; then
        echo "note: $prog not built, skipped"
        return 0
    fi
    "$top_srcdir/test/mpi/run-ranks" "$prog" ${OFI_COUNTS:-1 2 3 4} -- "$@" || {
        echo "FAIL: $prog over ofi/$BMPI_OFI_PROVIDER"
        exit 1
    }
}

# The multi-rank programs of test/mpi worth running over ofi, when built.
ofi_mpi_programs() {
    for p in hello p2p_storm p2p_fanin p2p_truncate coll_reduce; do
        [ -x "$top_builddir/test/mpi/$p" ] && echo "$top_builddir/test/mpi/$p"
    done
}
