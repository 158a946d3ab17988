#!/bin/sh
# A full file system: io_nospace at 2 and 4 ranks in a directory on a
# 1 MiB tmpfs this script mounts (root only; SKIP otherwise), whose last
# rank writes more than fits and must get MPI_ERR_NO_SPACE while the others
# finish (test/io/io_nospace.c). run-ranks' timeout turns a hang into a
# failure. The mount and its directory go away on every exit.
# validate-with-mpich.sh runs this script with BMPIRUN=mpiexec.mpich and
# top_builddir pointing at its own build of the program.
: "${top_builddir:?run through make check (top_builddir not set)}"
: "${top_srcdir:?run through make check (top_srcdir not set)}"
prog="$top_builddir/test/io/io_nospace"
if [ "$(id -u)" -ne 0 ]; then
    echo "SKIP: io_nospace mounts a tmpfs, which needs root"
    exit 77
fi
mnt=$(mktemp -d "${TMPDIR:-/tmp}/bmpi-io-nospace.XXXXXX") || exit 1
mounted=
cleanup() {
    [ -n "$mounted" ] && umount "$mnt"
    rmdir "$mnt"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
if ! mount -t tmpfs -o size=1m,mode=0700 bmpi-io-nospace "$mnt"; then
    echo "SKIP: cannot mount a tmpfs on $mnt"
    exit 77
fi
mounted=1
BMPI_IO_TEST_DIR=$mnt "$top_srcdir/test/mpi/run-ranks" "$prog" 2 4
rc=$?
[ $rc -eq 0 ] || exit $rc
left=$(ls -A "$mnt")
[ -z "$left" ] || { echo "FAIL: io_nospace left files on the tmpfs: $left"; exit 1; }
exit 0
