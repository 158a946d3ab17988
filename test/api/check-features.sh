#!/bin/sh
# What is missing is visible before run time, and told the same way
# everywhere: mpi.h's feature macros (BMPI_HAVE_<NAME>, BMPI_STUBS_<NAME>)
# as the compiler sees them, MPI_Get_library_version's string and bmpi_info
# (its summary, its chapter table and --missing) all agree with the status that
# tools/gen-api-status computes from mpi.h and the BMPI_API lines.
#
# Environment (from the Makefile): top_srcdir, top_builddir, absolute; CC
# if set. Exit 77 without python3 or a C compiler.

set -u
: "${top_srcdir:?}" "${top_builddir:?}"
cc=${CC:-cc}
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 not found"; exit 77; }
command -v "$cc" >/dev/null 2>&1 || { echo "SKIP: no C compiler ($cc)"; exit 77; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/check-features.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

python3 "$top_srcdir/tools/gen-api-status" --chapters >"$tmp/chapters" || exit 1
python3 "$top_srcdir/tools/gen-api-status" --stubs >"$tmp/stubs" || exit 1
[ -s "$tmp/chapters" ] || bad "gen-api-status --chapters printed nothing"

# The macros: exactly one pair per chapter, with its values.
echo '#include <mpi.h>' | "$cc" -E -dM -I"$top_srcdir/include" - >"$tmp/macros" || exit 1
awk -F'\t' '{ h = $3 == 0 ? 1 : 0; print "BMPI_HAVE_" $1 " " h; print "BMPI_STUBS_" $1 " " $3 }' \
    "$tmp/chapters" | sort >"$tmp/want-macros"
sed -n 's/^#define \(BMPI_\(HAVE\|STUBS\)_[A-Z_]*\) \([0-9]*\).*/\1 \3/p' "$tmp/macros" |
    sort >"$tmp/got-macros"
diff "$tmp/want-macros" "$tmp/got-macros" >"$tmp/d" ||
    { bad "mpi.h's feature macros (>) differ from the status (<):"; cat "$tmp/d"; }

# MPI_Get_library_version: each chapter with stubs, "Name stubs/declared";
# none without.
"$top_builddir/test/api/libversion" >"$tmp/version" || bad "test/api/libversion failed"
echo "MPI_Get_library_version: $(cat "$tmp/version")"
info=$top_builddir/tools/bmpi_info
"$info" >"$tmp/info" 2>&1 || bad "bmpi_info failed"
while IFS="$(printf '\t')" read -r name declared stubs title; do
    short=${title#*. }
    if [ "$stubs" -gt 0 ]; then
        grep -qF "$short $stubs/$declared" "$tmp/version" ||
            bad "MPI_Get_library_version does not name $short $stubs/$declared"
        grep -qE "^  $short +$stubs of +$declared\$" "$tmp/info" ||
            bad "bmpi_info does not name $short, $stubs of $declared"
    elif grep -qF "$short " "$tmp/version"; then
        bad "MPI_Get_library_version names $short, which has no stubs"
    fi
done <"$tmp/chapters"

# bmpi_info --missing: every stub, nothing else.
"$info" --missing >"$tmp/missing" || bad "bmpi_info --missing failed"
diff "$tmp/stubs" "$tmp/missing" >"$tmp/d" ||
    { bad "bmpi_info --missing (>) differs from the stubs (<):"; cat "$tmp/d"; }

# bmpi_info --summary: one screen; each chapter complete or with its
# stubs counted, the functions implemented of those declared, and the
# languages as configured.
"$info" --summary >"$tmp/summary" || bad "bmpi_info --summary failed"
cat "$tmp/summary"
[ "$(wc -l <"$tmp/summary")" -le 24 ] || bad "bmpi_info --summary is longer than a screen"
awk 'length > 80 { exit 1 }' "$tmp/summary" || bad "bmpi_info --summary has lines wider than 80"
tr '\n' ' ' <"$tmp/summary" | tr -s ' ' >"$tmp/flat"
sed -n 's/.* complete: \(.*\) with stubs: .*/\1/p' "$tmp/flat" >"$tmp/complete"
sed -n 's/.* with stubs: \(.*\) functions: .*/\1/p' "$tmp/flat" >"$tmp/with-stubs"
total=0 missing=0
while IFS="$(printf '\t')" read -r name declared stubs title; do
    short=${title#*. }
    total=$((total + declared)) missing=$((missing + stubs))
    if [ "$stubs" -gt 0 ]; then
        grep -qF "$short ($stubs of $declared)" "$tmp/with-stubs" ||
            bad "bmpi_info --summary does not list $short with $stubs of $declared stubs"
    else
        grep -qF "$short" "$tmp/complete" || bad "bmpi_info --summary does not list $short as complete"
    fi
done <"$tmp/chapters"
grep -q "^  functions: *$((total - missing)) of the $total in mpi.h implemented" "$tmp/summary" ||
    bad "bmpi_info --summary does not count $((total - missing)) of $total functions implemented"
grep -q "^bmpi [0-9.]*: MPI $(sed -n 's/^#define MPI_VERSION  *\([0-9]*\).*/\1/p' "$top_srcdir/include/mpi.h")\.$(sed -n 's/^#define MPI_SUBVERSION  *\([0-9]*\).*/\1/p' "$top_srcdir/include/mpi.h")," "$tmp/summary" ||
    bad "bmpi_info --summary does not name the MPI level of mpi.h"
if grep -q '^#define BMPI_HAVE_FORTRAN 1' "$top_builddir/config.h"; then
    grep -qF 'Fortran (mpif.h, use mpi, use mpi_f08' "$tmp/flat" || bad "bmpi_info --summary does not list Fortran"
else
    grep -qF 'no Fortran' "$tmp/flat" || bad "bmpi_info --summary does not say Fortran is not built"
fi
head -"$(wc -l <"$tmp/summary")" "$tmp/info" | cmp -s - "$tmp/summary" || bad "bmpi_info does not begin with its summary"

[ $fail -eq 0 ] && echo "ok: $(wc -l <"$tmp/chapters") chapters, $(wc -l <"$tmp/stubs") stubs, told alike"
exit $fail
