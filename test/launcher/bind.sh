#!/bin/sh
# --bind-to core: rank i runs on core i % ncores of the cores bmpirun may
# use; --bind-to none leaves the affinity alone; without --bind-to, ranks
# are bound as by --bind-to core when they outnumber the CPUs, else not.
. "$top_srcdir/test/launcher/lib.sh"

allowed=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
# expand "0-2,4" to "0 1 2 4"
cpus=$(echo "$allowed" | tr ',' '\n' | awk -F- '{ for (c = $1; c <= ($2 == "" ? $1 : $2); c++) print c }' | tr '\n' ' ')
for c in $cpus; do
    sib=$(cat /sys/devices/system/cpu/cpu$c/topology/thread_siblings_list 2>/dev/null || echo "$c")
    [ "$sib" = "$c" ] || { echo "SKIP: cpu $c has hardware threads ($sib); exact core check needs none"; exit 77; }
done
ncores=$(echo $cpus | wc -w)

# print_affinity N [OPTION...]: each of N ranks writes "RANK CPULIST".
print_affinity() {
    np=$1
    shift
    bmpirun -n "$np" "$@" /bin/sh -c 'echo "$PMIX_RANK $(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status)"'
    expect_rc 0
}

# expect_round_robin N WHAT: rank r of N printed core r % ncores.
expect_round_robin() {
    r=0
    while [ $r -lt "$1" ]; do
        want=$(echo $cpus | cut -d' ' -f$((r % ncores + 1)))
        grep -q "^$r $want\$" "$SCRATCH/out" || fail "$2: rank $r should be on cpu $want: $(grep "^$r " "$SCRATCH/out")"
        r=$((r + 1))
    done
    echo "ok: $2, $1 ranks over $ncores cores"
}

# expect_unbound N WHAT: all N ranks kept bmpirun's affinity.
expect_unbound() {
    [ "$(grep -c " $allowed\$" "$SCRATCH/out")" -eq "$1" ] || fail "$2 changed the affinity: $(cat "$SCRATCH/out")"
    echo "ok: $2, $1 ranks unbound"
}

n=$((ncores * 2 + 1))
print_affinity $n --bind-to core
expect_round_robin $n "--bind-to core"
print_affinity $n
expect_round_robin $n "no --bind-to, more ranks than cpus"

print_affinity $n --bind-to none
expect_unbound $n "--bind-to none"
print_affinity $ncores
expect_unbound $ncores "no --bind-to, as many ranks as cpus"
