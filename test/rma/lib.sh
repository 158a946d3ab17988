# Shared by the test/rma scripts that run every rma program over one
# transport (rma_ofi_tcp.sh, rma_ofi_shm.sh, rma_verbs.sh):
#   rma_run_all WHAT N [N ...]
# runs each program at the rank counts given (rma_matrix once per window
# flavor) and stops at the first failure, naming the program and WHAT.
rma_programs="rma_atomic rma_pscw rma_lock rma_shared rma_dynamic rma_large rma_misc rma_info_attr rma_errors rma_acc_order rma_batch rma_flush_seen rma_pull"
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

# rma_check_route WHAT N VAR ON OFF LABEL PROGRAM [ARG]: run PROGRAM at N
# ranks with BMPI_VERBOSE=2 and VAR=ON, and check that some accumulates
# took the route the lines MPI_Win_free prints name "COUNT LABEL"
# (runtime/win.c), then with VAR=OFF that none did and the program still
# passes. The launch command is $rma_launcher (default: bmpirun -n N),
# split at blanks; the settings go on the ranks' command line (env), so
# that they reach ranks on other hosts too.
rma_check_route() {
    what=$1 n=$2 var=$3 on=$4 off=$5 label=$6 prog=$7
    shift 7
    out=$(mktemp "${TMPDIR:-/tmp}/bmpi-rma-route.XXXXXX") || return 1
    for setting in "$on" "$off"; do
        "$top_srcdir/test/with-timeout" "${BMPI_TEST_TIMEOUT:-120}" \
            ${rma_launcher:-"$top_builddir/launcher/bmpirun" -n "$n"} \
            env BMPI_VERBOSE=2 "$var=$setting" \
            "$top_builddir/test/rma/$prog" "$@" >"$out" 2>&1 </dev/null || {
            tail -n 20 "$out"
            rm -f "$out"
            echo "FAIL: $prog${*:+ $*} over $what with $var=$setting"
            exit 1
        }
        count=$(sed -n "s/.* \([0-9][0-9]*\) $label.*/\1/p" "$out" | awk '{s += $1} END {print s + 0}')
        if [ "$setting" = "$on" ] && [ "$count" -eq 0 ]; then
            rm -f "$out"
            echo "FAIL: $prog${*:+ $*} over $what: no accumulate $label"
            exit 1
        fi
        if [ "$setting" = "$off" ] && [ "$count" -ne 0 ]; then
            rm -f "$out"
            echo "FAIL: $prog${*:+ $*} over $what: $count accumulates $label although $var=$off"
            exit 1
        fi
        echo "ok: $prog${*:+ $*} over $what: $count accumulates $label ($var=$setting)"
    done
    rm -f "$out"
}

# rma_check_net_atomics WHAT N PROGRAM [ARG]: some accumulates through
# the transport's atomics, none with BMPI_RMA_NET_ATOMICS=0.
rma_check_net_atomics() {
    what=$1 n=$2
    shift 2
    rma_check_route "$what" "$n" BMPI_RMA_NET_ATOMICS on 0 "by transport atomics" "$@"
}

# rma_check_pulled WHAT N: rma_pull's large accumulates pulled by the
# target (runtime/rma_pull.c), none with BMPI_RMA_ACC_PULL=0.
rma_check_pulled() {
    rma_check_route "$1" "$2" BMPI_RMA_ACC_PULL 65536 0 "pulled by the target" rma_pull
}
