# Shared by the test/rma scripts that run every rma program over one
# transport (rma_ofi_tcp.sh, rma_ofi_shm.sh, rma_verbs.sh):
#   rma_run_all WHAT N [N ...]
# runs each program at the rank counts given (rma_matrix once per window
# flavor) and stops at the first failure, naming the program and WHAT.
rma_programs="rma_atomic rma_pscw rma_lock rma_shared rma_dynamic rma_large rma_misc rma_info_attr rma_errors"
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
