#!/bin/sh
# Every rma program across two simulated hosts (test/netns/lib.sh: network
# namespaces joined by a bridge, 192.0.2.0/24), started by bmpirun through
# test/netns/host-agent.sh at 1+1 and 2+2 ranks: windows then span two
# nodes (two node regions; peers on the other host through ofi, on this
# host through the node region or shm), which no single-host run shows.
# rma_matrix skips the shared flavor there by itself (not all on one node).
# Root only; skips (77) without ip, unshare or the ofi transport.
# Everything it creates (namespaces, processes in them, temporary files,
# bmpi shm segments of its jobs) is removed on any exit.
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
. "$top_srcdir/test/rma/lib.sh"
tmp=
runpid=
stop_job() {
    [ -n "$runpid" ] || return 0
    kill -TERM "$runpid" 2>/dev/null
    sleep 1
}
# shm segments of our jobs (named /bmpi.<nspace>...), left by a rank that
# was killed; then our files
remove_files() {
    if [ -n "$tmp" ] && [ -f "$tmp/nspaces" ]; then
        for n in $(sort -u "$tmp/nspaces"); do
            rm -f /dev/shm/bmpi."$n".* 2>/dev/null
        done
    fi
    [ -n "$tmp" ] && rm -rf -- "$tmp"
}
NETNS_BEFORE_TEARDOWN=stop_job
NETNS_AFTER_TEARDOWN=remove_files
netns_setup bmrma 2
case $? in
0) ;;
77) skip "network namespaces cannot be made here" ;;
*) echo "FAIL: simulated hosts"; exit 1 ;;
esac
h1=$(netns_name 1) h2=$(netns_name 2)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bmpi-rma-netns.$$.XXXXXX") || { echo "FAIL: mktemp"; exit 1; }
: >"$tmp/nspaces"
mkdir -p "$tmp/jobtmp/head"
NETNS_HOST_TMPDIR=$tmp/jobtmp
export NETNS_HOST_TMPDIR
cp "$top_srcdir/test/netns/host-agent.sh" "$tmp/agent" && chmod +x "$tmp/agent" || exit 1
# Each rank records its job's PMIx namespace (for the cleanup).
cat >"$tmp/rank" <<EOF
echo "\${PMIX_NAMESPACE:-}" >>"$tmp/nspaces"
exec "\$@"
EOF
chmod +x "$tmp/rank"
echo "simulated hosts: $h1 $h2 (192.0.2.1-2), bmpirun in $NETNS_HEAD"

# run_hosts SLOTS PROGRAM [ARG]: bmpirun --host h1:SLOTS,h2:SLOTS.
run_hosts() {
    "$top_srcdir/test/with-timeout" -p "$NETNS_PIDS_COMMAND" "$timeout_s" \
        ip netns exec "$NETNS_HEAD" env TMPDIR="$tmp/jobtmp/head" \
        "$BMPIRUN" --launch-agent "$tmp/agent" --host "$h1:$1,$h2:$1" \
        sh "$tmp/rank" "$top_builddir/test/rma/$2" ${3:+"$3"} >"$tmp/out" 2>&1 </dev/null &
    runpid=$!
    wait "$runpid"
    rc=$?
    runpid=
    if [ $rc -ne 0 ]; then
        tail -n 30 "$tmp/out"
        [ $rc -eq 124 ] && echo "(timed out after ${timeout_s}s)"
        echo "FAIL: $2${3:+ $3} at $1+$1 ranks across two hosts exited with $rc"
        exit 1
    fi
    echo "ok: $2${3:+ $3} at $1+$1 ranks across two hosts"
}

for slots in 1 2; do
    for f in $rma_flavors; do
        run_hosts $slots rma_matrix "$f"
    done
    for p in $rma_programs; do
        run_hosts $slots "$p"
    done
done
echo "ok: rma across simulated hosts"
