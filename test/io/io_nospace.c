/*
 * A full file system (run by io_nospace.sh, in a directory on a 1 MiB
 * tmpfs named by $BMPI_IO_TEST_DIR). The last rank writes, alone, more
 * than fits: its write must fail with an error of class MPI_ERR_NO_SPACE
 * (never report success for bytes that are not in the file), through the
 * file's handler, MPI_ERRORS_RETURN. The other ranks, which wrote small
 * files of their own before, check them and finish; once the big file is
 * deleted, a file opened by everybody works again. No rank may hang.
 */
#include "test/io/io_util.h"

enum {
    SMALL = 8192,           /* each other rank's file */
    CHUNK = 64 * 1024,      /* the writer's writes */
    LIMIT = 64 * 1024 * 1024 /* a file system this size is not the test's */
};

static void small_file(const char *path, int check)
{
    MPI_File fh;
    char *b = malloc(SMALL);
    CHECK(b != NULL, "out of memory");
    if (!check) {
        tu_fill(b, SMALL, tu_seed(1, tu_rank, 0, 0));
        MPICHK(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
        MPICHK(MPI_File_write_at(fh, 0, b, SMALL, MPI_BYTE, MPI_STATUS_IGNORE));
    } else {
        MPICHK(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
        MPICHK(MPI_File_read_at(fh, 0, b, SMALL, MPI_BYTE, MPI_STATUS_IGNORE));
        long bad = tu_verify(b, SMALL, tu_seed(1, tu_rank, 0, 0));
        CHECK(bad < 0, "rank %d's small file differs at byte %ld", tu_rank, bad);
    }
    MPICHK(MPI_File_close(&fh));
    free(b);
}

/* Write CHUNK after CHUNK until the file system is full: the failing
 * write's class is MPI_ERR_NO_SPACE. */
static void fill_up(const char *path)
{
    MPI_File fh;
    char *b = malloc(CHUNK);
    CHECK(b != NULL, "out of memory");
    memset(b, 0x5a, CHUNK);
    MPICHK(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    MPI_Offset off = 0;
    int rc = MPI_SUCCESS;
    while (off < LIMIT) {
        rc = MPI_File_write_at(fh, off, b, CHUNK, MPI_BYTE, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            break;
        off += CHUNK;
    }
    CHECK(rc != MPI_SUCCESS, "wrote %d MiB without running out of space: not on a small file system (%s)",
          LIMIT >> 20, path);
    int cls;
    MPICHK(MPI_Error_class(rc, &cls));
    if (cls == MPI_ERR_IO && iu_known_deviation("nospace-is-io"))
        printf("NOTE io_nospace: a full file system gives MPI_ERR_IO (known deviation nospace-is-io)\n");
    else
        CHECK(cls == MPI_ERR_NO_SPACE, "the write at %lld failed with %s, expected class MPI_ERR_NO_SPACE",
          (long long)off, tu_errstr(rc));
    printf("ok: io_nospace: rank %d: the write at %lld KiB failed, class %d\n", tu_rank,
           (long long)(off >> 10), cls);
    MPICHK(MPI_File_close(&fh));
    MPICHK(MPI_File_delete(path, MPI_INFO_NULL));
    free(b);
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv, "io_nospace");
    iu_init("io_nospace");
    char mine[PATH_MAX + 64], shared[PATH_MAX + 64];
    char name[32];
    snprintf(name, sizeof name, "small.%d", tu_rank);
    snprintf(mine, sizeof mine, "%s", iu_path(name));
    snprintf(shared, sizeof shared, "%s", iu_path("shared"));
    int writer = tu_size - 1;

    if (tu_rank != writer || tu_size == 1)
        small_file(mine, 0);
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    if (tu_rank == writer)
        fill_up(iu_path("big"));
    else
        small_file(mine, 1);
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));

    /* the space is back: a file of everybody's works */
    MPI_File fh;
    long v = 42 + tu_rank, got = 0;
    MPICHK(MPI_File_open(MPI_COMM_WORLD, shared, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPICHK(MPI_File_write_at(fh, tu_rank * (MPI_Offset)sizeof v, &v, 1, MPI_LONG, MPI_STATUS_IGNORE));
    MPICHK(MPI_File_sync(fh));
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    MPICHK(MPI_File_sync(fh));
    MPICHK(MPI_File_read_at(fh, (MPI_Offset)writer * sizeof v, &got, 1, MPI_LONG, MPI_STATUS_IGNORE));
    CHECK(got == 42 + writer, "after the space came back, rank %d's long reads %ld", writer, got);
    MPICHK(MPI_File_close(&fh));
    iu_finish();
    tu_finish();
    return 0;
}
