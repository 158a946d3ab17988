# A private Slurm cluster of simulated hosts on this one machine, for the
# tests and benchmarks that run jobs under srun (test/slurm/cluster.sh,
# bench/startup-hosts). Sourced, bash; root only (the caller checks). See
# ../shared/FIELD-NOTES.md, "Slurm on one machine" and "Simulated hosts".
#
# A private munged (a Unix socket: reachable from every namespace),
# slurmctld in a head network namespace (192.0.2.254, on a bridge) and one
# slurmd per simulated host, each in a network namespace of its own
# (192.0.2.I on a veth pair to the bridge) under a UTS namespace with its
# own hostname (nodeI). Its own slurm.conf, private ports (the namespaces
# are new: nothing else listens there), all files in a temporary directory.
#
#   slurm_cluster_up NODES CPUS
#       brings the cluster up with NODES nodes of CPUS CPUs each (the
#       CPUs slurm.conf declares: they may exceed the machine's) and waits
#       until every node is idle. Exports SLURM_CONF. Returns 77 when it
#       cannot run here (no network namespaces, no pmix plugin), 1 on
#       another failure, SLURM_CLUSTER_ERROR saying why either way. What it
#       made by then is recorded for slurm_cluster_down: the caller's exit
#       trap calls that on any exit. Not in a subshell: the daemons must be
#       children of the calling shell (slurm_cluster_down reaps them).
#   slurm_cluster_down
#       cancels the jobs, stops the daemons (SIGTERM, then SIGKILL), kills
#       what is left in the namespaces, deletes them, removes the bmpi shm
#       segments of the cluster's jobs and the temporary directory.
#       Idempotent.
#   slurm_cluster_in_head COMMAND...
#       COMMAND in the head namespace (srun, salloc, sinfo, scancel).
#   slurm_cluster_segments
#       the /dev/shm segments of this cluster's jobs (bmpi.slurm.pmix.JOB.*).
#   slurm_cluster_leftovers
#       a line per process in the host namespaces that is not one of the
#       cluster's daemons (what a finished job must not leave).
#
# State, for the caller to read: SLURM_CLUSTER_DIR (the temporary
# directory), SLURM_CLUSTER_HEAD (the head namespace), SLURM_CLUSTER_HOSTS
# (the host namespaces), SLURM_CLUSTER_DAEMONS (pids of munged, slurmctld
# and the slurmd's), SLURM_CLUSTER_STATES (sinfo's "node state" lines once
# up) and SLURM_CLUSTER_STEP_PROCS, a shell command printing the pids of
# the jobs' processes in the host namespaces but Slurm's (for
# test/with-timeout -p: slurmstepd detaches from slurmd, and so from the
# run's process tree; slurmstepd itself is left out: killed, it would leave
# its job completing and the nodes busy).

SLURM_CLUSTER_TAG=bmpi$$
SLURM_CLUSTER_HEAD=${SLURM_CLUSTER_TAG}h0
SLURM_CLUSTER_HOSTS=
SLURM_CLUSTER_DIR=
SLURM_CLUSTER_DAEMONS=
SLURM_CLUSTER_STATES=
SLURM_CLUSTER_ERROR=
SLURM_CLUSTER_STEP_PROCS=:
# Job ids of this cluster start here, so that its jobs' PMIx namespaces
# (slurm.pmix.<job>.<step>), which name bmpi's segments, are told apart
# from those of another private Slurm (test/slurm/srun.sh) running at the
# same time: pids are unique, job ids stay below 2^26.
SLURM_CLUSTER_FIRST_JOB=$((1000000 + ($$ % 1000000) * 64))

slurm_cluster_in_head() { ip netns exec "$SLURM_CLUSTER_HEAD" "$@"; }

slurm_cluster_segments() {
    ls /dev/shm 2>/dev/null | awk -F. -v lo="$SLURM_CLUSTER_FIRST_JOB" -v hi=$((SLURM_CLUSTER_FIRST_JOB + 64)) \
        '$1 == "bmpi" && $2 == "slurm" && $3 == "pmix" && $4 >= lo && $4 < hi'
}

slurm_cluster_leftovers() {
    local ns p i=0
    for ns in $SLURM_CLUSTER_HOSTS; do
        i=$((i + 1))
        for p in $(ip netns pids "$ns" 2>/dev/null); do
            case " $SLURM_CLUSTER_DAEMONS " in *" $p "*) continue ;; esac
            echo "node$i: pid $p $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)"
        done
    done
}

slurm_cluster_down() {
    local p alive ns pids s
    if [ -n "$SLURM_CLUSTER_DIR" ] && ip netns list 2>/dev/null | grep -q "^$SLURM_CLUSTER_HEAD\b"; then
        timeout 5 ip netns exec "$SLURM_CLUSTER_HEAD" scancel --quiet --user=root >/dev/null 2>&1
    fi
    # SIGTERM and reaped here, so that slurmctld takes its slurmscriptd
    # along and no zombie is left to init
    for p in $SLURM_CLUSTER_DAEMONS; do kill "$p" 2>/dev/null; done
    for _ in $(seq 50); do
        alive=
        for p in $SLURM_CLUSTER_DAEMONS; do kill -0 "$p" 2>/dev/null && alive=1; done
        [ -z "$alive" ] && break
        sleep 0.1
    done
    for p in $SLURM_CLUSTER_DAEMONS; do kill -9 "$p" 2>/dev/null; done
    for p in $SLURM_CLUSTER_DAEMONS; do wait "$p" 2>/dev/null; done
    SLURM_CLUSTER_DAEMONS=
    # what is left in the namespaces: slurmstepd and ranks of a job that
    # was cut short
    for ns in "$SLURM_CLUSTER_HEAD" $SLURM_CLUSTER_HOSTS; do
        ip netns list 2>/dev/null | grep -q "^$ns\b" || continue
        pids=$(ip netns pids "$ns" 2>/dev/null)
        [ -n "$pids" ] && kill -9 $pids 2>/dev/null
        ip netns del "$ns" 2>/dev/null
    done
    SLURM_CLUSTER_HOSTS=
    for s in $(slurm_cluster_segments); do rm -f "/dev/shm/$s"; done
    [ -n "$SLURM_CLUSTER_DIR" ] && rm -rf -- "$SLURM_CLUSTER_DIR"
    SLURM_CLUSTER_DIR=
}

# the head namespace with its bridge, and NODES host namespaces on it
slurm_cluster_namespaces() {
    local nodes=$1 head=$SLURM_CLUSTER_HEAD i ns
    ip netns add "$head" 2>"$SLURM_CLUSTER_DIR/err" || {
        SLURM_CLUSTER_ERROR="cannot create a network namespace: $(cat "$SLURM_CLUSTER_DIR/err")"
        return 77
    }
    ip -n "$head" link set lo up &&
        ip -n "$head" link add br0 type bridge &&
        ip -n "$head" addr add 192.0.2.254/24 dev br0 &&
        ip -n "$head" link set br0 up || { SLURM_CLUSTER_ERROR="head namespace $head"; return 1; }
    for i in $(seq "$nodes"); do
        ns=${SLURM_CLUSTER_TAG}h$i
        ip netns add "$ns" || { SLURM_CLUSTER_ERROR="host namespace $ns"; return 1; }
        SLURM_CLUSTER_HOSTS="$SLURM_CLUSTER_HOSTS $ns"
        ip -n "$ns" link set lo up &&
            ip -n "$ns" link add eth0 type veth peer name "veth$i" netns "$head" &&
            ip -n "$ns" addr add "192.0.2.$i/24" dev eth0 &&
            ip -n "$ns" link set eth0 up &&
            ip -n "$head" link set "veth$i" master br0 &&
            ip -n "$head" link set "veth$i" up || { SLURM_CLUSTER_ERROR="host namespace $ns"; return 1; }
    done
}

# slurm_cluster_daemon NETNS HOSTNAME LOG COMMAND...: COMMAND in the
# background in NETNS under a UTS namespace of its own named HOSTNAME; its
# pid (nsenter, unshare and sh exec it) joins SLURM_CLUSTER_DAEMONS.
# nsenter, not `ip netns exec`: that one mounts a sysfs of the namespace
# over /sys, without /sys/fs/cgroup, and slurmd will not start without its
# cgroup mounts.
slurm_cluster_daemon() {
    local ns=$1 name=$2 log=$3
    shift 3
    nsenter --net="/run/netns/$ns" unshare --uts /bin/sh -c 'hostname "$0" && exec "$@"' "$name" "$@" \
        >"$log" 2>&1 &
    SLURM_CLUSTER_DAEMONS="$SLURM_CLUSTER_DAEMONS $!"
}

slurm_cluster_munge() {
    local d=$SLURM_CLUSTER_DIR/munge sock=$SLURM_CLUSTER_DIR/munge/munge.socket
    mkdir -p "$d" "$SLURM_CLUSTER_DIR/state"
    chmod 755 "$d"
    dd if=/dev/urandom of="$d/munge.key" bs=1024 count=1 2>/dev/null
    chmod 400 "$d/munge.key"
    munged --foreground --socket="$sock" --key-file="$d/munge.key" \
        --log-file="$d/log" --pid-file="$d/pid" --seed-file="$d/seed" \
        --force >"$d/out" 2>&1 &
    SLURM_CLUSTER_DAEMONS="$SLURM_CLUSTER_DAEMONS $!"
    for _ in $(seq 50); do
        [ -S "$sock" ] && return 0
        sleep 0.1
    done
    SLURM_CLUSTER_ERROR="munged did not start: $(tail -3 "$d/log" "$d/out" 2>/dev/null)"
    return 1
}

# slurm.conf for NODES nodes of CPUS CPUs. %n is the node's name: each
# slurmd has its own spool directory (where Slurm's pmix plugin puts its
# server directory) and TmpFS (where it puts the client directory
# spmix_appdir_<job>.<step>), which on one machine would otherwise be the
# same directory for every node of a step. config_overrides: slurmd
# reports the CPUs slurm.conf declares, not the machine's (a node declaring
# more would otherwise be drained), and OverSubscribe=FORCE lets the jobs
# of consecutive runs share the nodes.
slurm_cluster_conf() {
    local nodes=$1 cpus=$2 d=$SLURM_CLUSTER_DIR i
    for i in $(seq "$nodes"); do mkdir -p "$d/spool/node$i" "$d/tmpfs/node$i"; done
    {
        cat <<EOF
ClusterName=bmpi$nodes
SlurmctldHost=bmpictl(192.0.2.254)
SlurmctldPort=6817
SlurmdPort=6818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$d/munge/munge.socket
CredType=cred/munge
FirstJobId=$SLURM_CLUSTER_FIRST_JOB
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool/%n
TmpFS=$d/tmpfs/%n
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd.%n.pid
SlurmctldLogFile=$d/slurmctld.log
SlurmdLogFile=$d/slurmd.%n.log
SlurmdParameters=config_overrides
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
EOF
        for i in $(seq "$nodes"); do
            echo "NodeName=node$i NodeAddr=192.0.2.$i CPUs=$cpus State=UNKNOWN"
        done
        echo "PartitionName=test Nodes=node[1-$nodes] Default=YES MaxTime=10 State=UP OverSubscribe=FORCE"
    } >"$SLURM_CONF"
}

# sinfo waits for a dead controller until its message timeout: bound each
# call
slurm_cluster_node_states() {
    slurm_cluster_in_head timeout 3 sinfo -h -N -o '%N %t' 2>/dev/null | sort -u
}

# wait for NODES idle nodes, as long as slurmctld (pid CTLD) runs
slurm_cluster_wait_idle() {
    local nodes=$1 ctld=$2 d=$SLURM_CLUSTER_DIR i
    for _ in $(seq 150); do
        [ "$(slurm_cluster_node_states | grep -c ' idle$')" = "$nodes" ] && break
        kill -0 "$ctld" 2>/dev/null || {
            SLURM_CLUSTER_ERROR="slurmctld exited: $(tail -n 3 "$d/slurmctld.log" "$d/slurmctld.out" 2>/dev/null)"
            return 1
        }
        sleep 0.2
    done
    SLURM_CLUSTER_STATES=$(slurm_cluster_node_states)
    [ "$(printf '%s\n' "$SLURM_CLUSTER_STATES" | grep -c ' idle$')" = "$nodes" ] && return 0
    for i in $(seq "$nodes"); do
        printf '%s\n' "$SLURM_CLUSTER_STATES" | grep -qx "node$i idle" && continue
        echo "== node$i never came up idle (sinfo: $(printf '%s\n' "$SLURM_CLUSTER_STATES" | grep "^node$i " ||
            echo 'not listed')); its slurmd log:"
        tail -n 5 "$d/slurmd.node$i.log" "$d/slurmd.node$i.out" 2>/dev/null
    done
    echo "== slurmctld log:"
    tail -n 5 "$d/slurmctld.log" 2>/dev/null
    SLURM_CLUSTER_ERROR="the $nodes Slurm nodes did not all come up idle within 30 s"
    return 1
}

slurm_cluster_up() {
    local nodes=$1 cpus=$2 d ctld i ns
    SLURM_CLUSTER_DIR=$(mktemp -d "${TMPDIR:-/tmp}/bmpi-slurm$nodes.XXXXXX") || {
        SLURM_CLUSTER_ERROR="mktemp"
        return 1
    }
    d=$SLURM_CLUSTER_DIR
    slurm_cluster_namespaces "$nodes" || return
    slurm_cluster_munge || return
    export SLURM_CONF=$d/slurm.conf
    slurm_cluster_conf "$nodes" "$cpus"
    slurm_cluster_daemon "$SLURM_CLUSTER_HEAD" bmpictl "$d/slurmctld.out" slurmctld -D -i -f "$SLURM_CONF"
    ctld=$!
    for i in $(seq "$nodes"); do
        slurm_cluster_daemon "${SLURM_CLUSTER_TAG}h$i" "node$i" "$d/slurmd.node$i.out" \
            slurmd -D -N "node$i" -f "$SLURM_CONF"
    done
    slurm_cluster_wait_idle "$nodes" "$ctld" || return 1
    # (srun reads slurm.conf even for this)
    slurm_cluster_in_head srun --mpi=list 2>&1 | grep -q pmix || {
        SLURM_CLUSTER_ERROR="Slurm has no pmix plugin (srun --mpi=list)"
        return 77
    }
    SLURM_CLUSTER_STEP_PROCS="for n in$SLURM_CLUSTER_HOSTS; do ip netns pids \$n; done |
    xargs -r ps -o pid= -o comm= -p | awk '\$2 !~ /^slurm/ { print \$1 }'"
}
