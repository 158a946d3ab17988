#!/bin/sh
# Fault injection: in a 4-rank MPI job, rank 2 fails (SIGSEGV or exit 3) at
# each phase of the job's life, many times over, because the defects this
# guards against showed in 1 run of 7 to 15 (a survivor named instead of
# the rank that failed; bmpirun crashing in PMIx teardown). Every run must
# end within seconds with rank 2's status, a first line naming rank 2, and
# no process, PMIx directory or /dev/shm segment of the job left.
# FAULT_RUNS (default 15 per phase and way of failing) sets how many,
# FAULT_PHASES which phases.
. "$top_srcdir/test/launcher/lib.sh"
PROG="$top_builddir/test/launcher/fault"
[ -x "$PROG" ] || { echo "SKIP: $PROG not built"; exit 77; }
RUNS=${FAULT_RUNS:-15}
PHASES=${FAULT_PHASES:-before init after transfer finalize late}

# run PHASE HOW STATUS LINE: one job, checked
run() {
    start=$(now)
    bmpirun -n 4 "$PROG" "$1" "$2" 2 "$MARKER"
    t=$(elapsed "$start")
    what="fault $1 $2, run $i"
    expect_rc "$3" "$what"
    first=$(grep -m 1 '^bmpirun: ' "$SCRATCH/err")
    case $first in
    "bmpirun: rank 2 (pid "*") $4"*) ;;
    *) fail "$what: the first line is not about rank 2 $4: $first" ;;
    esac
    lt "$t" 10 || fail "$what: the job took $t s to end"
    check_clean
    ns=$(sed -n 's/^nspace //p' "$SCRATCH/out")
    [ -z "$(ls /dev/shm | grep -F "bmpi.$ns.")" ] || fail "$what: segments of the job left in /dev/shm"
}

for phase in $PHASES; do
    i=0
    while [ $i -lt "$RUNS" ]; do
        i=$((i + 1))
        run $phase segv 139 "was killed by signal 11"
        run $phase 3 3 "exited with status 3"
    done
    echo "ok: rank 2 failing in phase $phase: $RUNS runs with SIGSEGV, $RUNS with exit 3"
done

# A rank that leaves before MPI_Init with status 0 while its peers wait
# in it: the job ends at once (not after the bootstrap timeout) with a
# line naming it.
i=0
while [ $i -lt 3 ]; do
    i=$((i + 1))
    BMPI_BOOTSTRAP_TIMEOUT=30 run before 0 1 "exited with status 0 without calling MPI_Init"
done
echo "ok: a rank leaving with status 0 before MPI_Init ends the job at once"

# And a plain program whose ranks all exit 0 without PMIx is no failure.
bmpirun -n 4 "$CLIENT" noinit "$MARKER"
expect_rc 0 "a plain program"
check_clean
echo "ok: a plain program"
