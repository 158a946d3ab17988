#!/bin/sh
# Fortran programs compiled and linked with MPICH's mpifort (mpif.h,
# `use mpi`, `use mpi_f08`) run on bmpi with a plain `bmpirun -n 4 ./prog`:
# they ask for libmpichfort.so.12, which bmpirun's library path resolves to
# bmpi's, which brings libbmpifort (docs/mpich-abi.md); the MPI-1 datatype
# calls MPI 3.0 removed give MPICH's results (mpich_f77.f). Run only
# when bmpi is built with Fortran (test/abi/local.mk).
set -u
command -v mpifort.mpich >/dev/null 2>&1 || { echo "SKIP: MPICH's mpifort.mpich is not installed (Debian: libmpich-dev)"; exit 77; }
. "$top_srcdir/test/abi/lib.sh"

for src in mpich_f77.f mpich_f90.f90 mpich_f08.f90; do
    prog=$tmp/${src%.*}
    mpifort.mpich -o "$prog" "$top_srcdir/test/abi/$src" 2>"$prog.err" ||
        { cat "$prog.err"; fail "mpifort.mpich cannot build $src"; }
    where=$(resolved "$prog")
    printf '%s\n' "$where" | grep -qx "libmpichfort.so.12 $compat/libmpichfort.so.12" ||
        fail "$src: a rank loads '$where', not bmpi's libmpichfort.so.12"
    run_on_bmpi "$prog" 4
done
run_on_bmpi "$tmp/mpich_f08" 1
