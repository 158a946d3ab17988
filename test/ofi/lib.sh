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
