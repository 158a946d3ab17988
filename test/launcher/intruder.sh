#!/bin/sh
# A second local user connects to the job's PMIx server while the job runs:
# the server refuses it, and bmpirun still ends with the job's own status
# within seconds of the job's end (libpmix 4.2.2 then hangs in
# PMIx_server_finalize, which bmpirun must not wait for), leaving nothing.
# A client of the same user with a bad credential (a rank the job does not
# have) is refused as well. Root only: the intruder is setuid nobody.
. "$top_srcdir/test/launcher/lib.sh"
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root to run a client as another user"; exit 77; }
command -v setpriv >/dev/null 2>&1 || { echo "SKIP: setpriv (util-linux) not installed"; exit 77; }
setpriv --reuid=nobody --regid=nogroup --clear-groups -- test -x "$CLIENT" 2>/dev/null ||
    { echo "SKIP: user nobody cannot run $CLIENT"; exit 77; }

# intrude AS-NOBODY RANK: a client with rank 0's PMIx environment
intrude() {
    pid=$(sed -n 's/^rank 0 size .* pid \([0-9]*\)$/\1/p' "$SCRATCH/out")
    [ -n "$pid" ] || fail "no pid for rank 0"
    env=$(tr '\0' '\n' <"/proc/$pid/environ" | grep '^PMIX_' | sed "s/^PMIX_RANK=.*/PMIX_RANK=$2/")
    IRC=0
    if [ "$1" = yes ]; then
        # shellcheck disable=SC2086
        env -i PATH="$PATH" $env timeout 30 setpriv --reuid=nobody --regid=nogroup --clear-groups -- \
            "$CLIENT" noexchange >"$SCRATCH/intruder" 2>&1 || IRC=$?
    else
        # shellcheck disable=SC2086
        env -i PATH="$PATH" $env timeout 30 "$CLIENT" noexchange >"$SCRATCH/intruder" 2>&1 || IRC=$?
    fi
    [ "$IRC" -ne 0 ] || fail "the intruding client was let in: $(cat "$SCRATCH/intruder")"
    grep -q "PMIx_Init" "$SCRATCH/intruder" || fail "the intruder failed, but not in PMIx_Init: $(cat "$SCRATCH/intruder")"
}

for who in "yes 0" "no 99"; do
    start=$(now)
    bmpirun_bg -n 2 "$CLIENT" sleep=2 exit=5@1 "$MARKER"
    wait_for "$SCRATCH/out" '^rank 0 size ' 1
    intrude $who
    bg_wait
    t=$(elapsed "$start")
    expect_rc 5 "the job with an intruder (nobody, rank: $who)"
    lt "$t" 8 || fail "the job with an intruder (nobody, rank: $who) took $t s for its 2 s"
    grep -q "^bmpirun: rank 1 (pid [0-9]*) exited with status 5" "$SCRATCH/err" || fail "no line naming rank 1"
    check_clean
    echo "ok: intruder (nobody, rank: $who) refused; the job ended with its own status in $t s"
done
