#!/bin/sh
"$top_srcdir/test/mpi/run-ranks" "$top_builddir/test/mpi/info_err" 1 2 3 4 8 || exit 1
# MPI_ERRORS_ABORT ends the job with a failure and one line naming the call
for n in 1 3; do
    out=$(timeout -k 5 60 "$BMPIRUN" -n $n "$top_builddir/test/mpi/info_err" abort 2>&1)
    rc=$?
    if [ $rc -eq 0 ] || [ $rc -eq 124 ]; then
        echo "FAIL: MPI_ERRORS_ABORT at $n ranks: exit $rc"; echo "$out"; exit 1
    fi
    case $out in
    *"MPI_Send"*"invalid rank"*) ;;
    *) echo "FAIL: MPI_ERRORS_ABORT at $n ranks did not name the error:"; echo "$out"; exit 1 ;;
    esac
done
echo "PASS: MPI_ERRORS_ABORT aborts the job"
