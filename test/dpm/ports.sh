#!/bin/sh
# Two independent bmpirun jobs: one accepts on a port, the other connects
# (docs/dynamic.md). The port name goes through a file in a directory this
# test makes and removes.
set -u
with_timeout=$top_srcdir/test/with-timeout
prog=$top_builddir/test/dpm/ports
dir=$(mktemp -d "${TMPDIR:-/tmp}/bmpi-ports.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
# run SERVER-ENV CLIENT-ENV [unreachable]: both jobs, each under env
run() {
    rm -f "$dir/port"
    env $1 "$with_timeout" 120 "$BMPIRUN" -n 2 "$prog" server "$dir/port" ${3:-} > "$dir/server.out" 2>&1 &
    server=$!
    env $2 "$with_timeout" 120 "$BMPIRUN" -n 3 "$prog" client "$dir/port" ${3:-} > "$dir/client.out" 2>&1
    crc=$?
    wait $server
    src=$?
    cat "$dir/server.out" "$dir/client.out"
    [ $src -eq 0 ] && [ $crc -eq 0 ] || { echo "FAIL: server exited $src, client $crc"; exit 1; }
    grep -q '^ports server: ok' "$dir/server.out" && grep -q '^ports client: ok' "$dir/client.out" ||
        { echo "FAIL: a side did not report ok"; exit 1; }
}
run "" ""
# a client that can reach no other job: both sides fail, neither hangs
run "" BMPI_TRANSPORT=self,shm unreachable
exit 0
