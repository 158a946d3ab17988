/*
 * The walk (io/file.h): one independent access as a bounded, resumable
 * engine, the only one. The blocking accesses (access.c,
 * bmpi_io_independent) step it to the end in one go; the nonblocking ones
 * (nonblock.c) step it a bounded amount per progress call. Data sieving,
 * the run locks and atomic mode's lock are therefore the same for both.
 *
 * A step walks the view's stream in chunks of at most WALK_RUNS_FIRST, then
 * WALK_RUNS_MANY, file runs, and WALK_CHUNK_BYTES when the data go through
 * a bounce buffer. Contiguous memory is read or written in place; other
 * memory goes through a bounce buffer of one chunk with the datatype
 * cursor; a non-native representation goes through a converted copy of the
 * whole access (datarep.c), made at init for a write and converted back
 * when a read is over. The runs of a chunk are grouped: a group of several
 * runs whose span fits the sieving buffer (hints ind_rd_buffer_size /
 * ind_wr_buffer_size) costs one read of the span (and for writes one write
 * back, under a lock so that other writers' bytes in the holes survive); a
 * lone run is one pread or pwrite. That is ROMIO's data sieving.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/file.h"

#define WALK_CHUNK_BYTES ((size_t)4 << 20)
/* Runs a chunk holds: a first chunk few, on the stack, so that small
 * accesses allocate nothing; once a chunk is full of runs, many, so that a
 * sieved span can reach the sieving buffer's size (with 256-byte pieces of
 * two ranks interleaved, 256 runs span only 128 KiB). */
#define WALK_RUNS_FIRST 256
#define WALK_RUNS_MANY 8192

/* --- data sieving ------------------------------------------------------------------- */

static size_t runs_bytes(const struct bmpi_io_run *runs, int n)
{
    size_t sum = 0;
    for (int i = 0; i < n; i++)
        sum += runs[i].len;
    return sum;
}

static MPI_Offset span_of(const struct bmpi_io_run *runs, int n)
{
    return runs[n - 1].off + (MPI_Offset)runs[n - 1].len - runs[0].off;
}

/* How many runs from the first form a group whose span fits cap. */
static int group_size(const struct bmpi_io_run *runs, int n, size_t cap)
{
    int k = 1;
    while (k < n && (size_t)span_of(runs, k + 1) <= cap)
        k++;
    return k;
}

static int sieve_buffer(struct bmpi_io_walk *w, size_t span)
{
    if (w->sieve_cap >= span)
        return BMPI_OK;
    free(w->sieve);
    if (!(w->sieve = malloc(span))) {
        w->sieve_cap = 0;
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory for a sieving buffer of %zu bytes", span);
    }
    w->sieve_cap = span;
    return BMPI_OK;
}

/* Read the runs' span once and copy each run out of it; *got stops at the
 * first byte past the end of file. */
static int read_sieved(struct bmpi_io_walk *w, const struct bmpi_io_run *runs, int n, char *dst, size_t *got)
{
    size_t span = (size_t)span_of(runs, n), have;
    int err = sieve_buffer(w, span);
    if (!err)
        err = bmpi_io_pread(w->f, w->sieve, span, runs[0].off, &have);
    *got = 0;
    for (int i = 0; !err && i < n; i++) {
        size_t at = (size_t)(runs[i].off - runs[0].off);
        size_t avail = have > at ? have - at : 0;
        size_t take = avail < runs[i].len ? avail : runs[i].len;
        memcpy(dst + *got, w->sieve + at, take);
        *got += take;
        if (take < runs[i].len)
            break;
    }
    return err;
}

/* Read-modify-write of the runs' span, locked unless the whole access
 * already is (atomic mode). */
static int write_sieved(struct bmpi_io_walk *w, const struct bmpi_io_run *runs, int n, const char *src)
{
    size_t span = (size_t)span_of(runs, n), have;
    int err = sieve_buffer(w, span);
    bool lock = !err && !w->atomic;
    if (lock)
        err = bmpi_io_lock(w->f, runs[0].off, (MPI_Offset)span, BMPI_IO_WRITE);
    if (!err)
        err = bmpi_io_pread(w->f, w->sieve, span, runs[0].off, &have);
    if (!err) {
        memset(w->sieve + have, 0, span - have);
        for (int i = 0; i < n; i++) {
            memcpy(w->sieve + (runs[i].off - runs[0].off), src, runs[i].len);
            src += runs[i].len;
        }
        err = bmpi_io_pwrite(w->f, w->sieve, span, runs[0].off);
    }
    if (lock)
        bmpi_io_unlock(w->f, runs[0].off, (MPI_Offset)span);
    return err;
}

static bool writes_sieve(const struct bmpi_file *f)
{
    return f->hints.ds_write != BMPI_IO_DISABLE && f->readable;
}

/* A plain write of one run. While writes sieve, another process's
 * read-modify-write may span this run: it reads the old bytes under its
 * lock and writes them back, so a plain write takes the same lock or is
 * lost (test/io/io_views at 8 ranks: interleaved subarray rows). Atomic
 * mode's lock covers the access already. */
static int write_run(struct bmpi_io_walk *w, const char *src, const struct bmpi_io_run *run)
{
    bool lock = writes_sieve(w->f) && !w->atomic;
    int err = lock ? bmpi_io_lock(w->f, run->off, (MPI_Offset)run->len, BMPI_IO_WRITE) : BMPI_OK;
    if (!err)
        err = bmpi_io_pwrite(w->f, src, run->len, run->off);
    if (lock)
        bmpi_io_unlock(w->f, run->off, (MPI_Offset)run->len);
    return err;
}

/* The sieving buffer's size for this access, 0 when it does not sieve. */
static size_t sieve_limit(const struct bmpi_io_walk *w)
{
    const struct bmpi_file *f = w->f;
    if (w->a.dir == BMPI_IO_READ)
        return f->hints.ds_read != BMPI_IO_DISABLE ? f->hints.ind_rd_buffer_size : 0;
    return writes_sieve(f) ? f->hints.ind_wr_buffer_size : 0;
}

/* Move the k runs of one group, data at p; *moved is short only when a
 * read met the end of file. */
static int move_group(struct bmpi_io_walk *w, const struct bmpi_io_run *runs, int k, char *p, size_t *moved)
{
    *moved = runs_bytes(runs, k);
    if (w->a.dir == BMPI_IO_WRITE)
        return k > 1 ? write_sieved(w, runs, k, p) : write_run(w, p, runs);
    return k > 1 ? read_sieved(w, runs, k, p, moved) : bmpi_io_pread(w->f, p, runs->len, runs->off, moved);
}

/* --- steps ------------------------------------------------------------------------------ */

/* The runs of one chunk, data at p; *got: bytes moved, which stop short at
 * the end of file and leave out a group that failed. */
static int move_runs(struct bmpi_io_walk *w, const struct bmpi_io_run *runs, int n, char *p, size_t *got)
{
    size_t cap = sieve_limit(w);
    *got = 0;
    for (int i = 0; i < n;) {
        int k = cap ? group_size(runs + i, n - i, cap) : 1;
        size_t want = runs_bytes(runs + i, k), moved;
        int err = move_group(w, runs + i, k, p, &moved);
        if (err)
            return err;
        *got += moved;
        if (moved < want)
            break;
        p += want;
        i += k;
    }
    return BMPI_OK;
}

/* The next chunk of at most cap bytes; *want: the bytes it held. */
static int chunk(struct bmpi_io_walk *w, size_t cap, size_t *want)
{
    struct bmpi_io_run first[WALK_RUNS_FIRST];
    struct bmpi_io_run *runs = w->runs ? w->runs : first;
    int max = w->runs ? WALK_RUNS_MANY : WALK_RUNS_FIRST;
    int n = bmpi_io_map_next_max(&w->map, runs, max, cap);
    if (n == max && !w->runs)
        w->runs = malloc(WALK_RUNS_MANY * sizeof(*w->runs)); /* without it, go on with few */
    *want = runs_bytes(runs, n);
    if (!n) {
        w->over = true;
        return BMPI_OK;
    }
    char *p = w->mem ? w->mem + w->done : w->bounce;
    if (!w->mem && w->a.dir == BMPI_IO_WRITE)
        bmpi_dt_pack(&w->cursor, w->bounce, *want);
    size_t got;
    int err = move_runs(w, runs, n, p, &got);
    if (!w->mem && w->a.dir == BMPI_IO_READ)
        bmpi_dt_unpack(&w->cursor, w->bounce, got);
    w->done += got;
    if (got < *want)
        w->over = true;
    return err;
}

static int chunks(struct bmpi_io_walk *w, size_t max_bytes)
{
    int err = BMPI_OK;
    while (!err && max_bytes > 0 && !bmpi_io_walk_done(w)) {
        size_t want;
        /* memory used in place needs no bound but the step's: a large
         * run is one pwrite and one lock, not one per 4 MiB */
        size_t cap = w->mem ? max_bytes : WALK_CHUNK_BYTES;
        err = chunk(w, max_bytes < cap ? max_bytes : cap, &want);
        max_bytes -= want;
    }
    return err;
}

/* Atomic mode: the whole access in one step under one lock of its file
 * range, so that no other process's access interleaves with it. The lock
 * is never held between steps: a nonblocking access would hold it while
 * its rank waits in MPI on another rank, which may be waiting for it. */
static int locked_chunks(struct bmpi_io_walk *w)
{
    MPI_Offset len = w->lock_hi - w->lock_lo;
    int err = bmpi_io_lock(w->f, w->lock_lo, len, w->a.dir);
    if (err)
        return err;
    err = chunks(w, SIZE_MAX);
    bmpi_io_unlock(w->f, w->lock_lo, len);
    return err;
}

bool bmpi_io_walk_done(const struct bmpi_io_walk *w)
{
    return w->over || w->done == w->a.bytes;
}

int bmpi_io_walk_step(struct bmpi_io_walk *w, size_t max_bytes)
{
    if (bmpi_io_walk_done(w))
        return BMPI_OK;
    int err = w->atomic ? locked_chunks(w) : chunks(w, max_bytes);
    if (err)
        w->over = true;
    else if (bmpi_io_walk_done(w) && w->conv && w->a.dir == BMPI_IO_READ)
        err = bmpi_datarep_from_file(w->f->view.rep, &w->a, w->conv, w->done);
    return err;
}

/* --- the memory side ------------------------------------------------------------------- */

/* Another representation: the access goes through a converted copy. */
static int setup_converted(struct bmpi_io_walk *w)
{
    const struct bmpi_datarep *rep = w->f->view.rep;
    size_t bytes = w->a.bytes ? w->a.bytes : 1;
    void *conv = NULL;
    int err = BMPI_OK;
    if (w->a.dir == BMPI_IO_WRITE)
        err = bmpi_datarep_to_file(rep, &w->a, &conv);
    else if (!(conv = malloc(bytes)))
        err = bmpi_err_set(MPI_ERR_NO_MEM, "out of memory for %zu bytes of converted data", bytes);
    w->mem = w->conv = conv;
    return err;
}

static int setup_memory(struct bmpi_io_walk *w)
{
    const struct bmpi_io_access *a = &w->a;
    if (!bmpi_datarep_is_native(w->f->view.rep))
        return setup_converted(w);
    if (bmpi_dt_is_contig(a->dt)) {
        w->mem = (char *)a->buf + bmpi_dt_true_lb(a->dt);
        return BMPI_OK;
    }
    size_t cap = a->bytes < WALK_CHUNK_BYTES ? a->bytes : WALK_CHUNK_BYTES;
    if (!(w->bounce = malloc(cap ? cap : 1)))
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory for a %zu-byte staging buffer", cap);
    bmpi_dt_cursor_init(&w->cursor, a->buf, a->count, a->dt);
    return BMPI_OK;
}

int bmpi_io_walk_init(struct bmpi_io_walk *w, struct bmpi_file *f, const struct bmpi_io_access *a,
                      MPI_Offset offset)
{
    *w = (struct bmpi_io_walk){.f = f, .a = *a, .atomic = f->atomic};
    const struct bmpi_file_view *v = &f->view;
    MPI_Offset start, end;
    if (__builtin_mul_overflow(offset, (MPI_Offset)v->esize, &start) ||
        __builtin_add_overflow(start, (MPI_Offset)a->bytes, &end))
        return bmpi_err_set(MPI_ERR_ARG, "offset %lld etypes of %zu bytes and %zu bytes of data pass the "
                            "largest file offset", (long long)offset, v->esize, a->bytes);
    int err = setup_memory(w);
    if (err)
        return err;
    bmpi_io_map_init(&w->map, v, start, a->bytes);
    if (w->atomic)
        bmpi_io_map_bounds(v, start, a->bytes, &w->lock_lo, &w->lock_hi);
    return BMPI_OK;
}

void bmpi_io_walk_release(struct bmpi_io_walk *w)
{
    free(w->conv);
    free(w->bounce);
    free(w->sieve);
    free(w->runs);
}
