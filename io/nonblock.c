/*
 * Nonblocking independent access (MPI 4.1 section 14.4.3 and 14.4.4):
 * MPI_File_iread, iwrite, iread_at, iwrite_at and their large-count forms.
 *
 * An access becomes a pending operation (pending.c) that the progress
 * engine advances: each step moves at most BMPI_IO_NB_STEP bytes with
 * pread/pwrite over the file runs of the view (view.c's map), so the
 * request moves whenever MPI progresses -- in MPI_Test and MPI_Wait, and
 * in any other call that progresses communication -- without a thread.
 * Non-contiguous memory goes through a bounce buffer of one step, packed
 * before a write and unpacked after a read with the datatype cursor.
 *
 * The data are captured at start: the file runs are walked as the steps
 * go, the datatype is retained, and the individual file pointer moves at
 * once by the amount requested (the standard updates it when the call
 * returns). A non-native representation converts the whole access at
 * start (write) or at the end (read) through datarep.c, with the file
 * data in a buffer of the access's size. In atomic mode the access takes
 * a byte-range lock over the file bytes it touches and runs in one step,
 * so that no other process's access interleaves with it.
 *
 * Errors complete the request with the error class in status.MPI_ERROR;
 * MPI_Wait and friends then report it through the file's error handler.
 * MPI_Cancel cannot recall a file access: the request completes normally.
 */
#include "config.h"

#include <stdlib.h>

#include "io/file.h"
#include "runtime/api.h"

/* Bytes one step of an access moves (and the bounce buffer's size): large
 * enough for the file system to stream, small enough that a step does not
 * hold up the communication progressing beside it. */
#define BMPI_IO_NB_STEP ((size_t)4 << 20)
/* File runs fetched from the view's map at a time. */
#define BMPI_IO_NB_RUNS 64

struct nb_op {
    struct bmpi_io_op op;           /* first: pending.c's handle on it */
    struct bmpi_io_access a;        /* a.dt retained */
    struct bmpi_io_map map;         /* the file runs still to walk */
    struct bmpi_io_run runs[BMPI_IO_NB_RUNS];
    int nruns, run;                 /* runs fetched, the one in progress */
    size_t run_done;                /* bytes of runs[run] already moved */
    size_t done;                    /* bytes of the access moved */
    bool eof;                       /* a read met the end of the file */
    unsigned char *mem;             /* contiguous memory side: the user's data or conv */
    unsigned char *conv;            /* non-native: the access in file representation */
    unsigned char *bounce;          /* non-contiguous native memory: one step */
    struct bmpi_dt_cursor cursor;   /* over the user's buffer, with bounce */
    MPI_Offset lock_lo, lock_hi;    /* atomic mode at start: the file bytes to lock */
};

static struct nb_op *nb_of(struct bmpi_io_op *op) { return (struct nb_op *)op; }

/* The next piece of the file, at most `want` bytes; false once the map is
 * exhausted. */
static bool next_piece(struct nb_op *nb, size_t want, MPI_Offset *off, size_t *len)
{
    if (nb->run == nb->nruns || nb->run_done == nb->runs[nb->run].len) {
        if (nb->run < nb->nruns)
            nb->run++;
        if (nb->run == nb->nruns) {
            nb->nruns = bmpi_io_map_next(&nb->map, nb->runs, BMPI_IO_NB_RUNS);
            nb->run = 0;
            if (nb->nruns == 0)
                return false;
        }
        nb->run_done = 0;
    }
    const struct bmpi_io_run *r = &nb->runs[nb->run];
    size_t left = r->len - nb->run_done;
    *off = r->off + (MPI_Offset)nb->run_done;
    *len = left < want ? left : want;
    return true;
}

/* Move n bytes between mem and the file's next runs; *moved is less than
 * n only when a read met the end of the file. */
static int move_runs(struct nb_op *nb, unsigned char *mem, size_t n, size_t *moved)
{
    struct bmpi_file *f = nb->op.file;
    *moved = 0;
    MPI_Offset off;
    size_t len;
    while (*moved < n && next_piece(nb, n - *moved, &off, &len)) {
        size_t got = len;
        int rc = nb->a.dir == BMPI_IO_WRITE ? bmpi_io_pwrite_run(f, mem + *moved, len, off)
                                            : bmpi_io_pread(f, mem + *moved, len, off, &got);
        if (rc)
            return rc;
        nb->run_done += got;
        *moved += got;
        if (got < len) {
            nb->eof = true;
            break;
        }
    }
    return BMPI_OK;
}

/* One bounded step of the access. */
static int step(struct nb_op *nb)
{
    size_t left = nb->a.bytes - nb->done;
    size_t n = left < BMPI_IO_NB_STEP ? left : BMPI_IO_NB_STEP;
    bool write = nb->a.dir == BMPI_IO_WRITE;
    unsigned char *mem = nb->mem ? nb->mem + nb->done : nb->bounce;
    if (!nb->mem && write)
        bmpi_dt_pack(&nb->cursor, mem, n);
    size_t moved;
    int rc = move_runs(nb, mem, n, &moved);
    if (!nb->mem && !write)
        bmpi_dt_unpack(&nb->cursor, mem, moved);
    nb->done += moved;
    if (!rc && moved < n)
        nb->eof = true;
    return rc;
}

static bool io_over(const struct nb_op *nb) { return nb->eof || nb->done == nb->a.bytes; }

/* The whole access under a byte-range lock (atomic mode). */
static int atomic_access(struct nb_op *nb)
{
    struct bmpi_file *f = nb->op.file;
    MPI_Offset len = nb->lock_hi - nb->lock_lo;
    int rc = bmpi_io_lock(f, nb->lock_lo, len, nb->a.dir);
    if (rc)
        return rc;
    while (!rc && !io_over(nb))
        rc = step(nb);
    bmpi_io_unlock(f, nb->lock_lo, len);
    return rc;
}

static int nb_advance(struct bmpi_io_op *op)
{
    struct nb_op *nb = nb_of(op);
    int rc = nb->lock_hi > nb->lock_lo ? atomic_access(nb) : step(nb);
    if (!rc && !io_over(nb))
        return 1;
    if (!rc && nb->conv && nb->a.dir == BMPI_IO_READ)
        rc = bmpi_datarep_from_file(op->file->view.rep, &nb->a, nb->conv, nb->done);
    bmpi_io_op_finish(op, rc, nb->done);
    return 1;
}

static void nb_destroy(struct bmpi_io_op *op)
{
    struct nb_op *nb = nb_of(op);
    bmpi_dt_release(nb->a.dt);
    free(nb->conv);
    free(nb->bounce);
    free(nb);
}

/* The memory side: the converted data, the user's contiguous data, or a
 * bounce buffer over the datatype cursor. */
static int setup_memory(struct nb_op *nb, const struct bmpi_file_view *v)
{
    const struct bmpi_io_access *a = &nb->a;
    size_t bytes = a->bytes ? a->bytes : 1;
    if (!bmpi_datarep_is_native(v->rep)) {
        int rc = a->dir == BMPI_IO_WRITE ? bmpi_datarep_to_file(v->rep, a, (void **)&nb->conv)
                                         : bmpi_datarep_check_access(v->rep, a->dt);
        if (rc || a->dir == BMPI_IO_WRITE) {
            nb->mem = nb->conv;
            return rc;
        }
        if (!(nb->conv = malloc(bytes)))
            return bmpi_err_set(MPI_ERR_NO_MEM, "no memory for the %zu bytes of a converted read", bytes);
        nb->mem = nb->conv;
        return BMPI_OK;
    }
    if (bmpi_dt_is_contig(a->dt)) {
        nb->mem = (unsigned char *)a->buf + bmpi_dt_true_lb(a->dt);
        return BMPI_OK;
    }
    size_t step_bytes = bytes < BMPI_IO_NB_STEP ? bytes : BMPI_IO_NB_STEP;
    if (!(nb->bounce = malloc(step_bytes)))
        return bmpi_err_set(MPI_ERR_NO_MEM, "no memory for a %zu-byte bounce buffer", step_bytes);
    bmpi_dt_cursor_init(&nb->cursor, a->buf, a->count, a->dt);
    return BMPI_OK;
}

int bmpi_io_nonblocking_start(struct bmpi_file *f, const struct bmpi_io_access *a, MPI_Offset offset,
                              struct bmpi_request **req)
{
    const struct bmpi_file_view *v = &f->view;
    MPI_Offset start, end;
    if (__builtin_mul_overflow(offset, (MPI_Offset)v->esize, &start) ||
        __builtin_add_overflow(start, (MPI_Offset)a->bytes, &end))
        return bmpi_err_set(MPI_ERR_ARG, "offset %lld etypes of %zu bytes and %zu bytes of data pass the "
                            "largest file offset", (long long)offset, v->esize, a->bytes);
    struct nb_op *nb = calloc(1, sizeof(*nb));
    if (!nb)
        return bmpi_err_set(MPI_ERR_NO_MEM, "no memory for a nonblocking file access");
    nb->a = *a;
    nb->op.file = f;
    nb->op.advance = nb_advance;
    nb->op.destroy = nb_destroy;
    bmpi_dt_retain(a->dt);
    int rc = setup_memory(nb, v);
    if (!rc && !bmpi_io_request_new(&nb->op))
        rc = bmpi_err_set(MPI_ERR_NO_MEM, "no memory for a request");
    if (rc) {
        nb_destroy(&nb->op);
        return rc;
    }
    bmpi_io_map_init(&nb->map, v, start, a->bytes);
    if (f->atomic)
        bmpi_io_map_bounds(v, start, a->bytes, &nb->lock_lo, &nb->lock_hi);
    *req = nb->op.req;
    bmpi_io_op_start(&nb->op); /* may complete it, and free nb */
    return BMPI_OK;
}

/* --- entry points ----------------------------------------------------------------- */

/* Start an access of fh at explicit offset *offset, or at the individual
 * file pointer (offset NULL), which moves past the data requested. */
static int start(const char *fn, MPI_File fh, enum bmpi_io_dir dir, const MPI_Offset *offset, const void *buf,
                 MPI_Count count, MPI_Datatype datatype, MPI_Request *request)
{
    struct bmpi_file *f;
    int rc = bmpi_file_check(fh, fn, &f);
    if (rc)
        return rc;
    if (!request)
        return bmpi_err_file_obj(f, MPI_ERR_ARG, fn, "request is NULL");
    struct bmpi_io_access a;
    if ((rc = bmpi_io_access_check(f, fn, dir, offset, buf, count, datatype, &a)))
        return rc;
    if (!offset && (f->amode & MPI_MODE_SEQUENTIAL))
        return bmpi_err_file_obj(f, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                                 "the individual file pointer of %s, opened with MPI_MODE_SEQUENTIAL", f->path);
    struct bmpi_request *req;
    if ((rc = bmpi_io_nonblocking_start(f, &a, offset ? *offset : f->pos, &req)))
        return bmpi_err_file_obj(f, rc, fn, NULL);
    if (!offset)
        f->pos += (MPI_Offset)(a.bytes / f->view.esize);
    *request = bmpi_request_handle(req);
    return MPI_SUCCESS;
}

BMPI_API(MPI_File_iread)
int PMPI_File_iread(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
    return start("MPI_File_iread", fh, BMPI_IO_READ, NULL, buf, count, datatype, request);
}

BMPI_API(MPI_File_iread_c)
int PMPI_File_iread_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request)
{
    return start("MPI_File_iread_c", fh, BMPI_IO_READ, NULL, buf, count, datatype, request);
}

BMPI_API(MPI_File_iwrite)
int PMPI_File_iwrite(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
    return start("MPI_File_iwrite", fh, BMPI_IO_WRITE, NULL, buf, count, datatype, request);
}

BMPI_API(MPI_File_iwrite_c)
int PMPI_File_iwrite_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                       MPI_Request *request)
{
    return start("MPI_File_iwrite_c", fh, BMPI_IO_WRITE, NULL, buf, count, datatype, request);
}

BMPI_API(MPI_File_iread_at)
int PMPI_File_iread_at(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
                       MPI_Request *request)
{
    return start("MPI_File_iread_at", fh, BMPI_IO_READ, &offset, buf, count, datatype, request);
}

BMPI_API(MPI_File_iread_at_c)
int PMPI_File_iread_at_c(MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count, MPI_Datatype datatype,
                         MPI_Request *request)
{
    return start("MPI_File_iread_at_c", fh, BMPI_IO_READ, &offset, buf, count, datatype, request);
}

BMPI_API(MPI_File_iwrite_at)
int PMPI_File_iwrite_at(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype,
                        MPI_Request *request)
{
    return start("MPI_File_iwrite_at", fh, BMPI_IO_WRITE, &offset, buf, count, datatype, request);
}

BMPI_API(MPI_File_iwrite_at_c)
int PMPI_File_iwrite_at_c(MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count,
                          MPI_Datatype datatype, MPI_Request *request)
{
    return start("MPI_File_iwrite_at_c", fh, BMPI_IO_WRITE, &offset, buf, count, datatype, request);
}
