# shellcheck shell=sh
# Sourced by the tests of test/buildsys that use an installed bmpi.
#
# install_bmpi: `make install DESTDIR=$tmp/stage` of this build tree, under
# a lock because the installs of these tests share the build tree (libtool
# relinks libbmpifort there); sets PREFIX, LIBDIR and INCLUDEDIR to the
# staged directories. libtool
# cannot install to another prefix than the configured one (it relinks
# libbmpifort for it), so the test points the text files that name the
# prefix, the wrappers' and pkg-config files' directory lines, at the
# staged copy, as a package builder relocating a staged tree would; the
# binaries name no installation directory. Every external command runs
# under test/with-timeout (BMPI_TEST_TIMEOUT, 300 s here).
# Helpers: fail MESSAGE (records a failure), step COMMAND... (runs
# a command under the timeout with its output in the log).
set -u
: "${top_builddir:?}" "${top_srcdir:?}"
timeout_s=${BMPI_TEST_TIMEOUT:-300}
with_timeout=$top_srcdir/test/with-timeout
tmp=$(mktemp -d "${TMPDIR:-/tmp}/buildsys.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
failed=0

fail() {
    echo "FAIL: $*"
    failed=1
}

step() {
    echo "== $*"
    "$with_timeout" "$timeout_s" "$@"
}

install_bmpi() {
    if ! flock "$top_builddir/tools/install.lock" "$with_timeout" "$timeout_s" \
        make -C "$top_builddir" install DESTDIR="$tmp/stage" >"$tmp/install.log" 2>&1; then
        tail -30 "$tmp/install.log"
        echo "FAIL: make install DESTDIR=$tmp/stage"
        exit 1
    fi
    # tools/install-dirs: prefix exec_prefix includedir libdir, as installed
    read -r prefix exec_prefix includedir libdir <"$top_builddir/tools/install-dirs"
    for dir in "$exec_prefix" "$includedir" "$libdir"; do
        case $dir in
            "$prefix"|"$prefix"/*) ;;
            *) echo "SKIP: $dir is outside the prefix $prefix: the staged tree cannot be relocated"; exit 77 ;;
        esac
    done
    PREFIX=$tmp/stage$prefix LIBDIR=$tmp/stage$libdir INCLUDEDIR=$tmp/stage$includedir
    for f in "$PREFIX"/bin/bmpicc "$PREFIX"/bin/bmpicxx "$PREFIX"/bin/bmpifort "$LIBDIR"/pkgconfig/*.pc; do
        sed -i "/^\(prefix\|exec_prefix\|includedir\|fmoddir\|libdir\)=/s|$prefix|$PREFIX|" "$f" ||
            { echo "FAIL: cannot relocate $f"; exit 1; }
    done
    # The one binary path that cannot follow: libbmpifort's own RUNPATH,
    # the configured libdir, where it finds libbmpi when a Fortran program
    # does not need libbmpi directly (gfortran links --as-needed). The
    # programs' own rpath is checked by has_rpath.
    LD_LIBRARY_PATH=$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    export LD_LIBRARY_PATH
}

# has_rpath PROGRAM: it finds bmpi's libraries by its own RUNPATH or RPATH.
has_rpath() {
    paths=$(readelf -d "$1" | sed -n 's/.*(R\(UN\)\{0,1\}PATH).*\[\(.*\)\]$/\2/p' | tr '\n' :)
    case ":$paths" in
        *":$LIBDIR:"*) ;;
        *) fail "$1 has no rpath to $LIBDIR (it has: $paths)" ;;
    esac
}

# fortran_built: whether this build has the Fortran bindings (configure's
# BMPI_FORTRAN); a test leaves its Fortran part out only when it has not.
fortran_built() {
    grep -q '^#define BMPI_HAVE_FORTRAN 1' "$top_builddir/config.h"
}

# run_ranks PROGRAM N: through the installed bmpirun, under the timeout.
run_ranks() {
    BMPIRUN=$PREFIX/bin/bmpirun BMPI_TEST_TIMEOUT=$timeout_s "$top_srcdir/test/mpi/run-ranks" "$@"
}

# run_targets HOW DIR MPIEXEC: the targets of test/buildsys/proj built in
# DIR (hello_c, hello_cxx; hello_mod, hello_h and hello_f08 with Fortran
# bindings)
# each run at 2 ranks under MPIEXEC, printing their "... ok at 2 ranks".
run_targets() {
    for pair in hello_c:c hello_cxx:'c++' hello_mod:'fortran use mpi' hello_h:'fortran mpif.h' \
        hello_f08:'fortran use mpi_f08'; do
        prog=${pair%%:*}
        case $prog in hello_mod|hello_h|hello_f08) fortran_built || continue ;; esac
        if [ ! -x "$2/$prog" ]; then
            fail "$1: $prog not built"
            continue
        fi
        has_rpath "$2/$prog"
        "$with_timeout" "$timeout_s" "$3" -n 2 "$2/$prog" >"$tmp/out" 2>&1
        rc=$?
        cat "$tmp/out"
        if [ $rc -ne 0 ] || ! grep -q "^${pair#*:} ok at 2 ranks" "$tmp/out"; then
            fail "$1: $prog at 2 ranks under $3"
        fi
    done
}
