#!/bin/sh
# win_attr at 1, 2 and 4 ranks; then a window's own default handler,
# MPI_ERRORS_ARE_FATAL, ends the job at a bad call on the window although
# MPI_COMM_WORLD's handler is MPI_ERRORS_RETURN.
"$top_srcdir/test/mpi/run-ranks" "$top_builddir/test/mpi/win_attr" 1 2 4 || exit 1

err=$(mktemp) || exit 1
trap 'rm -f "$err"' EXIT
echo "== win_attr fatal at 2 ranks"
"$top_srcdir/test/with-timeout" "${BMPI_TEST_TIMEOUT:-120}" "${BMPIRUN:-bmpirun}" -n 2 \
    "$top_builddir/test/mpi/win_attr" fatal 2>"$err"
rc=$?
cat "$err"
if [ $rc -eq 0 ] || [ $rc -eq 124 ]; then
    echo "FAIL: a bad call on a window with the default handler: job exit $rc"
    exit 1
fi
if ! grep -q "MPI_Win_get_attr: invalid window keyval" "$err"; then
    echo "FAIL: no message naming MPI_Win_get_attr and the bad keyval"
    exit 1
fi
echo "ok: MPI_ERRORS_ARE_FATAL on the window ended the job (exit $rc)"
