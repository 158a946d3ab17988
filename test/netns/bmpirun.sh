#!/bin/sh
# bmpirun's multi-host runner (issue 31) across simulated hosts: three host
# namespaces h1..h3 and a head namespace (test/netns/lib.sh); bmpirun runs
# in the head, its daemons start through test/netns/host-agent.sh (each
# host its own hostname, TMPDIR and a fresh environment, as over ssh).
# Checks, every run under test/with-timeout and followed by "nothing left":
# no process in any of the namespaces, no /dev/shm/bmpi.<job>.* segment, no
# file in the TMPDIR of the head or of any host.
#   placement: --host h1:2,h2:2,h3:1, hostfiles of both dialects, --map-by
#     node, -N, a local host next to remote ones, --tree-fanout 1; every
#     rank on the host it was placed on (its hostname, --tag-output=host,
#     PMIx local rank/size/peers and node ids);
#   transports: same-host peers on shm, other hosts' on ofi;
#   the p2p and collective programs of test/mpi at 5 ranks on 3 hosts;
#   output line by line (--tag-output, stderr too), stdin to rank 0 on a
#     remote host, -x/-genv on every host, --wdir;
#   dynamic processes: a spawn of 3 from a parent of 2 across two hosts;
#     connect/accept between two jobs on different hosts;
#   failures: a rank's exit status, a crash, PMIx_Abort, a rank or a daemon
#     (leaf, and inner with --tree-fanout 1) killed from outside, SIGINT and
#     SIGTERM to bmpirun, bmpirun itself killed (its daemons end their
#     ranks), a wrong job secret, a version mismatch, an unreachable host.
# Root only; skips (77) without ip, unshare, the ofi transport or the
# built programs.
set -u
# the transports are this test's to choose (see multihost.sh)
unset BMPI_TRANSPORT BMPI_OFI_PROVIDER LD_PRELOAD
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
. "$top_srcdir/test/netns/lib.sh"
timeout_s=$NETNS_TIMEOUT
# The issue asks for a whole job torn down within 3 s of a failure; the
# margin is for a loaded 2-core machine. A teardown that does not happen
# at all still fails.
teardown_s=6

netns_require_tools
netns_require_ofi_build
netns_require_bmpirun
client=$top_builddir/test/launcher/pmix_client
mpi=$top_builddir/test/mpi
[ -x "$client" ] && [ -x "$mpi/hello" ] || netns_skip "test programs not built (make check TESTS=)"
version=$("$BMPIRUN" --version | sed -n '1s/^bmpirun ([^)]*) \([^,]*\),.*/\1/p')
[ -n "$version" ] || { echo "FAIL: no version in '$BMPIRUN --version'"; exit 1; }

# ---- simulated hosts --------------------------------------------------------
netns_test_setup bmr 3
tmp=$NETNS_TMP
h1=$(netns_name 1) h2=$(netns_name 2) h3=$(netns_name 3)
# The job's temporary directories (the head's, and one per host, which
# host-agent.sh makes) and the agent: netns_bmpirun_setup.
netns_bmpirun_setup
headtmp=$NETNS_HEAD_TMPDIR
agent=$NETNS_AGENT
# Every rank through the wrapper of netns_test_setup: it records the job's
# PMIx namespace, which names the job's /dev/shm segments.
rank=$tmp/rank

fail() {
    for f in out err; do
        [ -s "$tmp/$f" ] && { echo "--- $f (last lines)"; tail -n 30 "$tmp/$f"; }
    done
    echo "FAIL: $*"
    exit 1
}
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
lt() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }

# run_bg [-a AGENT] [-i INPUT] ARGS...: bmpirun ARGS in the head namespace,
# in the background (a signal to this script runs its trap at once);
# stdout to $tmp/out, stderr to $tmp/err. run_wait sets rc; run = both.
run_bg() {
    a=$agent
    in=/dev/null
    while :; do
        case $1 in
        -a) a=$2; shift 2 ;;
        -i) in=$2; shift 2 ;;
        *) break ;;
        esac
    done
    t0=$(now)
    # the redirections are this shell's, made before the job starts (a
    # wait_for must never count the last job's lines)
    netns_job_start -i "$in" "$NETNS_BMPIRUN" --launch-agent "$a" "$@" >"$tmp/out" 2>"$tmp/err"
}
run_wait() {
    netns_job_wait
    rc=$?
    [ $rc -ne 124 ] || fail "bmpirun timed out after ${timeout_s}s"
}
run() {
    run_bg "$@"
    run_wait
}

# wait_for PATTERN COUNT: until COUNT lines of $tmp/out match, at most 30 s
wait_for() {
    i=0
    while [ "$(grep -c -- "$1" "$tmp/out")" -lt "$2" ]; do
        i=$((i + 1))
        [ $i -lt 300 ] || fail "waited 30 s for $2 lines matching '$1'"
        kill -0 "$NETNS_JOB_PID" 2>/dev/null || fail "bmpirun ended before $2 lines matching '$1'"
        sleep 0.1
    done
}

# Nothing left of the job, a few seconds after bmpirun ended: no process in
# any namespace, no shm segment, no file in the head's or a host's TMPDIR.
# check_clean DIR: the process that owned DIR (the head's TMPDIR) was
# killed with SIGKILL, and nobody is left there to remove what it held;
# DIR does not count (it is emptied here).
check_clean() {
    i=0
    while [ -n "$(netns_pids)" ] && [ $i -lt 50 ]; do
        sleep 0.1
        i=$((i + 1))
    done
    left=$(netns_pids)
    if [ -n "$left" ]; then
        ps -o pid,ppid,stat,args -p "$(echo $left | tr ' ' ,)"
        fail "processes left in the namespaces: $(echo $left)"
    fi
    for n in $(sort -u "$tmp/nspaces"); do
        for seg in /dev/shm/bmpi."$n".*; do
            [ -e "$seg" ] && fail "shared memory segment $seg left behind"
        done
    done
    [ -n "${1:-}" ] && rm -rf "${1:?}"/*
    files=$(find "$tmp/jobtmp" -mindepth 2 | head -5)
    [ -z "$files" ] || fail "files left in the job's TMPDIRs: $files"
}

# rank_pid R: the pid of rank R, from its pmix_client line in $tmp/out
rank_pid() {
    sed -n "s/^rank $1 size .* pid \([0-9]*\)\$/\1/p" "$tmp/out"
}
# daemon_of R NS: the daemon that started rank R, in namespace NS: the
# rank's parent (a daemon has other processes with its command line, e.g.
# a child that cleans up after it)
daemon_of() {
    p=$(ps -o ppid= -p "$(rank_pid "$1")" | tr -d ' ')
    [ -n "$p" ] && ip netns pids "$2" | grep -qx "$p" &&
        tr '\0' ' ' <"/proc/$p/cmdline" | grep -q -- " --daemon " && echo "$p"
}
# head_pid: the bmpirun of the job started last (run_bg), found among the
# processes of the head namespace; tried for up to 2 s (a scan of the
# namespace while other processes come and go can miss it)
head_pid() {
    for _ in $(seq 20); do
        for p in $(pgrep -P "$NETNS_JOB_PID" 2>/dev/null) $(ip netns pids "$NETNS_HEAD" 2>/dev/null); do
            case $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null) in
            *" --daemon "*) ;;
            "$BMPIRUN "*) echo "$p"; return 0 ;;
            esac
        done
        sleep 0.1
    done
    return 1
}

# name_of I: the host name of host I in the host lists (0: localhost) and
# uts_of I the hostname its ranks see.
name_of() { if [ "$1" = 0 ]; then echo localhost; else netns_name "$1"; fi; }
uts_of() { if [ "$1" = 0 ]; then hostname; else netns_name "$1"; fi; }

# ---- placement ----------------------------------------------------------------
# hello_on "I0 I1 ..." ARGS...: bmpirun --tag-output=host ARGS hello puts
# rank r on host I_r: its line is "[r@NAME] hello from rank r of N on UTS".
hello_on() {
    where=$1
    shift
    run "$@" --tag-output=host "$rank" "$mpi/hello"
    [ $rc -eq 0 ] || fail "bmpirun $* hello exited with $rc"
    n=$(echo $where | wc -w)
    r=0
    for i in $where; do
        grep -qxF "[$r@$(name_of "$i")] hello from rank $r of $n on $(uts_of "$i")" "$tmp/out" ||
            fail "bmpirun $*: no line '[$r@$(name_of "$i")] hello from rank $r of $n on $(uts_of "$i")': rank $r is not on host $(name_of "$i"), or its MPI_Get_processor_name is not that host's hostname"
        r=$((r + 1))
    done
    [ "$(grep -c . "$tmp/out")" -eq "$n" ] || fail "bmpirun $*: expected $n lines"
    check_clean
    echo "ok: placement $*: ranks on hosts $where"
}
hosts="$h1:2,$h2:2,$h3:1"
printf '# Open MPI dialect\n\n%s slots=2\n  %s slots=2 max_slots=4   # comment\n\t%s slots=1\n' \
    "$h1" "$h2" "$h3" >"$tmp/hostfile.ompi"
printf '# MPICH dialect\n%s:2\n%s:2\n\n%s:1\n' "$h1" "$h2" "$h3" >"$tmp/hostfile.mpich"
hello_on "1 1 2 2 3" --host "$hosts"
hello_on "1 1 2 2 3" -f "$tmp/hostfile.ompi"
hello_on "1 1 2 2 3" --hostfile "$tmp/hostfile.mpich"
hello_on "1 1 2 2" --machinefile "$tmp/hostfile.ompi" -n 4
hello_on "1 2 3 1 2" --host "$hosts" --map-by node
hello_on "1 2 3" --host "$hosts" -N 1
hello_on "1 1 2 2 3" --host "$hosts" --tree-fanout 1
# this machine among the hosts: its ranks run in bmpirun's namespace; the
# processor name is this machine's hostname, not "localhost", which would
# name every other host to a peer that is told it
hello_on "0 1 1 2" --host "localhost:1,$h1:2,$h2:1"

# PMIx's view: local rank and size, local peers, node ids agree with the
# hosts the ranks are on (pmix_client prints them, tagged with the host);
# the node id of a rank on another host may be unknown, never wrong.
run --host "$hosts" --tag-output=host "$rank" "$client" multinode
[ $rc -eq 0 ] || fail "pmix_client on 3 hosts exited with $rc"
bad=$(awk '
    /^\[[0-9]+@[^]]*\] rank [0-9]+ size / {
        split($1, t, /[][@]/)
        r = t[2]; host[r] = t[3]
        for (i = 2; i < NF; i++) f[$i] = $(i + 1)
        if (f["rank"] != r || f["size"] != 5 || f["host"] != host[r]) print "line: " $0
        lrank[r] = f["local_rank"]; lsize[r] = f["local_size"]; node[r] = f["nodeid"]; peers[r] = f["peers"]
        n++
    }
    /^\[[0-9]+@[^]]*\] nodes / { split($3, v, ","); for (i = 1; i <= 5; i++) seen[$6, i - 1] = v[i] }
    /exchange ok$/ { ok++ }
    END {
        if (n != 5 || ok != 5) print n " rank lines, " ok " exchanges"
        for (r = 0; r < 5; r++) {
            count = 0; list = ""; idx = -1
            for (q = 0; q < 5; q++) {
                if ((host[q] == host[r]) != (node[q] == node[r])) print "node ids of ranks " r ", " q
                if (host[q] == host[r]) { if (q == r) idx = count; count++; list = list (list == "" ? "" : ",") q }
                # a rank on another host may be unknown ("?"): libpmix 4.2
                # answers PMIX_NODEID only of the ranks of its own host, as under
                # the mpirun of Open MPI 4.1; a wrong id is an error
                if (seen[r, q] != node[q] && !(seen[r, q] == "?" && host[q] != host[r]))
                    print "rank " r " sees node " seen[r, q] " for rank " q
            }
            if (lsize[r] != count || lrank[r] != idx || peers[r] != list)
                print "rank " r ": local " lrank[r] "/" lsize[r] " peers " peers[r] ", expected " idx "/" count " " list
        }
    }' "$tmp/out")
[ -z "$bad" ] || fail "PMIx job data across hosts:
$bad"
check_clean
echo "ok: PMIx local ranks, peers and node ids follow the hosts"

# ---- transports: shm within a host, ofi across ----------------------------------
check_selection() {
    what=$1
    shift
    run --host "$hosts" -x BMPI_VERBOSE=1 "$@" "$rank" "$mpi/hello"
    [ $rc -eq 0 ] || fail "verbose hello on 3 hosts ($what) exited with $rc"
    bad=$(cat "$tmp/out" "$tmp/err" | awk '
        /^hello from rank [0-9]+ of 5 on / { host[$4] = $8; n++ }
        /^bmpi: rank [0-9]+ -> rank [0-9]+: / { split($0, w, /[ :]+/); a[++m] = w[3]; b[m] = w[6]; t[m] = w[7] }
        END {
            if (n != 5) print n " hello lines instead of 5"
            if (m != 25) print m " transport lines instead of 25"
            for (i = 1; i <= m; i++) {
                want = a[i] == b[i] ? "self" : host[a[i]] == host[b[i]] ? "shm" : "ofi"
                if (t[i] != want) print "rank " a[i] " (" host[a[i]] ") -> rank " b[i] " (" host[b[i]] "): " t[i] ", expected " want
            }
        }')
    [ -z "$bad" ] || fail "transport selection ($what):
$bad"
    check_clean
    echo "ok: $what: same-host peers on shm, other hosts' on ofi"
}
check_selection "default selection"
check_selection "BMPI_OFI_PROVIDER=tcp" -x BMPI_OFI_PROVIDER=tcp

# ---- the p2p and collective programs, 5 ranks on 3 hosts ------------------------
# each from the next of the three host sources in turn
src=0
for p in p2p_storm p2p_fanin p2p_truncate p2p_probe p2p_complete p2p_ssend p2p_persist p2p_bsend \
    coll_reduce coll_data coll_ops coll_scan coll_storm coll_persist; do
    [ -x "$mpi/$p" ] || { echo "note: $p not built, skipped"; continue; }
    case $src in
    0) from="--host $hosts" ;;
    1) from="-f $tmp/hostfile.ompi" ;;
    2) from="-f $tmp/hostfile.mpich" ;;
    esac
    src=$(((src + 1) % 3))
    run $from "$rank" "$mpi/$p"
    [ $rc -eq 0 ] || fail "$p at 5 ranks on 3 hosts ($from) exited with $rc"
    check_clean
    echo "ok: $p at 5 ranks on 3 hosts ($from)"
done

# ---- output, stdin, environment, working directory ------------------------------
run --host "$hosts" --tag-output=host "$rank" "$client" multinode lines=300 errlines=100 partial
[ $rc -eq 0 ] || fail "output from 3 hosts: exited with $rc"
bad=$(awk -v h="$h1 $h1 $h2 $h2 $h3" '
    BEGIN { split(h, host, " ") }
    /line [0-9]+ / {
        if (!match($0, /^\[[0-9]+@[^]]*\] rank [0-9]+ line [0-9]+ abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ\.end$/)) {
            print "mixed: " $0
            next
        }
        split($1, t, /[][@]/)
        if (t[2] != $3 || t[3] != host[t[2] + 1]) print "tag: " $0
        n[FILENAME, t[2]]++
    }
    /partial-/ { if (!match($0, /^\[[0-9]+@[^]]*\] partial-[0-9]+$/)) print "partial: " $0; p++ }
    END {
        for (r = 0; r < 5; r++) {
            if (n[ARGV[1], r] != 300) print "rank " r ": " n[ARGV[1], r] + 0 " stdout lines"
            if (n[ARGV[2], r] != 100) print "rank " r ": " n[ARGV[2], r] + 0 " stderr lines"
        }
        if (p != 5) print p " partial lines"
    }' "$tmp/out" "$tmp/err")
[ -z "$bad" ] || fail "output from 3 hosts, tagged with the host:
$(echo "$bad" | head)"
check_clean
echo "ok: stdout and stderr of 3 hosts, line by line, tagged [rank@host]"

run --host "$hosts" --tag-output "$rank" "$client" multinode lines=2
[ $rc -eq 0 ] || fail "--tag-output on 3 hosts: exited with $rc"
grep -qx '\[4\] rank 4 line 1 .*' "$tmp/out" || fail "--tag-output: no '[4] rank 4 line 1' line"
check_clean
echo "ok: --tag-output on 3 hosts"

# more than one 64 KiB piece of input (the head passes it on piece by piece)
seq 1 50000 >"$tmp/input"
run -i "$tmp/input" --host "$hosts" "$rank" "$client" multinode stdin
[ $rc -eq 0 ] || fail "stdin to rank 0 on $h1: exited with $rc"
sed -n 's/^stdin 0: //p' "$tmp/out" | cmp -s - "$tmp/input" || fail "rank 0 on $h1 did not read the input whole and in order"
grep -qx "stdin 0 eof $(wc -c <"$tmp/input")" "$tmp/out" || fail "rank 0: no end of input after $(wc -c <"$tmp/input") bytes"
for r in 1 2 3 4; do
    grep -qx "stdin $r eof 0" "$tmp/out" || fail "rank $r read something on stdin"
done
check_clean
echo "ok: stdin to rank 0 on $h1, nothing to the others"

# the agent gives the daemons a fresh environment: what the ranks get came
# through bmpirun
BMPI_TEST_FROM_HEAD=beta
export BMPI_TEST_FROM_HEAD
run --host "$hosts" -x BMPI_TEST_GIVEN=alpha -x BMPI_TEST_FROM_HEAD -genv BMPI_TEST_GENV 'gamma delta' \
    "$rank" "$client" multinode env=BMPI_TEST_GIVEN env=BMPI_TEST_FROM_HEAD env=BMPI_TEST_GENV
unset BMPI_TEST_FROM_HEAD
[ $rc -eq 0 ] || fail "-x and -genv on 3 hosts: exited with $rc"
for r in 0 1 2 3 4; do
    for want in BMPI_TEST_GIVEN=alpha BMPI_TEST_FROM_HEAD=beta 'BMPI_TEST_GENV=gamma delta'; do
        grep -qxF "env $r $want" "$tmp/out" || fail "rank $r lacks $want"
    done
done
check_clean
echo "ok: -x VAR=value, -x VAR and -genv reach every host"

mkdir "$tmp/wd"
printf '#!/bin/sh\necho "cwd $(pwd) on $(hostname)"\n' >"$tmp/wd/where.sh"
chmod +x "$tmp/wd/where.sh"
run --host "$hosts" --wdir "$tmp/wd" --tag-output=host ./where.sh
[ $rc -eq 0 ] || fail "--wdir on 3 hosts: exited with $rc"
for r in 0 1 2 3 4; do
    i=$(echo "1 1 2 2 3" | cut -d' ' -f$((r + 1)))
    grep -qxF "[$r@$(name_of $i)] cwd $tmp/wd on $(uts_of $i)" "$tmp/out" || fail "rank $r: not in $tmp/wd on $(name_of $i)"
done
check_clean
echo "ok: --wdir and a program relative to it on every host"

# ---- failures ---------------------------------------------------------------------
# a rank's exit status (rank 3, on h2) is the job's
run --host "$hosts" "$rank" "$client" multinode exit=5@3
[ $rc -eq 5 ] || fail "rank 3 on $h2 exited 5, bmpirun with $rc"
check_clean
echo "ok: the exit status of rank 3 on $h2 is bmpirun's"

# a job whose ranks have started: 5 lines "shm R PATH"
start_sleepers() {
    run_bg "$@" "$rank" "$client" multinode shm sleep=60
    wait_for '^shm ' 5
}
# torn_down WHAT STATUS|nonzero PATTERN [DIR]: bmpirun ended within
# $limit seconds of $t1 with STATUS, a line of its stderr matching PATTERN,
# nothing left (but in DIR, see check_clean)
limit=$teardown_s
torn_down() {
    run_wait
    t=$(elapsed "$t1")
    if [ "$2" = nonzero ]; then
        [ $rc -ne 0 ] || fail "$1: bmpirun exited 0"
    else
        [ $rc -eq "$2" ] || fail "$1: bmpirun exited with $rc, expected $2"
    fi
    lt "$t" "$limit" || fail "$1: the job took $t s to end (limit $limit s)"
    [ -z "$3" ] || grep -q -- "$3" "$tmp/err" || fail "$1: no line matching '$3' on stderr"
    check_clean "${4:-}"
    echo "ok: $1: status $rc after $t s, nothing left ($(grep -m1 -- "${3:-.}" "$tmp/err"))"
}

start_sleepers --host "$hosts"
t1=$(now)
victim=$(rank_pid 2)
ip netns pids "$h2" | grep -qx "$victim" || fail "rank 2 (pid $victim) does not run in $h2"
kill -9 "$victim"
torn_down "rank 2 on $h2 killed (SIGKILL)" 137 "rank 2\b"

run_bg --host "$hosts" "$rank" "$client" multinode shm segv@3 sleep=60
t1=$(now)
torn_down "rank 3 on $h2 crashed (SIGSEGV)" 139 "rank 3\b"

run_bg --host "$hosts" "$rank" "$client" multinode shm abort=7@4 sleep=60
t1=$(now)
torn_down "rank 4 on $h3 called PMIx_Abort(7)" 7 ""

start_sleepers --host "$hosts"
t1=$(now)
d=$(daemon_of 4 "$h3") || fail "no daemon of rank 4 in $h3"
kill -9 "$d"
torn_down "the daemon on $h3 killed (SIGKILL)" nonzero "$h3"

start_sleepers --host "$hosts" --tree-fanout 1
t1=$(now)
d=$(daemon_of 2 "$h2") || fail "no daemon of rank 2 in $h2"
kill -9 "$d"
torn_down "the inner daemon on $h2 of a chain (--tree-fanout 1) killed" nonzero "$h2"

for sig in INT:130 TERM:143; do
    start_sleepers --host "$hosts"
    t1=$(now)
    b=$(head_pid) || fail "bmpirun not found in $NETNS_HEAD"
    kill -"${sig%:*}" "$b"
    torn_down "SIG${sig%:*} to bmpirun" "${sig#*:}" ""
done

# bmpirun killed: the daemons notice and end their ranks, and clean up their
# hosts (a daemon killed outright has a sweeper for that, docs/launcher.md;
# bmpirun has none for its own directory, on one host or many)
start_sleepers --host "$hosts" --tree-fanout 1
t1=$(now)
b=$(head_pid) || fail "bmpirun not found in $NETNS_HEAD"
kill -9 "$b"
torn_down "bmpirun itself killed (SIGKILL)" 137 "" "$headtmp"

# ---- dynamic processes across hosts -------------------------------------------------
limit=$timeout_s
dpm=$top_builddir/test/dpm
# a parent of 2, one rank on each of two hosts, spawns 3 children on the
# free slots of both (test/dpm/spawn: p2p, collectives and a merge over the
# intercommunicator, MPI_Comm_spawn_multiple, the wdir/host/path keys)
run --host "$h1:2,$h2:2" -n 2 --map-by node "$rank" "$dpm/spawn" parent "$dpm/spawn"
[ $rc -eq 0 ] || fail "spawn from a parent on 2 hosts exited with $rc"
grep -q '^spawn: ok' "$tmp/out" || fail "spawn from a parent on 2 hosts did not report ok"
check_clean
echo "ok: a parent of 2 on $h1 and $h2 spawned 3 children across both hosts"

# two independent jobs on two hosts meet at a port (test/dpm/ports): the
# server's job on h1 writes the port name into a file, the client's on h2
# reads it and connects
rm -f "$tmp/port"
"$top_srcdir/test/with-timeout" "$timeout_s" "$NETNS_BMPIRUN" --host "$h1:2" "$rank" "$dpm/ports" server "$tmp/port" \
    >"$tmp/server.out" 2>&1 </dev/null &
server=$!
run --host "$h2:3" "$rank" "$dpm/ports" client "$tmp/port"
wait $server
src=$?
cat "$tmp/server.out" >>"$tmp/out"
[ $rc -eq 0 ] && [ $src -eq 0 ] || fail "connect/accept across hosts: server exited $src, client $rc"
grep -q '^ports server: ok' "$tmp/out" && grep -q '^ports client: ok' "$tmp/out" ||
    fail "connect/accept across hosts: a side did not report ok"
check_clean
echo "ok: two jobs on $h1 and $h2 connected through a port"

# ---- refusals ---------------------------------------------------------------------
# (no limit but the timeout: these fail while the job starts)
limit=$timeout_s
# mangle_agent HOST NAME SED-SCRIPT: $tmp/agent.NAME, an agent that passes
# the bootstrap text for HOST through SED-SCRIPT. It ends when the real
# agent does, as ssh ends with the remote command, whether or not bmpirun
# still holds the agent's stdin open (a pipeline would wait for sed too).
mangle_agent() {
    cat >"$tmp/agent.$2" <<EOF
#!/bin/sh
[ "\$1" = "$1" ] || exec "$agent" "\$@"
fifo=$tmp/fifo.$2.\$\$
mkfifo "\$fifo" || exit 255
exec 3<&0
sed -u '$3' <&3 >"\$fifo" &
sed=\$!
exec 3<&-
"$agent" "\$@" <"\$fifo"
rc=\$?
kill \$sed 2>/dev/null
rm -f "\$fifo"
exit \$rc
EOF
    chmod +x "$tmp/agent.$2"
}
zeros=0000000000000000000000000000000000000000000000000000000000000000
mangle_agent "$h2" secret "s/^secret .*/secret $zeros/"
run_bg -a "$tmp/agent.secret" --host "$hosts" "$rank" "$client" multinode
t1=$t0
torn_down "a daemon with a wrong secret (from $h2)" nonzero "192\.0\.2\.2.*wrong job secret\|wrong job secret.*192\.0\.2\.2"

mangle_agent "$h2" version "s/^version .*/version 0.0.0-test/"
run_bg -a "$tmp/agent.version" --host "$hosts" "$rank" "$client" multinode
t1=$t0
torn_down "a daemon of another version (on $h2)" nonzero "$h2"
grep "$h2" "$tmp/err" | grep -F "0.0.0-test" | grep -qF "$version" ||
    fail "no line naming $h2 and both versions (0.0.0-test, $version)"

gone=${NETNS_PREFIX}$$gone
run_bg --host "$h1:2,$gone:2" "$rank" "$client" multinode
t1=$t0
torn_down "an unreachable host" nonzero "^bmpirun.*$gone"

echo "ok: bmpirun across simulated hosts"
