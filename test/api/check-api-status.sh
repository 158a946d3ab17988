#!/bin/sh
# Every function that include/mpi.h declares exists in libbmpi.so twice: PMPI_X
# (the definition) and MPI_X (a weak alias, so that profiling tools can
# interpose it), and the generated stubs and docs/api-status.md are up to date.
#
# Environment (from the Makefile): top_srcdir, top_builddir, absolute.
# Exit 77 (skipped) without python3 or nm.

set -u
: "${top_srcdir:?}" "${top_builddir:?}"

if ! command -v python3 >/dev/null 2>&1; then
    echo "SKIP: python3 not found (it runs tools/gen-api-status)"
    exit 77
fi
if ! command -v nm >/dev/null 2>&1; then
    echo "SKIP: nm not found (install binutils)"
    exit 77
fi

gen=$top_srcdir/tools/gen-api-status
lib=$top_builddir/.libs/libbmpi.so
fail=0

# --strict: no stub for a function that returns no error code
python3 "$gen" --check --strict || fail=1

if [ ! -f "$lib" ]; then
    echo "FAIL: $lib is not built"
    exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/check-api-status.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

python3 "$gen" --list >"$tmp/funcs" || exit 1
nm -D --defined-only "$lib" >"$tmp/syms" || exit 1
# Objects that mpi.h declares extern (MPI_UNWEIGHTED, ...) must be defined too.
sed -n 's/^extern .*[ *]\(MPI_[A-Za-z0-9_]*\);.*/\1/p' "$top_srcdir/include/mpi.h" >"$tmp/objects"

# nm -D prints "address type name"; functions are T (strong) or W (weak).
awk -v funcs="$tmp/funcs" -v objects="$tmp/objects" '
    { type[$3] = $2 }
    END {
        bad = 0; n = 0
        while ((getline f < funcs) > 0) {
            n++; declared[f] = 1
            if (!(f in type)) {
                print "FAIL: " f " is not exported"; bad = 1
            } else if (type[f] != "W") {
                print "FAIL: " f " is exported as \"" type[f] "\", not as a weak symbol (W)"; bad = 1
            }
            p = "P" f
            if (!(p in type)) {
                print "FAIL: " p " is not exported"; bad = 1
            } else if (type[p] != "T") {
                print "FAIL: " p " is exported as \"" type[p] "\", not as a function (T)"; bad = 1
            }
        }
        while ((getline o < objects) > 0)
            if (!(o in type)) { print "FAIL: object " o " (declared in mpi.h) is not exported"; bad = 1 }
        for (s in type) {
            if (type[s] != "T" && type[s] != "W") continue
            f = s; sub(/^P/, "", f)
            if (f ~ /^MPI_/ && !(f in declared)) {
                print "FAIL: " s " is exported but mpi.h does not declare " f; bad = 1
            }
        }
        if (n == 0) { print "FAIL: no function list from gen-api-status"; bad = 1 }
        if (!bad) print "ok: " n " functions exported as weak MPI_X and PMPI_X"
        exit bad
    }' "$tmp/syms" || fail=1

exit $fail
