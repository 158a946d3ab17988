# Shared by the test/abi scripts (sourced): run a program built by another
# MPI's compilers on bmpi and prove it ran there.
: "${top_builddir:?}" "${top_srcdir:?}" "${BMPIRUN:?}"
compat="$top_builddir/mpich-abi/.libs"
with_timeout="$top_srcdir/test/with-timeout"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/abi.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
# fail, and the run-and-prove step shared with the MPI-IO clients
. "$top_srcdir/test/io/mpich_client.sh"
launcher=bmpirun

# run_on_bmpi PROG N: N ranks of PROG under bmpirun, each "ok: rank R of N",
# rank 0's "library:" line naming bmpi (mpich_client_job).
run_on_bmpi() {
    mpich_client_job "$(basename "$1")" "$2" "$1"
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
