#!/bin/sh
# Bad command lines: one line on stderr naming the problem, a non-zero
# status (2 for usage errors, 126/127 for a program that cannot run), and
# nothing started: no rank, no PMIx directory.
. "$top_srcdir/test/launcher/lib.sh"

started="$SCRATCH/started"
prog="$SCRATCH/prog"
printf '#!/bin/sh\ntouch "%s"\n' "$started" >"$prog"
chmod +x "$prog"
noexec="$SCRATCH/noexec"
printf '#!/bin/sh\ntouch "%s"\n' "$started" >"$noexec"
chmod -x "$noexec"

# expect STATUS WORD-IN-MESSAGE ARGS...
expect() {
    want=$1 word=$2
    shift 2
    bmpirun "$@"
    [ "$RC" -eq "$want" ] || fail "bmpirun $*: status $RC, expected $want"
    [ "$(wc -l <"$SCRATCH/err")" -eq 1 ] || fail "bmpirun $*: expected one line on stderr, got: $(cat "$SCRATCH/err")"
    grep -q -- "$word" "$SCRATCH/err" || fail "bmpirun $*: the message does not mention '$word': $(cat "$SCRATCH/err")"
    [ ! -s "$SCRATCH/out" ] || fail "bmpirun $*: printed on stdout"
    [ ! -e "$started" ] || fail "bmpirun $*: started the program"
    [ -z "$(ls -A "$JOBTMP")" ] || fail "bmpirun $*: created files in TMPDIR"
    echo "ok ($RC): bmpirun $*: $(cat "$SCRATCH/err")"
}

expect 2 "unknown option '--frobnicate'" --frobnicate -n 2 "$prog"
expect 2 "unknown option '-q'" -q "$prog"
expect 2 "no program" -n 2
expect 2 "no program"
expect 2 "needs a value" -n 2 -x
expect 2 "needs a value" -n
expect 2 "at least one rank" -n 0 "$prog"
expect 2 "'-3'" -n -3 "$prog"
expect 2 "'abc'" -n abc "$prog"
expect 2 "'4x'" -np 4x "$prog"
expect 2 "''" -n "" "$prog"
expect 2 "'99999999999999999999'" -n 99999999999999999999 "$prog"
expect 2 "--timeout 'soon'" --timeout soon "$prog"
expect 2 "--timeout '-1'" --timeout -1 "$prog"
expect 2 "--bind-to 'socket'" --bind-to socket "$prog"
expect 2 "takes no value" --oversubscribe=yes "$prog"
expect 2 "--tag-output=yes: unknown tag" --tag-output=yes "$prog"
# -x needs a variable name, not the next option
expect 2 "-x '-n': not a variable name" -x -n 2 "$prog"
expect 2 "-x '=v': no variable name" -x =v "$prog"
expect 2 "-x '1A=v': not a variable name" -x 1A=v "$prog"
# the number of ranks, given twice, must agree
expect 2 "-n 3 conflicts with the 2 ranks" -n 2 -n 3 "$prog"
expect 2 "-np 4 conflicts with the 2 ranks" -n 2 -np 4 "$prog"
# ranks placed on another host that cannot be reached (the launch agent
# fails): one line naming the host and the agent's last words, status 1
printf '#!/bin/sh\necho "unreachable: $1" >&2\nexit 255\n' >"$SCRATCH/agent"
chmod +x "$SCRATCH/agent"
expect 1 "host bmpi-other-host: could not start bmpirun's daemon.*exited with status 255 (its last words: \"unreachable: bmpi-other-host\")" \
    --launch-agent "$SCRATCH/agent" --host "localhost,bmpi-other-host:2" "$prog"
expect 1 "host bmpi-other-host: could not start" --launch-agent "$SCRATCH/agent" -H bmpi-other-host "$prog"
printf '# hosts\n%s slots=2\nbmpi-other-host:4\n' "$(hostname)" >"$SCRATCH/hosts"
expect 1 "host bmpi-other-host: could not start" --launch-agent "$SCRATCH/agent" --hostfile "$SCRATCH/hosts" "$prog"
expect 2 "launch-agent: empty command" --launch-agent " " -H bmpi-other-host "$prog"
expect 2 "tree-fanout '0'" --tree-fanout 0 "$prog"
expect 2 "cannot read it" --machinefile "$SCRATCH/no-hosts" "$prog"
expect 127 "not found in PATH" -n 2 bmpi-no-such-program-here
expect 127 "No such file" -n 2 "$SCRATCH/missing"
expect 126 "not an executable" -n 2 "$noexec"
expect 126 "directory" -n 2 "$SCRATCH"

# And the same program, well asked, runs.
bmpirun -n 2 "$prog"
expect_rc 0
[ -e "$started" ] || fail "the program did not run when asked properly"
echo "ok: a good command line runs"

# This host alone, by any name, is fine, as is the same -n twice.
printf '%s slots=2\nlocalhost:2\n' "$(hostname)" >"$SCRATCH/hosts"
for opts in "--host $(hostname),localhost:2" "-H 127.0.0.1" "--hostfile $SCRATCH/hosts" "-n 2 -np 2"; do
    rm -f "$started"
    # shellcheck disable=SC2086
    bmpirun $opts "$prog"
    expect_rc 0 "bmpirun $opts"
    [ -e "$started" ] || fail "bmpirun $opts did not run the program"
done
echo "ok: --host/--hostfile naming this host only, and a repeated equal -n, run"

# A TMPDIR that cannot hold the job's PMIx directory: status 1, one line
# naming it, nothing started.
rm -f "$started"
RC=0
TMPDIR="$SCRATCH/no/such/dir" timeout 60 "$BMPIRUN" -n 2 "$prog" >"$SCRATCH/out" 2>"$SCRATCH/err" || RC=$?
expect_rc 1 "bmpirun with a missing TMPDIR"
[ "$(wc -l <"$SCRATCH/err")" -eq 1 ] || fail "missing TMPDIR: expected one line, got: $(cat "$SCRATCH/err")"
grep -q "no/such/dir" "$SCRATCH/err" || fail "missing TMPDIR: the message does not name it"
[ ! -e "$started" ] || fail "missing TMPDIR: the program was started"
echo "ok (1): $(cat "$SCRATCH/err")"
