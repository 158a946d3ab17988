/*
 * Request objects: a free list so the message path does not call malloc,
 * and handles given out only when a request reaches the user.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/comm.h"
#include "runtime/handle.h"
#include "runtime/progress.h"
#include "runtime/request.h"

static struct {
    struct bmpi_request *free_list;
    struct bmpi_handle_table table;
} requests = {.table = {.type = BMPI_OBJ_REQUEST}};

struct bmpi_request *bmpi_request_new(enum bmpi_req_kind kind)
{
    struct bmpi_request *req = requests.free_list;
    if (req)
        requests.free_list = req->next;
    else if (!(req = malloc(sizeof(*req))))
        return NULL;
    memset(req, 0, offsetof(struct bmpi_request, rkey));
    req->kind = kind;
    req->handle = MPI_REQUEST_NULL;
    req->type = MPI_DATATYPE_NULL;
    bmpi_status_empty(&req->status);
    return req;
}

void bmpi_request_free(struct bmpi_request *req)
{
    if (req->handle != MPI_REQUEST_NULL)
        bmpi_handle_release(&requests.table, req->handle);
    if (req->dt)
        bmpi_dt_release(req->dt);
    if (req->comm)
        bmpi_comm_release(req->comm);
    free(req->bounce);
    req->next = requests.free_list;
    requests.free_list = req;
}

MPI_Request bmpi_request_handle(struct bmpi_request *req)
{
    if (req->handle == MPI_REQUEST_NULL)
        req->handle = bmpi_handle_new(&requests.table, req);
    return req->handle ? req->handle : MPI_REQUEST_NULL;
}

struct bmpi_request *bmpi_request_get(MPI_Request handle)
{
    return bmpi_handle_get(&requests.table, handle);
}

void bmpi_request_complete(struct bmpi_request *req)
{
    req->complete = true;
    if (req->on_complete)
        req->on_complete(req);
    if (req->user_freed && !req->persistent)
        bmpi_request_free(req);
}

int bmpi_request_wait(struct bmpi_request *req, MPI_Status *status)
{
    bmpi_progress_wait(&req->complete);
    int err = req->status.MPI_ERROR;
    if (status != MPI_STATUS_IGNORE)
        *status = req->status;
    if (!req->persistent)
        bmpi_request_free(req);
    return err;
}

void bmpi_request_finalize(void)
{
    while (requests.free_list) {
        struct bmpi_request *req = requests.free_list;
        requests.free_list = req->next;
        free(req);
    }
    bmpi_handle_table_free(&requests.table);
}

void bmpi_status_set(MPI_Status *st, int source, int tag, int error, size_t bytes)
{
    st->MPI_SOURCE = source;
    st->MPI_TAG = tag;
    st->MPI_ERROR = error;
    st->count_lo = (int)(bytes & 0xffffffffu);
    st->count_hi_and_cancelled = (int)((bytes >> 32) << 1);
}

void bmpi_status_empty(MPI_Status *st)
{
    bmpi_status_set(st, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0);
}

void bmpi_status_out(MPI_Status *out, const MPI_Status *st)
{
    if (out == MPI_STATUS_IGNORE)
        return;
    int user_error = out->MPI_ERROR;
    *out = *st;
    out->MPI_ERROR = user_error;
}

/* A part's result into its whole: its error if whole has none yet, and
 * with take_status the rest of its status too. */
static void absorb(struct bmpi_request *whole, const struct bmpi_request *part, bool take_status)
{
    int err = whole->status.MPI_ERROR;
    if (take_status)
        whole->status = part->status;
    whole->status.MPI_ERROR = err ? err : part->status.MPI_ERROR;
}

static void part_done(struct bmpi_request *part)
{
    struct bmpi_request *whole = part->ctx;
    absorb(whole, part, part->status_to_whole);
    if (--whole->pending_ops == 0)
        bmpi_request_complete(whole);
}

void bmpi_request_adopt(struct bmpi_request *whole, struct bmpi_request *part, bool take_status)
{
    if (part->complete) {
        absorb(whole, part, take_status);
        bmpi_request_free(part);
        return;
    }
    whole->pending_ops++;
    part->ctx = whole;
    part->on_complete = part_done;
    part->status_to_whole = take_status;
    part->user_freed = true; /* frees itself when done */
}

void bmpi_request_part_done_all(struct bmpi_request *whole)
{
    if (--whole->pending_ops == 0)
        bmpi_request_complete(whole);
}
