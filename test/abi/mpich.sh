#!/bin/sh
# Programs compiled and linked with MPICH's own compilers (Debian: mpich,
# libmpich-dev) run on bmpi with a plain `bmpirun -n 4 ./prog`: bmpirun
# puts the build tree's directory of MPICH sonames (mpich-abi/) first on
# the ranks' LD_LIBRARY_PATH (docs/mpich-abi.md). Proof that they ran on
# bmpi and not on MPICH: the library version rank 0 prints is bmpi's, the
# 4 ranks saw one world of size 4 (MPICH singletons would see 1), and ldd
# in a rank resolves libmpich.so.12 to bmpi's. What MPICH's mpi.h has and
# bmpi's has not works as in MPICH (mpich_removed.c). --no-mpich-abi
# leaves the path alone; a program built against Open MPI is not
# redirected.
set -u
command -v mpicc.mpich >/dev/null 2>&1 || { echo "SKIP: MPICH's mpicc.mpich is not installed (Debian: libmpich-dev)"; exit 77; }
. "$top_srcdir/test/abi/lib.sh"

mpicc.mpich -o "$tmp/mpich_c" "$top_srcdir/test/abi/mpich_c.c" || fail "mpicc.mpich cannot build mpich_c.c"
readelf -d "$tmp/mpich_c" | grep -q 'NEEDED.*\[libmpich\.so\.12\]' || fail "mpich_c does not ask for libmpich.so.12"
run_on_bmpi "$tmp/mpich_c" 4
run_on_bmpi "$tmp/mpich_c" 1

# MPI-1 calls MPI 3.0 removed, MPI_LB/MPI_UB, MPICH's GPU queries
mpicc.mpich -o "$tmp/mpich_removed" "$top_srcdir/test/abi/mpich_removed.c" || fail "mpicc.mpich cannot build mpich_removed.c"
run_on_bmpi "$tmp/mpich_removed" 3

where=$(resolved "$tmp/mpich_c")
[ "$where" = "libmpich.so.12 $compat/libmpich.so.12" ] || fail "a rank loads '$where', not bmpi's libmpich.so.12"
where=$(resolved "$tmp/mpich_c" --no-mpich-abi)
case $where in
"libmpich.so.12 $compat/"* | "") fail "--no-mpich-abi: a rank loads '$where'" ;;
esac
echo "ok: --no-mpich-abi leaves MPICH's own library ($where)"

# An old-style RPATH to MPICH's directory wins over LD_LIBRARY_PATH: bmpirun
# says so before the ranks start; a RUNPATH gives way, and is no warning.
mpich_dir=$(dirname "${where#* }")
# (needs libmpich.so.12, never calls it: MPICH's own would hang under bmpirun)
printf '#include <mpi.h>\nint main(int c, char **v) { return c > 99 ? MPI_Init(&c, &v) : 0; }\n' >"$tmp/needs_mpich.c"
for tags in disable enable; do
    mpicc.mpich -Wl,--$tags-new-dtags -Wl,-rpath,"$mpich_dir" -o "$tmp/needs_mpich_$tags" "$tmp/needs_mpich.c" ||
        fail "mpicc.mpich cannot build needs_mpich.c with an rpath"
    out=$("$with_timeout" 60 "$BMPIRUN" -n 1 "$tmp/needs_mpich_$tags" 2>&1) || fail "needs_mpich_$tags exited $?: $out"
    warned=$(printf '%s\n' "$out" | grep -c "warning: .*needs_mpich_$tags needs libmpich.so.12 and has an RPATH ($mpich_dir)")
    [ "$warned" -eq "$([ $tags = disable ] && echo 1 || echo 0)" ] || fail "--$tags-new-dtags: '$out'"
done
echo "ok: bmpirun warns of an RPATH to MPICH's library, not of a RUNPATH"

if command -v mpicxx.mpich >/dev/null 2>&1; then
    # --no-as-needed: keep libmpichcxx.so.12, which MPICH's wrapper links, as a dependency
    mpicxx.mpich -Wl,--no-as-needed -o "$tmp/mpich_cxx" "$top_srcdir/test/abi/mpich_cxx.cc" ||
        fail "mpicxx.mpich cannot build mpich_cxx.cc"
    readelf -d "$tmp/mpich_cxx" | grep -q 'NEEDED.*\[libmpichcxx\.so\.12\]' || fail "mpich_cxx does not ask for libmpichcxx.so.12"
    run_on_bmpi "$tmp/mpich_cxx" 4
else
    echo "note: mpicxx.mpich is not installed, C++ not checked"
fi

if command -v mpicc.openmpi >/dev/null 2>&1; then
    mpicc.openmpi -o "$tmp/ompi_hello" "$top_srcdir/test/mpi/hello.c" || fail "mpicc.openmpi cannot build hello.c"
    where=$(resolved "$tmp/ompi_hello")
    case $where in
    "libmpi.so.40 $compat/"* | "") fail "an Open MPI program loads '$where'" ;;
    esac
    echo "ok: an Open MPI program keeps its own library ($where)"
fi
