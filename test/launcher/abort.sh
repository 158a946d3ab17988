#!/bin/sh
# PMIx_Abort (what MPI_Abort calls) ends the job at once with the abort
# status and message, leaving nothing behind.
. "$top_srcdir/test/launcher/lib.sh"

start=$(now)
bmpirun -n 4 "$CLIENT" shm abort=42@1 sleep=30 "$MARKER"
t=$(elapsed "$start")
expect_rc 42 "the job whose rank 1 called PMIx_Abort(42)"
lt "$t" 3 || fail "the job took $t s to end after the abort (limit 3 s, start-up included)"
grep -q "^bmpirun: rank 1 (pid [0-9]*) called MPI_Abort/PMIx_Abort with status 42 (\"test abort from rank 1\"); terminating the job\$" "$SCRATCH/err" ||
    fail "no line naming rank 1, status 42 and the message"
# The others may be killed before they get that far; rank 1 made its own.
grep -q '^shm 1 ' "$SCRATCH/out" || fail "rank 1 did not create its segment"
check_clean
echo "ok: abort ended the job in $t s"

# An abort whose status is 0 must still fail the job.
bmpirun -n 2 "$CLIENT" abort=0@0 sleep=30 "$MARKER"
expect_rc 1 "PMIx_Abort(0)"
check_clean
echo "ok: abort status 0 gives 1"
