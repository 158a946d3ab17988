# Shared by bmpirun's tests; sourced, POSIX sh. Every bmpirun runs under
# `timeout -k 10 60`, so that a hang fails instead of blocking `make
# check`, also one that SIGTERM does not end (bmpirun stuck in libpmix).
# Exit codes: 0 pass, 1 fail, 77 skip.

: "${top_builddir:?run through make check (top_builddir not set)}"
: "${BMPIRUN:=$top_builddir/launcher/bmpirun}"
CLIENT="$top_builddir/test/launcher/pmix_client"

[ -x "$BMPIRUN" ] || { echo "SKIP: $BMPIRUN not built"; exit 77; }
[ -x "$CLIENT" ] || { echo "SKIP: $CLIENT not built"; exit 77; }

SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/bmpirun-test.XXXXXX") || exit 1
trap 'rm -rf "$SCRATCH"' EXIT
trap 'exit 1' INT TERM HUP
# bmpirun puts its PMIx directory here: it must be empty after every run.
JOBTMP="$SCRATCH/tmp"
mkdir "$JOBTMP"
TMPDIR="$JOBTMP"
export TMPDIR
# A word no other process on the machine has in its command line.
MARKER="marker-$$-$(date +%s%N)"

fail() {
    echo "FAIL: $*"
    for f in "$SCRATCH"/out "$SCRATCH"/err; do
        [ -s "$f" ] && { echo "--- $f (last lines)"; tail -n 20 "$f"; }
    done
    exit 1
}

now() { date +%s.%N; }
# seconds from $1 to $2 (default: now)
elapsed() { awk -v a="$1" -v b="${2:-$(now)}" 'BEGIN { printf "%.3f", b - a }'; }
# true when $1 < $2 (decimals)
lt() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }

# bmpirun ARGS...: stdout to $SCRATCH/out, stderr to $SCRATCH/err; sets RC.
bmpirun() {
    RC=0
    T0=$(now)
    timeout -k 10 60 "$BMPIRUN" "$@" >"$SCRATCH/out" 2>"$SCRATCH/err" </dev/null || RC=$?
    hung_check "$@"
}

hung_check() {
    if [ "$RC" -eq 124 ] && ! grep -q -- "--timeout" "$SCRATCH/err"; then
        fail "bmpirun $* hung (killed by timeout 60)"
    fi
    if [ "$RC" -eq 137 ] && ! lt "$(elapsed "$T0")" 60; then
        fail "bmpirun $* hung, even after SIGTERM (killed by timeout -k 10 60)"
    fi
}

# bmpirun_bg ARGS...: start in the background; BPID is bmpirun's pid, TPID
# that of its watchdog; bg_wait collects RC.
bmpirun_bg() {
    T0=$(now)
    timeout -k 10 60 "$BMPIRUN" "$@" >"$SCRATCH/out" 2>"$SCRATCH/err" </dev/null &
    TPID=$!
    BPID=
    i=0
    while [ -z "$BPID" ]; do
        BPID=$(pgrep -P "$TPID" || true)
        i=$((i + 1))
        [ $i -lt 100 ] || fail "bmpirun did not start"
        [ -n "$BPID" ] || sleep 0.05
    done
}

bg_wait() {
    RC=0
    wait "$TPID" || RC=$?
    hung_check
}

expect_rc() {
    [ "$RC" -eq "$1" ] || fail "${2:-bmpirun} exited with $RC, expected $1"
}

# wait_for FILE PATTERN COUNT: until COUNT lines of FILE match, at most 30 s
wait_for() {
    i=0
    while [ "$(grep -c -- "$2" "$1" 2>/dev/null || true)" -lt "$3" ]; do
        i=$((i + 1))
        [ $i -lt 300 ] || fail "waited 30 s for $3 lines matching '$2' in $1"
        sleep 0.1
    done
}

# No rank process left (by the marker in their arguments), no PMIx
# directory, none of the job's /dev/shm segments (listed in $SCRATCH/out
# by the client's shm action).
check_clean() {
    sleep 0.1
    left=$(pgrep -f -- "$MARKER" || true)
    [ -z "$left" ] || { ps -o pid,pgid,stat,args -p $left; fail "processes left behind: $left"; }
    [ -z "$(ls -A "$JOBTMP")" ] || { ls -laR "$JOBTMP"; fail "bmpirun left files in its tmp dir $JOBTMP"; }
    for seg in $(sed -n 's/^shm [0-9]* //p' "$SCRATCH/out"); do
        [ ! -e "$seg" ] || fail "shared memory segment $seg left behind"
    done
}
