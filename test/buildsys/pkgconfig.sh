#!/bin/sh
# An installed bmpi (make install, staged: test/buildsys/lib.sh): the wrappers and their
# conventional link names, and the pkg-config files. Programs built with
# nothing but `pkg-config --cflags --libs NAME` and the plain compiler (C:
# bmpi, mpi, mpi-c; C++: bmpi-cxx, mpi-cxx; Fortran, mpif.h, use mpi and
# use mpi_f08: bmpi-fort, mpi-fort)
# run at 2 ranks under the installed bmpirun.
. "$top_srcdir/test/buildsys/lib.sh"
proj=$top_srcdir/test/buildsys/proj
install_bmpi

for pair in mpicc:bmpicc mpicxx:bmpicxx mpic++:bmpicxx mpiCC:bmpicxx mpifort:bmpifort \
    mpif90:bmpifort mpif77:bmpifort mpirun:bmpirun mpiexec:bmpirun; do
    link=$PREFIX/bin/${pair%%:*}
    [ "$(readlink "$link")" = "${pair#*:}" ] || fail "$link is not a link to ${pair#*:}"
done
for f in bin/bmpicc bin/bmpicxx bin/bmpifort bin/bmpirun bin/bmpi_info include/mpi.h; do
    [ -e "$PREFIX/$f" ] || fail "$f not installed"
done
out=$("$PREFIX/bin/mpicc" -showme:incdirs)
[ "$out" = "$INCLUDEDIR" ] || fail "the installed mpicc names $out, not $INCLUDEDIR"

export PKG_CONFIG_PATH="$LIBDIR/pkgconfig"
# build NAME PROGRAM SOURCE COMPILER...: compile and link with NAME's flags.
build() {
    name=$1 prog=$2 src=$3
    shift 3
    flags=$(pkg-config --cflags --libs "$name") || { fail "pkg-config $name"; return 1; }
    case " $flags " in
        *" -I$INCLUDEDIR "*"-L$LIBDIR "*) ;;
        *) fail "pkg-config $name does not point at $PREFIX: $flags"; return 1 ;;
    esac
    # shellcheck disable=SC2086
    step "$@" -o "$tmp/$prog" "$src" $flags || { fail "$prog did not build with pkg-config $name"; return 1; }
}
# run PROGRAM EXPECTED: at 2 ranks, the line it must print.
run() {
    has_rpath "$tmp/$1"
    run_ranks "$tmp/$1" 2 >"$tmp/out" 2>&1
    rc=$?
    cat "$tmp/out"
    if [ $rc -ne 0 ] || ! grep -q "^$2 ok at 2 ranks" "$tmp/out"; then
        fail "$1 at 2 ranks"
    fi
}

for name in bmpi mpi mpi-c; do
    build $name "c-$name" "$proj/hello_c.c" gcc && run "c-$name" c
done
for name in bmpi-cxx mpi-cxx; do
    build $name "cxx-$name" "$proj/hello_cxx.cc" g++ && run "cxx-$name" 'c++'
done
if fortran_built; then
    for name in bmpi-fort mpi-fort; do
        build $name "fort-$name" "$proj/hello_mod.f90" gfortran && run "fort-$name" 'fortran use mpi'
        build $name "fort77-$name" "$proj/hello_h.f" gfortran && run "fort77-$name" 'fortran mpif.h'
        build $name "f08-$name" "$proj/hello_f08.f90" gfortran && run "f08-$name" 'fortran use mpi_f08'
    done
else
    echo "note: bmpi was configured without Fortran bindings: no bmpi-fort.pc, Fortran not tested"
    pkg-config --exists bmpi-fort && fail "bmpi-fort.pc installed without Fortran bindings"
fi
exit $failed
