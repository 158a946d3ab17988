/*
 * Nonblocking independent access (MPI 4.1 section 14.4.3 and 14.4.4):
 * MPI_File_iread, iwrite, iread_at, iwrite_at and their large-count forms.
 *
 * An access is a walk (walk.c, the engine of the blocking accesses too)
 * held by a pending operation (pending.c) that the progress engine
 * advances: each step moves at most BMPI_IO_NB_STEP bytes, so the request
 * moves whenever MPI progresses -- in MPI_Test and MPI_Wait, and in any
 * other call that progresses communication -- without a thread. Data
 * sieving, the locks and atomic mode (the whole access in its first step)
 * are the walk's, as for blocking access.
 *
 * The data are captured at start: the walk's map and memory side are set
 * up, the datatype is retained, a non-native write is converted, and the
 * individual file pointer moves at once by the amount requested (the
 * standard updates it when the call returns).
 *
 * Errors complete the request with the error class in status.MPI_ERROR;
 * MPI_Wait and friends then report it through the file's error handler.
 * MPI_Cancel cannot recall a file access: the request completes normally.
 */
#include "config.h"

#include <stdlib.h>

#include "io/file.h"
#include "runtime/api.h"

/* Bytes one step of an access moves: large enough for the file system to
 * stream, small enough that a step does not hold up the communication
 * progressing beside it. */
#define BMPI_IO_NB_STEP ((size_t)4 << 20)

struct nb_op {
    struct bmpi_io_op op;           /* first: pending.c's handle on it */
    struct bmpi_datatype *dt;       /* the access's datatype, retained */
    struct bmpi_io_walk walk;
};

static struct nb_op *nb_of(struct bmpi_io_op *op) { return (struct nb_op *)op; }

static int nb_advance(struct bmpi_io_op *op)
{
    struct nb_op *nb = nb_of(op);
    int rc = bmpi_io_walk_step(&nb->walk, BMPI_IO_NB_STEP);
    if (rc || bmpi_io_walk_done(&nb->walk))
        bmpi_io_op_finish(op, rc, &nb->walk.a, nb->walk.done);
    return 1;
}

static void nb_destroy(struct bmpi_io_op *op)
{
    struct nb_op *nb = nb_of(op);
    bmpi_io_walk_release(&nb->walk);
    bmpi_dt_release(nb->dt);
    free(nb);
}

int bmpi_io_nonblocking_start(struct bmpi_file *f, const struct bmpi_io_access *a, MPI_Offset offset,
                              struct bmpi_request **req)
{
    struct nb_op *nb = calloc(1, sizeof(*nb));
    if (!nb)
        return bmpi_err_set(MPI_ERR_NO_MEM, "no memory for a nonblocking file access");
    nb->op.file = f;
    nb->op.advance = nb_advance;
    nb->op.destroy = nb_destroy;
    nb->dt = a->dt;
    bmpi_dt_retain(a->dt);
    int rc = bmpi_io_walk_init(&nb->walk, f, a, offset);
    if (!rc && !bmpi_io_request_new(&nb->op))
        rc = bmpi_err_set(MPI_ERR_NO_MEM, "no memory for a request");
    if (rc) {
        nb_destroy(&nb->op);
        return rc;
    }
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
