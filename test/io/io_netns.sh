#!/bin/sh
# The MPI-IO programs across two simulated hosts (test/netns/lib.sh:
# network namespaces joined by a bridge, 192.0.2.0/24), started by bmpirun
# through test/netns/host-agent.sh at 1+1 and 2+2 ranks: collective
# buffering then has one aggregator per node and moves pieces between
# hosts over ofi, which no single-host run shows. The hosts share this
# machine's file system, as nodes share an NFS mount (NFS itself cannot be
# mounted here: the kernel has no nfs client). Root only; skips (77)
# without ip, unshare or the ofi transport. Everything it creates
# (namespaces, processes in them, temporary files, shm segments of its
# jobs) is removed on any exit.
set -u
unset BMPI_TRANSPORT BMPI_OFI_PROVIDER LD_PRELOAD
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
BMPIRUN=${BMPIRUN:-$top_builddir/launcher/bmpirun}
timeout_s=${BMPI_TEST_TIMEOUT:-120}

skip() {
    echo "SKIP: $*"
    exit 77
}
[ "$(id -u)" = 0 ] || skip "network namespaces need root"
for c in ip unshare timeout; do
    command -v "$c" >/dev/null 2>&1 || skip "$c not found"
done
grep -q '^#define BMPI_HAVE_OFI 1' "$top_builddir/config.h" 2>/dev/null || skip "bmpi was built without the ofi transport"
[ -x "$BMPIRUN" ] || skip "$BMPIRUN not built"

. "$top_srcdir/test/netns/lib.sh"
netns_test_setup bmio 2
tmp=$NETNS_TMP
h1=$(netns_name 1) h2=$(netns_name 2)
mkdir -p "$tmp/jobtmp/head" "$tmp/files"
NETNS_HOST_TMPDIR=$tmp/jobtmp
export NETNS_HOST_TMPDIR
cp "$top_srcdir/test/netns/host-agent.sh" "$tmp/agent" && chmod +x "$tmp/agent" || exit 1
echo "simulated hosts: $h1 $h2 (192.0.2.1-2), bmpirun in $NETNS_HEAD"

# run_hosts SLOTS PROGRAM: bmpirun --host h1:SLOTS,h2:SLOTS, the files of
# the program in one directory every host sees.
run_hosts() {
    "$top_srcdir/test/with-timeout" -p "$NETNS_PIDS_COMMAND" "$timeout_s" \
        ip netns exec "$NETNS_HEAD" env TMPDIR="$tmp/jobtmp/head" \
        "$BMPIRUN" --launch-agent "$tmp/agent" --host "$h1:$1,$h2:$1" \
        "$tmp/rank" env BMPI_IO_TEST_DIR="$tmp/files" "$top_builddir/test/io/$2" >"$tmp/out" 2>&1 </dev/null &
    NETNS_JOB_PID=$!
    wait "$NETNS_JOB_PID"
    rc=$?
    NETNS_JOB_PID=
    if [ $rc -ne 0 ]; then
        tail -n 30 "$tmp/out"
        [ $rc -eq 124 ] && echo "(timed out after ${timeout_s}s)"
        echo "FAIL: $2 at $1+$1 ranks across two hosts exited with $rc"
        exit 1
    fi
    echo "ok: $2 at $1+$1 ranks across two hosts"
}

for slots in 1 2; do
    for p in io_coll io_views io_nonblock io_atomic io_file io_shared; do
        run_hosts $slots "$p"
    done
done
echo "ok: MPI-IO across simulated hosts"
