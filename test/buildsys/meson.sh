#!/bin/sh
# Meson's dependency('mpi', language: 'c'/'cpp'/'fortran') with method
# 'config-tool' (test/buildsys/proj/meson.build) finds an installed bmpi
# through the wrappers first on PATH: Meson reports bmpi's version for
# each language, the programs load bmpi's libraries and no other MPI's,
# and run at 2 ranks. The Fortran targets are left out only when bmpi was
# built without Fortran bindings.
. "$top_srcdir/test/buildsys/lib.sh"
for tool in meson ninja; do
    command -v $tool >/dev/null 2>&1 || { echo "SKIP: $tool not installed (scripts/install-deps --tests)"; exit 77; }
done
install_bmpi
fortran=false
if fortran_built; then
    fortran=true
else
    echo "note: bmpi was configured without Fortran bindings: the Fortran targets are left out"
fi
version=$("$PREFIX/bin/bmpicc" -showme:version | sed 's/.* bmpi \([0-9.]*\),.*/\1/')
build=$tmp/build-meson
export PATH="$PREFIX/bin:$PATH"
if step meson setup "$build" "$top_srcdir/test/buildsys/proj" -Dfortran=$fortran &&
    step meson compile -C "$build"; then
    langs="c cpp"
    [ $fortran = true ] && langs="$langs fortran"
    for lang in $langs; do
        # as Meson logs it: "Run-time dependency MPI for cpp found: YES 0.1.0"
        grep -q "^Run-time dependency MPI for $lang found: YES $version\$" "$build/meson-logs/meson-log.txt" ||
            fail "Meson did not find bmpi $version for $lang"
    done
    for prog in "$build"/hello_*; do
        [ -f "$prog" ] && [ -x "$prog" ] || continue
        libs=$(ldd "$prog")
        printf '%s\n' "$libs" | grep -q "libbmpi.so.0 => $LIBDIR/" || fail "$prog does not load bmpi's libbmpi: $libs"
        printf '%s\n' "$libs" | grep -E -q 'openmpi|mpich|libmpi\.so' && fail "$prog loads another MPI: $libs"
    done
    run_targets meson "$build" "$PREFIX/bin/mpiexec"
else
    fail "meson did not configure or build the project"
fi
[ $failed -eq 0 ] && echo "ok: Meson found bmpi $version for $langs"
exit $failed
