# Sourced by the tests that run a program built against MPICH on bmpi: the
# MPI-IO clients (hdf5.sh, adios.sh) and test/abi/lib.sh; not a test itself. Needs $top_srcdir
# and, under bmpirun, $BMPIRUN and $top_builddir.
# shellcheck shell=sh
: "${top_srcdir:?}"

# mpich_client_launcher WHAT: sets $launcher from BMPI_TEST_LAUNCHER:
# bmpirun (the default), or "mpich" for MPICH's own mpiexec, what validates
# the test itself (no bmpi proof then). Exits 77 when that cannot run here;
# WHAT names the program for the message.
mpich_client_launcher() {
    launcher=${BMPI_TEST_LAUNCHER:-bmpirun}
    case $launcher in
    mpich) command -v mpiexec.mpich >/dev/null 2>&1 || { echo "SKIP: no mpiexec.mpich"; exit 77; } ;;
    *)
        : "${BMPIRUN:?}" "${top_builddir:?}"
        # A sanitizer's runtime must be loaded first: not so in a program
        # built by MPICH's wrappers, whose libraries call into it before it
        # is set up (a sanitizer build of libbmpi has no shared heap, so no
        # malloc of its own).
        if ! nm -D "$top_builddir/.libs/libbmpi.so" 2>/dev/null | grep -q ' T malloc$'; then
            echo "SKIP: libbmpi is a sanitizer build, which $1 cannot load"
            exit 77
        fi
        ;;
    esac
}

# mpich_client_setup NAME WHAT: mpich_client_launcher WHAT, and $tmp, a
# directory bmpi-io-NAME.* under $BMPI_IO_TEST_DIR (default $TMPDIR, then
# /tmp) removed on exit.
mpich_client_setup() {
    mpich_client_launcher "$2"
    mc_base=${BMPI_IO_TEST_DIR:-${TMPDIR:-/tmp}}
    tmp=$(mktemp -d "$mc_base/bmpi-io-$1.XXXXXX") || exit 1
    trap 'rm -rf "$tmp"' EXIT
}

fail() {
    echo "FAIL: $*"
    exit 1
}

# mpich_client_run N PROGRAM [ARG...]: PROGRAM at N ranks under $launcher,
# killed after 120 seconds.
mpich_client_run() {
    mc_ranks=$1
    shift
    if [ "$launcher" = mpich ]; then
        "$top_srcdir/test/with-timeout" 120 mpiexec.mpich -n "$mc_ranks" "$@"
    else
        "$top_srcdir/test/with-timeout" 120 "$BMPIRUN" -n "$mc_ranks" "$@"
    fi
}

# mpich_client_job WHAT N PROGRAM [ARG...]: mpich_client_run, its output
# printed and kept in $out; the caller's fail (naming WHAT) when it exits
# non-zero or mpich_client_ran finds it did not run as it should.
mpich_client_job() {
    mc_what=$1 mc_n=$2
    shift 2
    out=$(mpich_client_run "$mc_n" "$@" 2>&1)
    mc_rc=$?
    printf '%s\n' "$out"
    [ $mc_rc -eq 0 ] || fail "$mc_what at $mc_n ranks exited $mc_rc"
    mc_why=$(mpich_client_ran "$mc_n" "$out") || fail "$mc_what: $mc_why"
}

# mpich_client_ran N OUTPUT: true when OUTPUT (the program's) has
# "ok: rank R of N" from N distinct ranks and, under bmpirun, rank 0's
# "library: bmpi ..." (MPI_Get_library_version); else says which is missing.
mpich_client_ran() {
    if [ "$launcher" != mpich ] && ! printf '%s\n' "$2" | grep -q '^library: bmpi '; then
        echo "the program did not run on bmpi"
        return 1
    fi
    mc_ok=$(printf '%s\n' "$2" | sed -n "s/^ok: rank \([0-9]*\) of $1\$/\1/p" | sort -un | wc -l)
    [ "$mc_ok" -eq "$1" ] && return 0
    echo "expected $1 ranks of one world of $1, got $mc_ok"
    return 1
}
