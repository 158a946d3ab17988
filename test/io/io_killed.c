/*
 * The writer that io_killed.sh kills: every rank writes 1 MiB chunks into
 * its own 8 MiB region of one file, round and round, and says on stdout
 * when it has written its first chunk ("writing RANK PID"). The script
 * SIGKILLs one rank in the middle of this; should nobody kill it, the
 * program stops after 60 s and exits 3, which the script counts as a
 * failure.
 */
#include <unistd.h>

#include "test/io/io_util.h"

enum { CHUNK = 1 << 20, REGION = 8 << 20, SECONDS = 60 };

int main(int argc, char **argv)
{
    tu_init(&argc, &argv, "io_killed");
    iu_init("io_killed");
    char *b = malloc(CHUNK);
    CHECK(b != NULL, "out of memory");
    memset(b, 'a' + tu_rank % 26, CHUNK);
    MPI_File fh;
    MPICHK(MPI_File_open(MPI_COMM_WORLD, iu_path("data"), MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL,
                         &fh));
    double start = tu_now();
    for (long i = 0; tu_now() - start < SECONDS; i++) {
        MPI_Offset off = (MPI_Offset)tu_rank * REGION + (i * CHUNK) % REGION;
        MPICHK(MPI_File_write_at(fh, off, b, CHUNK, MPI_BYTE, MPI_STATUS_IGNORE));
        if (i == 0)
            printf("writing %d %ld\n", tu_rank, (long)getpid());
    }
    fprintf(stderr, "FAIL io_killed: rank %d: still writing after %d s: nobody killed the rank\n", tu_rank,
            SECONDS);
    MPI_Abort(MPI_COMM_WORLD, 3);
    return 3;
}
