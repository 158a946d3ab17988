#!/bin/sh
# A peer no allowed transport reaches (issue 5): MPI_Init fails, without a
# hang, with one message that names the peer and every transport with the
# reason it declined. BMPI_TRANSPORT=self,verbs,ofi leaves shm out and
# BMPI_OFI_PROVIDER names a provider that does not exist, so on this node
# rank 1 is out of reach of rank 0: self reaches only itself, verbs has no
# device here (or, with one, no connection to a peer it never saw), ofi
# cannot open.
set -u
# This machine's own devices: the verbs emulation that make
# check-transports preloads would give verbs a way to the peer.
unset LD_PRELOAD
. "$top_srcdir/test/ofi/lib.sh"
prog=$top_builddir/test/mpi/hello
[ -x "$prog" ] || { echo "SKIP: $prog not built"; exit 77; }
grep -q '^#define BMPI_HAVE_OFI 1' "$top_builddir/config.h" 2>/dev/null ||
    { echo "SKIP: bmpi was built without libfabric"; exit 77; }

out=$(BMPI_TRANSPORT=self,verbs,ofi BMPI_OFI_PROVIDER=no-such-provider \
    timeout -k 5 60 "$BMPIRUN" -n 2 "$prog" 2>&1)
rc=$?
printf '%s\n' "$out"
fail() { echo "FAIL: $*"; exit 1; }
[ $rc -ne 0 ] || fail "MPI_Init succeeded with no transport to the peer"
[ $rc -ne 124 ] || fail "timed out instead of failing"
printf '%s\n' "$out" | grep -q "hello from" && fail "a rank got past MPI_Init"
# The rank that reports it: 'rank A on HOST cannot reach rank B (node N);
# transports tried: ...' with each transport and its reason, on one line.
line=$(printf '%s\n' "$out" | grep '^bmpi: rank [01] on .*: MPI_Init: .*cannot reach rank [01] ' | head -n 1)
[ -n "$line" ] || fail "no 'cannot reach rank' message from the failing rank"
for want in "self: self reaches only this process" \
    "shm: excluded by BMPI_TRANSPORT=self,verbs,ofi" \
    "verbs: [^;]" \
    "ofi: provider no-such-provider (BMPI_OFI_PROVIDER) unusable: fi_getinfo"; do
    printf '%s\n' "$line" | grep -q "$want" || fail "the message lacks '$want'"
done
# One message per rank that failed, not one per transport or per attempt.
n=$(printf '%s\n' "$out" | grep -c '^bmpi: rank [0-9]* on .*cannot reach')
[ "$n" -le 2 ] || fail "$n 'cannot reach' messages for 2 ranks"
echo "ok: an unreachable peer fails MPI_Init naming the peer and each transport's reason"
