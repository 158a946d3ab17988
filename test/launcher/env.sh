#!/bin/sh
# Ranks get bmpirun's environment plus -x VAR / -x VAR=value; PMIx
# variables of an outer launcher do not leak in, PMIX_MCA_* tuning does.
. "$top_srcdir/test/launcher/lib.sh"

INHERITED=yes BMPI_T_FROMENV=fromenv BMPI_T_OVER=old PMIX_SERVER_URI41=bogus PMIX_MCA_bmpi_test=kept \
    bmpirun -n 2 -x BMPI_T_FROMENV -x BMPI_T_SET=a=b -x BMPI_T_OVER=new "$CLIENT" \
    env=INHERITED env=BMPI_T_FROMENV env=BMPI_T_SET env=BMPI_T_OVER env=PMIX_MCA_bmpi_test
expect_rc 0
for r in 0 1; do
    for want in "INHERITED=yes" "BMPI_T_FROMENV=fromenv" "BMPI_T_SET=a=b" "BMPI_T_OVER=new" "PMIX_MCA_bmpi_test=kept"; do
        grep -q "^env $r $want\$" "$SCRATCH/out" || fail "rank $r did not get $want"
    done
done
check_clean
echo "ok: -x and inherited variables"

# A stale outer server address must not reach the ranks (they would try to
# connect to it), and bmpirun's own must.
PMIX_SERVER_URI41=bogus bmpirun -n 1 "$CLIENT" noinit env=PMIX_SERVER_URI41 env=PMIX_NAMESPACE
expect_rc 0
grep -q "^env 0 PMIX_SERVER_URI41=bogus" "$SCRATCH/out" && fail "a stale PMIX_SERVER_URI41 reached the rank"
grep -q "^env 0 PMIX_NAMESPACE=bmpi\\." "$SCRATCH/out" || fail "the rank did not get PMIX_NAMESPACE"

bmpirun -n 1 -x BMPI_T_SURELY_UNSET "$CLIENT" noinit
expect_rc 0 "-x of an unset variable"
grep -q "warning: -x BMPI_T_SURELY_UNSET" "$SCRATCH/err" || fail "no warning for -x of an unset variable"
check_clean
echo "ok: PMIx variables"
