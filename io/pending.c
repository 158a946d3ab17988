/*
 * Pending file operations (io/file.h): a list that the progress engine
 * advances, one bounded step of each per pass, so that nonblocking and
 * split operations move while the program computes or communicates.
 */
#include "config.h"

#include <stdlib.h>

#include "io/file.h"
#include "io/io.h"

struct bmpi_io_pending {
    struct bmpi_io_op *head;
    bool advancing; /* an op's step waits on MPI calls that progress again */
};

static struct bmpi_io_pending pending;

void bmpi_io_status(MPI_Status *status, const struct bmpi_io_access *a, size_t done)
{
    if (status != MPI_STATUS_IGNORE)
        bmpi_status_set(status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, bmpi_datarep_memory_bytes(a, done));
}

struct bmpi_request *bmpi_io_request_new(struct bmpi_io_op *op)
{
    struct bmpi_request *req = bmpi_request_new(BMPI_REQ_IO);
    if (req) {
        op->req = req;
        req->ctx = op->file; /* whose error handler reports its failure */
    }
    return req;
}

int bmpi_io_report(MPI_File file, int errclass, const char *fn)
{
    return bmpi_err_file_obj(file, errclass, fn, NULL);
}

void bmpi_io_op_finish(struct bmpi_io_op *op, int err, const struct bmpi_io_access *a, size_t done)
{
    bmpi_io_status(&op->req->status, a, done);
    op->req->status.MPI_ERROR = err;
    op->done = true;
    bmpi_request_complete(op->req);
}

static void drop(struct bmpi_io_op **link)
{
    struct bmpi_io_op *op = *link;
    *link = op->next;
    if (op->file)
        op->file->pending_ops--;
    op->destroy(op);
}

void bmpi_io_op_start(struct bmpi_io_op *op)
{
    op->next = pending.head;
    pending.head = op;
    if (op->file)
        op->file->pending_ops++;
    bmpi_io_progress();
}

int bmpi_io_progress(void)
{
    if (!pending.head || pending.advancing)
        return 0;
    pending.advancing = true;
    int events = 0;
    for (struct bmpi_io_op **link = &pending.head; *link;) {
        struct bmpi_io_op *op = *link;
        if (!op->done)
            events += op->advance(op);
        if (op->done)
            drop(link);
        else
            link = &op->next;
    }
    pending.advancing = false;
    return events;
}

void bmpi_io_pending_finalize(void)
{
    while (pending.head)
        drop(&pending.head);
}
