# Shared by the test/abi scripts (sourced): run a program built by another
# MPI's compilers on bmpi and prove it ran there.
: "${top_builddir:?}" "${top_srcdir:?}" "${BMPIRUN:?}"
compat="$top_builddir/mpich-abi/.libs"
with_timeout="$top_srcdir/test/with-timeout"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/abi.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# run_on_bmpi PROG N: N ranks of PROG under bmpirun, each "ok: rank R of N",
# rank 0's "library:" line naming bmpi.
run_on_bmpi() {
    out=$("$with_timeout" 120 "$BMPIRUN" -n "$2" "$1" 2>&1)
    rc=$?
    printf '%s\n' "$out"
    [ $rc -eq 0 ] || fail "bmpirun -n $2 $(basename "$1") exited $rc"
    printf '%s\n' "$out" | grep -q '^library: bmpi ' || fail "$(basename "$1") did not run on bmpi"
    ranks=$(printf '%s\n' "$out" | sed -n "s/^ok: rank \([0-9]*\) of $2\$/\1/p" | sort -un | wc -l)
    [ "$ranks" -eq "$2" ] || fail "expected $2 ranks of one world of $2, got $ranks"
    echo "ok: $(basename "$1") at $2 ranks on bmpi"
}

# resolved PROG [bmpirun options]: where a rank's loader finds PROG's MPI
# libraries, "soname path" a line
resolved() {
    prog=$1
    shift
    "$with_timeout" 60 "$BMPIRUN" "$@" -n 1 ldd "$prog" |
        sed -n 's/^[[:space:]]*\(libmpi[a-z]*\.so\.[0-9]*\) => \([^ ]*\).*/\1 \2/p'
}
