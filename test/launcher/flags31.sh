#!/bin/sh
# mpirun and Hydra spellings that work on one host (issue 31): --wdir,
# -wdir, -wd; -genv VAR VALUE; -genvlist A,B; --tag-output=host;
# --report-bindings, checked against the affinity each rank reads itself.
. "$top_srcdir/test/launcher/lib.sh"

# --wdir: the ranks start there, and a relative program is taken from there.
mkdir "$SCRATCH/work dir"
WDIR=$(cd "$SCRATCH/work dir" && pwd -P)
printf '#!/bin/sh\necho "here $(pwd -P)"\n' >"$WDIR/here"
chmod +x "$WDIR/here"
for flag in --wdir -wdir -wd; do
    bmpirun -n 2 $flag "$WDIR" ./here
    expect_rc 0 "$flag"
    [ "$(grep -c "^here $WDIR\$" "$SCRATCH/out")" -eq 2 ] || fail "$flag: the ranks did not start in $WDIR"
done
(cd "$SCRATCH" && bmpirun -n 1 --wdir="work dir" ./here)
expect_rc 0 "--wdir=relative"
grep -q "^here $WDIR\$" "$SCRATCH/out" || fail "--wdir=relative: the rank did not start in $WDIR"
# PWD, which shells trust, names it too (as under mpirun).
bmpirun -n 1 --wdir "$WDIR" "$CLIENT" noinit env=PWD
grep -qx "env 0 PWD=$WDIR" "$SCRATCH/out" || fail "--wdir: PWD is not $WDIR"
bmpirun -n 1 --wdir "$SCRATCH/none" true
expect_rc 2 "--wdir of a missing directory"
grep -q "^bmpirun: --wdir '$SCRATCH/none': cannot use it" "$SCRATCH/err" || fail "no line about the missing --wdir"
echo "ok: --wdir"

# -genv VAR VALUE, -genv VAR=VALUE, -genvlist A,B
BMPI_T_A=alpha BMPI_T_B=beta bmpirun -n 2 -genv BMPI_T_G "a b" -genv BMPI_T_H=h -genvlist BMPI_T_A,BMPI_T_B \
    "$CLIENT" noinit env=BMPI_T_G env=BMPI_T_H env=BMPI_T_A env=BMPI_T_B
expect_rc 0 "-genv"
for want in "BMPI_T_G=a b" BMPI_T_H=h BMPI_T_A=alpha BMPI_T_B=beta; do
    [ "$(grep -c "^env [01] $want\$" "$SCRATCH/out")" -eq 2 ] || fail "-genv/-genvlist: $want did not reach both ranks"
done
bmpirun -n 1 -genv BMPI_T_G
expect_rc 2 "-genv without a value"
echo "ok: -genv, -genvlist"

# --tag-output=host
HOST=$(hostname)
bmpirun -n 2 --tag-output=host sh -c 'echo line'
expect_rc 0 "--tag-output=host"
for r in 0 1; do
    grep -qx "\[$r@$HOST\] line" "$SCRATCH/out" || fail "--tag-output=host: no line '[$r@$HOST] line'"
done
bmpirun -n 1 --tag-output=bogus true
expect_rc 2 "--tag-output=bogus"
echo "ok: --tag-output=host"

# --report-bindings: one line per rank, naming the CPUs the rank may run on
for bind in core none; do
    bmpirun -n 2 --bind-to $bind --report-bindings --tag-output sh -c 'grep Cpus_allowed_list /proc/self/status'
    expect_rc 0 "--report-bindings --bind-to $bind"
    for r in 0 1; do
        own=$(sed -n "s/^\[$r\] Cpus_allowed_list:[[:space:]]*//p" "$SCRATCH/out")
        said=$(sed -n "s/^bmpirun: rank $r (pid [0-9]*) on $HOST may run on CPUs \([^ ]*\) .*/\1/p" "$SCRATCH/err")
        [ -n "$own" ] && [ "$own" = "$said" ] || fail "--bind-to $bind: rank $r runs on '$own', reported '$said'"
    done
done
echo "ok: --report-bindings"
