#!/bin/sh
# The compiler wrappers of the build tree (tools/bmpicc-build, bmpicxx-build,
# bmpifort-build: the installed ones come from the same template): the
# Open MPI and MPICH query spellings build systems use, --version, the
# compiler overrides, no link flags for -c/-S/-E/-M/-MM, a missing compiler
# named with its Debian package, and a C++ program built with bmpicxx.
set -u
: "${top_builddir:?}" "${top_srcdir:?}"
tools=$top_builddir/tools
# The wrappers print the source tree as a plain path (a VPATH build's
# top_srcdir may be build/../src, as under make distcheck).
srcdir=$(cd "$top_srcdir" && pwd)
version=$(sed -n 's/^#define BMPI_VERSION_STRING "\(.*\)"/\1/p' "$top_srcdir/include/mpi.h")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/wrappers.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
no() { echo "FAIL: $*"; fail=1; }

# has WRAPPER ARGS... -- WORD...: the output of WRAPPER ARGS holds every WORD.
has() {
    w=$1
    shift
    args=
    while [ "$1" != -- ]; do args="$args $1"; shift; done
    shift
    # shellcheck disable=SC2086
    out=$("$tools/$w" $args 2>&1) || { no "$w$args exited $?: $out"; return; }
    for word do
        case " $out " in
            *" $word "*) ;;
            *) no "$w$args: no '$word' in: $out" ;;
        esac
    done
}
# lacks WRAPPER ARGS... -- WORD: the output of WRAPPER ARGS has no WORD.
lacks() {
    w=$1
    shift
    args=
    while [ "$1" != -- ]; do args="$args $1"; shift; done
    # shellcheck disable=SC2086
    out=$("$tools/$w" $args 2>&1)
    case " $out " in *" $2 "*) no "$w$args links: $out" ;; esac
}

if grep -q "^#define BMPI_HAVE_FORTRAN 1" "$top_builddir/config.h"; then
    fortran=yes
else
    fortran=no
fi

for lang in cc cxx fort; do
    w=bmpi$lang-build
    case $lang in
        cc) name=C libs=-lbmpi ;;
        cxx) name=C++ libs=-lbmpi ;;
        fort) name=Fortran libs="-lbmpifort -lbmpi" ;;
    esac
    if [ ! -x "$tools/$w" ]; then
        no "$tools/$w missing"
        continue
    fi
    if [ $lang = fort ] && [ $fortran = no ]; then
        # Built without Fortran bindings: one line that says so, not a
        # compiler error about a missing mpif.h.
        out=$("$tools/$w" -show x.f90 2>&1) && no "$w without bindings succeeded: $out"
        if [ "$(printf '%s\n' "$out" | wc -l)" -ne 1 ] || ! printf '%s\n' "$out" | grep -q 'without the Fortran bindings'; then
            no "$w without bindings: $out"
        fi
        continue
    fi
    compiler=$("$tools/$w" -showme:command)
    [ -n "$compiler" ] || no "$w -showme:command printed nothing"
    has "$w" -show x -- "$compiler" "-I$srcdir/include" $libs "-L$top_builddir/.libs"
    has "$w" -showme x -- "$compiler" $libs
    has "$w" -showme:compile -- "-I$srcdir/include"
    has "$w" -showme:link -- $libs "-Wl,-rpath,$top_builddir/.libs"
    has "$w" -showme:incdirs -- "$srcdir/include"
    has "$w" -showme:libdirs -- "$top_builddir/.libs"
    has "$w" -showme:libs -- $(printf "%s" "$libs" | sed "s/-l//g")
    has "$w" -showme:command -- "$compiler"
    has "$w" -showme:version -- "bmpi" "$version," "MPI" "4.1" "(Language:" "$name)"
    has "$w" -compile-info -- "$compiler" "-I$srcdir/include"
    has "$w" -link-info -- "$compiler" "-I$srcdir/include" $libs
    has "$w" --version -- "bmpi" "$version," "4.1" "$name)" "compiler:"
    has "$w" -showme:help -- "-showme:link" "-link-info"
    for only in -c -S -E -M -MM; do
        has "$w" -show $only x -- "$only" "-I$srcdir/include"
        lacks "$w" -show $only x -- -lbmpi
    done
    has "$w" -show -MD -o x x.o -- -MD -lbmpi
    if [ $lang = fort ]; then
        has "$w" -showme:compile -- "-I$top_builddir/fortran"
    fi
done

# -showme:help names the language's own override variables.
has bmpicc-build -showme:help -- BMPI_CC=COMPILER
has bmpicxx-build -showme:help -- BMPI_CXX=COMPILER

# Compiler overrides: BMPI_<X> before MPICH's MPICH_<X>; BMPICC_CC, legacy.
check_override() {
    out=$(env "$2" "$tools/$1" -showme:command)
    [ "$out" = "$3" ] || no "$2 $1 -showme:command gave '$out', expected '$3'"
}
check_override bmpicc-build BMPI_CC=cc-one cc-one
check_override bmpicc-build MPICH_CC=cc-two cc-two
check_override bmpicc-build BMPICC_CC=cc-three cc-three
out=$(BMPI_CC=cc-one MPICH_CC=cc-two "$tools/bmpicc-build" -showme:command)
[ "$out" = cc-one ] || no "BMPI_CC does not win over MPICH_CC: $out"
check_override bmpicxx-build BMPI_CXX=cxx-one cxx-one
check_override bmpicxx-build MPICH_CXX=cxx-two cxx-two
if [ $fortran = yes ]; then
    check_override bmpifort-build BMPI_FC=fc-one fc-one
    check_override bmpifort-build MPICH_FC=fc-two fc-two
fi
out=$(BMPI_CC='gcc -DFROM_OVERRIDE' "$tools/bmpicc-build" -show -c x.c)
case $out in "gcc -DFROM_OVERRIDE "*) ;; *) no "a compiler with flags is not kept whole: $out" ;; esac

# A missing compiler: one line naming the Debian package, exit 127.
for pair in bmpicc-build:BMPI_CC:gcc bmpicxx-build:BMPI_CXX:g++ bmpifort-build:BMPI_FC:gfortran; do
    w=${pair%%:*} var=${pair#*:}
    pkg=${var#*:} var=${var%%:*}
    [ $w = bmpifort-build ] && [ $fortran = no ] && continue
    out=$(env "$var=bmpi-no-such-compiler" "$tools/$w" -o "$tmp/x" x.c 2>&1)
    rc=$?
    [ $rc -eq 127 ] || no "$w with a missing compiler exited $rc, expected 127"
    [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] || no "$w with a missing compiler: more than one line: $out"
    case $out in
        *bmpi-no-such-compiler*"Debian package $pkg,"*) ;;
        *) no "$w with a missing compiler does not name it and the package $pkg: $out" ;;
    esac
done

# A C++ program through bmpicxx compiles and links against libbmpi alone.
cat >"$tmp/hello.cc" <<'EOF'
#include <mpi.h>
#include <iostream>
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::cout << "rank " << rank << "\n";
    return MPI_Finalize();
}
EOF
if "$tools/bmpicxx-build" -o "$tmp/hello" "$tmp/hello.cc"; then
    out=$("$tmp/hello") || no "the C++ program built with bmpicxx failed as a singleton: $out"
    [ "$out" = "rank 0" ] || no "the C++ singleton printed: $out"
else
    no "bmpicxx-build did not build a C++ program"
fi

[ $fail -eq 0 ] && echo "ok: bmpicc, bmpicxx and bmpifort (Fortran bindings: $fortran)"
exit $fail
