#!/bin/sh
# SIGTERM, SIGINT and SIGHUP to bmpirun reach every rank, which are then
# gone; bmpirun dies of the same signal. A rank ignoring the signal gets
# SIGKILL after the grace period. SIGTSTP/SIGCONT stop and resume them all.
. "$top_srcdir/test/launcher/lib.sh"

for sig in TERM:15 INT:2 HUP:1; do
    num=${sig#*:}
    sig=${sig%:*}
    bmpirun_bg -n 4 "$CLIENT" shm sleep=30 "$MARKER"
    wait_for "$SCRATCH/out" '^shm ' 4
    start=$(now)
    kill -$sig "$BPID"
    bg_wait
    t=$(elapsed "$start")
    expect_rc $((128 + num)) "bmpirun after SIG$sig"
    lt "$t" 2 || fail "the job took $t s to end after SIG$sig"
    grep -q "^bmpirun: got SIG$sig; forwarding it to the 4 running ranks" "$SCRATCH/err" ||
        fail "no line about SIG$sig"
    check_clean
    echo "ok: SIG$sig ended the job in $t s"
done

bmpirun_bg -n 3 "$CLIENT" ignoreterm shm sleep=30 "$MARKER"
wait_for "$SCRATCH/out" '^shm ' 3
start=$(now)
kill -TERM "$BPID"
bg_wait
t=$(elapsed "$start")
expect_rc 143 "bmpirun after SIGTERM, ranks ignoring it"
lt "$t" 3 || fail "ranks ignoring SIGTERM took $t s to be killed"
check_clean
echo "ok: ranks ignoring SIGTERM were killed in $t s"

# Ctrl-Z (SIGTSTP) stops the ranks and bmpirun; SIGCONT resumes them all.
bmpirun_bg -n 3 "$CLIENT" shm sleep=3 "$MARKER"
wait_for "$SCRATCH/out" '^shm ' 3
ranks=$(pgrep -d, -f "^$CLIENT .*$MARKER")
kill -TSTP "$BPID"
sleep 0.5
stopped=$(ps -o stat= -p "$BPID,$ranks" | grep -c '^T')
[ "$stopped" -eq 4 ] || { ps -o pid,stat,args -p "$BPID,$ranks"; fail "SIGTSTP stopped $stopped of bmpirun and its 3 ranks"; }
kill -CONT "$BPID"
sleep 0.3
running=$(ps -o stat= -p "$BPID,$ranks" | grep -c '^T' || true)
[ "$running" -eq 0 ] || fail "SIGCONT left $running processes stopped"
bg_wait
expect_rc 0 "a job stopped and continued"
check_clean
echo "ok: SIGTSTP and SIGCONT"
