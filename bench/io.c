/* io: MPI-IO bandwidth, the way simulation codes write their checkpoints.
 *
 * Standard MPI only, so the same file builds with bmpicc, Open MPI's mpicc
 * and MPICH's mpicc.mpich. The pattern is the first argument:
 *
 *   block    a global N x N array of doubles, block-distributed over a 2D
 *            grid of ranks (MPI_Dims_create); each rank holds its block
 *            contiguously in memory. N is the largest with N*N*8 <= -S.
 *   strided  small records interleaved between the ranks: record k of
 *            rank r lies at file offset (k * np + r) * B (-b B bytes);
 *            the view is an MPI_Type_vector of the rank's records.
 *
 * and each pattern is written and read in several flavours (-f):
 *
 *   all      collective: the rank's part as the file view (a subarray for
 *            block, the vector for strided), MPI_File_write_at_all /
 *            MPI_File_read_at_all at offset 0
 *   view     independent, through the same view: MPI_File_write_at /
 *            MPI_File_read_at at offset 0 (the library's non-contiguous
 *            independent path: data sieving or one access per piece)
 *   rows     independent, block only (strided skips it): no view, one
 *            MPI_File_write_at / MPI_File_read_at per row of the rank's
 *            block, as a code without derived datatypes does it
 *
 * A timed write is MPI_File_open (CREATE|WRONLY), set_view, the write,
 * MPI_File_sync (unless -n) and MPI_File_close; a timed read is open
 * (RDONLY), set_view, the read and close. The time is the slowest rank's
 * from a barrier; the bandwidth is the whole file's bytes over it. Reads
 * follow their write at once and nothing drops the page cache (that needs
 * root, and is the machine's business, not the benchmark's): on a local
 * file system they read cached pages, as a restart right after a
 * checkpoint would. MPI_File_sync puts the write-back to the device inside
 * the timed write; with -n writes end in the page cache.
 *
 * Each flavour: one untimed write + read (-w 0: none), then -r timed pairs.
 * The file is deleted (MPI_File_delete) before every write, so each write
 * creates a new file. The process's very first write (its first open
 * included: what the MPI-IO layer costs to start) and the read that
 * follows it are timed apart and reported as first-open, first-write and
 * first-read; they are the first flavour's warm-up, with -w 0 too.
 * Buffers are allocated once and reused. Every write is checked with plain
 * POSIX preads of sample values at the places they belong, every read by
 * comparing with what was written; a wrong value aborts the run.
 *
 * Output (machine readable; '#' lines are comments; MiB = 2^20 bytes):
 *   <pattern>-<write|read>-<flavour> <ranks> <best> <median>   MiB/s
 *   first-open <ranks> <ms> <ms>     the first MPI_File_open (slowest rank)
 *   first-write <ranks> <ms> <ms>    the first open + view + write + sync
 *                                    + close (slowest rank)
 *   first-read <ranks> <ms> <ms>     the first open + view + read + close
 *                                    (slowest rank)
 *
 * Options: -S SIZE   file size in bytes (k/m/g suffixes; default 256m for
 *                    block, 64m for strided: its small pieces make it the
 *                    slow one)
 *          -b BYTES  strided: record size (default 256)
 *          -f LIST   flavours, comma-separated (default all,view,rows for
 *                    block, all,view for strided)
 *          -r N      timed repetitions per flavour (default 3)
 *          -w 0|1    untimed warm-up pair per flavour (default 1; the
 *                    first flavour's is the first call, always made)
 *          -n        no MPI_File_sync in timed writes
 *          -d DIR    directory for the file (default $TMPDIR, else /tmp)
 *          -H KEY=VALUE   an info hint for every open (repeatable)
 */
#include <mpi.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"

enum pattern { PAT_BLOCK, PAT_STRIDED };
enum flavour { FL_ALL, FL_VIEW, FL_ROWS, FL_COUNT };
static const char *const flavour_names[FL_COUNT] = {"all", "view", "rows"};

struct opts {
    enum pattern pattern;
    size_t size;       /* bytes of the whole file, wanted */
    size_t record;     /* strided: bytes per record */
    int flavours[FL_COUNT];
    int reps, warmup, sync;
    const char *dir;
    MPI_Info info;
};

/* The rank's part of the file: where it lies, and the buffers that hold it. */
struct part {
    MPI_Datatype etype;    /* MPI_DOUBLE (block) or MPI_BYTE (strided) */
    MPI_Datatype filetype; /* the view: subarray or vector */
    MPI_Offset disp;       /* the view's displacement */
    int count;             /* etypes this rank writes */
    size_t bytes;          /* ... in bytes */
    size_t file_bytes;     /* the whole file */
    /* block */
    int n, dims[2], rows, cols, row0, col0;
    /* strided */
    int nrec;
    char *wbuf, *rbuf;
};

struct bench {
    struct opts o;
    struct part p;
    int rank, np;
    char path[PATH_MAX];
    double *t; /* samples */
};

static void die(const struct bench *b, const char *what)
{
    fprintf(stderr, "io: rank %d: %s\n", b->rank, what);
    MPI_Abort(MPI_COMM_WORLD, 3);
}

/* Aborts with the MPI error's text when rc is not MPI_SUCCESS. */
static void ck(const struct bench *b, int rc, const char *call)
{
    char err[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (rc == MPI_SUCCESS) return;
    MPI_Error_string(rc, err, &len);
    fprintf(stderr, "io: rank %d: %s on %s failed: %s\n", b->rank, call, b->path, err);
    MPI_Abort(MPI_COMM_WORLD, 3);
}

static double slowest(double v)
{
    double m;
    MPI_Allreduce(&v, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return m;
}

/* --- the rank's part ------------------------------------------------------------ */

/* Splits n into d pieces, the first n % d one longer: piece i's start and length. */
static void split(int n, int d, int i, int *start, int *len)
{
    int base = n / d, extra = n % d;
    *len = base + (i < extra);
    *start = i * base + (i < extra ? i : extra);
}

/* Element (r, c) of the global array: its own global index. */
static double block_value(const struct part *p, int r, int c)
{
    return (double)((int64_t)(p->row0 + r) * p->n + p->col0 + c);
}

static int block_part(struct bench *b)
{
    struct part *p = &b->p;
    int coords[2], sizes[2], subsizes[2], starts[2];
    int64_t side = 1, cells = (int64_t)(b->o.size / sizeof(double));
    while ((side + 1) * (side + 1) <= cells) side++; /* no libm: some wrappers omit -lm */
    if (side > INT_MAX) return -1;
    p->n = (int)side;
    p->dims[0] = p->dims[1] = 0;
    MPI_Dims_create(b->np, 2, p->dims);
    coords[0] = b->rank / p->dims[1];
    coords[1] = b->rank % p->dims[1];
    split(p->n, p->dims[0], coords[0], &p->row0, &p->rows);
    split(p->n, p->dims[1], coords[1], &p->col0, &p->cols);
    if ((double)p->rows * p->cols > INT_MAX) return -1;
    sizes[0] = sizes[1] = p->n;
    subsizes[0] = p->rows;
    subsizes[1] = p->cols;
    starts[0] = p->row0;
    starts[1] = p->col0;
    MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_DOUBLE, &p->filetype);
    MPI_Type_commit(&p->filetype);
    p->etype = MPI_DOUBLE;
    p->disp = 0;
    p->count = p->rows * p->cols;
    p->bytes = (size_t)p->count * sizeof(double);
    p->file_bytes = (size_t)p->n * (size_t)p->n * sizeof(double);
    return 0;
}

static int strided_part(struct bench *b)
{
    struct part *p = &b->p;
    size_t rec = b->o.record;
    size_t nrec = b->o.size / (rec * (size_t)b->np);
    if (nrec < 1 || (double)nrec * rec > INT_MAX || rec * (size_t)b->np > INT_MAX) return -1;
    p->nrec = (int)nrec;
    MPI_Type_vector(p->nrec, (int)rec, (int)(rec * (size_t)b->np), MPI_BYTE, &p->filetype);
    MPI_Type_commit(&p->filetype);
    p->etype = MPI_BYTE;
    p->disp = (MPI_Offset)(rec * (size_t)b->rank);
    p->count = (int)(nrec * rec);
    p->bytes = nrec * rec;
    p->file_bytes = p->bytes * (size_t)b->np;
    return 0;
}

/* Record k of this rank starts with its global record number; the rest of
 * it is the rank's byte. */
static void strided_fill(const struct bench *b)
{
    const struct part *p = &b->p;
    size_t rec = b->o.record;
    memset(p->wbuf, b->rank & 0xff, p->bytes);
    for (int k = 0; k < p->nrec; k++) {
        uint64_t g = (uint64_t)k * (uint64_t)b->np + (uint64_t)b->rank;
        memcpy(p->wbuf + (size_t)k * rec, &g, rec < sizeof(g) ? rec : sizeof(g));
    }
}

static void part_init(struct bench *b)
{
    struct part *p = &b->p;
    if ((b->o.pattern == PAT_BLOCK ? block_part(b) : strided_part(b)) != 0)
        die(b, "-S/-b give a part too large for an int count, or no record a rank");
    p->wbuf = malloc(p->bytes);
    p->rbuf = malloc(p->bytes);
    if (!p->wbuf || !p->rbuf) die(b, "out of memory for the buffers");
    if (b->o.pattern == PAT_BLOCK) {
        double *w = (double *)(void *)p->wbuf;
        for (int r = 0; r < p->rows; r++)
            for (int c = 0; c < p->cols; c++) w[(size_t)r * p->cols + c] = block_value(p, r, c);
    } else {
        strided_fill(b);
    }
}

/* --- checks ----------------------------------------------------------------- */

/* Reads len bytes at off with plain POSIX, not through MPI. */
static void pread_exact(const struct bench *b, int fd, void *v, size_t len, off_t off)
{
    if (pread(fd, v, len, off) != (ssize_t)len) die(b, "pread of the written file came short");
}

/* After a write: the first and last element of every row of the block,
 * or up to 4096 of the rank's records, are where they belong. */
static void check_file(const struct bench *b)
{
    const struct part *p = &b->p;
    int fd = open(b->path, O_RDONLY);
    if (fd < 0) die(b, "the written file does not open with open(2)");
    if (b->o.pattern == PAT_BLOCK) {
        for (int r = 0; r < p->rows; r++) {
            int cs[2] = {0, p->cols - 1};
            for (int i = 0; i < 2; i++) {
                double v;
                off_t off = (off_t)(((int64_t)(p->row0 + r) * p->n + p->col0 + cs[i]) * 8);
                pread_exact(b, fd, &v, sizeof(v), off);
                if (v != block_value(p, r, cs[i])) die(b, "a written element is not in its place");
            }
        }
    } else {
        size_t rec = b->o.record;
        int step = p->nrec > 4096 ? p->nrec / 4096 : 1;
        char *v = malloc(rec);
        if (!v) die(b, "out of memory");
        for (int k = 0; k < p->nrec; k += step) {
            off_t off = (off_t)(((size_t)k * (size_t)b->np + (size_t)b->rank) * rec);
            pread_exact(b, fd, v, rec, off);
            if (memcmp(v, p->wbuf + (size_t)k * rec, rec))
                die(b, "a written record is not in its place");
        }
        free(v);
    }
    close(fd);
}

static void check_read(const struct bench *b)
{
    if (memcmp(b->p.rbuf, b->p.wbuf, b->p.bytes)) die(b, "what was read differs from what was written");
}

/* --- one write, one read ---------------------------------------------------------- */

static void file_delete(struct bench *b)
{
    MPI_Barrier(MPI_COMM_WORLD);
    /* A missing file is fine: the first write of a run finds none. */
    if (b->rank == 0) MPI_File_delete(b->path, MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void set_view(const struct bench *b, MPI_File fh, enum flavour fl)
{
    if (fl == FL_ROWS) return;
    ck(b, MPI_File_set_view(fh, b->p.disp, b->p.etype, b->p.filetype, "native", b->o.info),
       "MPI_File_set_view");
}

/* The data transfer of one flavour; `wr` chooses write or read. */
static void transfer(const struct bench *b, MPI_File fh, enum flavour fl, int wr)
{
    const struct part *p = &b->p;
    char *buf = wr ? p->wbuf : p->rbuf;
    MPI_Status st;
    switch (fl) {
    case FL_ALL:
        ck(b, wr ? MPI_File_write_at_all(fh, 0, buf, p->count, p->etype, &st)
                 : MPI_File_read_at_all(fh, 0, buf, p->count, p->etype, &st),
           wr ? "MPI_File_write_at_all" : "MPI_File_read_at_all");
        break;
    case FL_VIEW:
        ck(b, wr ? MPI_File_write_at(fh, 0, buf, p->count, p->etype, &st)
                 : MPI_File_read_at(fh, 0, buf, p->count, p->etype, &st),
           wr ? "MPI_File_write_at" : "MPI_File_read_at");
        break;
    case FL_ROWS:
        for (int r = 0; r < p->rows; r++) {
            MPI_Offset off = ((MPI_Offset)(p->row0 + r) * p->n + p->col0) * 8;
            char *row = buf + (size_t)r * (size_t)p->cols * 8;
            ck(b, wr ? MPI_File_write_at(fh, off, row, p->cols, MPI_DOUBLE, &st)
                     : MPI_File_read_at(fh, off, row, p->cols, MPI_DOUBLE, &st),
               wr ? "MPI_File_write_at" : "MPI_File_read_at");
        }
        break;
    default:
        break;
    }
}

/* A timed write: seconds of the slowest rank; *open_s the slowest open. */
static double timed_write(struct bench *b, enum flavour fl, double *open_s)
{
    MPI_File fh;
    file_delete(b);
    double t0 = MPI_Wtime();
    ck(b, MPI_File_open(MPI_COMM_WORLD, b->path, MPI_MODE_CREATE | MPI_MODE_WRONLY, b->o.info, &fh),
       "MPI_File_open");
    double t_open = MPI_Wtime() - t0;
    set_view(b, fh, fl);
    transfer(b, fh, fl, 1);
    if (b->o.sync) ck(b, MPI_File_sync(fh), "MPI_File_sync");
    ck(b, MPI_File_close(&fh), "MPI_File_close");
    double t = slowest(MPI_Wtime() - t0);
    if (open_s) *open_s = slowest(t_open);
    /* Every rank's writes are complete (close is collective) */
    check_file(b);
    return t;
}

static double timed_read(struct bench *b, enum flavour fl)
{
    MPI_File fh;
    memset(b->p.rbuf, 0xee, b->p.bytes);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    ck(b, MPI_File_open(MPI_COMM_WORLD, b->path, MPI_MODE_RDONLY, b->o.info, &fh), "MPI_File_open");
    set_view(b, fh, fl);
    transfer(b, fh, fl, 0);
    ck(b, MPI_File_close(&fh), "MPI_File_close");
    double t = slowest(MPI_Wtime() - t0);
    check_read(b);
    return t;
}

/* --- main ------------------------------------------------------------------------ */

static const char *pattern_name(const struct bench *b)
{
    return b->o.pattern == PAT_BLOCK ? "block" : "strided";
}

static void report(struct bench *b, const char *op, enum flavour fl, double *t)
{
    int n = b->o.reps;
    double mib = (double)b->p.file_bytes / (1 << 20);
    for (int i = 0; i < n; i++) t[i] = mib / t[i];
    qsort(t, (size_t)n, sizeof(double), cmp_double);
    if (b->rank == 0)
        printf("%s-%s-%s %d %.1f %.1f\n", pattern_name(b), op, flavour_names[fl], b->np, t[n - 1],
               t[(n - 1) / 2]);
    fflush(stdout);
}

static void run_flavour(struct bench *b, enum flavour fl, int *first_done)
{
    double *tw = b->t, *tr = b->t + b->o.reps;
    if (!*first_done) {
        /* The process's first open, write and read, timed apart; the warm-up. */
        double open_s, t = timed_write(b, fl, &open_s), r = timed_read(b, fl);
        if (b->rank == 0) {
            printf("first-open %d %.3f %.3f\n", b->np, open_s * 1e3, open_s * 1e3);
            printf("first-write %d %.3f %.3f\n", b->np, t * 1e3, t * 1e3);
            printf("first-read %d %.3f %.3f\n", b->np, r * 1e3, r * 1e3);
        }
        *first_done = 1;
    } else if (b->o.warmup) {
        timed_write(b, fl, NULL);
        timed_read(b, fl);
    }
    for (int i = 0; i < b->o.reps; i++) {
        tw[i] = timed_write(b, fl, NULL);
        tr[i] = timed_read(b, fl);
    }
    file_delete(b);
    report(b, "write", fl, tw);
    report(b, "read", fl, tr);
}

static void header(const struct bench *b)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    const struct part *p = &b->p;
    if (b->rank != 0) return;
    MPI_Get_library_version(lib, &len);
    lib[strcspn(lib, "\n")] = '\0';
    printf("# io %s np=%d bytes=%zu", pattern_name(b), b->np, p->file_bytes);
    if (b->o.pattern == PAT_BLOCK)
        printf(" N=%d grid=%dx%d", p->n, p->dims[0], p->dims[1]);
    else
        printf(" record=%zu records_per_rank=%d", b->o.record, p->nrec);
    printf(" reps=%d warmup=%d sync=%s file=%s library: %s\n", b->o.reps, b->o.warmup,
           b->o.sync ? "in-timed-write" : "none", b->path, lib);
    printf("# %s-OP-FLAVOUR ranks best_MiB/s median_MiB/s (open .. close, slowest rank, "
           "MiB = 2^20 B)\n", pattern_name(b));
    printf("# first-open ranks ms ms; first-write ranks ms ms (the process's first open + "
           "write + close); first-read ranks ms ms (the read that follows it)\n");
    fflush(stdout);
}

static int parse_flavours(struct opts *o, const char *list)
{
    char buf[256], *save = NULL;
    memset(o->flavours, 0, sizeof(o->flavours));
    snprintf(buf, sizeof(buf), "%s", list);
    for (char *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        int k = 0;
        while (k < FL_COUNT && strcmp(w, flavour_names[k])) k++;
        if (k == FL_COUNT) return -1;
        o->flavours[k] = 1;
    }
    return 0;
}

/* -H KEY=VALUE */
static int add_hint(struct opts *o, const char *kv)
{
    char key[MPI_MAX_INFO_KEY + 1];
    const char *eq = strchr(kv, '=');
    if (!eq || eq == kv || (size_t)(eq - kv) > MPI_MAX_INFO_KEY) return -1;
    memcpy(key, kv, (size_t)(eq - kv));
    key[eq - kv] = '\0';
    if (o->info == MPI_INFO_NULL) MPI_Info_create(&o->info);
    MPI_Info_set(o->info, key, eq + 1);
    return 0;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
    const char *flavours = NULL;
    int have_pattern = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-n")) {
            o->sync = 0;
        } else if (!have_pattern && (!strcmp(a, "block") || !strcmp(a, "strided"))) {
            o->pattern = !strcmp(a, "block") ? PAT_BLOCK : PAT_STRIDED;
            have_pattern = 1;
        } else if (!v) {
            return -1;
        } else if (!strcmp(a, "-S")) o->size = parse_size(v), i++;
        else if (!strcmp(a, "-b")) o->record = parse_size(v), i++;
        else if (!strcmp(a, "-f")) flavours = v, i++;
        else if (!strcmp(a, "-r")) o->reps = atoi(v), i++;
        else if (!strcmp(a, "-w")) o->warmup = atoi(v) != 0, i++;
        else if (!strcmp(a, "-d")) o->dir = v, i++;
        else if (!strcmp(a, "-H") && !add_hint(o, v)) i++;
        else return -1;
    }
    if (!o->size) o->size = o->pattern == PAT_BLOCK ? 256u << 20 : 64u << 20;
    if (!have_pattern || o->reps < 1 || o->record < 1 || o->size < 64) return -1;
    if (!flavours) flavours = o->pattern == PAT_BLOCK ? "all,view,rows" : "all,view";
    if (parse_flavours(o, flavours)) return -1;
    /* rows is the block's alone; a strided run given it skips it, so that
     * one -f serves both patterns */
    if (o->pattern == PAT_STRIDED) o->flavours[FL_ROWS] = 0;
    return o->flavours[FL_ALL] || o->flavours[FL_VIEW] || o->flavours[FL_ROWS] ? 0 : -1;
}

static void usage(const char *prog)
{
    fprintf(stderr, "usage: %s block|strided [-S SIZE] [-b RECORD] [-f all,view,rows] [-r REPS] "
                    "[-w 0|1] [-n] [-d DIR] [-H KEY=VALUE]...\n"
                    "(strided skips rows)\n", prog);
}

int main(int argc, char **argv)
{
    struct bench b = {.o = {.record = 256, .reps = 3, .warmup = 1, .sync = 1,
                            .info = MPI_INFO_NULL}};
    int first_done = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &b.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &b.np);
    if (parse_args(argc, argv, &b.o)) {
        if (b.rank == 0) usage(argv[0]);
        MPI_Finalize();
        return 2;
    }
    if (!b.o.dir) b.o.dir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    /* One name for all ranks: rank 0's pid makes it unique to this run. */
    int pid = (int)getpid();
    MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    snprintf(b.path, sizeof(b.path), "%s/bench-io-%d.dat", b.o.dir, pid);
    part_init(&b);
    b.t = malloc(sizeof(double) * 2 * (size_t)b.o.reps);
    if (!b.t) die(&b, "out of memory");
    header(&b);
    for (int k = 0; k < FL_COUNT; k++)
        if (b.o.flavours[k]) run_flavour(&b, (enum flavour)k, &first_done);
    free(b.t);
    free(b.p.rbuf);
    free(b.p.wbuf);
    MPI_Type_free(&b.p.filetype);
    if (b.o.info != MPI_INFO_NULL) MPI_Info_free(&b.o.info);
    MPI_Finalize();
    return 0;
}
