/*
 * Independent blocking access (io/file.h): explicit offsets and the
 * individual file pointer, the checks every data access shares, and atomic
 * mode's byte-range locks.
 *
 * An access walks the view's stream in steps of at most IO_STEP_BYTES and
 * IO_STEP_RUNS file runs. Contiguous memory is read or written in place;
 * other memory goes through a bounce buffer with the datatype cursor. The
 * runs of a step are grouped: a group of several runs whose span fits the
 * sieving buffer (hints ind_rd_buffer_size / ind_wr_buffer_size) costs one
 * read of the span (and for writes one write back, under a lock so that
 * other writers' bytes in the holes survive); a lone run is one pread or
 * pwrite. That is ROMIO's data sieving.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "io/file.h"
#include "runtime/api.h"

#define IO_STEP_BYTES (4u << 20)
#define IO_STEP_RUNS 256

/* --- system calls ----------------------------------------------------------------- */

int bmpi_io_pread(struct bmpi_file *f, void *buf, size_t len, MPI_Offset off, size_t *done)
{
    size_t got = 0;
    while (got < len) {
        ssize_t n = pread(f->fd, (char *)buf + got, len - got, off + (MPI_Offset)got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            *done = got;
            return bmpi_io_errno(errno, "cannot read", f->path);
        }
        if (n == 0)
            break;
        got += (size_t)n;
    }
    *done = got;
    return BMPI_OK;
}

int bmpi_io_pwrite(struct bmpi_file *f, const void *buf, size_t len, MPI_Offset off)
{
    size_t put = 0;
    while (put < len) {
        ssize_t n = pwrite(f->fd, (const char *)buf + put, len - put, off + (MPI_Offset)put);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return bmpi_io_errno(errno, "cannot write", f->path);
        if (n == 0)
            return bmpi_err_set(MPI_ERR_IO, "cannot write %s: no progress at offset %lld", f->path,
                                (long long)(off + (MPI_Offset)put));
        put += (size_t)n;
    }
    return BMPI_OK;
}

int bmpi_io_pwritev(struct bmpi_file *f, struct iovec *iov, size_t n, MPI_Offset off)
{
    while (n) {
        ssize_t w = pwritev(f->fd, iov, n < IOV_MAX ? (int)n : IOV_MAX, off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return bmpi_io_errno(errno, "cannot write", f->path);
        if (w == 0)
            return bmpi_err_set(MPI_ERR_IO, "cannot write %s: no progress at offset %lld", f->path, (long long)off);
        off += w;
        for (; n && (size_t)w >= iov->iov_len; iov++, n--)
            w -= (ssize_t)iov->iov_len;
        if (n) {
            iov->iov_base = (char *)iov->iov_base + w;
            iov->iov_len -= (size_t)w;
        }
    }
    return BMPI_OK;
}

static int set_lock(struct bmpi_file *f, short type, MPI_Offset off, MPI_Offset len)
{
    struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = off, .l_len = len};
    while (fcntl(f->fd, F_SETLKW, &fl) < 0)
        if (errno != EINTR)
            return bmpi_io_errno(errno, "cannot lock a range of", f->path);
    return BMPI_OK;
}

int bmpi_io_lock(struct bmpi_file *f, MPI_Offset off, MPI_Offset len, enum bmpi_io_dir dir)
{
    if (len <= 0)
        return BMPI_OK;
    return set_lock(f, dir == BMPI_IO_WRITE ? F_WRLCK : F_RDLCK, off, len);
}

void bmpi_io_unlock(struct bmpi_file *f, MPI_Offset off, MPI_Offset len)
{
    if (len > 0)
        set_lock(f, F_UNLCK, off, len);
}

/* --- checks ------------------------------------------------------------------------- */

int bmpi_io_access_check(struct bmpi_file *f, const char *fn, enum bmpi_io_dir dir, const MPI_Offset *offset,
                         const void *buf, MPI_Count count, MPI_Datatype datatype, struct bmpi_io_access *a)
{
    int access = f->amode & (MPI_MODE_RDONLY | MPI_MODE_WRONLY | MPI_MODE_RDWR);
    if (dir == BMPI_IO_READ && access == MPI_MODE_WRONLY)
        return bmpi_err_file_obj(f, MPI_ERR_ACCESS, fn, "%s is open write-only", f->path);
    if (dir == BMPI_IO_WRITE && access == MPI_MODE_RDONLY)
        return bmpi_err_file_obj(f, MPI_ERR_READ_ONLY, fn, "%s is open read-only", f->path);
    if (offset && (f->amode & MPI_MODE_SEQUENTIAL))
        return bmpi_err_file_obj(f, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                                 "explicit offsets on %s, opened with MPI_MODE_SEQUENTIAL", f->path);
    if (offset && *offset < 0)
        return bmpi_err_file_obj(f, MPI_ERR_ARG, fn, "offset %lld is negative", (long long)*offset);
    if (count < 0)
        return bmpi_err_file_obj(f, MPI_ERR_COUNT, fn, "count %lld is negative", (long long)count);
    struct bmpi_datatype *dt;
    int err = bmpi_dt_check_usable(datatype, &dt);
    if (err)
        return bmpi_err_file_obj(f, err, fn, NULL);
    size_t bytes;
    if (!bmpi_dt_total(dt, (size_t)count, &bytes) || bytes > (size_t)INT64_MAX)
        return bmpi_err_file_obj(f, MPI_ERR_COUNT, fn, "count %lld of %s overflows", (long long)count,
                                 bmpi_dt_name(datatype));
    /* Type matching is that of communication (MPI 4.1 14.6.5): the count
     * copies together must be whole etypes, not each copy (24 MPI_INT
     * under an etype of 2 ints are 12 etypes). */
    if (bytes % f->view.esize)
        return bmpi_err_file_obj(f, MPI_ERR_TYPE, fn, "%lld x %s hold %zu bytes, not whole etypes of %zu",
                                 (long long)count, bmpi_dt_name(datatype), bytes, f->view.esize);
    *a = (struct bmpi_io_access){
        .dir = dir, .buf = (void *)buf, .count = (size_t)count, .type = datatype, .dt = dt, .bytes = bytes};
    return MPI_SUCCESS;
}

/* --- the walk ------------------------------------------------------------------------- */

/* One independent access in progress. */
struct io_walk {
    struct bmpi_file *f;
    const struct bmpi_io_access *a;
    char *mem;                  /* contiguous memory, at stream byte 0; NULL: the cursor */
    struct bmpi_dt_cursor cursor;
    char *bounce;               /* IO_STEP_BYTES, for non-contiguous memory */
    char *sieve;                /* the sieving buffer, allocated on first use */
    size_t sieve_cap;
    size_t done;                /* stream bytes moved */
};

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

static int sieve_buffer(struct io_walk *w, size_t span)
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
static int read_sieved(struct io_walk *w, const struct bmpi_io_run *runs, int n, char *dst, size_t *got)
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
static int write_sieved(struct io_walk *w, const struct bmpi_io_run *runs, int n, const char *src)
{
    size_t span = (size_t)span_of(runs, n), have;
    int err = sieve_buffer(w, span);
    bool lock = !err && !w->f->atomic;
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

/* While writes sieve, another process's read-modify-write may span this
 * run: it reads the old bytes under its lock and writes them back, so a
 * plain write takes the same lock or is lost (test/io/io_views at 8 ranks:
 * interleaved subarray rows). Atomic mode's lock covers the access already. */
int bmpi_io_pwrite_run(struct bmpi_file *f, const void *buf, size_t len, MPI_Offset off)
{
    bool lock = writes_sieve(f) && !f->atomic;
    int err = lock ? bmpi_io_lock(f, off, (MPI_Offset)len, BMPI_IO_WRITE) : BMPI_OK;
    if (!err)
        err = bmpi_io_pwrite(f, buf, len, off);
    if (lock)
        bmpi_io_unlock(f, off, (MPI_Offset)len);
    return err;
}

static bool sieving(const struct io_walk *w, enum bmpi_io_dir dir)
{
    if (dir == BMPI_IO_READ)
        return w->f->hints.ds_read != BMPI_IO_DISABLE;
    return writes_sieve(w->f);
}

/* The runs of one step, data at p; *got: bytes moved (short at end of file). */
static int step_runs(struct io_walk *w, const struct bmpi_io_run *runs, int n, char *p, size_t *got)
{
    enum bmpi_io_dir dir = w->a->dir;
    size_t cap = dir == BMPI_IO_READ ? w->f->hints.ind_rd_buffer_size : w->f->hints.ind_wr_buffer_size;
    bool sieve = sieving(w, dir);
    *got = 0;
    for (int i = 0; i < n;) {
        int k = sieve ? group_size(runs + i, n - i, cap) : 1;
        size_t want = runs_bytes(runs + i, k), moved = want;
        int err;
        if (dir == BMPI_IO_WRITE)
            err = k > 1 ? write_sieved(w, runs + i, k, p) : bmpi_io_pwrite_run(w->f, p, want, runs[i].off);
        else
            err = k > 1 ? read_sieved(w, runs + i, k, p, &moved) : bmpi_io_pread(w->f, p, want, runs[i].off, &moved);
        *got += moved;
        if (err || moved < want)
            return err;
        p += want;
        i += k;
    }
    return BMPI_OK;
}

/* One step: up to IO_STEP_BYTES of the stream; false when the walk is over. */
static int walk_step(struct io_walk *w, struct bmpi_io_map *m, bool *more)
{
    struct bmpi_io_run runs[IO_STEP_RUNS];
    int n = bmpi_io_map_next_max(m, runs, IO_STEP_RUNS, IO_STEP_BYTES);
    *more = n > 0;
    if (!n)
        return BMPI_OK;
    size_t want = runs_bytes(runs, n), got;
    char *p = w->mem ? w->mem + w->done : w->bounce;
    if (!w->mem && w->a->dir == BMPI_IO_WRITE)
        bmpi_dt_pack(&w->cursor, w->bounce, want);
    int err = step_runs(w, runs, n, p, &got);
    if (!w->mem && w->a->dir == BMPI_IO_READ)
        bmpi_dt_unpack(&w->cursor, w->bounce, got);
    w->done += got;
    if (got < want)
        *more = false;
    return err;
}

static int walk_init(struct io_walk *w, struct bmpi_file *f, const struct bmpi_io_access *a)
{
    *w = (struct io_walk){.f = f, .a = a};
    if (bmpi_dt_is_contig(a->dt)) {
        w->mem = (char *)a->buf + bmpi_dt_true_lb(a->dt);
        return BMPI_OK;
    }
    bmpi_dt_cursor_init(&w->cursor, a->buf, a->count, a->dt);
    size_t cap = a->bytes < IO_STEP_BYTES ? a->bytes : IO_STEP_BYTES;
    if (!(w->bounce = malloc(cap ? cap : 1)))
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory for a %zu-byte staging buffer", cap);
    return BMPI_OK;
}

static int independent_native(struct bmpi_file *f, const struct bmpi_io_access *a, MPI_Offset offset,
                              size_t *done)
{
    MPI_Offset start = offset * (MPI_Offset)f->view.esize, lo = 0, hi = 0;
    struct io_walk w;
    int err = walk_init(&w, f, a);
    if (!err && f->atomic) {
        bmpi_io_map_bounds(&f->view, start, a->bytes, &lo, &hi);
        err = bmpi_io_lock(f, lo, hi - lo, a->dir);
    }
    struct bmpi_io_map m;
    bmpi_io_map_init(&m, &f->view, start, a->bytes);
    for (bool more = !err; more && !err;)
        err = walk_step(&w, &m, &more);
    if (f->atomic)
        bmpi_io_unlock(f, lo, hi - lo);
    free(w.bounce);
    free(w.sieve);
    *done = w.done;
    return err;
}

/* Another representation: the access goes through a converted copy. */
static int independent_converted(struct bmpi_file *f, const struct bmpi_io_access *a, MPI_Offset offset,
                                 size_t *done)
{
    struct bmpi_io_access bytes = {
        .dir = a->dir, .count = a->bytes, .type = MPI_BYTE, .dt = bmpi_dt_get(MPI_BYTE), .bytes = a->bytes};
    void *tmp = NULL;
    int err = BMPI_OK;
    *done = 0;
    if (a->dir == BMPI_IO_WRITE)
        err = bmpi_datarep_to_file(f->view.rep, a, &tmp);
    else if (!(tmp = malloc(a->bytes ? a->bytes : 1)))
        err = bmpi_err_set(MPI_ERR_NO_MEM, "out of memory for %zu bytes of converted data", a->bytes);
    if (!err) {
        bytes.buf = tmp;
        err = independent_native(f, &bytes, offset, done);
    }
    if (!err && a->dir == BMPI_IO_READ)
        err = bmpi_datarep_from_file(f->view.rep, a, tmp, *done);
    free(tmp);
    return err;
}

int bmpi_io_independent(struct bmpi_file *f, const struct bmpi_io_access *a, MPI_Offset offset, size_t *done)
{
    if (!bmpi_datarep_is_native(f->view.rep))
        return independent_converted(f, a, offset, done);
    return independent_native(f, a, offset, done);
}

/* --- entry points ------------------------------------------------------------------------ */

static int access_at(MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count, MPI_Datatype datatype,
                     MPI_Status *status, enum bmpi_io_dir dir, const char *fn)
{
    struct bmpi_file *f;
    struct bmpi_io_access a;
    int err = bmpi_file_check(fh, fn, &f);
    if (err || (err = bmpi_io_access_check(f, fn, dir, &offset, buf, count, datatype, &a)))
        return err;
    size_t done = 0;
    err = bmpi_io_independent(f, &a, offset, &done);
    bmpi_io_status(status, done);
    return err ? bmpi_err_file_obj(f, err, fn, NULL) : MPI_SUCCESS;
}

static int access_individual(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                             MPI_Status *status, enum bmpi_io_dir dir, const char *fn)
{
    struct bmpi_file *f;
    struct bmpi_io_access a;
    int err = bmpi_file_check(fh, fn, &f);
    if (err || (err = bmpi_io_access_check(f, fn, dir, NULL, buf, count, datatype, &a)))
        return err;
    if (f->amode & MPI_MODE_SEQUENTIAL)
        return bmpi_err_file_obj(f, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                                 "the individual file pointer of %s, opened with MPI_MODE_SEQUENTIAL", f->path);
    size_t done = 0;
    err = bmpi_io_independent(f, &a, f->pos, &done);
    f->pos += (MPI_Offset)(done / f->view.esize);
    bmpi_io_status(status, done);
    return err ? bmpi_err_file_obj(f, err, fn, NULL) : MPI_SUCCESS;
}

BMPI_API(MPI_File_read_at)
int PMPI_File_read_at(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
                      MPI_Status *status)
{
    return access_at(fh, offset, buf, count, datatype, status, BMPI_IO_READ, "MPI_File_read_at");
}

BMPI_API(MPI_File_read_at_c)
int PMPI_File_read_at_c(MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count, MPI_Datatype datatype,
                        MPI_Status *status)
{
    return access_at(fh, offset, buf, count, datatype, status, BMPI_IO_READ, "MPI_File_read_at_c");
}

BMPI_API(MPI_File_write_at)
int PMPI_File_write_at(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype,
                       MPI_Status *status)
{
    return access_at(fh, offset, buf, count, datatype, status, BMPI_IO_WRITE, "MPI_File_write_at");
}

BMPI_API(MPI_File_write_at_c)
int PMPI_File_write_at_c(MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count,
                         MPI_Datatype datatype, MPI_Status *status)
{
    return access_at(fh, offset, buf, count, datatype, status, BMPI_IO_WRITE, "MPI_File_write_at_c");
}

BMPI_API(MPI_File_read)
int PMPI_File_read(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    return access_individual(fh, buf, count, datatype, status, BMPI_IO_READ, "MPI_File_read");
}

BMPI_API(MPI_File_read_c)
int PMPI_File_read_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status)
{
    return access_individual(fh, buf, count, datatype, status, BMPI_IO_READ, "MPI_File_read_c");
}

BMPI_API(MPI_File_write)
int PMPI_File_write(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    return access_individual(fh, buf, count, datatype, status, BMPI_IO_WRITE, "MPI_File_write");
}

BMPI_API(MPI_File_write_c)
int PMPI_File_write_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status)
{
    return access_individual(fh, buf, count, datatype, status, BMPI_IO_WRITE, "MPI_File_write_c");
}

/* --- the individual file pointer ----------------------------------------------------------- */

static int pointer_check(MPI_File fh, const char *fn, struct bmpi_file **f)
{
    int err = bmpi_file_check(fh, fn, f);
    if (!err && ((*f)->amode & MPI_MODE_SEQUENTIAL))
        return bmpi_err_file_obj(*f, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                                 "the individual file pointer of %s, opened with MPI_MODE_SEQUENTIAL", (*f)->path);
    return err;
}

/* The end of file in etypes of f's view: after the last whole etype
 * (MPI 4.1 14.4.3), as the shared pointer's MPI_SEEK_END counts it. */
static int end_position(struct bmpi_file *f, MPI_Offset *pos)
{
    struct stat st;
    if (fstat(f->fd, &st) < 0)
        return bmpi_io_errno(errno, "cannot stat", f->path);
    MPI_Offset stream = bmpi_io_map_stream_end(&f->view, st.st_size);
    *pos = stream / (MPI_Offset)f->view.esize;
    return BMPI_OK;
}

BMPI_API(MPI_File_seek)
int PMPI_File_seek(MPI_File fh, MPI_Offset offset, int whence)
{
    const char *fn = "MPI_File_seek";
    struct bmpi_file *f;
    int err = pointer_check(fh, fn, &f);
    if (err)
        return err;
    MPI_Offset base = 0;
    switch (whence) {
    case MPI_SEEK_SET:
        break;
    case MPI_SEEK_CUR:
        base = f->pos;
        break;
    case MPI_SEEK_END:
        if ((err = end_position(f, &base)))
            return bmpi_err_file_obj(f, err, fn, NULL);
        break;
    default:
        return bmpi_err_file_obj(f, MPI_ERR_ARG, fn, "whence %d is none of MPI_SEEK_SET, _CUR and _END", whence);
    }
    if (base + offset < 0)
        return bmpi_err_file_obj(f, MPI_ERR_ARG, fn, "offset %lld from %lld is before the start of the view",
                                 (long long)offset, (long long)base);
    f->pos = base + offset;
    return MPI_SUCCESS;
}

BMPI_API(MPI_File_get_position)
int PMPI_File_get_position(MPI_File fh, MPI_Offset *offset)
{
    const char *fn = "MPI_File_get_position";
    struct bmpi_file *f;
    int err = pointer_check(fh, fn, &f);
    if (err)
        return err;
    if (!offset)
        return bmpi_err_file_obj(f, MPI_ERR_ARG, fn, "offset is NULL");
    *offset = f->pos;
    return MPI_SUCCESS;
}

BMPI_API(MPI_File_get_byte_offset)
int PMPI_File_get_byte_offset(MPI_File fh, MPI_Offset offset, MPI_Offset *disp)
{
    const char *fn = "MPI_File_get_byte_offset";
    struct bmpi_file *f;
    int err = bmpi_file_check(fh, fn, &f);
    if (err)
        return err;
    if (offset < 0)
        return bmpi_err_file_obj(f, MPI_ERR_ARG, fn, "offset %lld is negative", (long long)offset);
    if (!disp)
        return bmpi_err_file_obj(f, MPI_ERR_ARG, fn, "disp is NULL");
    *disp = bmpi_io_map_byte(&f->view, offset * (MPI_Offset)f->view.esize);
    return MPI_SUCCESS;
}
