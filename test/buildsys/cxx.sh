#!/bin/sh
# mpi.h is valid C++: test/buildsys/cxx.cc builds with bmpicxx (g++) as
# C++11, 14, 17 and 20 with -Wall -Wextra -pedantic -Werror, and each
# build runs at 2 ranks. Exit 77 (skip) when there is no C++ compiler.
set -u
: "${top_builddir:?}" "${top_srcdir:?}"
cxx=$("$top_builddir/tools/bmpicxx-build" -showme:command)
# shellcheck disable=SC2086
if ! command -v ${cxx%% *} >/dev/null 2>&1; then
    echo "SKIP: no C++ compiler ($cxx; Debian package g++)"
    exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cxx.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
for std in c++11 c++14 c++17 c++20; do
    if ! "$top_builddir/tools/bmpicxx-build" -std=$std -Wall -Wextra -pedantic -Werror \
        -o "$tmp/cxx-$std" "$top_srcdir/test/buildsys/cxx.cc"; then
        echo "FAIL: mpi.h in a C++ program does not build cleanly as $std"
        fail=1
        continue
    fi
    "$top_srcdir/test/mpi/run-ranks" "$tmp/cxx-$std" 2 >"$tmp/out" 2>&1
    rc=$?
    cat "$tmp/out"
    if [ $rc -ne 0 ] || ! grep -q '^cxx ok$' "$tmp/out"; then
        echo "FAIL: the $std build did not run correctly at 2 ranks"
        fail=1
    fi
done
[ $fail -eq 0 ] && echo "ok: C++11, 14, 17 and 20"
exit $fail
