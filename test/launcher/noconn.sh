#!/bin/sh
# Ranks that never connect to bmpirun (launcher/README.md "Ranks that never
# connect"): a program built with another MPI (Open MPI's mpicc) must not
# pass silently as N singletons; a rank that skips MPI_Init, or comes later
# than the bootstrap timeout, while its peers wait is named with its pid;
# a plain program stays silent, also when it outlives the bootstrap timeout.
. "$top_srcdir/test/launcher/lib.sh"
PROG="$top_builddir/test/launcher/noconn"
[ -x "$PROG" ] || { echo "SKIP: $PROG not built"; exit 77; }

# expect_line TEXT: bmpirun's only line on stderr starts with TEXT
expect_line() {
    lines=$(grep -c '^bmpirun: ' "$SCRATCH/err")
    [ "$lines" -eq 1 ] || fail "$lines lines from bmpirun, expected one"
    grep -q "^bmpirun: $1" "$SCRATCH/err" || fail "no line 'bmpirun: $1'"
}

expect_silent() {
    [ ! -s "$SCRATCH/err" ] || fail "$1: bmpirun said something"
}

# A plain program: no noise, whether it ends before or after the timeout.
bmpirun -n 2 hostname
expect_rc 0 "hostname"
expect_silent "hostname"
[ "$(grep -cx "$(hostname)" "$SCRATCH/out")" -eq 2 ] || fail "hostname: not 2 lines of output"
bmpirun -n 3 "$CLIENT" noinit "$MARKER"
expect_rc 0 "a plain program"
expect_silent "a plain program"
BMPI_BOOTSTRAP_TIMEOUT=1 bmpirun -n 2 "$CLIENT" noinit sleep=2 "$MARKER"
expect_rc 0 "a plain program outliving the bootstrap timeout"
expect_silent "a plain program outliving the bootstrap timeout"
check_clean
echo "ok: plain programs pass silently"

# A bmpi program whose rank 1 skips MPI_Init while ranks 0 and 2 wait.
bmpirun -n 3 "$PROG" skip 1 "$MARKER"
expect_rc 1 "rank 1 skipping MPI_Init"
expect_line "rank 1 (pid [0-9]*) exited with status 0 without calling MPI_Init (PMIx_Init) or ever connecting to bmpirun.*built with bmpi (bmpicc)"
check_clean
echo "ok: a rank skipping MPI_Init is named"

# Rank 1 sleeps past the bootstrap timeout (given in bmpirun's environment,
# then through -x): the line names it, not the ranks that gave up on it.
for how in env x; do
    if [ $how = env ]; then
        BMPI_BOOTSTRAP_TIMEOUT=5 bmpirun -n 3 "$PROG" late 1 40 "$MARKER"
    else
        bmpirun -n 3 -x BMPI_BOOTSTRAP_TIMEOUT=5 "$PROG" late 1 40 "$MARKER"
    fi
    expect_rc 1 "rank 1 late ($how)"
    expect_line "rank(s) 1 (pid [0-9]*) did not connect to bmpirun (MPI_Init) within the bootstrap timeout (BMPI_BOOTSTRAP_TIMEOUT=5 s) while 2 rank(s) did and wait for them in MPI_Init"
    check_clean
done
echo "ok: a rank later than the bootstrap timeout is named"

# Rank 1 comes late to MPI_Finalize: the fence of its peers, which have
# connected long ago, names it (runtime/pmix.c), and the call it is in.
BMPI_BOOTSTRAP_TIMEOUT=5 bmpirun -n 3 "$PROG" latefin 1 40 "$MARKER"
[ "$RC" -ne 0 ] || fail "rank 1 late to MPI_Finalize: status 0"
grep -q "PMIx_Fence in MPI_Finalize timed out after 5 s: rank(s) 1 of this host never reached it" "$SCRATCH/err" ||
    fail "rank 1 late to MPI_Finalize: no line naming it"
check_clean
echo "ok: a rank late to MPI_Finalize is named"

# A bmpi program whose ranks all come later than the bootstrap timeout is
# not taken for another MPI's: it needs libbmpi.so (the binary, not
# libtool's wrapper script, is what bmpirun looks at).
REAL="$top_builddir/test/launcher/.libs/noconn"
if [ -x "$REAL" ]; then
    LD_LIBRARY_PATH="$top_builddir/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" BMPI_BOOTSTRAP_TIMEOUT=3 \
        bmpirun -n 2 "$REAL" late all 4 "$MARKER"
    expect_rc 0 "a bmpi program starting MPI late on all ranks"
    expect_silent "a bmpi program starting MPI late on all ranks"
    echo "ok: a bmpi program late on all ranks passes"
fi

# A program built with Open MPI runs as singletons, which bmpirun says.
command -v mpicc.openmpi >/dev/null 2>&1 || { echo "SKIP: Open MPI's mpicc.openmpi is not installed"; exit 77; }
cat >"$SCRATCH/hello.c" <<'END'
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv)
{
    int size;
    if (argc > 1)
        sleep(30);
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    printf("size %d\n", size);
    MPI_Finalize();
    return 0;
}
END
mpicc.openmpi -o "$SCRATCH/ompi_hello" "$SCRATCH/hello.c" || fail "mpicc.openmpi cannot build hello.c"
# Open MPI refuses root without these.
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
bmpirun -n 2 "$SCRATCH/ompi_hello"
expect_rc 1 "an Open MPI program"
[ "$(grep -c '^size 1$' "$SCRATCH/out")" -eq 2 ] || fail "the Open MPI program did not run as 2 singletons"
expect_line "none of the 2 ranks of .*ompi_hello connected to bmpirun, yet it calls MPI_Init: it is not linked with bmpi but with another MPI.*rebuild it with bmpicc"
bmpirun -n 1 "$SCRATCH/ompi_hello"
expect_rc 0 "an Open MPI program as one rank"
BMPI_BOOTSTRAP_TIMEOUT=2 bmpirun -n 2 "$SCRATCH/ompi_hello" sleep "$MARKER"
expect_rc 1 "an Open MPI program sleeping past the bootstrap timeout"
expect_line "none of the 2 ranks of .*ompi_hello connected to bmpirun within the bootstrap timeout (BMPI_BOOTSTRAP_TIMEOUT=2 s), yet it calls MPI_Init: it is not linked with bmpi"
check_clean
echo "ok: an Open MPI program is reported"
