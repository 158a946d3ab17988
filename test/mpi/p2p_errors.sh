#!/bin/sh
# Bad arguments under MPI_ERRORS_RETURN; then one bad MPI_Send under
# MPI_ERRORS_ARE_FATAL: the job must fail and stderr must name the call and
# the bad rank.
"$top_srcdir/test/mpi/run-ranks" "$top_builddir/test/mpi/p2p_errors" 1 2 3 4 8 || exit 1
prog=$top_builddir/test/mpi/p2p_errors
err=${TMPDIR:-/tmp}/p2p_errors.$$.err
trap 'rm -f "$err"' EXIT
for n in 1 2 4; do
    echo "== $prog fatal at $n ranks: must fail, naming MPI_Send and 12345"
    case ${BMPI_TEST_LAUNCHER:-bmpirun} in
    ompi) timeout -k 5 60 mpirun --allow-run-as-root --oversubscribe -n "$n" "$prog" fatal 2>"$err" ;;
    *) timeout -k 5 60 "${BMPIRUN:-bmpirun}" -n "$n" "$prog" fatal 2>"$err" ;;
    esac
    rc=$?
    cat "$err"
    if [ $rc -eq 0 ]; then
        echo "FAIL: a bad MPI_Send under MPI_ERRORS_ARE_FATAL: the job exited 0"
        exit 1
    fi
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        echo "FAIL: the job hung after a fatal error (exit $rc): the other ranks were not taken down"
        exit 1
    fi
    if ! grep 'MPI_Send' "$err" | grep -q '12345'; then
        echo "FAIL: stderr has no line naming MPI_Send and the bad rank 12345"
        exit 1
    fi
done
echo "PASS p2p_errors fatal"
exit 0
