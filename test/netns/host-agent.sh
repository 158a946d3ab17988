#!/bin/sh
# Launch agent for bmpirun on simulated hosts (test/netns/lib.sh), given as
# `--launch-agent host-agent.sh`: bmpirun calls it as it calls ssh,
# `host-agent.sh HOST COMMAND [ARGS...]`, the command as separate words.
# HOST is a network namespace; the command runs in it under a UTS
# namespace of its own whose hostname is HOST (the namespaces share one
# otherwise), with the environment a fresh ssh login would give, not the
# caller's: PATH and HOME (and the suite's ASAN_OPTIONS, UBSAN_OPTIONS), and
# TMPDIR=$NETNS_HOST_TMPDIR/HOST (made here)
# when NETNS_HOST_TMPDIR is set, so that each host has a temporary
# directory of its own as real hosts do. stdin, stdout and stderr pass
# through; the exit status is the command's, or 255 with ip's line when
# HOST does not exist (as ssh's for a host it cannot reach).
host=${1:?usage: host-agent.sh HOST COMMAND [ARGS...]}
shift
tmp=
if [ -n "${NETNS_HOST_TMPDIR:-}" ]; then
    tmp=$NETNS_HOST_TMPDIR/$host
    mkdir -p "$tmp" || exit 255
fi
# The test suite's sanitizer settings go along, as a user would pass them
# with -x: a daemon or rank built with ASan must behave as on the head.
exec ip netns exec "$host" unshare --uts env -i PATH="$PATH" HOME="${HOME:-/}" ${tmp:+TMPDIR="$tmp"} \
    ${ASAN_OPTIONS:+ASAN_OPTIONS="$ASAN_OPTIONS"} ${UBSAN_OPTIONS:+UBSAN_OPTIONS="$UBSAN_OPTIONS"} \
    /bin/sh -c 'hostname "$0" && exec "$@"' "$host" "$@"
