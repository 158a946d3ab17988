#!/bin/sh
# Parallel HDF5 as a real client of bmpi's MPI-IO (issue 33). Debian's
# libhdf5-mpich-dev is HDF5 built against MPICH: h5pcc builds
# hdf5_chunked.c against MPICH's mpi.h, and the program runs on bmpi
# through its MPICH ABI libraries, which bmpirun puts first on the ranks'
# library path (docs/mpich-abi.md). At 1, 2 and 4 ranks it writes two
# chunked datasets through H5Pset_fapl_mpio, one collectively, one
# independently, and reads them back (see the comment at the top of
# hdf5_chunked.c); proof that it ran on bmpi: rank 0's library version
# names bmpi and N ranks saw one world of N. Then h5dump, HDF5's own
# reader, checks the file it left: both datasets chunked 16 x 10, every
# value, and the attribute holding the number of writers.
#
# BMPI_TEST_LAUNCHER=mpich runs the program under MPICH's own mpiexec
# instead (no bmpi proof): what validates the test itself against MPICH.
# Files go to a directory under $BMPI_IO_TEST_DIR (default $TMPDIR, then
# /tmp), removed at the end. HDF5 creates a chunked dataset of a parallel
# file with a collective write (H5D__chunk_allocate), even when the data
# goes independently, and takes a write whose status counts fewer bytes
# than asked for as failed (H5FD__mpio_write).
set -u
for tool in h5pcc h5dump; do
    command -v $tool >/dev/null 2>&1 ||
        { echo "SKIP: $tool is not installed (Debian: libhdf5-mpich-dev hdf5-tools)"; exit 77; }
done
: "${top_srcdir:?}"
. "$top_srcdir/test/io/mpich_client.sh"
mpich_client_setup hdf5 "an h5pcc-built program"

# h5pcc leaves its object file in the current directory.
(cd "$tmp" && h5pcc -o hdf5_chunked "$top_srcdir/test/io/hdf5_chunked.c") >"$tmp/build.log" 2>&1 ||
    { cat "$tmp/build.log"; fail "h5pcc cannot build hdf5_chunked.c"; }
readelf -d "$tmp/hdf5_chunked" | grep -q 'NEEDED.*\[libmpich\.so\.12\]' ||
    fail "hdf5_chunked does not ask for libmpich.so.12"

# run N: the program at N ranks, writing $tmp/chunked.h5
run() {
    rm -f "$tmp/chunked.h5"
    mpich_client_job hdf5_chunked "$1" "$tmp/hdf5_chunked" "$tmp/chunked.h5"
}

# check_values DATASET: h5dump's values (one a line: "(i,j): v,") are
# i * 1000 + j (collective) or -(i * 1000 + j) - 0.5 (independent), all
# 60 x 45 of them.
check_values() {
    h5dump -d "/$1" -w 0 -m %.1f "$tmp/chunked.h5" >"$tmp/$1.dump" || fail "h5dump -d /$1 failed"
    awk -v d="$1" '
        /^ *\([0-9]+,[0-9]+\):/ {
            s = $0
            gsub(/[(),:]/, " ", s)
            split(s, a, " ")
            want = a[1] * 1000 + a[2]
            if (d == "independent") want = -want - 0.5
            if (a[3] + 0 != want) { print "h5dump: " d "(" a[1] "," a[2] ") is " a[3] ", expected " want; bad++ }
            if (!((a[1], a[2]) in seen)) n++
            seen[a[1], a[2]] = 1
        }
        END { if (n != 60 * 45 || bad) { print "h5dump: " d ": " n " distinct values, " bad + 0 " wrong"; exit 1 } }
    ' "$tmp/$1.dump" || fail "the file's /$1 is wrong"
}

for n in 1 2 4; do
    run "$n"
    h5dump -p -H "$tmp/chunked.h5" >"$tmp/header.dump" || fail "h5dump -H failed"
    chunked=$(grep -c 'CHUNKED ( 16, 10 )' "$tmp/header.dump")
    [ "$chunked" -eq 2 ] || { cat "$tmp/header.dump"; fail "expected 2 datasets chunked 16 x 10, h5dump shows $chunked"; }
    check_values collective
    check_values independent
    writers=$(h5dump -a /writers "$tmp/chunked.h5" | sed -n 's/^ *(0): *\([0-9-]*\) *$/\1/p')
    [ "$writers" = "$n" ] || fail "attribute writers is '$writers', expected $n"
    echo "ok: hdf5_chunked at $n ranks ($launcher), checked by h5dump"
done
