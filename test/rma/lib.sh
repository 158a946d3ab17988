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

# rma_verbose_run OUT WHAT N SETTING PROGRAM [ARG]: run PROGRAM at N
# ranks with BMPI_VERBOSE=2 and SETTING (VAR=VALUE), its output in OUT;
# when it fails, the output's tail, a FAIL line naming WHAT, and exit 1.
# The launch command is $rma_launcher (default: bmpirun -n N), split at
# blanks; the settings go on the ranks' command line (env), so that they
# reach ranks on other hosts too.
rma_verbose_run() {
    out=$1 what=$2 n=$3 setting=$4 prog=$5
    shift 5
    "$top_srcdir/test/with-timeout" "${BMPI_TEST_TIMEOUT:-120}" \
        ${rma_launcher:-"$top_builddir/launcher/bmpirun" -n "$n"} \
        env BMPI_VERBOSE=2 "$setting" \
        "$top_builddir/test/rma/$prog" "$@" >"$out" 2>&1 </dev/null || {
        tail -n 20 "$out"
        rm -f "$out"
        echo "FAIL: $prog${*:+ $*} over $what with $setting"
        exit 1
    }
}

# rma_check_route WHAT N VAR ON OFF LABEL PROGRAM [ARG]: run PROGRAM at N
# ranks (rma_verbose_run) with VAR=ON, and check that some accumulates
# took the route the lines MPI_Win_free prints name "COUNT LABEL"
# (runtime/win.c), then with VAR=OFF that none did and the program still
# passes.
rma_check_route() {
    what=$1 n=$2 var=$3 on=$4 off=$5 label=$6 prog=$7
    shift 7
    out=$(mktemp "${TMPDIR:-/tmp}/bmpi-rma-route.XXXXXX") || return 1
    for setting in "$on" "$off"; do
        rma_verbose_run "$out" "$what" "$n" "$var=$setting" "$prog" "$@"
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

# rma_check_gathered WHAT N MIN: run rma_batch at N ranks
# (rma_verbose_run) and check, from the lines MPI_Win_free prints
# (runtime/win.c), that it gathered operations into messages, that some
# of their data went by reference, and that the largest message, and the
# most bytes copied into one, reached MIN bytes (the gathering buffer
# grows to the message's bound: a bug once held it at half); then with
# BMPI_RMA_BATCH=0 that nothing was gathered.
rma_check_gathered() {
    what=$1 n=$2 min=$3
    out=$(mktemp "${TMPDIR:-/tmp}/bmpi-rma-gathered.XXXXXX") || return 1
    for bound in 8192 0; do
        rma_verbose_run "$out" "$what" "$n" "BMPI_RMA_BATCH=$bound" rma_batch
        # shellcheck disable=SC2046 # four numbers
        set -- $(sed -n 's/.* gathered: \([0-9]*\) messages, [0-9]* operations, \([0-9]*\) by reference, largest \([0-9]*\) bytes, most copied \([0-9]*\) bytes$/\1 \2 \3 \4/p' "$out" |
            awk '{m += $1; r += $2; if ($3 > l) l = $3; if ($4 > c) c = $4} END {print m + 0, r + 0, l + 0, c + 0}')
        rm -f "$out"
        said="$1 messages gathered, $2 operations by reference, the largest $3 bytes, most copied $4 bytes"
        if [ "$bound" = 0 ]; then
            [ "$1" -eq 0 ] || { echo "FAIL: rma_batch over $what: $1 messages gathered although BMPI_RMA_BATCH=0"; exit 1; }
        elif [ "$1" -eq 0 ] || [ "$2" -eq 0 ] || [ "$3" -lt "$min" ] || [ "$4" -lt "$min" ]; then
            echo "FAIL: rma_batch over $what: $said (at least $min bytes expected)"
            exit 1
        fi
        echo "ok: rma_batch over $what: $said (BMPI_RMA_BATCH=$bound)"
    done
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
