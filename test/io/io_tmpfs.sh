#!/bin/sh
# The access programs once more with their files on a tmpfs (the others
# run where $TMPDIR is, a disk file system here): io_views, io_coll,
# io_nonblock, io_shared and io_atomic at 2 and 4 ranks in a directory on
# a tmpfs this script mounts (root), else in /dev/shm when that is a
# tmpfs; SKIP otherwise. The mount and its directory go away on every exit.
: "${top_builddir:?run through make check (top_builddir not set)}"
: "${top_srcdir:?run through make check (top_srcdir not set)}"
mnt=
mounted=
cleanup() {
    [ -n "$mounted" ] && umount "$mnt"
    [ -n "$mnt" ] && rmdir "$mnt"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
if [ "$(id -u)" -eq 0 ]; then
    mnt=$(mktemp -d "${TMPDIR:-/tmp}/bmpi-io-tmpfs.XXXXXX") || exit 1
    mount -t tmpfs -o size=512m,mode=0700 bmpi-io-tmpfs "$mnt" && mounted=1
fi
if [ -z "$mounted" ]; then
    [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] || {
        echo "SKIP: cannot mount a tmpfs and /dev/shm is not one"
        exit 77
    }
    [ -n "$mnt" ] && rmdir "$mnt"
    mnt=$(mktemp -d /dev/shm/bmpi-io-tmpfs.XXXXXX) || exit 1
fi
echo "files on tmpfs: $mnt"
for p in io_views io_coll io_nonblock io_shared io_atomic; do
    BMPI_IO_TEST_DIR=$mnt "$top_srcdir/test/mpi/run-ranks" "$top_builddir/test/io/$p" 2 4 || {
        echo "FAIL: $p with its files on tmpfs"
        exit 1
    }
done
left=$(ls -A "$mnt")
[ -z "$left" ] || { echo "FAIL: files left on the tmpfs: $left"; exit 1; }
exit 0
