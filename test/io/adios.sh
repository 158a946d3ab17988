#!/bin/sh
# ADIOS 1 as a real client of bmpi's MPI-IO (issue 33), beside hdf5.sh.
# Debian's libadios-mpich-dev is ADIOS 1.13 built against MPICH (static
# archives): mpicc.mpich builds adios_rw.c against it, and the program runs
# on bmpi through its MPICH ABI libraries (docs/mpich-abi.md). At 2 and 4
# ranks it writes a block-distributed 2D array in two steps with each of
# ADIOS's write methods "MPI" (every rank writes its part of one file
# through MPI_File_seek/MPI_File_write), "MPI_AGGREGATE" (half the ranks
# gather the others' data and write one subfile each) and "POSIX" (plain
# write(2), the control), then reads the file back with the BP read method
# at the same number of ranks (see adios_rw.c) and checks it with bpls,
# ADIOS's own serial dump tool: every value of both steps.
#
# Proof that ADIOS went through bmpi's MPI-IO: rank 0's library version
# names bmpi, and the program counts through the profiling interface what
# ADIOS passed to MPI_File_open/write/read (its "mpiio:" lines): the MPI
# methods must have written at least the array's bytes that way, POSIX
# nothing, and the BP reader must have read every rank's whole array so.
#
# BMPI_TEST_LAUNCHER=mpich runs the program under MPICH's own mpiexec
# instead: what validates the test itself against MPICH. Files go to a
# directory under $BMPI_IO_TEST_DIR (default $TMPDIR, then /tmp), removed
# at the end.
set -u
command -v mpicc.mpich >/dev/null 2>&1 || { echo "SKIP: mpicc.mpich is not installed (Debian: libmpich-dev)"; exit 77; }
adios_lib=$(pkg-config --variable=libdir adios-mpich 2>/dev/null)/adios/mpich
[ -f "$adios_lib/libadios.a" ] ||
    { echo "SKIP: ADIOS 1 for MPICH is not installed (Debian: libadios-mpich-dev)"; exit 77; }
command -v bpls >/dev/null 2>&1 || { echo "SKIP: bpls is not installed (Debian: libadios-bin)"; exit 77; }
: "${top_srcdir:?}"
. "$top_srcdir/test/io/mpich_client.sh"
mpich_client_setup adios "an mpicc.mpich-built program"

# adios-mpich.pc cannot link as it stands: it names -ladios but Debian keeps
# the MPICH build's archives under adios/mpich, and it asks for the -dev
# links of Open MPI's parallel NetCDF (whose library loads libmpi.so.40),
# glib and libibverbs. libadios.a's write methods pull in its PHDF5 and NC4
# methods and every compression transform, none of which the program uses:
# so HDF5 for MPICH, Debian 12's serial NetCDF (its nc_create_par answers
# NC_ENOPAR) and the compression libraries that libadios-bin installs.
hdf5_dir=$(pkg-config --libs-only-L hdf5-mpich 2>/dev/null)
# shellcheck disable=SC2086
mpicc.mpich -O1 -o "$tmp/adios_rw" "$top_srcdir/test/io/adios_rw.c" -L"$adios_lib" -ladios \
    $hdf5_dir -lhdf5 -l:libnetcdf.so.19 -lz -lbz2 -lsz -l:liblz4.so.1 -l:libblosc.so.1 -lm -lpthread \
    >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; fail "mpicc.mpich cannot build adios_rw.c"; }
readelf -d "$tmp/adios_rw" | grep -q 'NEEDED.*\[libmpich\.so\.12\]' ||
    fail "adios_rw does not ask for libmpich.so.12"

rows=23 cols=17 steps=2
array_bytes=$((rows * cols * steps * 8))

# adios_rw N ARG...: the program at N ranks; its output in $out.
adios_rw() {
    ar_n=$1
    shift
    mpich_client_job "adios_rw $1" "$ar_n" "$tmp/adios_rw" "$@"
}

# mpiio FIELD: from the "mpiio:" lines in $out, how many ranks have FIELD
# (opens, wrote or read) above 0, and its sum over all ranks.
mpiio() {
    printf '%s\n' "$out" | awk -v f="$1" '
        /^mpiio: rank / { for (i = 4; i < NF; i += 2) if ($i == f) { s += $(i + 1); if ($(i + 1) > 0) r++ } }
        END { print r + 0, s + 0 }'
}

# check_write N METHOD: what the method passed to MPI-IO, and its files.
check_write() {
    opens=$(mpiio opens) wrote=$(mpiio wrote)
    openers=${opens% *} opens=${opens#* } writers=${wrote% *} wrote=${wrote#* }
    said="$openers ranks opened $opens files, $writers wrote $wrote bytes through MPI-IO"
    case $2 in
    MPI)
        if [ "$openers" -ne "$1" ] || [ "$writers" -ne "$1" ] || [ "$wrote" -lt $array_bytes ]; then
            fail "MPI: $said, expected all $1 ranks and at least $array_bytes bytes"
        fi
        ;;
    MPI_AGGREGATE)
        aggregators=$(($1 / 2))
        if [ "$openers" -ne $aggregators ] || [ "$writers" -ne $aggregators ] || [ "$wrote" -lt $array_bytes ]; then
            fail "MPI_AGGREGATE: $said, expected $aggregators aggregators and at least $array_bytes bytes"
        fi
        subfiles=$(find "$tmp/$2.bp.dir" -type f | wc -l)
        [ "$subfiles" -eq $aggregators ] || fail "MPI_AGGREGATE left $subfiles subfiles, expected $aggregators"
        ;;
    POSIX)
        if [ "$opens" -ne 0 ] || [ "$wrote" -ne 0 ]; then
            fail "POSIX: $said, expected none"
        fi
        ;;
    esac
}

# check_read N: every rank read at least the whole array through MPI_File_read.
check_read() {
    printf '%s\n' "$out" | awk -v min=$array_bytes -v n="$1" '
        /^mpiio: rank / && $9 >= min { r++ }
        END { if (r != n) { print r + 0 " of " n " ranks read " min " bytes through MPI_File_read"; exit 1 } }' ||
        fail "the BP reader did not read through MPI-IO"
}

# check_bpls FILE N: bpls's dump of "field" (one value a line with -n 1:
# "(s,i,j)    v") holds s * 100000 + i * 1000 + j at every index of both
# steps, and "writers" is N in both.
check_bpls() {
    bpls -d -n 1 -f '%.1f' "$1" field >"$tmp/field.dump" || fail "bpls -d field failed"
    awk -v want_n=$((rows * cols * steps)) '
        /^ *\([0-9 ]+,[0-9 ]+,[0-9 ]+\)/ {
            s = $0
            gsub(/[(),]/, " ", s)
            split(s, a, " ")
            want = a[1] * 100000 + a[2] * 1000 + a[3]
            if (a[4] + 0 != want) { print "bpls: field(" a[1] "," a[2] "," a[3] ") is " a[4] ", expected " want; bad++ }
            if (!((a[1], a[2], a[3]) in seen)) n++
            seen[a[1], a[2], a[3]] = 1
        }
        END { if (n != want_n || bad) { print "bpls: " n " distinct values, " bad + 0 " wrong"; exit 1 } }
    ' "$tmp/field.dump" || fail "bpls shows a wrong field in $1"
    writers=$(bpls -d -n 1 "$1" writers | sed -n 's/^ *([01]) *\([0-9-]*\) *$/\1/p' | sort -u)
    [ "$writers" = "$2" ] || fail "bpls: writers is '$writers', expected $2 in both steps"
}

for n in 2 4; do
    for method in MPI MPI_AGGREGATE POSIX; do
        file=$tmp/$method.bp
        rm -rf "$file" "$file.dir"
        params=
        [ $method = MPI_AGGREGATE ] && params="num_aggregators=$((n / 2));num_ost=$((n / 2))"
        adios_rw "$n" write "$method" "$params" "$file"
        check_write "$n" "$method"
        adios_rw "$n" read "$file"
        check_read "$n"
        check_bpls "$file" "$n"
        echo "ok: ADIOS method $method at $n ranks ($launcher), read back by ADIOS and bpls"
    done
done
