#!/bin/sh
# BMPI_* variables are parsed strictly (docs/environment.md): a bad value
# fails MPI_Init with one message naming the variable, the value and what
# is accepted, through the launcher at 2 ranks; every variable that page
# lists refuses an empty value (run as a singleton, which checks the same);
# every spelling of a switch, sizes with suffixes and algorithm names are
# accepted; bmpi_info refuses a bad value too.
set -u
prog=$top_builddir/test/mpi/hello
wt=$top_srcdir/test/with-timeout
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# run_refused VAR VALUE [NP]: the job fails at MPI_Init naming VAR=VALUE.
run_refused() {
    if [ "${3:-1}" -gt 1 ]; then
        out=$(env "$1=$2" "$wt" 60 "$BMPIRUN" -n "$3" "$prog" 2>&1)
    else
        out=$(env -u PMIX_NAMESPACE "$1=$2" "$wt" 30 "$prog" 2>&1)
    fi
    rc=$?
    [ $rc -ne 0 ] && [ $rc -ne 124 ] || { fail "$1=$2 at ${3:-1} rank(s): exit $rc"; return; }
    printf '%s\n' "$out" | grep -qF "MPI_Init: $1=$2: " ||
        { printf '%s\n' "$out"; fail "$1=$2: no MPI_Init message naming it"; return; }
    printf '%s\n' "$out" | grep -qF "(accepted: " || fail "$1=$2: no accepted values"
    printf '%s\n' "$out" | grep -q '^hello from' && fail "$1=$2: a rank got past MPI_Init"
}

# run_accepted VAR=VALUE...: a 2-rank hello runs with all of them set.
run_accepted() {
    out=$(env "$@" "$wt" 60 "$BMPIRUN" -n 2 "$prog" 2>&1)
    rc=$?
    [ $rc -eq 0 ] && [ "$(printf '%s\n' "$out" | grep -c '^hello from')" -eq 2 ] ||
        { printf '%s\n' "$out"; fail "$* refused (exit $rc)"; }
}

# Negative, not a number, an exponent, out of range, empty, an unknown name.
while read -r var value; do
    [ "$value" = '""' ] && value=
    run_refused "$var" "$value" 2
done <<'LIST'
BMPI_SHM_FASTPATH_MAX -1
BMPI_SHM_RING_SIZE abc
BMPI_SHM_MAX_AM 1e3
BMPI_VERBS_SL 16
BMPI_BOOTSTRAP_TIMEOUT 0
BMPI_VERBOSE 3
BMPI_COLL_SHM ""
BMPI_COLL_SHM maybe
BMPI_OVERSUBSCRIBED 2
BMPI_COLL_BCAST fastest
BMPI_TRANSPORT shm,tcp
BMPI_OFI_MAX_AM 64q
BMPI_VERBS_DEVICE mlx5_0:0
LIST
echo "checked: bad values refused at 2 ranks"

vars=$(sed -n 's/^| `\(BMPI_[A-Z_]*\)`.*/\1/p' "$top_srcdir/docs/environment.md")
[ "$(printf '%s\n' "$vars" | wc -l)" -ge 50 ] || fail "docs/environment.md lists too few variables"
for var in $vars; do
    run_refused "$var" ""
done
echo "checked: an empty value of each of $(printf '%s\n' "$vars" | wc -l) variables refused"

for s in 0 1 off on no yes false true OFF On auto; do
    run_accepted BMPI_COLL_SHM=$s BMPI_SHM_SHARED_COPY=$s BMPI_OVERSUBSCRIBED=$s BMPI_SHM_HEAP=$s
done
run_accepted BMPI_SHM_RING_SIZE=64k BMPI_SHM_MAX_AM=8K BMPI_COLL_SHM_SLOT=1m BMPI_VERBOSE=0 \
    BMPI_SHM_FASTPATH_MAX=0 BMPI_COLL_BCAST=linear BMPI_COLL_ALLREDUCE=auto \
    BMPI_TRANSPORT=self,shm BMPI_BOOTSTRAP_TIMEOUT=30
echo "checked: good spellings accepted"

# bmpi_info reports what a job would find: it refuses the same values.
out=$(BMPI_SHM_CMA=2 "$wt" 60 "$top_builddir/tools/bmpi_info" 2>&1)
rc=$?
[ $rc -eq 1 ] && printf '%s\n' "$out" | grep -qF 'bmpi_info: BMPI_SHM_CMA=2: not' ||
    { printf '%s\n' "$out"; fail "bmpi_info accepted BMPI_SHM_CMA=2 (exit $rc)"; }
[ $fails -eq 0 ] || { echo "FAIL: $fails check(s)"; exit 1; }
