/* rma: one-sided communication (OSU osu_put_latency / osu_put_bw style).
 *
 * Standard MPI only, so the same file builds with bmpicc, Open MPI's mpicc
 * and MPICH's mpicc.mpich. The benchmark is the first argument:
 *
 *   put-lock  get-lock   latency, rank 0 -> rank 1: MPI_Win_lock(SHARED)
 *                        once, then per iteration one Put (Get) and
 *                        MPI_Win_flush; MPI_Win_unlock at the end
 *   put-fence get-fence  per iteration rank 0's Put (Get), then
 *                        MPI_Win_fence on both ranks
 *   put-pscw  get-pscw   per iteration rank 0 MPI_Win_start, Put (Get),
 *                        MPI_Win_complete; rank 1 MPI_Win_post, MPI_Win_wait
 *   put-bw-lock get-bw-lock put-bw-fence get-bw-fence put-bw-pscw
 *                        bandwidth: per iteration a window of -W operations
 *                        back to back, then the flush (fence, complete);
 *                        all into the same target bytes from the same
 *                        origin bytes, as osu_put_bw reuses its buffers
 *   acc                  MPI_Accumulate of doubles with MPI_SUM, windows
 *                        of -W as put-bw-lock, sizes 8 B .. 1 MiB
 *   acc-many             every rank but 0 at once: MPI_Accumulate of doubles
 *                        with MPI_SUM into its own slot of rank 0's
 *                        window under MPI_Win_lock_all, windows of -W
 *                        then MPI_Win_flush; MB/s of all origins together
 *                        (the slowest rank's time), sizes 8 B .. 64 KiB
 *   fop                  MPI_Fetch_and_op (MPI_LONG, MPI_SUM) on one counter
 *                        at rank 0, every rank at once under
 *                        MPI_Win_lock_all, MPI_Win_flush after each
 *   halo                 a 2D periodic grid of ranks (MPI_Dims_create);
 *                        each rank holds an NxN tile of doubles with a
 *                        halo one deep and per iteration Puts its 4 edges
 *                        into its neighbours' halos, then MPI_Win_fence.
 *                        Columns go as MPI_Type_vector; -p packs them into
 *                        contiguous buffers instead (and unpacks the halo
 *                        after the fence, inside the timed iteration).
 *                        The size is N (doubles per edge).
 *
 * With -v the Put, Get and Accumulate benchmarks (latency, bandwidth,
 * acc) give the target side as a vector, every other double
 * (MPI_Type_vector(size / 8, 1, 2, MPI_DOUBLE)), and the origin side as
 * size / 8 contiguous doubles: what a column or a strided field is.
 *
 * Latency, bandwidth and acc use ranks 0 and 1 (others wait in
 * MPI_Finalize); acc-many, fop and halo use every rank. Each size gets a window of
 * its own (MPI_Win_allocate, or MPI_Win_create on malloc'ed memory with
 * -w create), as OSU does. Right after creation the program times the
 * window's first use alone: the first epoch (lock + first operation +
 * flush; fence + operation + fence; post/start + operation +
 * complete/wait; for halo and fop the slowest rank's). Then a fixed
 * warm-up (at most a few hundred iterations, as the usual MPI benchmarks
 * do) and -s samples of a fixed number of iterations (-i overrides it);
 * the best and median sample are reported. Latency and bandwidth are
 * rank 0's clock (the origin); fop and halo the slowest rank's per
 * sample (MPI_MAX), fop's from a barrier to a barrier after the last
 * operation of every rank. The data is checked after each size: what the target
 * holds after Puts and Accumulates, what the origin got, the counter's
 * final value and that each rank's fetched values increase, the halos'
 * contents. A wrong value aborts the run (exit status not 0).
 *
 * Output (machine readable; '#' lines are comments; MB = 1e6 bytes):
 *   <benchmark> <size> <best> <median>   usec per iteration (latency, fop,
 *                                        halo) or MB/s (bw, acc)
 *   first <size> <usec> <usec>           the first epoch after creation
 *   create <size> <usec> <usec>          the window's creation (slowest rank)
 *
 * Options: -m MIN -M MAX  sizes in bytes (N for halo; powers of two; k/m
 *                         suffixes). Defaults: latency 8 .. 64k, bw
 *                         8 .. 16m, acc 8 .. 1m, fop 8, halo 16 .. 1024
 *          -s N           samples per size (default 7)
 *          -i N           iterations per sample (default: by size, below)
 *          -W N           operations per bw/acc iteration (default 64, fewer
 *                         above 1 MiB so that one iteration moves <= 64 MiB)
 *          -w create|allocate   how windows are made (default allocate)
 *          -p             halo: pack columns (no derived datatypes)
 *          -v             put, get, acc: the target side every other double
 *          -o OFFSET      the origin buffers start OFFSET bytes (0 .. 4095) past
 *                         a page boundary (default: where malloc puts them);
 *                         with a page-aligned window, a Get then copies into
 *                         an address OFFSET bytes after its source in the page
 *                         and a Put into one OFFSET bytes before it
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

enum op { OP_PUT, OP_GET, OP_ACC, OP_ACC_MANY, OP_FOP, OP_HALO };

/* The modes whose origin buffer holds doubles of 1.0 to sum. */
static int sums_doubles(enum op op) { return op == OP_ACC || op == OP_ACC_MANY; }
enum sync { SYNC_LOCK, SYNC_FENCE, SYNC_PSCW };
enum kind { KIND_LAT, KIND_BW };

struct mode {
    const char *name;
    enum op op;
    enum sync sync;
    enum kind kind;
    size_t min, max; /* default sizes */
};

static const struct mode modes[] = {
    {"put-lock", OP_PUT, SYNC_LOCK, KIND_LAT, 8, 64 << 10},
    {"put-fence", OP_PUT, SYNC_FENCE, KIND_LAT, 8, 64 << 10},
    {"put-pscw", OP_PUT, SYNC_PSCW, KIND_LAT, 8, 64 << 10},
    {"get-lock", OP_GET, SYNC_LOCK, KIND_LAT, 8, 64 << 10},
    {"get-fence", OP_GET, SYNC_FENCE, KIND_LAT, 8, 64 << 10},
    {"get-pscw", OP_GET, SYNC_PSCW, KIND_LAT, 8, 64 << 10},
    {"put-bw-lock", OP_PUT, SYNC_LOCK, KIND_BW, 8, 16 << 20},
    {"put-bw-fence", OP_PUT, SYNC_FENCE, KIND_BW, 8, 16 << 20},
    {"put-bw-pscw", OP_PUT, SYNC_PSCW, KIND_BW, 8, 16 << 20},
    {"get-bw-lock", OP_GET, SYNC_LOCK, KIND_BW, 8, 16 << 20},
    {"get-bw-fence", OP_GET, SYNC_FENCE, KIND_BW, 8, 16 << 20},
    {"acc", OP_ACC, SYNC_LOCK, KIND_BW, 8, 1 << 20},
    {"acc-many", OP_ACC_MANY, SYNC_LOCK, KIND_BW, 8, 64 << 10},
    {"fop", OP_FOP, SYNC_LOCK, KIND_LAT, 8, 8},
    {"halo", OP_HALO, SYNC_FENCE, KIND_LAT, 16, 1024},
};
#define NMODES (sizeof(modes) / sizeof(modes[0]))

struct opts {
    size_t min, max;
    int samples, iters, window, create, pack, strided;
    long offset; /* -o: origin buffers this many bytes past a page boundary; -1: malloc's */
};

/* One run: the benchmark, the ranks taking part and their buffers. */
struct bench {
    const struct mode *mode;
    struct opts o;
    MPI_Comm comm; /* ranks 0 and 1, or all for fop and halo */
    int rank, np;
    char *sbuf, *rbuf; /* origin buffers (sbuf holds 1.0 doubles for acc) */
    void *sbuf_block, *rbuf_block; /* what malloc returned for them (-o) */
    MPI_Datatype target; /* -v: the target side of the size being run */
    double *t;         /* samples */
};

/* One window and what its epochs need. */
struct win {
    MPI_Win win;
    char *base;
    void *mem; /* malloc'ed memory behind -w create */
    MPI_Group peer; /* PSCW: the other rank */
};

static void fail(const struct bench *b, size_t size, const char *what, double got, double want)
{
    fprintf(stderr, "rma: %s size %zu rank %d: %s is %g, expected %g\n", b->mode->name, size,
            b->rank, what, got, want);
    MPI_Abort(MPI_COMM_WORLD, 3);
}

/* The byte Puts carry and Gets find at a size: differs from one size to
 * the next, so a stale window cannot pass the check. */
static unsigned char pattern(size_t size) { return (unsigned char)(size * 31 + 7); }

/* Fixed counts, by size, in the proportions of the OSU benchmarks
 * (skip 100 / loop 10000 up to 8 KiB, 10 / 1000 above, per 10 samples). */
static void counts(const struct bench *b, size_t size, int window, int *warm, int *iters)
{
    if (b->mode->kind == KIND_BW) {
        /* About 256 MiB a sample at most, 100 windows at least for
         * small sizes. */
        long n = (256L << 20) / (long)(size * (size_t)window);
        *iters = n > 100 ? 100 : n < 2 ? 2 : (int)n;
        *warm = size <= 8192 ? 10 : 2;
    } else if (b->mode->op == OP_HALO) {
        *iters = 100;
        *warm = 10;
    } else {
        *iters = size <= 8192 ? 1000 : 100;
        *warm = size <= 8192 ? 100 : 10;
    }
    if (b->o.iters > 0) *iters = b->o.iters;
}

static double slowest(const struct bench *b, double v)
{
    double m;
    MPI_Allreduce(&v, &m, 1, MPI_DOUBLE, MPI_MAX, b->comm);
    return m;
}

/* --- windows ---------------------------------------------------------------- */

/* Window sizes are rounded up to whole pages: Debian's MPICH 4.0.2
 * (ch4:ucx) maps MPI_Win_allocate windows of other sizes wrongly on one
 * node, and its Puts and Gets reach the wrong process (pmodels/mpich
 * issue 6110); page multiples take its working path. */
#define WIN_ROUND 4096

static double win_open(const struct bench *b, struct win *w, size_t bytes, int disp_unit)
{
    double t0;
    bytes = (bytes + WIN_ROUND - 1) / WIN_ROUND * WIN_ROUND;
    memset(w, 0, sizeof(*w));
    w->peer = MPI_GROUP_NULL;
    MPI_Barrier(b->comm);
    t0 = MPI_Wtime();
    if (b->o.create) {
        w->mem = malloc(bytes ? bytes : 1);
        if (!w->mem) {
            fprintf(stderr, "rma: out of memory for %zu bytes\n", bytes);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        w->base = w->mem;
        MPI_Win_create(w->base, (MPI_Aint)bytes, disp_unit, MPI_INFO_NULL, b->comm, &w->win);
    } else {
        MPI_Win_allocate((MPI_Aint)bytes, disp_unit, MPI_INFO_NULL, b->comm, &w->base, &w->win);
    }
    double dt = slowest(b, (MPI_Wtime() - t0) * 1e6);
    if (b->np == 2) {
        MPI_Group all;
        int other = 1 - b->rank;
        MPI_Comm_group(b->comm, &all);
        MPI_Group_incl(all, 1, &other, &w->peer);
        MPI_Group_free(&all);
    }
    return dt;
}

static void win_close(struct win *w)
{
    if (w->peer != MPI_GROUP_NULL) MPI_Group_free(&w->peer);
    MPI_Win_free(&w->win);
    free(w->mem);
}

/* Sets this rank's window memory through a local epoch (portable to the
 * separate memory model); no epoch may be open. */
static void win_fill(const struct bench *b, struct win *w, size_t bytes, int byte)
{
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, b->rank, 0, w->win);
    memset(w->base, byte, bytes);
    MPI_Win_unlock(b->rank, w->win);
}

/* --- rank 0 -> rank 1: latency, bandwidth, accumulate ------------------------ */

static void issue(const struct bench *b, struct win *w, size_t size)
{
    int n = (int)size;
    if (b->o.strided) {
        if (b->mode->op == OP_PUT)
            MPI_Put(b->sbuf, n / 8, MPI_DOUBLE, 1, 0, 1, b->target, w->win);
        else if (b->mode->op == OP_GET)
            MPI_Get(b->rbuf, n / 8, MPI_DOUBLE, 1, 0, 1, b->target, w->win);
        else
            MPI_Accumulate(b->sbuf, n / 8, MPI_DOUBLE, 1, 0, 1, b->target, MPI_SUM, w->win);
        return;
    }
    switch (b->mode->op) {
    case OP_PUT:
        MPI_Put(b->sbuf, n, MPI_BYTE, 1, 0, n, MPI_BYTE, w->win);
        break;
    case OP_GET:
        MPI_Get(b->rbuf, n, MPI_BYTE, 1, 0, n, MPI_BYTE, w->win);
        break;
    case OP_ACC:
        MPI_Accumulate(b->sbuf, n / 8, MPI_DOUBLE, 1, 0, n / 8, MPI_DOUBLE, MPI_SUM, w->win);
        break;
    default:
        break;
    }
}

static void epoch_open(const struct bench *b, struct win *w)
{
    if (b->mode->sync == SYNC_LOCK && b->rank == 0)
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, w->win);
    else if (b->mode->sync == SYNC_FENCE)
        MPI_Win_fence(MPI_MODE_NOPRECEDE, w->win);
}

/* One iteration: nops operations from rank 0, then what completes them. */
static void epoch(const struct bench *b, struct win *w, size_t size, int nops)
{
    switch (b->mode->sync) {
    case SYNC_LOCK:
        if (b->rank == 0) {
            for (int i = 0; i < nops; i++) issue(b, w, size);
            MPI_Win_flush(1, w->win);
        }
        break;
    case SYNC_FENCE:
        if (b->rank == 0)
            for (int i = 0; i < nops; i++) issue(b, w, size);
        MPI_Win_fence(0, w->win);
        break;
    case SYNC_PSCW:
        if (b->rank == 0) {
            MPI_Win_start(w->peer, 0, w->win);
            for (int i = 0; i < nops; i++) issue(b, w, size);
            MPI_Win_complete(w->win);
        } else {
            MPI_Win_post(w->peer, 0, w->win);
            MPI_Win_wait(w->win);
        }
        break;
    }
}

/* Closes the epoch; afterwards the target's memory may be read locally. */
static void epoch_close(const struct bench *b, struct win *w)
{
    if (b->mode->sync == SYNC_LOCK && b->rank == 0)
        MPI_Win_unlock(1, w->win);
    else if (b->mode->sync == SYNC_FENCE)
        MPI_Win_fence(MPI_MODE_NOSUCCEED, w->win);
    MPI_Barrier(b->comm);
}

/* What the data must look like after `done` operations of this size. */
static void check_pair(const struct bench *b, struct win *w, size_t size, long done)
{
    if (b->mode->op == OP_GET && b->rank == 0) {
        const unsigned char *r = (const unsigned char *)b->rbuf;
        if (r[0] != pattern(size) || r[size - 1] != pattern(size))
            fail(b, size, "a byte got", r[r[0] != pattern(size) ? 0 : size - 1], pattern(size));
    } else if (b->mode->op != OP_GET && b->rank == 1) {
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, w->win);
        /* -v: the last byte of data is the last of the last even double */
        size_t end = b->o.strided ? 2 * size - 8 : size;
        if (b->mode->op == OP_PUT) {
            const unsigned char *t = (const unsigned char *)w->base;
            if (t[0] != pattern(size) || t[end - 1] != pattern(size))
                fail(b, size, "a target byte", t[t[0] != pattern(size) ? 0 : end - 1],
                     pattern(size));
        } else {
            const double *d = (const double *)(void *)w->base;
            size_t last = end / 8 - 1;
            if (d[0] != (double)done || d[last] != (double)done)
                fail(b, size, "a target sum", d[d[0] != (double)done ? 0 : last], (double)done);
        }
        MPI_Win_unlock(1, w->win);
    }
}

/* Window size for bw/acc: -W, or fewer so one iteration moves <= 64 MiB. */
static int window_for(const struct bench *b, size_t size)
{
    if (b->mode->kind != KIND_BW) return 1;
    int win = b->o.window;
    while (win > 1 && size * (size_t)win > (64u << 20)) win /= 2;
    return win;
}

static void run_pair_size(struct bench *b, size_t size, double *first, double *create)
{
    struct win w;
    int nops = window_for(b, size), warm, iters;
    long done = 0;

    size_t bytes = b->o.strided ? 2 * size : size;
    counts(b, size, nops, &warm, &iters);
    if (b->o.strided) {
        MPI_Type_vector((int)(size / 8), 1, 2, MPI_DOUBLE, &b->target);
        MPI_Type_commit(&b->target);
    }
    *create = win_open(b, &w, bytes, 1);
    if (b->mode->op == OP_GET && b->rank == 1) win_fill(b, &w, bytes, pattern(size));
    if (b->mode->op == OP_ACC && b->rank == 1) win_fill(b, &w, bytes, 0);
    if (b->mode->op == OP_GET && b->rank == 0) memset(b->rbuf, 0, size);
    MPI_Barrier(b->comm);

    /* The first epoch: opening it and one operation completed. */
    double t0 = MPI_Wtime();
    epoch_open(b, &w);
    epoch(b, &w, size, 1);
    *first = (MPI_Wtime() - t0) * 1e6;
    done += 1;

    for (int i = 0; i < warm; i++) epoch(b, &w, size, nops);
    done += (long)warm * nops;
    for (int s = 0; s < b->o.samples; s++) {
        t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++) epoch(b, &w, size, nops);
        double dt = MPI_Wtime() - t0;
        b->t[s] = b->mode->kind == KIND_BW ? (double)size * nops * iters / dt / 1e6
                                           : dt / iters * 1e6;
    }
    done += (long)b->o.samples * iters * nops;
    epoch_close(b, &w);
    check_pair(b, &w, size, done);
    win_close(&w);
    if (b->o.strided) MPI_Type_free(&b->target);
}

/* --- fop: one counter, every rank ---------------------------------------------- */

static void run_fop(struct bench *b, size_t size, double *first, double *create)
{
    struct win w;
    const long one = 1;
    long old = -1, prev = -1;
    int warm, iters;

    counts(b, size, 1, &warm, &iters);
    *create = win_open(b, &w, b->rank == 0 ? sizeof(long) : 0, (int)sizeof(long));
    if (b->rank == 0) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w.win);
        *(long *)(void *)w.base = 0;
        MPI_Win_unlock(0, w.win);
    }
    MPI_Barrier(b->comm);

    double t0 = MPI_Wtime();
    MPI_Win_lock_all(0, w.win);
    MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, 0, MPI_SUM, w.win);
    MPI_Win_flush(0, w.win);
    *first = slowest(b, (MPI_Wtime() - t0) * 1e6);

    for (int i = 0; i < warm; i++) {
        MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, 0, MPI_SUM, w.win);
        MPI_Win_flush(0, w.win);
    }
    for (int s = 0; s < b->o.samples; s++) {
        MPI_Barrier(b->comm);
        t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++) {
            MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, 0, MPI_SUM, w.win);
            MPI_Win_flush(0, w.win);
            /* Each fetched value is the counter before this rank's add:
             * later adds of this rank see larger ones. */
            if (old <= prev) fail(b, size, "a fetched value", (double)old, (double)prev + 1);
            prev = old;
        }
        /* The sample ends when every rank is done: with more ranks than
         * cores, a rank's own loop can fit in its time slice and never
         * meet the others, and its clock alone would time no contention. */
        MPI_Barrier(b->comm);
        b->t[s] = slowest(b, (MPI_Wtime() - t0) / iters * 1e6);
    }
    MPI_Win_unlock_all(w.win);
    MPI_Barrier(b->comm);
    if (b->rank == 0) {
        long want = (long)b->np * (1 + warm + (long)b->o.samples * iters);
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, w.win);
        long got = *(long *)(void *)w.base;
        MPI_Win_unlock(0, w.win);
        if (got != want) fail(b, size, "the counter", (double)got, (double)want);
    }
    win_close(&w);
}

/* --- acc-many: every origin into its own slot of rank 0 ---------------------- */

/* One iteration of an origin: nops Accumulates of n doubles into its
 * slot, then the flush. Rank 0, the target, issues nothing. */
static void acc_many_window(const struct bench *b, struct win *w, int n, MPI_Aint slot, int nops)
{
    if (b->rank == 0) return;
    for (int k = 0; k < nops; k++)
        MPI_Accumulate(b->sbuf, n, MPI_DOUBLE, 0, slot, n, MPI_DOUBLE, MPI_SUM, w->win);
    MPI_Win_flush(0, w->win);
}

static void run_acc_many(struct bench *b, size_t size, double *first, double *create)
{
    struct win w;
    int nops = window_for(b, size), warm, iters, n = (int)(size / 8);
    MPI_Aint slot = (MPI_Aint)(b->rank > 0 ? b->rank - 1 : 0) * (MPI_Aint)n;
    size_t bytes = size * (size_t)(b->np - 1);

    counts(b, size, nops, &warm, &iters);
    *create = win_open(b, &w, b->rank == 0 ? bytes : 0, 8);
    if (b->rank == 0) win_fill(b, &w, bytes, 0);
    MPI_Barrier(b->comm);

    double t0 = MPI_Wtime();
    MPI_Win_lock_all(0, w.win);
    acc_many_window(b, &w, n, slot, 1);
    *first = slowest(b, (MPI_Wtime() - t0) * 1e6);

    for (int i = 0; i < warm; i++) acc_many_window(b, &w, n, slot, nops);
    for (int s = 0; s < b->o.samples; s++) {
        MPI_Barrier(b->comm);
        t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++) acc_many_window(b, &w, n, slot, nops);
        /* as fop: the sample ends when every origin is done */
        MPI_Barrier(b->comm);
        double dt = slowest(b, MPI_Wtime() - t0);
        b->t[s] = (double)bytes * nops * iters / dt / 1e6;
    }
    MPI_Win_unlock_all(w.win);
    MPI_Barrier(b->comm);
    if (b->rank == 0) {
        double want = (double)(1 + (long)warm * nops + (long)b->o.samples * iters * nops);
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, w.win);
        const double *d = (const double *)(void *)w.base;
        for (size_t i = 0; i < bytes / 8; i++)
            if (d[i] != want) fail(b, size, "a target sum", d[i], want);
        MPI_Win_unlock(0, w.win);
    }
    win_close(&w);
}

/* --- halo: 2D grid, Put + fence ----------------------------------------------- */

struct grid {
    int n;                          /* tile side */
    int north, south, west, east;   /* neighbours' ranks */
    MPI_Datatype column;            /* one column of the (n+2)^2 array */
    double *west_out, *east_out;    /* -p: packed edge columns */
};

#define AT(a, g, r, c) ((a)[(size_t)(r) * (size_t)((g)->n + 2) + (size_t)(c)])

static void grid_init(const struct bench *b, struct grid *g, int n)
{
    int dims[2] = {0, 0}, row, col;
    MPI_Dims_create(b->np, 2, dims);
    row = b->rank / dims[1];
    col = b->rank % dims[1];
    g->n = n;
    g->north = ((row + dims[0] - 1) % dims[0]) * dims[1] + col;
    g->south = ((row + 1) % dims[0]) * dims[1] + col;
    g->west = row * dims[1] + (col + dims[1] - 1) % dims[1];
    g->east = row * dims[1] + (col + 1) % dims[1];
    MPI_Type_vector(n, 1, n + 2, MPI_DOUBLE, &g->column);
    MPI_Type_commit(&g->column);
    g->west_out = (double *)(void *)b->sbuf;
    g->east_out = g->west_out + n;
}

/* Window layout: the (n+2)^2 array, then with -p two halo columns of n
 * (west, east) that the neighbours Put into. */
static size_t grid_bytes(const struct bench *b, const struct grid *g)
{
    size_t cells = (size_t)(g->n + 2) * (size_t)(g->n + 2);
    return (cells + (b->o.pack ? 2 * (size_t)g->n : 0)) * sizeof(double);
}

static void halo_exchange(const struct bench *b, const struct grid *g, struct win *w)
{
    double *a = (double *)(void *)w->base;
    int n = g->n, stride = n + 2;
    MPI_Aint row_last = (MPI_Aint)(n + 1) * stride + 1; /* south halo row */
    MPI_Aint cells = (MPI_Aint)stride * stride;

    /* my north edge -> north's south halo; my south edge -> south's north halo */
    MPI_Put(&AT(a, g, 1, 1), n, MPI_DOUBLE, g->north, row_last, n, MPI_DOUBLE, w->win);
    MPI_Put(&AT(a, g, n, 1), n, MPI_DOUBLE, g->south, 1, n, MPI_DOUBLE, w->win);
    if (!b->o.pack) {
        /* my west column -> west's east halo; east column -> east's west halo */
        MPI_Put(&AT(a, g, 1, 1), 1, g->column, g->west, stride + n + 1, 1, g->column, w->win);
        MPI_Put(&AT(a, g, 1, n), 1, g->column, g->east, stride, 1, g->column, w->win);
        MPI_Win_fence(0, w->win);
        return;
    }
    for (int r = 0; r < n; r++) {
        g->west_out[r] = AT(a, g, r + 1, 1);
        g->east_out[r] = AT(a, g, r + 1, n);
    }
    MPI_Put(g->west_out, n, MPI_DOUBLE, g->west, cells + n, n, MPI_DOUBLE, w->win);
    MPI_Put(g->east_out, n, MPI_DOUBLE, g->east, cells, n, MPI_DOUBLE, w->win);
    MPI_Win_fence(0, w->win);
    for (int r = 0; r < n; r++) {
        AT(a, g, r + 1, 0) = a[cells + r];
        AT(a, g, r + 1, n + 1) = a[cells + n + r];
    }
}

/* Every interior cell holds its rank; a halo its neighbour's. */
static void halo_check(const struct bench *b, const struct grid *g, struct win *w)
{
    const double *a = (const double *)(void *)w->base;
    for (int i = 1; i <= g->n; i++) {
        if (AT(a, g, 0, i) != g->north) fail(b, (size_t)g->n, "north halo", AT(a, g, 0, i), g->north);
        if (AT(a, g, g->n + 1, i) != g->south)
            fail(b, (size_t)g->n, "south halo", AT(a, g, g->n + 1, i), g->south);
        if (AT(a, g, i, 0) != g->west) fail(b, (size_t)g->n, "west halo", AT(a, g, i, 0), g->west);
        if (AT(a, g, i, g->n + 1) != g->east)
            fail(b, (size_t)g->n, "east halo", AT(a, g, i, g->n + 1), g->east);
    }
}

static void run_halo(struct bench *b, size_t size, double *first, double *create)
{
    struct grid g;
    struct win w;
    int warm, iters;

    grid_init(b, &g, (int)size);
    counts(b, size, 1, &warm, &iters);
    *create = win_open(b, &w, grid_bytes(b, &g), (int)sizeof(double));
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, b->rank, 0, w.win);
    double *a = (double *)(void *)w.base;
    for (size_t i = 0; i < grid_bytes(b, &g) / sizeof(double); i++) a[i] = -1;
    for (int r = 1; r <= g.n; r++)
        for (int c = 1; c <= g.n; c++) AT(a, &g, r, c) = b->rank;
    MPI_Win_unlock(b->rank, w.win);
    MPI_Barrier(b->comm);

    double t0 = MPI_Wtime();
    MPI_Win_fence(MPI_MODE_NOPRECEDE, w.win);
    halo_exchange(b, &g, &w);
    *first = slowest(b, (MPI_Wtime() - t0) * 1e6);

    for (int i = 0; i < warm; i++) halo_exchange(b, &g, &w);
    for (int s = 0; s < b->o.samples; s++) {
        MPI_Barrier(b->comm);
        t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++) halo_exchange(b, &g, &w);
        b->t[s] = slowest(b, (MPI_Wtime() - t0) / iters * 1e6);
    }
    MPI_Win_fence(MPI_MODE_NOSUCCEED, w.win);
    halo_check(b, &g, &w);
    MPI_Type_free(&g.column);
    win_close(&w);
}

/* --- main ------------------------------------------------------------------------ */

/* fop has one size: its first column is the number of ranks instead. */
static void report(const struct bench *b, size_t size, double first, double create)
{
    int n = b->o.samples;
    qsort(b->t, (size_t)n, sizeof(double), cmp_double);
    if (b->rank != 0) return;
    if (b->mode->op == OP_FOP) size = (size_t)b->np;
    if (b->mode->kind == KIND_BW)
        printf("%s %zu %.3f %.3f\n", b->mode->name, size, b->t[n - 1], b->t[(n - 1) / 2]);
    else
        printf("%s %zu %.3f %.3f\n", b->mode->name, size, b->t[0], b->t[(n - 1) / 2]);
    printf("first %zu %.3f %.3f\n", size, first, first);
    printf("create %zu %.3f %.3f\n", size, create, create);
    fflush(stdout);
}

static void header(const struct bench *b)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    const char *unit = b->mode->kind == KIND_BW ? "best_MB/s median_MB/s" : "best_usec median_usec";
    if (b->rank != 0) return;
    MPI_Get_library_version(lib, &len);
    lib[strcspn(lib, "\n")] = '\0';
    printf("# rma %s np=%d window=%s%s library: %s\n", b->mode->name, b->np,
           b->o.create ? "create" : "allocate", b->o.strided ? " target=every-other-double" : "", lib);
    printf("# %s %s %s\n", b->mode->name,
           b->mode->op == OP_HALO ? "tile_n" : b->mode->op == OP_FOP ? "ranks" : "size_bytes", unit);
    printf("# first SIZE usec of the first epoch after creation; create SIZE usec of "
           "the window's creation\n");
    fflush(stdout);
}

static int parse_args(int argc, char **argv, const struct mode **mode, struct opts *o)
{
    size_t min = 0, max = 0;
    *mode = NULL;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : "0";
        if (!strcmp(argv[i], "-m")) min = parse_size(v), i++;
        else if (!strcmp(argv[i], "-M")) max = parse_size(v), i++;
        else if (!strcmp(argv[i], "-s")) o->samples = atoi(v), i++;
        else if (!strcmp(argv[i], "-i")) o->iters = atoi(v), i++;
        else if (!strcmp(argv[i], "-W")) o->window = atoi(v), i++;
        else if (!strcmp(argv[i], "-w") && !strcmp(v, "create")) o->create = 1, i++;
        else if (!strcmp(argv[i], "-w") && !strcmp(v, "allocate")) o->create = 0, i++;
        else if (!strcmp(argv[i], "-p")) o->pack = 1;
        else if (!strcmp(argv[i], "-v")) o->strided = 1;
        else if (!strcmp(argv[i], "-o")) o->offset = atol(v), i++;
        else if (!*mode) {
            for (size_t k = 0; k < NMODES; k++)
                if (!strcmp(argv[i], modes[k].name)) *mode = &modes[k];
            if (!*mode) return -1;
        } else {
            return -1;
        }
    }
    if (!*mode) return -1;
    o->min = min ? min : (*mode)->min;
    o->max = max ? max : (*mode)->max;
    if (o->strided && (*mode)->op != OP_PUT && (*mode)->op != OP_GET && (*mode)->op != OP_ACC) return -1;
    if ((sums_doubles((*mode)->op) || o->strided) && o->min < 8) o->min = 8;
    if (o->min < 1) o->min = 1;
    if (o->samples < 1) o->samples = 1;
    if (o->window < 1) o->window = 1;
    if (o->offset < -1 || o->offset >= BENCH_PAGE) return -1;
    return 0;
}

static void usage(const char *prog)
{
    fprintf(stderr, "usage: %s BENCHMARK [-m MIN] [-M MAX] [-s SAMPLES] [-i ITERS] [-W WINDOW] "
                    "[-w create|allocate] [-p] [-v] [-o OFFSET]\nbenchmarks:", prog);
    for (size_t k = 0; k < NMODES; k++) fprintf(stderr, " %s", modes[k].name);
    fprintf(stderr, "\n");
}

int main(int argc, char **argv)
{
    struct bench b = {.o = {.samples = 7, .window = 64, .offset = -1}};
    int world_rank, world_np;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_np);
    if (parse_args(argc, argv, &b.mode, &b.o)) {
        if (world_rank == 0) usage(argv[0]);
        MPI_Finalize();
        return 2;
    }
    int all = b.mode->op == OP_FOP || b.mode->op == OP_HALO || b.mode->op == OP_ACC_MANY;
    if (world_np < 2) {
        if (world_rank == 0) fprintf(stderr, "rma: needs 2 ranks at least, got %d\n", world_np);
        MPI_Finalize();
        return 2;
    }
    MPI_Comm_split(MPI_COMM_WORLD, all || world_rank < 2 ? 0 : MPI_UNDEFINED, world_rank, &b.comm);
    if (b.comm != MPI_COMM_NULL) {
        MPI_Comm_rank(b.comm, &b.rank);
        MPI_Comm_size(b.comm, &b.np);
        /* halo packs 2 columns of max doubles into sbuf */
        size_t bytes = b.mode->op == OP_HALO ? 2 * b.o.max * sizeof(double) : b.o.max;
        b.sbuf = buffer_at_offset(bytes, b.o.offset, &b.sbuf_block);
        b.rbuf = buffer_at_offset(bytes, b.o.offset, &b.rbuf_block);
        b.t = malloc(sizeof(double) * (size_t)b.o.samples);
        if (!b.sbuf || !b.rbuf || !b.t) {
            fprintf(stderr, "rma: out of memory for 2 x %zu bytes\n", bytes);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        if (sums_doubles(b.mode->op))
            for (size_t i = 0; i < bytes / 8; i++) ((double *)(void *)b.sbuf)[i] = 1.0;
        memset(b.rbuf, 0, bytes);
        header(&b);
        for (size_t size = b.o.min; size <= b.o.max; size *= 2) {
            double first, create;
            if (!sums_doubles(b.mode->op) && b.mode->op != OP_HALO && b.mode->op != OP_FOP)
                memset(b.sbuf, pattern(size), size);
            if (b.mode->op == OP_FOP) run_fop(&b, size, &first, &create);
            else if (b.mode->op == OP_HALO) run_halo(&b, size, &first, &create);
            else if (b.mode->op == OP_ACC_MANY) run_acc_many(&b, size, &first, &create);
            else run_pair_size(&b, size, &first, &create);
            report(&b, size, first, create);
        }
        free(b.t);
        free(b.rbuf_block);
        free(b.sbuf_block);
        MPI_Comm_free(&b.comm);
    }
    MPI_Finalize();
    return 0;
}
