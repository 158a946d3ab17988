#!/bin/sh
# --bind-to core: rank i runs on core i % ncores of the cores bmpirun may
# use; --bind-to none (the default) leaves the affinity alone.
. "$top_srcdir/test/launcher/lib.sh"

allowed=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
# expand "0-2,4" to "0 1 2 4"
cpus=$(echo "$allowed" | tr ',' '\n' | awk -F- '{ for (c = $1; c <= ($2 == "" ? $1 : $2); c++) print c }' | tr '\n' ' ')
for c in $cpus; do
    sib=$(cat /sys/devices/system/cpu/cpu$c/topology/thread_siblings_list 2>/dev/null || echo "$c")
    [ "$sib" = "$c" ] || { echo "SKIP: cpu $c has hardware threads ($sib); exact core check needs none"; exit 77; }
done
set -- $cpus
ncores=$#

n=$((ncores * 2 + 1))
bmpirun -n $n --bind-to core /bin/sh -c 'echo "$PMIX_RANK $(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status)"'
expect_rc 0
r=0
while [ $r -lt $n ]; do
    i=$((r % ncores + 1))
    eval want=\${$i}
    grep -q "^$r $want\$" "$SCRATCH/out" || fail "rank $r should be on cpu $want: $(grep "^$r " "$SCRATCH/out")"
    r=$((r + 1))
done
echo "ok: --bind-to core over $ncores cores"

bmpirun -n 2 --bind-to none /bin/sh -c 'echo "$PMIX_RANK $(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status)"'
expect_rc 0
[ "$(grep -c " $allowed\$" "$SCRATCH/out")" -eq 2 ] || fail "--bind-to none changed the affinity"
echo "ok: --bind-to none"
