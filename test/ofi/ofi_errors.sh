#!/bin/sh
# What users see from the ofi transport: the provider chosen (BMPI_VERBOSE),
# and a forced provider that does not exist failing MPI_Init with a
# message that names it (instead of a hang or a bare error number).
set -u
. "$top_srcdir/test/ofi/lib.sh"
ofi_setup tcp
prog="$top_builddir/test/mpi/hello"
[ -x "$prog" ] || prog="$top_builddir/test/ofi/ofi_sanity"
launch() { timeout -k 5 60 "$BMPIRUN" -n 2 "$@"; }

out=$(BMPI_VERBOSE=1 launch "$prog" 2>&1) || { printf '%s\n' "$out"; echo "FAIL: verbose run"; exit 1; }
printf '%s\n' "$out" | grep -q "ofi: provider tcp" || { printf '%s\n' "$out"; echo "FAIL: no provider line"; exit 1; }
printf '%s\n' "$out" | grep -q "rank 0 -> rank 1: ofi" || { printf '%s\n' "$out"; echo "FAIL: rank 1 not over ofi"; exit 1; }

out=$(BMPI_OFI_PROVIDER=no-such-provider launch "$prog" 2>&1)
rc=$?
printf '%s\n' "$out"
[ $rc -ne 0 ] || { echo "FAIL: MPI_Init succeeded with a missing provider"; exit 1; }
[ $rc -ne 124 ] || { echo "FAIL: timed out instead of failing"; exit 1; }
printf '%s\n' "$out" | grep -q "no-such-provider" || { echo "FAIL: the message does not name the provider"; exit 1; }

# Default preference list (no BMPI_OFI_PROVIDER): verbose says what was skipped.
unset BMPI_OFI_PROVIDER
out=$(BMPI_VERBOSE=1 launch "$prog" 2>&1) || { printf '%s\n' "$out"; echo "FAIL: default provider run"; exit 1; }
printf '%s\n' "$out" | grep -q "ofi: skipped verbs;ofi_rxm" || { printf '%s\n' "$out"; echo "FAIL: skip reasons missing"; exit 1; }
# A get that fails in the provider (a remote key it does not know) fails
# the receive with the provider's text, not a hang.
if [ -x "$top_builddir/test/ofi/ofi_rma_error" ]; then
    export BMPI_OFI_PROVIDER=tcp
    out=$(BMPI_OFI_FAULT_RKEY=1 launch "$top_builddir/test/ofi/ofi_rma_error" 2>&1)
    rc=$?
    printf '%s\n' "$out"
    [ $rc -eq 3 ] || { echo "FAIL: expected the receiver to abort with 3, got $rc"; exit 1; }
    printf '%s\n' "$out" | grep -q "recv error: .*fi_read of 1048576 bytes from rank 0 failed" ||
        { echo "FAIL: the receive error does not explain the failed fi_read"; exit 1; }
fi
echo "ok: ofi errors and verbose"
