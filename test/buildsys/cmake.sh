#!/bin/sh
# CMake's own FindMPI finds an installed bmpi for C, C++ and Fortran
# (test/buildsys/proj/CMakeLists.txt): once with only bmpi's bin first on
# PATH, once with MPI_HOME=<prefix> and bmpi's bin not on PATH at all. Open
# MPI and MPICH are installed on the test machines too: FindMPI must report
# bmpi's wrappers, mpiexec and libraries, and the targets must run at 2
# ranks under the mpiexec it found. The Fortran targets are left out only
# when bmpi was built without Fortran bindings.
. "$top_srcdir/test/buildsys/lib.sh"
command -v cmake >/dev/null 2>&1 || { echo "SKIP: cmake not installed (scripts/install-deps --tests)"; exit 77; }
install_bmpi
langs="C CXX"
with_fortran=OFF
if fortran_built; then
    langs="C CXX Fortran" with_fortran=ON
else
    echo "note: bmpi was configured without Fortran bindings: the Fortran targets are left out"
fi

# found NAME: the value FindMPI reported for NAME in the last build.
found() {
    sed -n "s|^$1=||p" "$build/found.txt"
}

check_build() {
    how=$1
    mpiexec=$(found MPIEXEC_EXECUTABLE)
    [ "$mpiexec" = "$PREFIX/bin/mpiexec" ] || fail "$how: FindMPI found mpiexec $mpiexec, not bmpi's"
    for lang in $langs; do
        compiler=$(found "MPI_${lang}_COMPILER")
        case $compiler in
            "$PREFIX"/bin/*) ;;
            *) fail "$how: FindMPI's MPI_${lang}_COMPILER is $compiler, not bmpi's" ;;
        esac
        libs=$(found "MPI_${lang}_LIBRARIES")
        case "$libs;" in
            *"$LIBDIR/libbmpi.so;"*) ;;
            *) fail "$how: MPI_${lang}_LIBRARIES is $libs, without bmpi's libbmpi.so" ;;
        esac
        case $libs in
            *mpich*|*openmpi*|*libmpi.so*) fail "$how: MPI_${lang}_LIBRARIES names another MPI: $libs" ;;
        esac
        [ "$(found "MPI_${lang}_VERSION")" = 4.1 ] || fail "$how: MPI_${lang}_VERSION is not 4.1"
    done
    if [ $with_fortran = ON ]; then
        for have in F77_HEADER F90_MODULE F08_MODULE; do
            [ "$(found "MPI_Fortran_HAVE_$have")" = TRUE ] || fail "$how: FindMPI found no Fortran $have"
        done
    fi
    run_targets "$how" "$build" "$mpiexec"
}

# configure_and_build HOW ENV...: a fresh build of the project.
configure_and_build() {
    how=$1
    shift
    build=$tmp/build-$how
    if ! step env "$@" cmake -S "$top_srcdir/test/buildsys/proj" -B "$build" -DWITH_FORTRAN=$with_fortran; then
        fail "$how: cmake did not configure the project"
        return 1
    fi
    step env "$@" cmake --build "$build" || { fail "$how: cmake --build failed"; return 1; }
}

configure_and_build path PATH="$PREFIX/bin:$PATH" && check_build path
configure_and_build mpi_home MPI_HOME="$PREFIX" && check_build mpi_home
[ $failed -eq 0 ] && echo "ok: FindMPI found bmpi for $langs, with PATH and with MPI_HOME"
exit $failed
