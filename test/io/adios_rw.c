/*
 * ADIOS 1 as a real client of MPI-IO (issue 33). Built by test/io/adios.sh
 * with mpicc.mpich against Debian's ADIOS 1.13 built for MPICH
 * (libadios-mpich-dev, static) and run under bmpirun through bmpi's MPICH
 * ABI (docs/mpich-abi.md); not built by automake.
 *
 *   adios_rw write METHOD PARAMETERS FILE
 *   adios_rw read FILE
 *
 * write: ADIOS's no-XML API (adios_init_noxml, adios_declare_group,
 * adios_select_method with the write METHOD and its PARAMETERS,
 * adios_define_var) declares "field", a global ROWS x COLS array of doubles
 * split in blocks among the ranks (a 2D grid, MPI_Dims_create; the blocks
 * are of unequal sizes), and writes STEPS steps of it (adios_open "w", then
 * "a"), with the number of writers in the scalar "writers".
 *   field[s][i][j] = s * 100000 + i * 1000 + j
 * so that a block stored at the wrong place, or the wrong step, reads as
 * wrong values.
 *
 * read (at any number of ranks): ADIOS's read API with
 * ADIOS_READ_METHOD_BP checks the file's metadata (dimensions, steps, one
 * block per writer and step at the writer's place), then every rank reads
 * the block of writer (rank + 1) % writers at every step through a
 * bounding-box selection, and the whole array of all steps, and checks
 * every value.
 *
 * The program counts what reaches MPI-IO through the profiling interface
 * (MPI_File_open, MPI_File_write, MPI_File_read below, which call the PMPI_
 * versions): the statically linked ADIOS calls these, so the counts are
 * what ADIOS itself did through MPI-IO. Each rank prints
 *   mpiio: rank R opens O wrote W read B
 * and "ok: rank R of N"; rank 0 prints "library: ..."
 * (MPI_Get_library_version), as hdf5_chunked does.
 */
#include <adios.h>
#include <adios_read.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpich_client.h"

#define ROWS 23
#define COLS 17
#define STEPS 2

/* An ADIOS call that returns 0 on success (adios_errno otherwise). */
#define ADCHK(call) CHECK((call) == 0, "%s failed: %s", #call, adios_errmsg())

/* What ADIOS asked of MPI-IO. At file scope because the profiling
 * interface gives the wrappers no other place to count in. */
static struct {
    long opens;
    long long written, read;
} mpiio;

static long long bytes(int count, MPI_Datatype type)
{
    int size = 0;
    PMPI_Type_size(type, &size);
    return (long long)count * size;
}

int MPI_File_open(MPI_Comm comm, const char *name, int amode, MPI_Info info, MPI_File *fh)
{
    mpiio.opens++;
    return PMPI_File_open(comm, name, amode, info, fh);
}

int MPI_File_write(MPI_File fh, const void *buf, int count, MPI_Datatype type, MPI_Status *status)
{
    int rc = PMPI_File_write(fh, buf, count, type, status);
    if (rc == MPI_SUCCESS) mpiio.written += bytes(count, type);
    return rc;
}

int MPI_File_read(MPI_File fh, void *buf, int count, MPI_Datatype type, MPI_Status *status)
{
    int rc = PMPI_File_read(fh, buf, count, type, status);
    if (rc == MPI_SUCCESS) mpiio.read += bytes(count, type);
    return rc;
}

/* Writer `w`'s block of the ROWS x COLS array among `writers` ranks. */
struct block {
    uint64_t start[2], count[2];
};

static double value(int step, uint64_t i, uint64_t j)
{
    return (double)step * 100000 + (double)i * 1000 + (double)j;
}

/* Splits n into d pieces, the first n % d one longer. */
static void split(uint64_t n, int d, int i, uint64_t *start, uint64_t *len)
{
    uint64_t base = n / (uint64_t)d, extra = n % (uint64_t)d, ii = (uint64_t)i;
    *len = base + (ii < extra);
    *start = ii * base + (ii < extra ? ii : extra);
}

static struct block block_of(int w, int writers)
{
    struct block b;
    int dims[2] = {0, 0};
    MPI_Dims_create(writers, 2, dims);
    split(ROWS, dims[0], w / dims[1], &b.start[0], &b.count[0]);
    split(COLS, dims[1], w % dims[1], &b.start[1], &b.count[1]);
    return b;
}

static void declare_group(int64_t *group, const char *method, const char *params)
{
    ADCHK(adios_declare_group(group, "fields", "", adios_stat_default));
    ADCHK(adios_select_method(*group, method, params, ""));
    static const char *const ints[] = {"writers", "rows", "cols", "nrows", "ncols", "row0", "col0"};
    for (size_t k = 0; k < sizeof ints / sizeof ints[0]; k++)
        CHECK(adios_define_var(*group, ints[k], "", adios_integer, "", "", "") != 0,
              "adios_define_var %s: %s", ints[k], adios_errmsg());
    CHECK(adios_define_var(*group, "field", "", adios_double, "nrows,ncols", "rows,cols",
                           "row0,col0") != 0,
          "adios_define_var field: %s", adios_errmsg());
}

static void write_file(const char *method, const char *params, const char *path)
{
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    ADCHK(adios_init_noxml(MPI_COMM_WORLD));
    adios_set_max_buffer_size(16);
    int64_t group;
    declare_group(&group, method, params);

    struct block b = block_of(rank, nranks);
    int dims[] = {nranks, ROWS, COLS, (int)b.count[0], (int)b.count[1], (int)b.start[0],
                  (int)b.start[1]};
    size_t n = (size_t)(b.count[0] * b.count[1]);
    double *buf = malloc((n ? n : 1) * sizeof *buf);
    CHECK(buf != NULL, "out of memory");
    for (int step = 0; step < STEPS; step++) {
        for (uint64_t i = 0; i < b.count[0]; i++)
            for (uint64_t j = 0; j < b.count[1]; j++)
                buf[i * b.count[1] + j] = value(step, b.start[0] + i, b.start[1] + j);
        int64_t fd;
        ADCHK(adios_open(&fd, "fields", path, step == 0 ? "w" : "a", MPI_COMM_WORLD));
        ADCHK(adios_write(fd, "writers", &dims[0]));
        ADCHK(adios_write(fd, "rows", &dims[1]));
        ADCHK(adios_write(fd, "cols", &dims[2]));
        ADCHK(adios_write(fd, "nrows", &dims[3]));
        ADCHK(adios_write(fd, "ncols", &dims[4]));
        ADCHK(adios_write(fd, "row0", &dims[5]));
        ADCHK(adios_write(fd, "col0", &dims[6]));
        ADCHK(adios_write(fd, "field", buf));
        ADCHK(adios_close(fd));
    }
    free(buf);
    ADCHK(adios_finalize(rank));
}

/* Which writer's block `vb` is, -1 if none's. */
static int writer_of(const ADIOS_VARBLOCK *vb, int writers)
{
    for (int w = 0; w < writers; w++) {
        struct block b = block_of(w, writers);
        if (vb->start[0] == b.start[0] && vb->start[1] == b.start[1] &&
            vb->count[0] == b.count[0] && vb->count[1] == b.count[1])
            return w;
    }
    return -1;
}

/* The file's own account of "field": its shape, and in every step one
 * block for each writer, where that writer's block lies. Blocks are matched
 * by place, not by their process_id, which ADIOS 1.13 reports as the last
 * writer's for every block of an appended step in a file of subfiles
 * (POSIX, MPI_AGGREGATE; also under MPICH). */
static void check_metadata(ADIOS_FILE *f, int writers)
{
    ADIOS_VARINFO *v = adios_inq_var(f, "field");
    CHECK(v != NULL, "adios_inq_var field: %s", adios_errmsg());
    CHECK(v->type == adios_double && v->ndim == 2 && v->global, "field: type %d, %d dims, global %d",
          (int)v->type, v->ndim, v->global);
    CHECK(v->dims[0] == ROWS && v->dims[1] == COLS, "field is %llu x %llu, expected %d x %d",
          (unsigned long long)v->dims[0], (unsigned long long)v->dims[1], ROWS, COLS);
    CHECK(v->nsteps == STEPS, "field has %d steps, expected %d", v->nsteps, STEPS);
    ADCHK(adios_inq_var_blockinfo(f, v));
    char *seen = calloc((size_t)writers, 1);
    CHECK(seen != NULL, "out of memory");
    const ADIOS_VARBLOCK *vb = v->blockinfo;
    for (int step = 0; step < STEPS; step++) {
        CHECK(v->nblocks[step] == writers, "step %d has %d blocks, expected %d", step,
              v->nblocks[step], writers);
        memset(seen, 0, (size_t)writers);
        for (int k = 0; k < v->nblocks[step]; k++, vb++) {
            int w = writer_of(vb, writers);
            CHECK(w >= 0 && !seen[w], "step %d: block %d at [%llu, %llu] of %llu x %llu is %s",
                  step, k, (unsigned long long)vb->start[0], (unsigned long long)vb->start[1],
                  (unsigned long long)vb->count[0], (unsigned long long)vb->count[1],
                  w < 0 ? "no writer's block" : "a second copy of a block");
            seen[w] = 1;
        }
    }
    free(seen);
    adios_free_varinfo(v);
}

/* Checks `nsteps` steps from `step0` of the box `b` in buf (step-major). */
static void check_box(const double *buf, const struct block *b, int step0, int nsteps,
                      const char *what)
{
    size_t k = 0;
    for (int s = step0; s < step0 + nsteps; s++)
        for (uint64_t i = b->start[0]; i < b->start[0] + b->count[0]; i++)
            for (uint64_t j = b->start[1]; j < b->start[1] + b->count[1]; j++, k++)
                CHECK(buf[k] == value(s, i, j), "%s: step %d [%llu][%llu] read %.1f, expected %.1f",
                      what, s, (unsigned long long)i, (unsigned long long)j, buf[k],
                      value(s, i, j));
}

static double *alloc_box(const struct block *b, int nsteps)
{
    size_t n = (size_t)(b->count[0] * b->count[1]) * (size_t)nsteps;
    double *buf = malloc((n ? n : 1) * sizeof *buf);
    CHECK(buf != NULL, "out of memory");
    for (size_t k = 0; k < n; k++) buf[k] = -1.0;
    return buf;
}

static void read_file(const char *path)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    ADCHK(adios_read_init_method(ADIOS_READ_METHOD_BP, MPI_COMM_WORLD, "verbose=2"));
    ADIOS_FILE *f = adios_read_open_file(path, ADIOS_READ_METHOD_BP, MPI_COMM_WORLD);
    CHECK(f != NULL, "adios_read_open_file %s: %s", path, adios_errmsg());

    ADIOS_VARINFO *w = adios_inq_var(f, "writers");
    CHECK(w != NULL && w->ndim == 0 && w->value != NULL, "no scalar \"writers\": %s", adios_errmsg());
    int writers = *(const int *)w->value;
    adios_free_varinfo(w);
    CHECK(writers > 0, "writers is %d", writers);
    check_metadata(f, writers);

    /* Another writer's block, step by step, and the whole array of every
     * step in one selection, all in one adios_perform_reads. */
    struct block other = block_of((rank + 1) % writers, writers);
    struct block whole = {{0, 0}, {ROWS, COLS}};
    ADIOS_SELECTION *other_sel = adios_selection_boundingbox(2, other.start, other.count);
    ADIOS_SELECTION *whole_sel = adios_selection_boundingbox(2, whole.start, whole.count);
    CHECK(other_sel != NULL && whole_sel != NULL, "adios_selection_boundingbox failed");
    double *steps[STEPS];
    for (int s = 0; s < STEPS; s++) {
        steps[s] = alloc_box(&other, 1);
        ADCHK(adios_schedule_read(f, other_sel, "field", s, 1, steps[s]));
    }
    double *all = alloc_box(&whole, STEPS);
    ADCHK(adios_schedule_read(f, whole_sel, "field", 0, STEPS, all));
    ADCHK(adios_perform_reads(f, 1));
    char what[64];
    for (int s = 0; s < STEPS; s++) {
        snprintf(what, sizeof what, "writer %d's block", (rank + 1) % writers);
        check_box(steps[s], &other, s, 1, what);
        free(steps[s]);
    }
    check_box(all, &whole, 0, STEPS, "the whole array");
    free(all);
    adios_selection_delete(other_sel);
    adios_selection_delete(whole_sel);
    ADCHK(adios_read_close(f));
    ADCHK(adios_read_finalize_method(ADIOS_READ_METHOD_BP));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    int writing = argc == 5 && strcmp(argv[1], "write") == 0;
    CHECK(writing || (argc == 3 && strcmp(argv[1], "read") == 0),
          "usage: %s write METHOD PARAMETERS FILE | read FILE", argv[0]);
    mc_print_library(rank);
    if (writing)
        write_file(argv[2], argv[3], argv[4]);
    else
        read_file(argv[2]);
    printf("mpiio: rank %d opens %ld wrote %lld read %lld\n", rank, mpiio.opens, mpiio.written,
           mpiio.read);
    printf("ok: rank %d of %d\n", rank, nranks);
    MPI_Finalize();
    return 0;
}
