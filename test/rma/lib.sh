# Shared by the test/rma scripts that run every rma program over one
# transport (rma_ofi_tcp.sh, rma_ofi_shm.sh, rma_verbs.sh):
#   rma_run_all WHAT N [N ...]
# runs each program at the rank counts given (rma_matrix once per window
# flavor) and stops at the first failure, naming the program and WHAT.
rma_programs="rma_atomic rma_pscw rma_lock rma_shared rma_dynamic rma_large rma_misc rma_info_attr rma_errors rma_acc_order rma_batch rma_flush_seen"
rma_flavors="create create_big allocate shared dynamic"

# rma_run WHAT PROGRAM "N ..." [ARG]
rma_run() {
    "$top_srcdir/test/mpi/run-ranks" "$top_builddir/test/rma/$2" $3 ${4:+-- "$4"} || {
        echo "FAIL: $2${4:+ $4} over $1"
        exit 1
    }
}

rma_run_all() {
    what=$1
    shift
    for f in $rma_flavors; do
        rma_run "$what" rma_matrix "$*" "$f"
    done
    for p in $rma_programs; do
        rma_run "$what" "$p" "$*"
    done
}

# rma_check_net_atomics WHAT N PROGRAM [ARG]: run PROGRAM at N ranks with
# BMPI_VERBOSE=2 and check that some accumulates went through the
# transport's atomics (the lines MPI_Win_free prints, runtime/win.c), then
# with BMPI_RMA_NET_ATOMICS=0 that none did and the program still passes.
# The launch command is $rma_launcher (default: bmpirun -n N), split at
# blanks; the settings go on the ranks' command line (env), so that they
# reach ranks on other hosts too.
rma_check_net_atomics() {
    what=$1 n=$2 prog=$3
    shift 3
    out=$(mktemp "${TMPDIR:-/tmp}/bmpi-rma-amo.XXXXXX") || return 1
    for setting in on 0; do
        "$top_srcdir/test/with-timeout" "${BMPI_TEST_TIMEOUT:-120}" \
            ${rma_launcher:-"$top_builddir/launcher/bmpirun" -n "$n"} \
            env BMPI_VERBOSE=2 BMPI_RMA_NET_ATOMICS=$setting \
            "$top_builddir/test/rma/$prog" "$@" >"$out" 2>&1 </dev/null || {
            tail -n 20 "$out"
            rm -f "$out"
            echo "FAIL: $prog${*:+ $*} over $what with BMPI_RMA_NET_ATOMICS=$setting"
            exit 1
        }
        amos=$(sed -n 's/.* \([0-9][0-9]*\) by transport atomics.*/\1/p' "$out" | awk '{s += $1} END {print s + 0}')
        if [ "$setting" = on ] && [ "$amos" -eq 0 ]; then
            rm -f "$out"
            echo "FAIL: $prog${*:+ $*} over $what: no accumulate went through the transport's atomics"
            exit 1
        fi
        if [ "$setting" = 0 ] && [ "$amos" -ne 0 ]; then
            rm -f "$out"
            echo "FAIL: $prog${*:+ $*} over $what: $amos accumulates used the transport's atomics although switched off"
            exit 1
        fi
        echo "ok: $prog${*:+ $*} over $what: $amos accumulates by the transport's atomics (BMPI_RMA_NET_ATOMICS=$setting)"
    done
    rm -f "$out"
}
