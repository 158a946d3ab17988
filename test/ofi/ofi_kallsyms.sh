#!/bin/sh
# libfabric's kernel symbol scan (transport/ofi/ofi_kallsyms.c): in a
# 2-rank job over ofi no process opens /proc/kallsyms and the job runs
# correctly; bmpi_info reports the same providers with and without the
# scan; BMPI_OFI_KALLSYMS=on lets libfabric read the table again (where
# this libfabric reads it at all: then the first check proves something).
set -u
. "$top_srcdir/test/ofi/lib.sh"
ofi_setup tcp
command -v strace >/dev/null 2>&1 || { echo "SKIP: strace not found (Debian package strace)"; exit 77; }
hello=$top_builddir/test/mpi/hello
info=$top_builddir/tools/bmpi_info
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# traced NAME [VAR=VALUE ...]: bmpirun -n 2 hello under strace -f, the
# files opened by every process of the job in $tmp/NAME.
traced() {
    name=$1
    shift
    env "$@" "$top_srcdir/test/with-timeout" 120 strace -f -qq -e trace=open,openat -o "$tmp/$name" \
        "$BMPIRUN" -n 2 "$hello" >"$tmp/$name.out" 2>&1 || {
        cat "$tmp/$name.out"
        fail "bmpirun -n 2 hello over ofi/tcp under strace exited with $?"
    }
    [ "$(grep -c '^hello from rank [01] of 2 on ' "$tmp/$name.out")" -eq 2 ] || {
        cat "$tmp/$name.out"
        fail "hello over ofi/tcp did not print both ranks"
    }
    grep -q 'libfabric\.so' "$tmp/$name" || fail "no process of the job loaded libfabric: ofi was not used"
}

traced skipped
if grep -q '"/proc/kallsyms"' "$tmp/skipped"; then
    grep '"/proc/kallsyms"' "$tmp/skipped"
    fail "a process of the job opened /proc/kallsyms"
fi
echo "ok: no process of a 2-rank ofi job opened /proc/kallsyms"

traced read BMPI_OFI_KALLSYMS=on
if grep -q '"/proc/kallsyms"' "$tmp/read"; then
    echo "ok: with BMPI_OFI_KALLSYMS=on libfabric reads it ($(grep -c '"/proc/kallsyms"' "$tmp/read") opens)"
else
    echo "note: this libfabric does not read /proc/kallsyms: nothing to skip"
fi

if [ -x "$info" ]; then
    (unset BMPI_TRANSPORT BMPI_OFI_PROVIDER && "$info") >"$tmp/info.skipped" 2>&1 || fail "bmpi_info exited with $?"
    (unset BMPI_TRANSPORT BMPI_OFI_PROVIDER && BMPI_OFI_KALLSYMS=on "$info") >"$tmp/info.read" 2>&1 ||
        fail "bmpi_info with BMPI_OFI_KALLSYMS=on exited with $?"
    diff "$tmp/info.read" "$tmp/info.skipped" || fail "bmpi_info reports differently without the scan"
    echo "ok: bmpi_info reports the same providers with and without the scan"
fi
