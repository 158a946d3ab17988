# Shared by the test/ofi scripts: skip unless bmpi was built with the ofi
# transport and the provider ($1) is usable here; then run every program
# given with BMPI_TRANSPORT=ofi BMPI_OFI_PROVIDER=$1 at the rank counts of
# OFI_COUNTS.
#   ofi_setup PROVIDER
#   ofi_run PROGRAM [ARGS...]
#   ofi_socket_battery   (after ofi_setup: everything a socket provider runs)
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
    for p in hello p2p_storm p2p_fanin p2p_truncate p2p_ssend p2p_probe p2p_persist p2p_complete \
        p2p_cancel p2p_bsend p2p_errors p2p_self coll_reduce coll_storm coll_data coll_ops coll_scan \
        comm_split comm_ctx; do
        [ -x "$top_builddir/test/mpi/$p" ] && echo "$top_builddir/test/mpi/$p"
    done
}

# Run a test/mpi program over ofi at 2 and 3 ranks. If it fails, run it
# again without BMPI_TRANSPORT/BMPI_OFI_PROVIDER: a program that fails
# there too is broken whatever the transport, which test/mpi reports; it
# is noted here and not counted against ofi.
ofi_run_mpi() {
    prog=$1
    if "$top_srcdir/test/mpi/run-ranks" "$prog" 2 3 >"$ofi_log" 2>&1; then
        echo "ok: $prog over ofi/$BMPI_OFI_PROVIDER"
        return 0
    fi
    if env -u BMPI_TRANSPORT -u BMPI_OFI_PROVIDER "$top_srcdir/test/mpi/run-ranks" "$prog" 2 3 >/dev/null 2>&1; then
        cat "$ofi_log"
        echo "FAIL: $prog over ofi/$BMPI_OFI_PROVIDER (it passes over the default transports)"
        exit 1
    fi
    echo "note: $prog fails with the default transports too; not an ofi failure"
}
# The whole battery over a socket provider (tcp;ofi_rxm or net): all pairs,
# oneself included, with ofi_sanity and the test/mpi programs, then the
# transport's fallback paths forced one by one.
ofi_socket_battery() {
    ofi_run "$top_builddir/test/ofi/ofi_sanity"
    for p in $(ofi_mpi_programs); do
        ofi_run_mpi "$p"
    done
    # Without RMA the runtime streams fragments: force that path too.
    BMPI_OFI_RMA=0 OFI_COUNTS="2 3" ofi_run "$top_builddir/test/ofi/ofi_sanity" 2
    # Tiny pools and a small max_am: the transport pushes back all the time.
    BMPI_OFI_TX_BUFS=2 BMPI_OFI_RX_BUFS=2 BMPI_OFI_MAX_AM=4096 OFI_COUNTS="2 4" \
        ofi_run "$top_builddir/test/ofi/ofi_sanity" 2
    # Without FI_MULTI_RECV: one message per posted receive buffer, few of them.
    BMPI_OFI_MULTI_RECV=0 BMPI_OFI_RX_BUFS=2 OFI_COUNTS="3" ofi_run "$top_builddir/test/ofi/ofi_sanity" 2
    # As for a provider that requires local registrations (FI_MR_LOCAL).
    BMPI_OFI_MR_LOCAL=1 OFI_COUNTS="3" ofi_run "$top_builddir/test/ofi/ofi_sanity" 2
    # Tiny RMA pieces and in-flight bound: many pieces per get, most of
    # them waiting for the bound.
    BMPI_OFI_RMA_PIECE=4k BMPI_OFI_RMA_INFLIGHT=12k OFI_COUNTS="2 3" ofi_run "$top_builddir/test/ofi/ofi_sanity" 2
}

# libfabric's shm provider names its segment /dev/shm/<pid>:<n>:<n> and
# removes it at close or on SIGTERM, but not when the rank _exit()s after
# MPI_Abort. Remove those of processes that are gone (ours: a program that
# aborts under ofi/shm).
ofi_shm_cleanup() {
    for f in /dev/shm/[0-9]*:[0-9]*:[0-9]*; do
        [ -e "$f" ] || continue
        pid=${f#/dev/shm/}
        pid=${pid%%:*}
        kill -0 "$pid" 2>/dev/null || rm -f -- "$f"
    done
}

ofi_log=${TMPDIR:-/tmp}/bmpi-ofi-test.$$.log
trap 'rm -f "$ofi_log"; [ "${BMPI_OFI_PROVIDER:-}" = shm ] && ofi_shm_cleanup' EXIT
