#!/bin/sh
# bmpirun gives every rank the build tree's directory of MPICH sonames
# first on LD_LIBRARY_PATH, before what the rank would have had (bmpirun's
# own value or -x's), with no empty element (that would add the working
# directory), and leaves the variable alone under --no-mpich-abi
# (docs/mpich-abi.md). The directory holds MPICH's names only, so programs
# built against bmpi (libbmpi.so.0) or Open MPI (libmpi.so.40) load what
# they did before. Needs no MPICH.
set -u
: "${top_builddir:?}" "${top_srcdir:?}" "${BMPIRUN:?}"
compat="$top_builddir/mpich-abi/.libs"
with_timeout="$top_srcdir/test/with-timeout"
fail() { echo "FAIL: $*"; exit 1; }

# check WHAT EXPECTED ENV-SETTING [bmpirun options]: the LD_LIBRARY_PATH
# both of 2 ranks see ("unset" if none) when bmpirun runs under `env
# ENV-SETTING` (split into words on purpose) is EXPECTED
check() {
    what=$1 expected=$2 setting=$3
    shift 3
    # shellcheck disable=SC2086
    out=$(env $setting "$with_timeout" 60 "$BMPIRUN" "$@" -n 2 sh -c 'echo "${LD_LIBRARY_PATH-unset}"') ||
        fail "$what: bmpirun exited $?"
    seen=$(printf '%s\n' "$out" | sort -u)
    [ "$seen" = "$expected" ] || fail "$what: the ranks see LD_LIBRARY_PATH '$seen', expected '$expected'"
    echo "ok: $what"
}

[ -d "$compat" ] || fail "no $compat: mpich-abi/ not built"
others=$(cd "$compat" && ls | grep '\.so' | grep -v '^lib\(mpi\|mpich\)\(cxx\|fort\)\{0,1\}\.so\(\.12\)\{0,1\}\(\.0\.0\)\{0,1\}$')
[ -z "$others" ] || fail "$compat holds other libraries: $others"
check "unset: the compat directory alone" "$compat" "-u LD_LIBRARY_PATH"
check "empty: no empty element" "$compat" "LD_LIBRARY_PATH="
check "set: compat first, then bmpirun's" "$compat:/opt/a:/opt/b" "LD_LIBRARY_PATH=/opt/a:/opt/b"
check "-x: compat first, then -x's value" "$compat:/opt/x" "LD_LIBRARY_PATH=/opt/a" -x LD_LIBRARY_PATH=/opt/x
check "--no-mpich-abi: bmpirun's value" "/opt/a" "LD_LIBRARY_PATH=/opt/a" --no-mpich-abi
check "--no-mpich-abi: still unset" "unset" "-u LD_LIBRARY_PATH" --no-mpich-abi
