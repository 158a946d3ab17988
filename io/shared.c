/*
 * The shared file pointer (MPI 4.1 section 14.4.4) and the ordered forms
 * (io/file.h, docs/io.md).
 *
 * The pointer is one MPI_Offset counted in etypes of the current view. It
 * lives in a window over the file's communicator that rank 0 holds; every
 * rank keeps the window locked (lock_all) from open to close and takes n
 * etypes with one Fetch_and_op(MPI_SUM) and a flush. On one node that is
 * a CPU atomic on shared memory, across nodes the transport's atomic or
 * an active message to rank 0 (runtime/win.h): independent shared-pointer
 * accesses need no other rank's help and never share a range. A file of
 * one rank keeps the pointer in this struct and creates no window.
 *
 * The data then moves as an explicit-offset access at the range taken:
 * bmpi_io_independent for read_shared/write_shared, and
 * bmpi_io_nonblocking_start for the nonblocking forms, which take their
 * range at the call, so ranges follow the order of the calls.
 *
 * The ordered forms: an inclusive scan of the ranks' etype counts places
 * each rank; the last rank, whose scan is the total, takes the whole range
 * with one Fetch_and_op and broadcasts where it starts; coll.c's engine
 * moves the data. Their split forms keep the pending collective here,
 * apart from coll.c's f->split; a split of either kind refuses the begin
 * of another (bmpi_io_shared_split_active for coll.c).
 *
 * What sets the pointer (open, set_view's reset, seek_shared) is
 * collective and synchronizes the ranks, so that no rank's claim falls
 * between the old value and the new one.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "io/file.h"
#include "runtime/api.h"

/* The rank whose window memory holds the pointer. */
#define HOLDER 0

struct bmpi_io_shared {
    MPI_Win win;                /* over f->comm; MPI_WIN_NULL for one rank */
    MPI_Offset local;           /* the pointer when there is no window */
    struct bmpi_request *split; /* an ordered split collective between begin and end */
    enum bmpi_io_dir split_dir;
    const void *split_buf; /* its buffer, which its end must name again */
};

/* ---- the pointer ---------------------------------------------------------- */

/* The status of an MPI call (code rc) made for the pointer of f: 0, or
 * its error class with the call's own text recorded as the reason. */
static int mpi_status(const struct bmpi_file *f, int rc)
{
    if (rc == MPI_SUCCESS)
        return BMPI_OK;
    int errclass = MPI_ERR_OTHER, len = 0;
    char text[MPI_MAX_ERROR_STRING];
    PMPI_Error_class(rc, &errclass);
    if (PMPI_Error_string(rc, text, &len) != MPI_SUCCESS)
        text[0] = '\0';
    return bmpi_err_set(errclass, "shared file pointer of %s: %s", f->path, text);
}

/* One atomic operation on the pointer: *old is its value before op
 * (MPI_SUM adds operand, MPI_REPLACE stores it, MPI_NO_OP reads). */
static int pointer_op(const struct bmpi_file *f, MPI_Op op, MPI_Offset operand, MPI_Offset *old)
{
    struct bmpi_io_shared *s = f->shared;
    if (s->win == MPI_WIN_NULL) {
        *old = s->local;
        if (op == MPI_SUM)
            s->local += operand;
        else if (op == MPI_REPLACE)
            s->local = operand;
        return BMPI_OK;
    }
    int rc = PMPI_Fetch_and_op(&operand, old, MPI_OFFSET, HOLDER, 0, op, s->win);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Win_flush(HOLDER, s->win);
    return mpi_status(f, rc);
}

/* Take n etypes at the pointer: *at is where they start (anywhere for
 * none: an access of nothing goes nowhere). */
static int claim(const struct bmpi_file *f, MPI_Offset n, MPI_Offset *at)
{
    if (n == 0) {
        *at = 0;
        return BMPI_OK;
    }
    return pointer_op(f, MPI_SUM, n, at);
}

/* The etypes an access moves (bmpi_io_access_check allows whole etypes only). */
static MPI_Offset etypes(const struct bmpi_file *f, const struct bmpi_io_access *a)
{
    return (MPI_Offset)(a->bytes / f->view.esize);
}

/* Collective: the window and the pointer's first value, f->pos (0, or
 * the end of file under MPI_MODE_APPEND), stored by its holder before any
 * rank can take a range. */
static int window_open(struct bmpi_file *f, struct bmpi_io_shared *s)
{
    MPI_Offset *value = NULL;
    MPI_Aint bytes = f->rank == HOLDER ? (MPI_Aint)sizeof *value : 0;
    int rc = PMPI_Win_allocate(bytes, (int)sizeof *value, MPI_INFO_NULL, f->comm, &value, &s->win);
    if (rc != MPI_SUCCESS)
        return mpi_status(f, rc);
    rc = PMPI_Win_set_errhandler(s->win, MPI_ERRORS_RETURN);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Win_set_name(s->win, "bmpi shared file pointer");
    if (rc == MPI_SUCCESS && f->rank == HOLDER)
        *value = f->pos;
    if (rc == MPI_SUCCESS)
        rc = PMPI_Win_lock_all(MPI_MODE_NOCHECK, s->win);
    if (rc == MPI_SUCCESS) /* the holder's store before any other rank's first update */
        rc = PMPI_Win_sync(s->win);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Barrier(f->comm);
    if (rc != MPI_SUCCESS) {
        int err = mpi_status(f, rc);
        PMPI_Win_free(&s->win);
        return err;
    }
    return BMPI_OK;
}

int bmpi_io_shared_open(struct bmpi_file *f)
{
    struct bmpi_io_shared *s = calloc(1, sizeof *s);
    if (!s)
        return bmpi_err_set(MPI_ERR_NO_MEM, "no memory for the shared file pointer of %s", f->path);
    s->win = MPI_WIN_NULL;
    s->local = f->pos;
    if (f->size > 1) {
        int err = window_open(f, s);
        if (err) {
            free(s);
            return err;
        }
    }
    f->shared = s;
    return BMPI_OK;
}

void bmpi_io_shared_close(struct bmpi_file *f)
{
    struct bmpi_io_shared *s = f->shared;
    if (s && s->win != MPI_WIN_NULL) {
        PMPI_Win_unlock_all(s->win);
        PMPI_Win_free(&s->win);
    }
    bmpi_io_shared_release(f);
}

void bmpi_io_shared_release(struct bmpi_file *f)
{
    struct bmpi_io_shared *s = f->shared;
    if (s && s->split) {
        /* an ordered split left open at MPI_Finalize: its request goes
         * when the operation ends, as coll.c does with its own */
        if (s->split->complete)
            bmpi_request_free(s->split);
        else
            s->split->user_freed = true;
    }
    free(s);
    f->shared = NULL;
}

int bmpi_io_shared_reset(struct bmpi_file *f)
{
    struct bmpi_io_shared *s = f->shared;
    if (s->win == MPI_WIN_NULL) {
        s->local = 0;
        return BMPI_OK;
    }
    /* Every rank has entered set_view, so every claim under the old view
     * is done; the others wait for the holder's store before they leave,
     * so none falls under the new view before it. */
    int err = BMPI_OK;
    if (f->rank == HOLDER) {
        MPI_Offset old;
        err = pointer_op(f, MPI_REPLACE, 0, &old);
    }
    int holder_err = err;
    int rc = PMPI_Bcast(&holder_err, 1, MPI_INT, HOLDER, f->comm);
    if (rc != MPI_SUCCESS)
        return mpi_status(f, rc);
    if (f->rank != HOLDER && holder_err)
        return bmpi_err_set(holder_err, "rank %d could not reset the shared file pointer of %s", HOLDER,
                            f->path);
    return err;
}

bool bmpi_io_shared_split_active(const struct bmpi_file *f) { return f->shared && f->shared->split; }

/* ---- seek_shared, get_position_shared ------------------------------------- */

/* The end of the view in etypes: the position after the last whole etype
 * that lies in the file (MPI 4.1 14.4.3, MPI_File_seek). */
static int view_end(const struct bmpi_file *f, MPI_Offset *end)
{
    struct stat st;
    if (fstat(f->fd, &st) != 0)
        return bmpi_io_errno(errno, "cannot stat", f->path);
    *end = bmpi_io_map_stream_end(&f->view, st.st_size) / (MPI_Offset)f->view.esize;
    return BMPI_OK;
}

/* The holder's part of seek_shared: the new position, stored. */
static int seek_store(const struct bmpi_file *f, MPI_Offset offset, int whence, MPI_Offset *to)
{
    MPI_Offset from = 0;
    int err = BMPI_OK;
    if (whence == MPI_SEEK_CUR)
        err = pointer_op(f, MPI_NO_OP, 0, &from);
    else if (whence == MPI_SEEK_END)
        err = view_end(f, &from);
    if (err)
        return err;
    if (__builtin_add_overflow(from, offset, to))
        return bmpi_err_set(MPI_ERR_ARG, "offset %lld from etype %lld overflows", (long long)offset,
                            (long long)from);
    if (*to < 0)
        return bmpi_err_set(MPI_ERR_ARG, "offset %lld from etype %lld is a negative position in the view",
                            (long long)offset, (long long)from);
    MPI_Offset old;
    return pointer_op(f, MPI_REPLACE, *to, &old);
}

static const char *whence_name(int whence)
{
    switch (whence) {
    case MPI_SEEK_SET:
        return "MPI_SEEK_SET";
    case MPI_SEEK_CUR:
        return "MPI_SEEK_CUR";
    case MPI_SEEK_END:
        return "MPI_SEEK_END";
    default:
        return "invalid";
    }
}

/* Collective: offset and whence the same everywhere and valid somewhere
 * are found by one reduction, so every rank fails alike (MPICH's ROMIO
 * answers MPI_ERR_ARG to ranks that differ from rank 0 and leaves the
 * others waiting). */
static int seek_agree(struct bmpi_file *f, const char *fn, MPI_Offset offset, int whence)
{
    bool bad_whence = whence != MPI_SEEK_SET && whence != MPI_SEEK_CUR && whence != MPI_SEEK_END;
    bool bad_offset = whence == MPI_SEEK_SET && offset < 0;
    /* maxima of x and ~x: ~max(~x) is the minimum, without overflow */
    MPI_Offset mine[5] = {offset, ~offset, whence, ~(MPI_Offset)whence, bad_whence || bad_offset}, all[5];
    int rc = PMPI_Allreduce(mine, all, 5, MPI_OFFSET, MPI_MAX, f->comm);
    if (rc != MPI_SUCCESS)
        return bmpi_err_file_obj(f, mpi_status(f, rc), fn, NULL);
    if (bad_whence)
        return bmpi_err_file_obj(f, MPI_ERR_ARG, fn, "invalid whence %d", whence);
    if (bad_offset)
        return bmpi_err_file_obj(f, MPI_ERR_ARG, fn, "negative offset %lld with MPI_SEEK_SET", (long long)offset);
    if (all[0] != ~all[1] || all[2] != ~all[3])
        return bmpi_err_file_obj(f, MPI_ERR_ARG, fn,
                                 "offset %lld and whence %s are not the same on every rank of %s", (long long)offset,
                                 whence_name(whence), f->path);
    if (all[4])
        return bmpi_err_file_obj(f, MPI_ERR_ARG, fn, "another rank gave an invalid offset or whence");
    return MPI_SUCCESS;
}

BMPI_API(MPI_File_seek_shared)
int PMPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence)
{
    static const char fn[] = "MPI_File_seek_shared";
    struct bmpi_file *f;
    int err = bmpi_file_check(fh, fn, &f);
    if (err)
        return err;
    if (f->amode & MPI_MODE_SEQUENTIAL)
        return bmpi_err_file_obj(f, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                                 "%s was opened with MPI_MODE_SEQUENTIAL, which has no position to seek", f->path);
    err = seek_agree(f, fn, offset, whence);
    if (err)
        return err;
    /* the new position, or the error class of the holder's failure */
    MPI_Offset result[2] = {0, 0};
    if (f->rank == HOLDER) {
        err = seek_store(f, offset, whence, &result[0]);
        result[1] = err;
    }
    if (f->size > 1) {
        int rc = PMPI_Bcast(result, 2, MPI_OFFSET, HOLDER, f->comm);
        if (rc != MPI_SUCCESS)
            return bmpi_err_file_obj(f, mpi_status(f, rc), fn, NULL);
    }
    if (f->rank == HOLDER && err)
        return bmpi_err_file_obj(f, err, fn, NULL);
    if (result[1])
        return bmpi_err_file_obj(f, (int)result[1], fn, "rank %d could not seek to offset %lld with %s in %s",
                                 HOLDER, (long long)offset, whence_name(whence), f->path);
    return MPI_SUCCESS;
}

BMPI_API(MPI_File_get_position_shared)
int PMPI_File_get_position_shared(MPI_File fh, MPI_Offset *offset)
{
    static const char fn[] = "MPI_File_get_position_shared";
    struct bmpi_file *f;
    int err = bmpi_file_check(fh, fn, &f);
    if (err)
        return err;
    if (!offset)
        return bmpi_err_file_obj(f, MPI_ERR_ARG, fn, "offset is NULL");
    if (f->amode & MPI_MODE_SEQUENTIAL)
        return bmpi_err_file_obj(f, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                                 "%s was opened with MPI_MODE_SEQUENTIAL, which has no position", f->path);
    err = pointer_op(f, MPI_NO_OP, 0, offset);
    return err ? bmpi_err_file_obj(f, err, fn, NULL) : MPI_SUCCESS;
}

int bmpi_io_shared_position(struct bmpi_file *f, MPI_Offset *etypes)
{
    int rc = PMPI_Barrier(f->comm);
    if (rc != MPI_SUCCESS)
        return mpi_status(f, rc);
    return pointer_op(f, MPI_NO_OP, 0, etypes);
}

/* ---- independent access ------------------------------------------------------ */

static int shared_access(MPI_File fh, const char *fn, enum bmpi_io_dir dir, const void *buf, MPI_Count count,
                         MPI_Datatype datatype, MPI_Status *status)
{
    struct bmpi_file *f;
    struct bmpi_io_access a;
    int err = bmpi_file_check(fh, fn, &f);
    if (err)
        return err;
    if (!status)
        return bmpi_err_file_obj(f, MPI_ERR_ARG, fn, "status is NULL");
    err = bmpi_io_access_check(f, fn, dir, NULL, buf, count, datatype, &a);
    if (err)
        return err;
    MPI_Offset at;
    size_t done = 0;
    err = claim(f, etypes(f, &a), &at);
    if (!err)
        err = bmpi_io_independent(f, &a, at, &done);
    if (err)
        return bmpi_err_file_obj(f, err, fn, NULL);
    MPI_Status st;
    bmpi_io_status(&st, &a, done);
    bmpi_status_out(status, &st);
    return MPI_SUCCESS;
}

static int shared_start(MPI_File fh, const char *fn, enum bmpi_io_dir dir, const void *buf, MPI_Count count,
                        MPI_Datatype datatype, MPI_Request *request)
{
    struct bmpi_file *f;
    struct bmpi_io_access a;
    int err = bmpi_file_check(fh, fn, &f);
    if (err)
        return err;
    if (!request)
        return bmpi_err_file_obj(f, MPI_ERR_ARG, fn, "request is NULL");
    err = bmpi_io_access_check(f, fn, dir, NULL, buf, count, datatype, &a);
    if (err)
        return err;
    MPI_Offset at;
    struct bmpi_request *req;
    err = claim(f, etypes(f, &a), &at);
    if (!err)
        err = bmpi_io_nonblocking_start(f, &a, at, &req);
    if (err)
        return bmpi_err_file_obj(f, err, fn, NULL);
    *request = bmpi_request_handle(req);
    return MPI_SUCCESS;
}

BMPI_API(MPI_File_read_shared)
int PMPI_File_read_shared(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    return shared_access(fh, "MPI_File_read_shared", BMPI_IO_READ, buf, count, datatype, status);
}

BMPI_API(MPI_File_read_shared_c)
int PMPI_File_read_shared_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status)
{
    return shared_access(fh, "MPI_File_read_shared_c", BMPI_IO_READ, buf, count, datatype, status);
}

BMPI_API(MPI_File_write_shared)
int PMPI_File_write_shared(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    return shared_access(fh, "MPI_File_write_shared", BMPI_IO_WRITE, buf, count, datatype, status);
}

BMPI_API(MPI_File_write_shared_c)
int PMPI_File_write_shared_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                             MPI_Status *status)
{
    return shared_access(fh, "MPI_File_write_shared_c", BMPI_IO_WRITE, buf, count, datatype, status);
}

BMPI_API(MPI_File_iread_shared)
int PMPI_File_iread_shared(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
    return shared_start(fh, "MPI_File_iread_shared", BMPI_IO_READ, buf, count, datatype, request);
}

BMPI_API(MPI_File_iread_shared_c)
int PMPI_File_iread_shared_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request)
{
    return shared_start(fh, "MPI_File_iread_shared_c", BMPI_IO_READ, buf, count, datatype, request);
}

BMPI_API(MPI_File_iwrite_shared)
int PMPI_File_iwrite_shared(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
    return shared_start(fh, "MPI_File_iwrite_shared", BMPI_IO_WRITE, buf, count, datatype, request);
}

BMPI_API(MPI_File_iwrite_shared_c)
int PMPI_File_iwrite_shared_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                              MPI_Request *request)
{
    return shared_start(fh, "MPI_File_iwrite_shared_c", BMPI_IO_WRITE, buf, count, datatype, request);
}

/* ---- ordered access ---------------------------------------------------------- */

/* Collective: where this rank's n etypes go in rank order, the pointer
 * moved past all ranks' parts. */
static int ordered_place(const struct bmpi_file *f, MPI_Offset n, MPI_Offset *at)
{
    MPI_Offset upto; /* etypes of ranks 0 .. this one */
    int rc = PMPI_Scan(&n, &upto, 1, MPI_OFFSET, MPI_SUM, f->comm);
    if (rc != MPI_SUCCESS)
        return mpi_status(f, rc);
    /* where the whole range starts, and the error class of taking it */
    MPI_Offset start[2] = {0, 0};
    int err = BMPI_OK;
    const int last = f->size - 1;
    if (f->rank == last) {
        err = claim(f, upto, &start[0]);
        start[1] = err;
    }
    if (f->size > 1) {
        rc = PMPI_Bcast(start, 2, MPI_OFFSET, last, f->comm);
        if (rc != MPI_SUCCESS)
            return mpi_status(f, rc);
    }
    if (f->rank == last && err)
        return err;
    if (start[1])
        return bmpi_err_set((int)start[1], "rank %d could not move the shared file pointer of %s", last, f->path);
    *at = start[0] + upto - n;
    return BMPI_OK;
}

/* Collective: start an ordered access; *req completes with this rank's part. */
static int ordered_start(struct bmpi_file *f, const char *fn, enum bmpi_io_dir dir, const void *buf,
                         MPI_Count count, MPI_Datatype datatype, struct bmpi_request **req)
{
    struct bmpi_io_access a;
    int err = bmpi_io_access_check(f, fn, dir, NULL, buf, count, datatype, &a);
    if (err)
        return err;
    MPI_Offset at = 0;
    err = ordered_place(f, etypes(f, &a), &at);
    if (!err)
        err = bmpi_io_coll_start(f, &a, at, req);
    return err ? bmpi_err_file_obj(f, err, fn, NULL) : MPI_SUCCESS;
}

/* Wait for an ordered access and report its end like a blocking call. */
static int ordered_wait(struct bmpi_file *f, const char *fn, struct bmpi_request *req, MPI_Status *status)
{
    MPI_Status st;
    int err = bmpi_request_wait(req, &st);
    if (err)
        return bmpi_err_file_obj(f, err, fn, NULL);
    bmpi_status_out(status, &st);
    return MPI_SUCCESS;
}

static int ordered_access(MPI_File fh, const char *fn, enum bmpi_io_dir dir, const void *buf, MPI_Count count,
                          MPI_Datatype datatype, MPI_Status *status)
{
    struct bmpi_file *f;
    struct bmpi_request *req;
    int err = bmpi_file_check(fh, fn, &f);
    if (err)
        return err;
    if (!status)
        return bmpi_err_file_obj(f, MPI_ERR_ARG, fn, "status is NULL");
    err = ordered_start(f, fn, dir, buf, count, datatype, &req);
    return err ? err : ordered_wait(f, fn, req, status);
}

/* The split forms follow coll.c's rules for every split collective: one
 * at a time per file, an end only for the begin of its kind
 * (MPI_ERR_OTHER; MPICH's ROMIO answers MPI_ERR_IO), with the begin's
 * buffer (MPI_ERR_BUFFER). */
static int ordered_begin(MPI_File fh, const char *fn, enum bmpi_io_dir dir, const void *buf, MPI_Count count,
                         MPI_Datatype datatype)
{
    struct bmpi_file *f;
    int err = bmpi_file_check(fh, fn, &f);
    if (err)
        return err;
    if (f->split || f->shared->split)
        return bmpi_err_file_obj(f, MPI_ERR_OTHER, fn, "a split collective is already active on %s", f->path);
    struct bmpi_request *req;
    err = ordered_start(f, fn, dir, buf, count, datatype, &req);
    if (err)
        return err;
    f->shared->split = req;
    f->shared->split_dir = dir;
    f->shared->split_buf = buf;
    return MPI_SUCCESS;
}

static int ordered_end(MPI_File fh, const char *fn, enum bmpi_io_dir dir, const void *buf, MPI_Status *status)
{
    struct bmpi_file *f;
    int err = bmpi_file_check(fh, fn, &f);
    if (err)
        return err;
    if (!status)
        return bmpi_err_file_obj(f, MPI_ERR_ARG, fn, "status is NULL");
    struct bmpi_io_shared *s = f->shared;
    const char *begin = dir == BMPI_IO_READ ? "MPI_File_read_ordered_begin" : "MPI_File_write_ordered_begin";
    if (!s->split || s->split_dir != dir)
        return bmpi_err_file_obj(f, MPI_ERR_OTHER, fn, "no %s is active on %s", begin, f->path);
    if (buf != s->split_buf)
        return bmpi_err_file_obj(f, MPI_ERR_BUFFER, fn, "buf %p is not the buffer %p given to %s", buf,
                                 s->split_buf, begin);
    struct bmpi_request *req = s->split;
    s->split = NULL;
    return ordered_wait(f, fn, req, status);
}

BMPI_API(MPI_File_read_ordered)
int PMPI_File_read_ordered(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    return ordered_access(fh, "MPI_File_read_ordered", BMPI_IO_READ, buf, count, datatype, status);
}

BMPI_API(MPI_File_read_ordered_c)
int PMPI_File_read_ordered_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status)
{
    return ordered_access(fh, "MPI_File_read_ordered_c", BMPI_IO_READ, buf, count, datatype, status);
}

BMPI_API(MPI_File_write_ordered)
int PMPI_File_write_ordered(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    return ordered_access(fh, "MPI_File_write_ordered", BMPI_IO_WRITE, buf, count, datatype, status);
}

BMPI_API(MPI_File_write_ordered_c)
int PMPI_File_write_ordered_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                              MPI_Status *status)
{
    return ordered_access(fh, "MPI_File_write_ordered_c", BMPI_IO_WRITE, buf, count, datatype, status);
}

BMPI_API(MPI_File_read_ordered_begin)
int PMPI_File_read_ordered_begin(MPI_File fh, void *buf, int count, MPI_Datatype datatype)
{
    return ordered_begin(fh, "MPI_File_read_ordered_begin", BMPI_IO_READ, buf, count, datatype);
}

BMPI_API(MPI_File_read_ordered_begin_c)
int PMPI_File_read_ordered_begin_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype)
{
    return ordered_begin(fh, "MPI_File_read_ordered_begin_c", BMPI_IO_READ, buf, count, datatype);
}

BMPI_API(MPI_File_read_ordered_end)
int PMPI_File_read_ordered_end(MPI_File fh, void *buf, MPI_Status *status)
{
    return ordered_end(fh, "MPI_File_read_ordered_end", BMPI_IO_READ, buf, status);
}

BMPI_API(MPI_File_write_ordered_begin)
int PMPI_File_write_ordered_begin(MPI_File fh, const void *buf, int count, MPI_Datatype datatype)
{
    return ordered_begin(fh, "MPI_File_write_ordered_begin", BMPI_IO_WRITE, buf, count, datatype);
}

BMPI_API(MPI_File_write_ordered_begin_c)
int PMPI_File_write_ordered_begin_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype)
{
    return ordered_begin(fh, "MPI_File_write_ordered_begin_c", BMPI_IO_WRITE, buf, count, datatype);
}

BMPI_API(MPI_File_write_ordered_end)
int PMPI_File_write_ordered_end(MPI_File fh, const void *buf, MPI_Status *status)
{
    return ordered_end(fh, "MPI_File_write_ordered_end", BMPI_IO_WRITE, buf, status);
}
