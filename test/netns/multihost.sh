#!/bin/sh
# bmpi across simulated hosts (issue 5): network namespaces as two hosts
# joined by veth pairs through a bridge in a head namespace, ranks started
# by Open MPI's mpirun (run in the head namespace) through
# test/netns/agent.sh, which runs each host's daemon in its namespace under
# a hostname of its own. Checks:
#   (a) BMPI_VERBOSE=1 hello: peers on the same host use shm, peers on the
#       other host ofi, never shm (the namespaces share /dev/shm);
#   (a') with BMPI_TRANSPORT=self,shm, MPI_Init fails naming the peer on
#       the other host and why each transport declined;
#   (b) point-to-point and collective programs of test/mpi at 2+2 ranks
#       over ofi/tcp (and ofi/net when libfabric has it);
#   (c) bench/pingpong at 1+1 ranks: the numbers are printed, not judged.
# Root only; skips (77) without ip, unshare, Open MPI's mpirun.openmpi or
# the ofi transport. Everything it creates (namespaces, temporary files,
# processes left in its namespaces, bmpi shm segments of its jobs) is
# removed on any exit.
set -u
# The checks choose their transports themselves (default selection first):
# a suite-wide BMPI_TRANSPORT or BMPI_OFI_PROVIDER must not decide them, nor
# an RDMA device emulated for the suite (make check-transports).
unset BMPI_TRANSPORT BMPI_OFI_PROVIDER LD_PRELOAD
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}

. "$top_srcdir/test/netns/lib.sh"
netns_require_tools mpirun.openmpi
netns_require_ofi_build
libs=$(cd "$top_builddir/.libs" 2>/dev/null && pwd) || netns_skip "no $top_builddir/.libs (libbmpi not built)"
bin=$top_builddir/test/mpi/.libs
[ -x "$bin/hello" ] || netns_skip "test programs not built (make check TESTS=)"

# ---- simulated hosts ------------------------------------------------------
# (a job still running when interrupted: its timeout passes the signal on)
netns_test_setup bmpi 2
tmp=$NETNS_TMP
head=$NETNS_HEAD
BMPI_NETNS_HOSTS=
for i in 1 2; do
    BMPI_NETNS_HOSTS="${BMPI_NETNS_HOSTS:+$BMPI_NETNS_HOSTS }$(netns_addr $i)=$(netns_name $i)=bmpi$$-h$i"
done
export BMPI_NETNS_HOSTS
echo "simulated hosts: $BMPI_NETNS_HOSTS (head $head, bridge 192.0.2.254/24)"

# The agent and a rank wrapper (sets the library path of the build tree,
# then the wrapper of netns_test_setup records the job's PMIx namespace for
# the cleanup) in our directory.
cp "$top_srcdir/test/netns/agent.sh" "$tmp/agent.sh" && chmod +x "$tmp/agent.sh" || exit 1
cat >"$tmp/rank.sh" <<EOF
#!/bin/sh
LD_LIBRARY_PATH="$libs\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
export LD_LIBRARY_PATH
exec "$tmp/rank" "\$@"
EOF
chmod +x "$tmp/rank.sh"

# mpirun in the head namespace; daemons and ranks on the hosts. Every run
# has a timeout; its output goes to $tmp/out.
#   run HOSTLIST PROGRAM [ARGS...]   (environment for the ranks in $xenv)
xenv=
run() {
    hl=$1
    shift
    # the ranks (under orted, which detaches) are found through their
    # namespaces when the run times out
    netns_run_job ip netns exec "$head" mpirun.openmpi --allow-run-as-root \
        --bind-to none --host "$hl" --mca plm_rsh_agent "$tmp/agent.sh" \
        --mca plm_rsh_no_tree_spawn 1 --mca orte_tmpdir_base "$tmp" \
        --mca oob_tcp_if_include 192.0.2.0/24 --mca btl_tcp_if_include 192.0.2.0/24 \
        $xenv "$tmp/rank.sh" "$@" >"$tmp/out" 2>&1
    rc=$?
    [ $rc -eq 124 ] && echo "(timed out after ${NETNS_TIMEOUT}s)" >>"$tmp/out"
    return $rc
}
fail() {
    cat "$tmp/out"
    echo "FAIL: $*"
    exit 1
}
two_by_two=192.0.2.1:2,192.0.2.2:2

# ---- (a) transport per pair -------------------------------------------------
# Default selection (ofi picks its provider) and forced tcp (tcp;ofi_rxm).
check_selection() {
    what=$1
    run "$two_by_two" "$bin/hello" || fail "hello at 2+2 ranks ($what) exited with $rc"
    # rank -> host from the hello lines
    map=$(sed -n 's/^hello from rank \([0-9]*\) of 4 on \(.*\)$/\1 \2/p' "$tmp/out" | sort -n)
    [ "$(printf '%s\n' "$map" | grep -c .)" -eq 4 ] || fail "expected 4 hello lines ($what)"
    [ "$(printf '%s\n' "$map" | awk '{print $2}' | sort -u | wc -l)" -eq 2 ] ||
        fail "the 4 ranks are not on 2 hosts ($what)"
    bad=$(printf '%s\n' "$map" | awk -v out="$tmp/out" '
        { host[$1] = $2 }
        END {
            while ((getline line < out) > 0) {
                if (line !~ /^bmpi: rank [0-9]+ -> rank [0-9]+: /) continue
                split(line, w, /[ :]+/)   # bmpi rank A -> rank B T
                a = w[3]; b = w[6]; t = w[7]
                n++
                want = a == b ? "self" : host[a] == host[b] ? "shm" : "ofi"
                if (t != want) printf "rank %s (%s) -> rank %s (%s): %s, expected %s\n", a, host[a], b, host[b], t, want
            }
            if (n != 16) printf "%d transport lines instead of 16\n", n
        }')
    [ -z "$bad" ] || fail "transport selection ($what):
$bad"
    echo "ok: (a) $what: same-host peers on shm, cross-host peers on ofi ($(sed -n 's/^bmpi: rank 0: ofi: provider //p' "$tmp/out"))"
}
xenv="-x BMPI_VERBOSE=1"
check_selection "default selection"
xenv="-x BMPI_VERBOSE=1 -x BMPI_OFI_PROVIDER=tcp"
check_selection "BMPI_OFI_PROVIDER=tcp"

# ---- (a') a peer on the other host with shm only: MPI_Init fails naming it
# (the hosts share /dev/shm, yet shm must decline a peer on another node)
xenv="-x BMPI_TRANSPORT=self,shm"
if run 192.0.2.1:1,192.0.2.2:1 "$bin/hello"; then
    fail "hello across the hosts with BMPI_TRANSPORT=self,shm succeeded"
fi
[ $rc -ne 124 ] || fail "hello across the hosts with BMPI_TRANSPORT=self,shm hung"
grep -q 'cannot reach rank [01] .*self: self reaches only this process; shm: rank [01] is on another node; verbs: excluded by BMPI_TRANSPORT=self,shm; ofi: excluded' "$tmp/out" ||
    fail "no message naming the unreachable peer and each transport's reason"
echo "ok: (a') shm alone across hosts: MPI_Init names the peer and why each transport declined"

# ---- (b) the battery at 2+2 ranks ------------------------------------------
provs=tcp
command -v fi_info >/dev/null 2>&1 && fi_info -p net -t FI_EP_RDM >/dev/null 2>&1 && provs="tcp net"
for prov in $provs; do
    xenv="-x BMPI_OFI_PROVIDER=$prov"
    for p in p2p_storm p2p_fanin p2p_truncate p2p_probe p2p_complete p2p_ssend coll_reduce coll_data; do
        [ -x "$bin/$p" ] || { echo "note: $p not built, skipped"; continue; }
        run "$two_by_two" "$bin/$p" || fail "$p at 2+2 ranks over ofi/$prov exited with $rc"
        echo "ok: (b) $p at 2+2 ranks, ofi/$prov"
    done
done

# ---- (c) pingpong, one rank per host ---------------------------------------
if "$top_builddir/tools/bmpicc-build" -O2 -o "$tmp/pingpong" "$top_srcdir/bench/pingpong.c" >"$tmp/out" 2>&1; then
    for prov in $provs; do
        xenv="-x BMPI_OFI_PROVIDER=$prov"
        run 192.0.2.1:1,192.0.2.2:1 "$tmp/pingpong" -m 8 -M 64k -s 5 ||
            fail "pingpong across the hosts over ofi/$prov exited with $rc"
        echo "(c) pingpong across the veth pair, ofi/$prov (size, best us, median us):"
        grep '^pingpong ' "$tmp/out" | sed 's/^/    /'
    done
else
    cat "$tmp/out"
    echo "note: bench/pingpong.c did not build with bmpicc-build; (c) skipped"
fi
echo "ok: bmpi across simulated hosts"
