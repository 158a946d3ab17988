#!/bin/sh
# A rank of a real MPI job (shared-memory transport in use) is SIGKILLed, or
# calls MPI_Abort, while every rank is communicating: the job ends within
# 2 s with a non-zero status, and no process, PMIx file or /dev/shm segment
# of the job remains. A segment is unlinked as soon as every rank that uses
# it has mapped it, so nothing of the job stays in /dev/shm even while it
# runs: a pair's fast-path ring, created lazily while the token goes
# round, may be seen for the moment before its receiver maps it, but not
# half a second later.
. "$top_srcdir/test/launcher/lib.sh"
PROG="$top_builddir/test/mpi/crash"

job_segments() { ls /dev/shm/ 2>/dev/null | grep -F "bmpi.bmpi.$BPID." || true; }

# SIGKILL of rank 2 of 4
bmpirun_bg -n 4 "$PROG" ring "$MARKER"
wait_for "$SCRATCH/out" '^ready ' 4
seen=$(job_segments)
sleep 0.5
for name in $seen; do
    ! job_segments | grep -qFx "$name" || fail "segment $name of the running job stays in /dev/shm"
done
victim=$(sed -n 's/^ready 2 \([0-9]*\)$/\1/p' "$SCRATCH/out")
[ -n "$victim" ] || fail "no pid for rank 2"
start=$(now)
kill -KILL "$victim"
bg_wait
t=$(elapsed "$start")
[ "$RC" -ne 0 ] || fail "bmpirun exited 0 after a rank was killed"
lt "$t" 2 || fail "the job took $t s to end after rank 2 was killed (limit 2 s)"
grep -q "rank 2 (pid $victim) was killed by signal 9" "$SCRATCH/err" || fail "no line naming rank 2 and signal 9"
check_clean
[ -z "$(job_segments)" ] || fail "segments left in /dev/shm: $(job_segments)"
echo "ok: SIGKILL of a rank ended the job in $t s, exit $RC, nothing left"

# MPI_Abort(7) from rank 1 of 4
start=$(now)
bmpirun_bg -n 4 "$PROG" abort "$MARKER"
bg_wait
t=$(elapsed "$start")
expect_rc 7 "the job whose rank 1 called MPI_Abort(7)"
grep -q "MPI_Abort" "$SCRATCH/err" || fail "no message naming MPI_Abort"
check_clean
[ -z "$(job_segments)" ] || fail "segments left in /dev/shm: $(job_segments)"
echo "ok: MPI_Abort(7) ended the job (whole run $t s), nothing left"
