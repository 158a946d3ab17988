#!/bin/sh
# Check the io tests themselves against other MPI implementations: build
# each program of test/io with MPICH's compiler wrapper and run its .sh
# under MPICH's launcher (or, with IMPL=ompi, Open MPI's), exactly as the
# suite runs it under bmpirun: the .sh gets top_builddir pointing at the
# build here and BMPIRUN at the other launcher (test/mpi/run-ranks and
# the scripts that drive their programs themselves honour it). Not part of
# the test suite; run it by hand after changing a test:
#   test/io/validate-with-mpich.sh                 # MPICH (Debian: mpich)
#   IMPL=ompi test/io/validate-with-mpich.sh       # Open MPI
#   COUNTS="2 4" test/io/validate-with-mpich.sh io_views io_file
# PROGRAMS (or the arguments) lists the programs; by default those that
# test/io/local.mk adds to check_PROGRAMS, so programs added later are
# covered without an edit here (hdf5.sh, which builds its client with
# h5pcc against MPICH anyway, is not one of them).
# A program without a .sh of its own (a helper another script drives)
# is built, not run. COUNTS runs the program through run-ranks at those
# counts instead of its .sh. TIMEOUT is each run's limit in seconds
# (default 240: MPICH's ranks busy-poll, and io_coll at 8 ranks on 2
# cores takes about 90 s under it). Prints one line per program, ends
# with those that failed; exit status 1 if any did.
#
# The behaviours test/io/README lists as the library's known deviations
# from the standard are named in IO_KNOWN_DEVIATIONS: a test then prints a
# NOTE for them instead of failing (never set for bmpi). The NOTE lines
# are printed here, once per program, for README's table.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
impl=${IMPL:-mpich}
case $impl in
mpich)
    cc=mpicc.mpich
    launch="mpiexec.mpich"
    IO_KNOWN_DEVIATIONS=${IO_KNOWN_DEVIATIONS-eof-count,hole-garbage,byte-offset-unchecked,nospace-is-io}
    ;;
ompi)
    cc=mpicc.openmpi
    command -v "$cc" >/dev/null 2>&1 || cc=mpicc
    launch="mpirun --allow-run-as-root --oversubscribe -x IO_KNOWN_DEVIATIONS -x BMPI_IO_TEST_DIR"
    IO_KNOWN_DEVIATIONS=${IO_KNOWN_DEVIATIONS-}
    ;;
*)
    echo "IMPL=$impl: mpich or ompi"
    exit 2
    ;;
esac
export IO_KNOWN_DEVIATIONS
command -v "$cc" >/dev/null 2>&1 || {
    echo "$cc not found"
    exit 2
}
if [ $# -gt 0 ]; then
    programs=$*
else
    programs=${PROGRAMS:-$(sed -n 's/^check_PROGRAMS *+= *//p' "$here/local.mk" | tr ' \t' '\n\n' |
        sed -n 's|^test/io/||p')}
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/io-validate.XXXXXX")
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/test/io"
# The launcher as run-ranks and the scripts call it: BMPIRUN -n N PROG.
printf '#!/bin/sh\nexec %s "$@"\n' "$launch" >"$dir/launch"
chmod +x "$dir/launch"
failed=
for p in $programs; do
    # MPICH's mpi.h makes gcc see MPI_STATUSES_IGNORE as a zero-size array.
    if ! "$cc" -O1 -g -Wall -Wextra -Wno-stringop-overflow -I"$top" -o "$dir/test/io/$p" "$here/$p.c" \
        2>"$dir/$p.cc"; then
        cat "$dir/$p.cc"
        echo "FAIL: $p does not build with $cc"
        failed="$failed $p"
        continue
    fi
    if [ -n "${COUNTS:-}" ]; then
        set -- "$top/test/mpi/run-ranks" "$dir/test/io/$p" $COUNTS
    elif [ -f "$here/$p.sh" ]; then
        set -- sh "$here/$p.sh"
    else
        echo "built: $p (no $p.sh: driven by another script)"
        continue
    fi
    rc=0
    top_builddir=$dir top_srcdir=$top BMPIRUN=$dir/launch BMPI_TEST_TIMEOUT=${TIMEOUT:-240} "$@" \
        >"$dir/out" 2>&1 </dev/null || rc=$?
    grep -E "^NOTE|^SKIP" "$dir/out" | sed 's/rank [0-9]*: //' | sort -u
    case $rc in
    0) echo "ok: $p ($impl)" ;;
    77) echo "skipped: $p ($impl)" ;;
    *)
        grep -E "^FAIL|Assert|signal|rror" "$dir/out" | head -8
        echo "FAIL: $p ($impl)"
        failed="$failed $p"
        ;;
    esac
done
if [ -n "$failed" ]; then
    echo "failed with $impl:$failed"
    exit 1
fi
echo "all passed with $impl"
