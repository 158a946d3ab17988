#!/bin/sh
# An autotools project (test/buildsys/proj/configure.ac: AC_PROG_CC([mpicc])
# and autoconf-archive's AX_MPI for C, C++, Fortran 77 and Fortran) builds
# against an installed bmpi with CC=mpicc CXX=mpicxx F77=mpif77 FC=mpifort
# and bmpi's bin first on PATH: AX_MPI finds MPI_Init with each, the
# programs load bmpi's libbmpi and run at 2 ranks. The Fortran targets are
# left out only when bmpi was built without Fortran bindings.
. "$top_srcdir/test/buildsys/lib.sh"
for tool in autoreconf automake; do
    command -v $tool >/dev/null 2>&1 || { echo "SKIP: $tool not installed"; exit 77; }
done
# aclocal finds ax_mpi.m4 where autoconf-archive puts it
if [ ! -f "$(aclocal --print-ac-dir)/ax_mpi.m4" ]; then
    echo "SKIP: autoconf-archive (ax_mpi.m4) not installed (scripts/install-deps --tests)"
    exit 77
fi
install_bmpi
export PATH="$PREFIX/bin:$PATH"
src=$tmp/project
mkdir -p "$src"
cp "$top_srcdir"/test/buildsys/proj/configure.ac "$top_srcdir"/test/buildsys/proj/Makefile.am \
    "$top_srcdir"/test/buildsys/proj/hello* "$src"/ && chmod -R u+w "$src" || exit 1
set -- CC=mpicc CXX=mpicxx
if fortran_built; then
    set -- "$@" F77=mpif77 FC=mpifort
else
    echo "note: bmpi was configured without Fortran bindings: the Fortran targets are left out"
    set -- "$@" --disable-fortran
fi
if (cd "$src" && step autoreconf -fi && step ./configure "$@" && step make); then
    for var in MPICC MPICXX MPIF77 MPIFC; do
        value=$(sed -n "s/^$var='\(.*\)'\$/\1/p" "$src/config.log")
        [ -n "$value" ] || continue
        [ "$(command -v "$value")" = "$PREFIX/bin/$value" ] || fail "AX_MPI's $var is $value, not bmpi's"
    done
    grep -q "^MPICC='mpicc'" "$src/config.log" || fail "AX_MPI did not take mpicc"
    for prog in "$src"/hello_c "$src"/hello_cxx "$src"/hello_mod "$src"/hello_h; do
        [ -x "$prog" ] || continue
        ldd "$prog" | grep -q "libbmpi.so.0 => $LIBDIR/" || fail "$prog does not load bmpi's libbmpi"
    done
    run_targets autotools "$src" "$PREFIX/bin/mpirun"
else
    fail "the autotools project did not configure or build with $*"
fi
[ $failed -eq 0 ] && echo "ok: AX_MPI and CC=mpicc ... built against bmpi"
exit $failed
