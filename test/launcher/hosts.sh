#!/bin/sh
# Host lists, hostfiles of both dialects, -N, --map-by and a Slurm
# allocation, through the real bmpirun: every host here names this
# machine, so all ranks run here, on one node (MPI_COMM_TYPE_SHARED holds
# them all, in rank order), and the job's size comes from the slots. Bad
# hostfiles and too many ranks: one line naming the problem, status 2,
# nothing started. Another host that cannot be reached (a launch agent
# that fails): one line naming the host and the agent's words, status 1,
# nothing left (test/netns/bmpirun.sh runs real jobs across hosts).
. "$top_srcdir/test/launcher/lib.sh"

WHERE="$top_builddir/test/launcher/where"
[ -x "$WHERE" ] || { echo "SKIP: $WHERE not built"; exit 77; }
self=$(hostname)
unset SLURM_JOB_NODELIST SLURM_TASKS_PER_NODE

# runs N ARGS...: bmpirun ARGS... where runs N ranks, all on this node.
runs() {
    n=$1
    shift
    bmpirun "$@" "$WHERE"
    expect_rc 0 "bmpirun $*"
    r=0
    while [ $r -lt "$n" ]; do
        grep -qx "rank $r size $n shared $r of $n" "$SCRATCH/out" ||
            fail "bmpirun $*: rank $r of $n is missing or not on one node with the others: $(cat "$SCRATCH/out")"
        r=$((r + 1))
    done
    [ "$(wc -l <"$SCRATCH/out")" -eq "$n" ] || fail "bmpirun $*: expected $n lines"
    [ ! -s "$SCRATCH/err" ] || fail "bmpirun $*: unexpected stderr"
    check_clean
    echo "ok: bmpirun $*: $n ranks on this node"
}

# refused STATUS TEXT ARGS...: one line on stderr holding TEXT, nothing run.
refused() {
    want=$1 text=$2
    shift 2
    bmpirun "$@" "$WHERE"
    expect_rc "$want" "bmpirun $*"
    [ "$(wc -l <"$SCRATCH/err")" -eq 1 ] || fail "bmpirun $*: expected one line on stderr"
    grep -qF -- "$text" "$SCRATCH/err" || fail "bmpirun $*: stderr does not say '$text': $(cat "$SCRATCH/err")"
    [ ! -s "$SCRATCH/out" ] || fail "bmpirun $*: a rank ran"
    [ -z "$(ls -A "$JOBTMP")" ] || fail "bmpirun $*: created files in TMPDIR"
    echo "ok ($RC): bmpirun $*: $(cat "$SCRATCH/err")"
}

# -H: the slots of this host under two names fill the job, in both mappings
runs 4 --host "localhost:2,$self:2"
runs 4 --host "localhost:2,$self:2" --map-by node
runs 3 -H "localhost,$self,localhost" --map-by slot
runs 2 --host "localhost:2,$self:2" -N 1 --map-by node
runs 2 -H "127.0.0.1:3" -n 2
# by address: one of this machine's own (not loopback) addresses
addr=$(hostname -I 2>/dev/null | awk '{ print $1 }')
[ -z "$addr" ] || runs 2 -H "$addr:2"
refused 2 "5 ranks asked for, but the 2 host(s) have 4 slots; give -n 4 or less, more slots, or --oversubscribe" \
    --host "localhost:2,$self:2" -n 5
runs 5 --host "localhost:2,$self:2" -n 5 --oversubscribe

# hostfiles: Open MPI's dialect and MPICH's
printf '# this machine\n\n  localhost slots=2 max_slots=3\n\t%s slots=1   # by name\n' "$self" >"$SCRATCH/ompi"
runs 3 --hostfile "$SCRATCH/ompi"
runs 4 --hostfile "$SCRATCH/ompi" -n 4 --oversubscribe --map-by node
printf 'localhost:2\n%s:2 # by name\n127.0.0.1\n' "$self" >"$SCRATCH/mpich"
runs 5 -f "$SCRATCH/mpich"
runs 4 --machinefile "$SCRATCH/mpich" -ppn 2 -n 4

# malformed hostfiles: the file, the line and the bad text
printf 'localhost slots=2\n%s slots=two\n' "$self" >"$SCRATCH/bad"
refused 2 "hostfile '$SCRATCH/bad' line 2: 'slots=two': the count must be a whole number" --hostfile "$SCRATCH/bad"
printf '# ok\nlocalhost:2 cores=4\n' >"$SCRATCH/bad"
refused 2 "hostfile '$SCRATCH/bad' line 2: 'cores=4': unknown" -f "$SCRATCH/bad"
refused 2 "-H 'localhost:0': 'localhost:0': the number of slots" -H localhost:0
refused 2 "--map-by 'core': unknown mapping" --map-by core -n 2

# another host that cannot be reached: its daemon never starts; one line
# names the host and the agent's words, and the local rank goes too
printf '#!/bin/sh\necho "noagent: no route to host $1" >&2\nexit 255\n' >"$SCRATCH/noagent"
chmod +x "$SCRATCH/noagent"
unreachable() {
    bmpirun --launch-agent "$SCRATCH/noagent" "$@" "$WHERE"
    expect_rc 1 "bmpirun $*"
    [ "$(wc -l <"$SCRATCH/err")" -eq 1 ] || fail "bmpirun $*: expected one line on stderr: $(cat "$SCRATCH/err")"
    grep -qF "host bmpi-other-host: could not start bmpirun's daemon: '$SCRATCH/noagent bmpi-other-host " "$SCRATCH/err" &&
        grep -qF 'exited with status 255 (its last words: "noagent: no route to host bmpi-other-host")' "$SCRATCH/err" ||
        fail "bmpirun $*: stderr does not name the host and the cause: $(cat "$SCRATCH/err")"
    check_clean
    echo "ok ($RC): bmpirun $*: $(cat "$SCRATCH/err")"
}
unreachable --host "localhost:1,bmpi-other-host:2" -n 2
runs 1 --host "localhost:1,bmpi-other-host:2" -n 1
printf '%s slots=1\nbmpi-other-host:4\n' "$self" >"$SCRATCH/remote"
unreachable --hostfile "$SCRATCH/remote" --map-by node -n 2
refused 2 "hosts 'localhost' and '$self' both name this machine" --host "localhost:1,$self:1,bmpi-other-host:1" -n 3

# inside a Slurm allocation with no host list: its nodes and tasks
SLURM_JOB_NODELIST=$self SLURM_TASKS_PER_NODE=3
export SLURM_JOB_NODELIST SLURM_TASKS_PER_NODE
runs 3
runs 2 -n 2
runs 2 --host localhost:2
SLURM_JOB_NODELIST='bmpi-node[01-02]' SLURM_TASKS_PER_NODE='2(x2)'
# its nodes are other hosts: started with the agent when one is given
bmpirun --launch-agent "$SCRATCH/noagent" -n 2 "$WHERE"
expect_rc 1 "bmpirun in a Slurm allocation of other hosts"
grep -qF "host bmpi-node01: could not start bmpirun's daemon" "$SCRATCH/err" ||
    fail "bmpirun in a Slurm allocation of other hosts: $(cat "$SCRATCH/err")"
check_clean
SLURM_TASKS_PER_NODE='2(x3)'
refused 2 "SLURM_TASKS_PER_NODE '2(x3)' counts more nodes than the 2 of SLURM_JOB_NODELIST"
