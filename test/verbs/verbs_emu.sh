#!/bin/sh
# The verbs transport over libibverbs-emu (test/verbs/emu.c), preloaded so
# that transport/verbs runs unchanged without an RDMA device:
# BMPI_TRANSPORT=self,verbs keeps shm out, so ranks on this one node talk
# through verbs. Skips (77) when bmpi was built without verbs.
#   VERBS_EMU_COUNTS   rank counts for the test/mpi programs (default "1 2 3 4")
set -u
if ! grep -q '^#define BMPI_HAVE_VERBS 1' "$top_builddir/config.h" 2>/dev/null; then
    echo "SKIP: bmpi was built without verbs (libibverbs-dev)"
    exit 77
fi
emu="$top_builddir/test/verbs/.libs/libibverbs-emu.so"
if [ ! -f "$emu" ]; then
    echo "SKIP: $emu not built"
    exit 77
fi
counts=${VERBS_EMU_COUNTS:-1 2 3 4}
BMPI_TEST_TIMEOUT=${BMPI_TEST_TIMEOUT:-120}
LD_PRELOAD=$emu
BMPI_TRANSPORT=self,verbs
export LD_PRELOAD BMPI_TRANSPORT BMPI_TEST_TIMEOUT
fail() {
    [ -n "${out:-}" ] && printf '%s\n' "$out"
    echo "FAIL: $*"
    exit 1
}
launch() { "$top_srcdir/test/with-timeout" 60 "$BMPIRUN" "$@"; }
run() {
    prog=$1
    shift
    [ -x "$prog" ] || { echo "note: $prog not built, skipped"; return 0; }
    "$top_srcdir/test/mpi/run-ranks" "$prog" "$@" || fail "$prog over verbs ($*)"
}
mpi="$top_builddir/test/mpi"
info="$top_builddir/tools/bmpi_info"

# What bmpi_info says about the device.
out=$("$info")
printf '%s\n' "$out" | grep -q "verbs  *usable" || fail "bmpi_info does not find the emulated device"
printf '%s\n' "$out" | grep -q "^    emu0 port 1: active, InfiniBand, lid [0-9]*" || fail "bmpi_info does not list the port"
printf '%s\n' "$out" | grep -q "^  a peer on another node: *verbs$" || fail "bmpi_info does not choose verbs between nodes"
out=$(BMPI_VERBS_EMU_DEVICES=0 "$info")
printf '%s\n' "$out" | grep -q "verbs  *unusable: no RDMA device found (ibv_get_device_list returned 0 devices)" ||
    fail "no reason given without a device"
out=$(BMPI_VERBS_EMU_PORT=down "$info")
printf '%s\n' "$out" | grep -q "verbs  *unusable: no ACTIVE port: emu0:1 is down" ||
    fail "no reason given without an active port"
printf '%s\n' "$out" | grep -q "^  no port for peers on other nodes: no ACTIVE port: emu0:1 is down" ||
    fail "the device listing does not say why the port is not used"
out=$(BMPI_VERBS_DEVICE=mlx5_0:1 "$info")
printf '%s\n' "$out" | grep -q "BMPI_VERBS_DEVICE=mlx5_0:1: no such RDMA device" ||
    fail "a device asked for and missing is not named"

# The transport alone, connected to itself: connection, credits, the
# registration cache, get/put, a bad key (test/verbs/verbs_unit.c).
# The emulation complains ("emu (pid N): ...") about resources left at
# ibv_dealloc_pd/ibv_destroy_cq/ibv_close_device: close() must release all.
unit="$top_builddir/test/verbs/verbs_unit"
out=$("$unit" 2>&1) || fail "verbs_unit"
printf '%s\n' "$out" | grep -q "emu (pid" && fail "verbs_unit left resources behind"
out=$(BMPI_VERBS_EMU_ODP=1 BMPI_VERBS_ODP=1 "$unit" 2>&1) || fail "verbs_unit with ODP"
out=$(BMPI_VERBS_EMU_LINK=eth "$unit" 2>&1) || fail "verbs_unit over RoCE"
out=$(BMPI_VERBS_EMU_ATOMIC=none "$unit" 2>&1) || fail "verbs_unit on a device without atomics"

# Remote atomics from several processes on one process's memory
# (test/verbs/verbs_amo.c): fetch-and-add, compare-and-swap, a lock.
amo="$top_builddir/test/verbs/verbs_amo"
out=$("$top_srcdir/test/with-timeout" 60 "$amo" 4 2>&1) || fail "verbs_amo"
printf '%s\n' "$out" | grep -q "emu (pid" && fail "verbs_amo left resources behind"
out=$(BMPI_VERBS_EMU_LAZY=1 "$top_srcdir/test/with-timeout" 60 "$amo" 3 2>&1) ||
    fail "verbs_amo, late completions"
out=$(BMPI_VERBS_EMU_ODP=1 BMPI_VERBS_ODP=1 "$top_srcdir/test/with-timeout" 60 "$amo" 2 2>&1) ||
    fail "verbs_amo with ODP"
out=$(BMPI_VERBS_EMU_LINK=eth "$top_srcdir/test/with-timeout" 60 "$amo" 2 2>&1) ||
    fail "verbs_amo over RoCE"
# ... and the test can tell: atomics that are not atomic lose updates.
out=$(BMPI_VERBS_EMU_ATOMIC=racy "$top_srcdir/test/with-timeout" 60 "$amo" 4 2>&1) &&
    fail "verbs_amo passed with atomics that are not atomic (BMPI_VERBS_EMU_ATOMIC=racy)"
printf '%s\n' "$out" | grep -q "not atomic\|did not exclude" ||
    fail "verbs_amo did not report the lost updates"

# Selection: verbs between ranks when shm is excluded; shm wins when allowed.
out=$(BMPI_VERBOSE=1 launch -n 2 "$mpi/hello" 2>&1) || fail "hello over verbs"
printf '%s\n' "$out" | grep -q "rank 0 -> rank 1: verbs" || fail "rank 1 not reached over verbs"
printf '%s\n' "$out" | grep -q "verbs: emu0 port 1 (InfiniBand" || fail "no device line"
printf '%s\n' "$out" | grep -q "emu (pid" && fail "the emulation complained"
out=$(BMPI_TRANSPORT=self,shm,verbs BMPI_VERBOSE=1 launch -n 2 "$mpi/hello" 2>&1) || fail "hello with shm and verbs"
printf '%s\n' "$out" | grep -q "rank 0 -> rank 1: shm" || fail "shm does not win over verbs on one node"

# With ofi open as well (the emulation hides its device from libfabric),
# verbs, listed first, wins the tie between network transports.
if grep -q '^#define BMPI_HAVE_OFI 1' "$top_builddir/config.h"; then
    out=$(BMPI_TRANSPORT=self,verbs,ofi BMPI_VERBOSE=1 launch -n 2 "$mpi/hello" 2>&1) ||
        fail "hello with verbs and ofi"
    printf '%s\n' "$out" | grep -q "rank 0 -> rank 1: verbs" || fail "verbs does not win over ofi"
fi

# The test/mpi programs.
for p in hello p2p_storm p2p_fanin p2p_truncate p2p_ssend p2p_probe p2p_persist p2p_bsend \
    p2p_complete p2p_cancel coll_reduce coll_data coll_scan coll_ops comm_split; do
    run "$mpi/$p" $counts
done

# RoCE: GRH on every address, RoCE v2 GID chosen, MTU 1024.
BMPI_VERBS_EMU_LINK=eth run "$mpi/p2p_storm" 2 4
out=$(BMPI_VERBS_EMU_LINK=eth BMPI_VERBOSE=1 launch -n 2 "$mpi/hello" 2>&1) || fail "hello over RoCE"
printf '%s\n' "$out" | grep -q "(Ethernet, LID 0, GID index 1, MTU 1024" || fail "RoCE v2 GID (index 1) not chosen"

# Lost connection requests (UD) are sent again.
BMPI_VERBS_EMU_UD_DROP=2 run "$mpi/p2p_storm" 3 4
BMPI_VERBS_EMU_UD_DROP=3 run "$mpi/coll_reduce" 4

# A peer that never answers: the send fails naming the timeout, no hang.
out=$(BMPI_VERBS_EMU_UD_DROP=1 BMPI_VERBS_CONNECT_TIMEOUT=2 launch -n 2 "$mpi/hello" 2>&1)
rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "a connection that cannot be made: exit $rc"
printf '%s\n' "$out" | grep -q "did not answer the connection request within 2 s" ||
    fail "the connection timeout is not named"

# Flow control under pressure: few receive buffers, few send buffers, a
# short send queue, nothing inline.
BMPI_VERBS_RX_DEPTH=4 BMPI_VERBS_TX_BUFS=2 BMPI_VERBS_SQ_DEPTH=8 BMPI_VERBS_MAX_INLINE=0 \
    run "$mpi/p2p_storm" 2 4
BMPI_VERBS_RX_DEPTH=4 BMPI_VERBS_MAX_AM=4096 BMPI_VERBS_EAGER_LIMIT=1024 run "$mpi/p2p_fanin" 4
BMPI_VERBS_RX_DEPTH=4 run "$mpi/coll_data" 3

# Late completions: half of the posts leave their work for the next poll
# (MPI_Finalize's drain pumps progress while verbs reports work in flight).
BMPI_VERBS_EMU_LAZY=1 run "$mpi/p2p_storm" 2 4
BMPI_VERBS_EMU_LAZY=1 run "$mpi/coll_data" 3
BMPI_VERBS_EMU_LAZY=1 BMPI_VERBS_RX_DEPTH=4 BMPI_VERBS_TX_BUFS=2 BMPI_VERBS_SQ_DEPTH=8 \
    run "$mpi/p2p_fanin" 4

# Registrations: memory freed and mapped again at the same address must
# not be read through a registration of the old pages.
out=$(launch -n 2 "$top_builddir/test/verbs/verbs_rdma" reuse 2>&1) || fail "free-and-reuse"
printf '%s\n' "$out" | grep -q "reuse ok" || fail "free-and-reuse did not run"
# ... and the test can tell: keeping registrations without ODP reads stale bytes.
out=$(BMPI_VERBS_LEAVE_PINNED=1 launch -n 2 "$top_builddir/test/verbs/verbs_rdma" reuse 2>&1) &&
    fail "BMPI_VERBS_LEAVE_PINNED=1 should read stale bytes after munmap"
printf '%s\n' "$out" | grep -q "stale registration" || fail "no stale bytes reported"
# With ODP the registrations follow the mappings and may be kept.
out=$(BMPI_VERBS_EMU_ODP=1 BMPI_VERBS_ODP=1 BMPI_VERBOSE=2 launch -n 2 "$top_builddir/test/verbs/verbs_rdma" reuse 2>&1) ||
    fail "free-and-reuse with ODP"
printf '%s\n' "$out" | grep -q "registration cache: ODP" || fail "ODP not used"
printf '%s\n' "$out" | grep -q "reuse ok" || fail "free-and-reuse with ODP did not run"
BMPI_VERBS_EMU_ODP=1 BMPI_VERBS_ODP=1 run "$mpi/p2p_storm" 2

# A remote access error fails the receive with the device's words.
out=$(BMPI_VERBS_FAULT_RKEY=1 launch -n 2 "$top_builddir/test/verbs/verbs_rdma" error 2>&1)
rc=$?
[ $rc -eq 3 ] || fail "expected the receiver to abort with 3, got $rc"
printf '%s\n' "$out" | grep -q "recv error: .*RDMA READ of 1048576 bytes from rank 0 failed: remote access error" ||
    fail "the receive error does not explain the failed RDMA READ"

# Fork support only when asked; never fatal.
out=$(BMPI_VERBS_FORK_SAFE=1 BMPI_VERBOSE=1 launch -n 2 "$mpi/hello" 2>&1) || fail "hello with fork support"
printf '%s\n' "$out" | grep -q "fork support: enabled" || fail "BMPI_VERBS_FORK_SAFE=1 ignored"

# Nothing left behind in /dev/shm (the emulation uses memfds).
ls /dev/shm 2>/dev/null | grep -q "bmpi.emu" && fail "emulation segments left in /dev/shm"
echo "ok: verbs over the emulation"
