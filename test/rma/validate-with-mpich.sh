#!/bin/sh
# Check the rma tests themselves against other MPI implementations: build
# each program with MPICH's compiler wrapper and run it at 1 2 3 4 8 ranks
# under MPICH's launcher (or with IMPL=ompi, Open MPI's). Not part of the
# test suite; run it by hand after changing a test:
#   test/rma/validate-with-mpich.sh            # MPICH (Debian: mpich)
#   IMPL=ompi test/rma/validate-with-mpich.sh  # Open MPI
#   COUNTS="2 4" test/rma/validate-with-mpich.sh rma_lock rma_pscw
# Prints one line per program and run, ends with the programs that
# failed; exit status 1 if any did. test/rma/README lists what MPICH
# 4.0.2 and Open MPI 4.1.4 are known to get wrong.
#
# rma_errors asks for the classes the standard implies, which neither
# library gives for every case: here it runs in survey mode
# (RMA_ERRORS_SURVEY=1: each case prints what the library answered, the
# program goes on), so what is validated is that the program itself is
# sound; the answers are printed once, for README's table. rma_batch
# runs its one error case (an access to memory a dynamic window never
# attached, erroneous by the standard) in the same mode.
#
# Open MPI runs with --mca osc sm,pt2pt (OMPI_OSC to change it): its default osc/rdma and osc/ucx
# components fail cases of rma_matrix (Get_accumulate and Accumulate with
# derived datatypes), crash in Compare_and_swap (rma_atomic) and cannot
# create a dynamic window at one rank (README).
set -u
here=$(cd "$(dirname "$0")" && pwd)
impl=${IMPL:-mpich}
counts=${COUNTS:-1 2 3 4 8}
timeout_s=${TIMEOUT:-60}
case $impl in
mpich)
    cc=mpicc.mpich
    run() { n=$1; shift; timeout "$timeout_s" mpiexec.mpich -n "$n" "$@"; }
    ;;
ompi)
    cc=mpicc.openmpi
    command -v "$cc" >/dev/null 2>&1 || cc=mpicc
    run() {
        n=$1
        shift
        timeout "$timeout_s" mpirun --allow-run-as-root --oversubscribe --mca osc "${OMPI_OSC:-sm,pt2pt}" \
            -x RMA_ERRORS_SURVEY -n "$n" "$@"
    }
    ;;
*)
    echo "IMPL=$impl: mpich or ompi"
    exit 2
    ;;
esac
command -v "$cc" >/dev/null 2>&1 || {
    echo "$cc not found"
    exit 2
}
programs=${*:-rma_matrix rma_atomic rma_pscw rma_lock rma_shared rma_dynamic rma_large rma_misc rma_info_attr rma_errors rma_acc_order rma_batch rma_flush_seen rma_pull}
dir=$(mktemp -d "${TMPDIR:-/tmp}/rma-validate.XXXXXX")
trap 'rm -rf "$dir"' EXIT
failed=
first=${counts%% *}
for p in $programs; do
    # MPICH's mpi.h makes gcc see MPI_STATUSES_IGNORE as a zero-size array.
    if ! "$cc" -O1 -g -Wall -Wextra -Wno-stringop-overflow -o "$dir/$p" "$here/$p.c" 2>"$dir/$p.cc"; then
        cat "$dir/$p.cc"
        echo "FAIL: $p does not build with $cc"
        failed="$failed $p"
        continue
    fi
    args=
    [ "$p" = rma_matrix ] && args="create create_big allocate shared dynamic"
    for n in $counts; do
        for a in ${args:-all}; do
            [ "$a" = all ] && a=
            RMA_ERRORS_SURVEY=0
            case $p in rma_errors | rma_batch | rma_pull) RMA_ERRORS_SURVEY=1 ;; esac
            export RMA_ERRORS_SURVEY
            if run "$n" "$dir/$p" $a >"$dir/out" 2>&1; then
                [ "$RMA_ERRORS_SURVEY" = 1 ] && [ "$n" = "$first" ] && grep -v "^ok:" "$dir/out"
                echo "ok: $p${a:+ $a} at $n ranks ($impl)"
            else
                grep -E "^FAIL|Assert|signal|rror" "$dir/out" | head -5
                echo "FAIL: $p${a:+ $a} at $n ranks ($impl)"
                case " $failed " in *" $p "*) ;; *) failed="$failed $p" ;; esac
            fi
        done
    done
done
if [ -n "$failed" ]; then
    echo "failed with $impl:$failed"
    exit 1
fi
echo "all passed with $impl"
