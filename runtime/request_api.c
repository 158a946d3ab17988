/*
 * Completion entry points: the Wait and Test families, MPI_Request_free,
 * MPI_Request_get_status, MPI_Cancel and MPI_Test_cancelled.
 */
#include "config.h"

#include <stdlib.h>

#include "collectives/coll.h"
#include "io/io.h"
#include "runtime/api.h"
#include "runtime/p2p.h"
#include "runtime/progress.h"
#include "runtime/world.h"

/* The live request behind h (a message handle of MPI_Mprobe is none), or
 * NULL: the handle table checks its kind and type bits, its index and that
 * the slot is not free, so any int is safe to look up. */
static struct bmpi_request *valid_request(MPI_Request h)
{
    struct bmpi_request *req = bmpi_request_get(h);
    return req && !req->probe_only ? req : NULL;
}

/* A handle, at index i of an array of requests (i < 0: a single one): NULL
 * handles and inactive persistent requests take part as "nothing to wait
 * for". */
static int lookup_at(MPI_Request h, int i, const char *fn, struct bmpi_request **req)
{
    *req = NULL;
    if (h == MPI_REQUEST_NULL)
        return MPI_SUCCESS;
    if (!(*req = valid_request(h)))
        return i < 0 ? bmpi_err_noobj(MPI_ERR_REQUEST, fn, "invalid request 0x%x", (unsigned)h)
                     : bmpi_err_noobj(MPI_ERR_REQUEST, fn, "array_of_requests[%d] = 0x%x is not a valid request",
                                      i, (unsigned)h);
    if ((*req)->persistent && !(*req)->active)
        *req = NULL;
    return MPI_SUCCESS;
}

static int lookup(MPI_Request h, const char *fn, struct bmpi_request **req)
{
    return lookup_at(h, -1, fn, req);
}

static int lookup_all(int count, MPI_Request reqs[], const char *fn, struct bmpi_request **objs)
{
    if (count < 0)
        return bmpi_err_noobj(MPI_ERR_COUNT, fn, "negative count %d", count);
    if (count > 0 && !reqs)
        return bmpi_err_noobj(MPI_ERR_ARG, fn, "array_of_requests is NULL");
    for (int i = 0; i < count; i++) {
        int err = lookup_at(reqs[i], i, fn, &objs[i]);
        if (err)
            return err;
    }
    return MPI_SUCCESS;
}

/* A completed generalized request's status comes from the user's
 * query_fn, asked each time the status is read (MPI_Cancel may have
 * changed it since MPI_Grequest_complete); its return code is the error. */
static void settle(struct bmpi_request *req)
{
    if (req->kind != BMPI_REQ_GREQ || !req->complete)
        return;
    bmpi_status_empty(&req->status);
    int err = req->gq(req->gstate, &req->status);
    if (err)
        req->status.MPI_ERROR = err;
}

/* Free a request; a generalized one calls the user's free_fn first and
 * returns its code. */
static int release_request(struct bmpi_request *req)
{
    int err = req->kind == BMPI_REQ_GREQ ? req->gf(req->gstate) : MPI_SUCCESS;
    bmpi_request_free(req);
    return err;
}

/* Hand a completed request's result to the user: status out, and
 * non-persistent requests freed and their handle nulled. Returns the
 * operation's error class. */
static int retire(struct bmpi_request *req, MPI_Request *handle, MPI_Status *status)
{
    settle(req);
    int err = req->status.MPI_ERROR;
    if (status != MPI_STATUS_IGNORE)
        *status = req->status;
    if (req->persistent) {
        req->active = false;
    } else {
        int free_err = release_request(req);
        if (!err)
            err = free_err;
        *handle = MPI_REQUEST_NULL;
    }
    return err;
}

/* The file a file request accessed: its errors go to the file's handler. */
static MPI_File io_file(const struct bmpi_request *req)
{
    return req->kind == BMPI_REQ_IO ? (MPI_File)req->ctx : MPI_FILE_NULL;
}

static int report(struct bmpi_comm *comm, MPI_File file, const char *fn, const MPI_Status *st, int err)
{
    if (file != MPI_FILE_NULL)
        return bmpi_io_report(file, err, fn);
    if (comm)
        return bmpi_report_status(comm, fn, st);
    return bmpi_err_noobj(err, fn, NULL);
}

/* The empty status of a null or inactive request, for a single-completion
 * call. */
static void empty_out(MPI_Status *status)
{
    MPI_Status st;
    bmpi_status_empty(&st);
    bmpi_status_out(status, &st);
}

static int retire_reporting(struct bmpi_request *req, MPI_Request *handle, MPI_Status *status,
                            const char *fn)
{
    struct bmpi_comm *comm = req->comm;
    MPI_File file = io_file(req);
    if (comm)
        comm->refcount++; /* outlives the request for the report */
    MPI_Status st;
    int err = retire(req, handle, &st);
    bmpi_status_out(status, &st);
    if (err)
        err = report(comm, file, fn, &st, err);
    if (comm)
        bmpi_comm_release(comm);
    return err;
}

BMPI_API(MPI_Wait)
int PMPI_Wait(MPI_Request *request, MPI_Status *status)
{
    if (!request)
        return bmpi_err_noobj(MPI_ERR_REQUEST, "MPI_Wait", "request is NULL");
    struct bmpi_request *req;
    int err = lookup(*request, "MPI_Wait", &req);
    if (err)
        return err;
    if (!req) {
        empty_out(status);
        return MPI_SUCCESS;
    }
    bmpi_progress_wait(&req->complete);
    return retire_reporting(req, request, status, "MPI_Wait");
}

BMPI_API(MPI_Test)
int PMPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    if (!request || !flag)
        return bmpi_err_noobj(MPI_ERR_ARG, "MPI_Test", "%s is NULL", request ? "flag" : "request");
    struct bmpi_request *req;
    int err = lookup(*request, "MPI_Test", &req);
    if (err)
        return err;
    if (!req) {
        *flag = 1;
        empty_out(status);
        return MPI_SUCCESS;
    }
    if (!req->complete)
        bmpi_progress_poll();
    *flag = req->complete;
    return *flag ? retire_reporting(req, request, status, "MPI_Test") : MPI_SUCCESS;
}

/* The first failed operation of an array, reported through its
 * communicator's handler once the array is retired: the error class of
 * the multiple-completion calls is then MPI_ERR_IN_STATUS. */
struct first_failure {
    struct bmpi_comm *comm;
    MPI_File file;
    MPI_Status status;
    bool failed;
};

static void note_failure(struct first_failure *f, struct bmpi_request *req)
{
    settle(req);
    if (req->status.MPI_ERROR == MPI_SUCCESS || f->failed)
        return;
    f->failed = true;
    f->comm = req->comm;
    f->file = io_file(req);
    f->status = req->status;
    if (f->comm)
        f->comm->refcount++; /* the request may go before the report */
}

static int report_failure(struct first_failure *f, const char *fn)
{
    if (!f->failed)
        return MPI_SUCCESS;
    int err = report(f->comm, f->file, fn, &f->status, f->status.MPI_ERROR);
    if (f->comm)
        bmpi_comm_release(f->comm);
    return err ? MPI_ERR_IN_STATUS : MPI_SUCCESS;
}

/* Retire every request of the array (MPI_Waitall, MPI_Testall). */
static int retire_all(int count, MPI_Request reqs[], struct bmpi_request **objs, MPI_Status statuses[],
                      const char *fn)
{
    struct first_failure failure = {0};
    for (int i = 0; i < count; i++) {
        MPI_Status st;
        if (!objs[i]) {
            bmpi_status_empty(&st);
        } else {
            note_failure(&failure, objs[i]);
            retire(objs[i], &reqs[i], &st);
        }
        if (statuses != MPI_STATUSES_IGNORE)
            statuses[i] = st;
    }
    return report_failure(&failure, fn);
}

static struct bmpi_request **scratch(int count)
{
    return malloc((size_t)(count > 0 ? count : 1) * sizeof(struct bmpi_request *));
}

BMPI_API(MPI_Waitall)
int PMPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[])
{
    struct bmpi_request *small[16], **objs = count <= 16 ? small : scratch(count);
    if (!objs)
        return bmpi_err_noobj(MPI_ERR_NO_MEM, "MPI_Waitall", "out of memory");
    int err = lookup_all(count, array_of_requests, "MPI_Waitall", objs);
    if (!err) {
        for (int i = 0; i < count; i++)
            if (objs[i])
                bmpi_progress_wait(&objs[i]->complete);
        err = retire_all(count, array_of_requests, objs, array_of_statuses, "MPI_Waitall");
    }
    if (objs != small)
        free(objs);
    return err;
}

/* Every request of the array that takes part has completed. */
static bool all_complete(int count, struct bmpi_request **objs)
{
    for (int i = 0; i < count; i++)
        if (objs[i] && !objs[i]->complete)
            return false;
    return true;
}

BMPI_API(MPI_Testall)
int PMPI_Testall(int count, MPI_Request array_of_requests[], int *flag, MPI_Status array_of_statuses[])
{
    if (!flag)
        return bmpi_err_noobj(MPI_ERR_ARG, "MPI_Testall", "flag is NULL");
    struct bmpi_request *small[16], **objs = count <= 16 ? small : scratch(count);
    if (!objs)
        return bmpi_err_noobj(MPI_ERR_NO_MEM, "MPI_Testall", "out of memory");
    int err = lookup_all(count, array_of_requests, "MPI_Testall", objs);
    if (!err) {
        *flag = all_complete(count, objs);
        if (!*flag) {
            bmpi_progress_poll();
            *flag = all_complete(count, objs);
        }
        if (*flag)
            err = retire_all(count, array_of_requests, objs, array_of_statuses, "MPI_Testall");
    }
    if (objs != small)
        free(objs);
    return err;
}

/* Index of the first completed request, -1 if none; *active counts the
 * requests that take part. */
static int first_complete(int count, MPI_Request reqs[], const char *fn, int *active, int *err)
{
    *active = 0;
    int found = -1;
    for (int i = 0; i < count; i++) {
        struct bmpi_request *req;
        if ((*err = lookup_at(reqs[i], i, fn, &req)))
            return -1;
        if (!req)
            continue;
        (*active)++;
        if (req->complete && found < 0)
            found = i;
    }
    return found;
}

static int any(int count, MPI_Request reqs[], int *index, int *flag, MPI_Status *status, bool block,
               const char *fn)
{
    if (count < 0 || (count > 0 && !reqs) || !index)
        return bmpi_err_noobj(count < 0 ? MPI_ERR_COUNT : MPI_ERR_ARG, fn,
                              count < 0 ? "negative count" : "NULL array or index");
    unsigned idle = 0;
    for (;;) {
        int active, err = MPI_SUCCESS;
        int i = first_complete(count, reqs, fn, &active, &err);
        if (err)
            return err;
        if (i >= 0) {
            *index = i;
            if (flag)
                *flag = 1;
            return retire_reporting(bmpi_request_get(reqs[i]), &reqs[i], status, fn);
        }
        if (active == 0 || !block) {
            *index = MPI_UNDEFINED;
            if (flag)
                *flag = active == 0;
            if (active == 0)
                empty_out(status);
            if (!block && active > 0 && idle++ == 0) {
                bmpi_progress_poll();
                continue;
            }
            return MPI_SUCCESS;
        }
        if (!bmpi_progress())
            bmpi_progress_idle(&idle);
    }
}

BMPI_API(MPI_Waitany)
int PMPI_Waitany(int count, MPI_Request array_of_requests[], int *index, MPI_Status *status)
{
    return any(count, array_of_requests, index, NULL, status, true, "MPI_Waitany");
}

BMPI_API(MPI_Testany)
int PMPI_Testany(int count, MPI_Request array_of_requests[], int *index, int *flag, MPI_Status *status)
{
    if (!flag)
        return bmpi_err_noobj(MPI_ERR_ARG, "MPI_Testany", "flag is NULL");
    return any(count, array_of_requests, index, flag, status, false, "MPI_Testany");
}

static int some(int incount, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[],
                bool block, const char *fn)
{
    if (incount < 0 || (incount > 0 && (!reqs || !indices)) || !outcount)
        return bmpi_err_noobj(incount < 0 ? MPI_ERR_COUNT : MPI_ERR_ARG, fn,
                              incount < 0 ? "negative count" : "NULL array or outcount");
    unsigned idle = 0;
    bool progressed = false;
    for (;;) {
        int active, err = MPI_SUCCESS;
        int first = first_complete(incount, reqs, fn, &active, &err);
        if (err)
            return err;
        if (active == 0) {
            *outcount = MPI_UNDEFINED;
            return MPI_SUCCESS;
        }
        if (first >= 0)
            break;
        if (!block && progressed) {
            *outcount = 0;
            return MPI_SUCCESS;
        }
        progressed = true;
        if (!block)
            bmpi_progress_poll();
        else if (!bmpi_progress())
            bmpi_progress_idle(&idle);
    }
    int n = 0;
    struct first_failure failure = {0};
    for (int i = 0; i < incount; i++) {
        struct bmpi_request *req = bmpi_request_get(reqs[i]);
        if (reqs[i] == MPI_REQUEST_NULL || !req || !req->complete || (req->persistent && !req->active))
            continue;
        note_failure(&failure, req);
        MPI_Status st;
        retire(req, &reqs[i], &st);
        if (statuses != MPI_STATUSES_IGNORE)
            statuses[n] = st;
        indices[n++] = i;
    }
    *outcount = n;
    return report_failure(&failure, fn);
}

BMPI_API(MPI_Waitsome)
int PMPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
                  MPI_Status array_of_statuses[])
{
    return some(incount, array_of_requests, outcount, array_of_indices, array_of_statuses, true,
                "MPI_Waitsome");
}

BMPI_API(MPI_Testsome)
int PMPI_Testsome(int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
                  MPI_Status array_of_statuses[])
{
    return some(incount, array_of_requests, outcount, array_of_indices, array_of_statuses, false,
                "MPI_Testsome");
}

/* The status of a completed request without retiring it (req NULL: the
 * empty status of a null or inactive request). */
static void peek_status(struct bmpi_request *req, MPI_Status *status)
{
    if (!req) {
        bmpi_status_empty(status);
        return;
    }
    settle(req);
    *status = req->status;
}

/* peek_status for the single-status calls (MPI_ERROR left alone). */
static void peek_status_out(struct bmpi_request *req, MPI_Status *status)
{
    MPI_Status st;
    peek_status(req, &st);
    bmpi_status_out(status, &st);
}

BMPI_API(MPI_Request_get_status)
int PMPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    if (!flag)
        return bmpi_err_noobj(MPI_ERR_ARG, "MPI_Request_get_status", "flag is NULL");
    struct bmpi_request *req;
    int err = lookup(request, "MPI_Request_get_status", &req);
    if (err)
        return err;
    if (req && !req->complete)
        bmpi_progress_poll();
    *flag = !req || req->complete;
    if (*flag)
        peek_status_out(req, status);
    return MPI_SUCCESS;
}

BMPI_API(MPI_Request_get_status_any)
int PMPI_Request_get_status_any(int count, const MPI_Request array_of_requests[], int *index,
                                int *flag, MPI_Status *status)
{
    const char *fn = "MPI_Request_get_status_any";
    if (count < 0 || (count > 0 && !array_of_requests) || !index || !flag)
        return bmpi_err_noobj(count < 0 ? MPI_ERR_COUNT : MPI_ERR_ARG, fn,
                              count < 0 ? "negative count" : "NULL array, index or flag");
    bmpi_progress_poll();
    int active, err = MPI_SUCCESS;
    int i = first_complete(count, (MPI_Request *)array_of_requests, fn, &active, &err);
    if (err)
        return err;
    *index = i >= 0 ? i : MPI_UNDEFINED;
    *flag = i >= 0 || active == 0;
    if (*flag)
        peek_status_out(i >= 0 ? bmpi_request_get(array_of_requests[i]) : NULL, status);
    return MPI_SUCCESS;
}

BMPI_API(MPI_Request_get_status_all)
int PMPI_Request_get_status_all(int count, const MPI_Request array_of_requests[], int *flag,
                                MPI_Status array_of_statuses[])
{
    const char *fn = "MPI_Request_get_status_all";
    if (!flag)
        return bmpi_err_noobj(MPI_ERR_ARG, fn, "flag is NULL");
    struct bmpi_request *small[16], **objs = count <= 16 ? small : scratch(count);
    if (!objs)
        return bmpi_err_noobj(MPI_ERR_NO_MEM, fn, "out of memory");
    int err = lookup_all(count, (MPI_Request *)array_of_requests, fn, objs);
    if (!err) {
        bmpi_progress_poll();
        *flag = all_complete(count, objs);
        for (int i = 0; *flag && array_of_statuses != MPI_STATUSES_IGNORE && i < count; i++)
            peek_status(objs[i], &array_of_statuses[i]);
    }
    if (objs != small)
        free(objs);
    return err;
}

BMPI_API(MPI_Request_get_status_some)
int PMPI_Request_get_status_some(int incount, const MPI_Request array_of_requests[], int *outcount,
                                 int array_of_indices[], MPI_Status array_of_statuses[])
{
    const char *fn = "MPI_Request_get_status_some";
    if (incount < 0 || (incount > 0 && (!array_of_requests || !array_of_indices)) || !outcount)
        return bmpi_err_noobj(incount < 0 ? MPI_ERR_COUNT : MPI_ERR_ARG, fn,
                              incount < 0 ? "negative count" : "NULL array or outcount");
    bmpi_progress_poll();
    int n = 0, active = 0;
    for (int i = 0; i < incount; i++) {
        struct bmpi_request *req;
        int err = lookup_at(array_of_requests[i], i, fn, &req);
        if (err)
            return err;
        if (!req)
            continue;
        active++;
        if (!req->complete)
            continue;
        if (array_of_statuses != MPI_STATUSES_IGNORE)
            peek_status(req, &array_of_statuses[n]);
        array_of_indices[n++] = i;
    }
    *outcount = active ? n : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Request_free)
int PMPI_Request_free(MPI_Request *request)
{
    if (!request)
        return bmpi_err_noobj(MPI_ERR_REQUEST, "MPI_Request_free", "request is NULL");
    struct bmpi_request *req = valid_request(*request);
    if (!req)
        return bmpi_err_noobj(MPI_ERR_REQUEST, "MPI_Request_free", "invalid request 0x%x", (unsigned)*request);
    *request = MPI_REQUEST_NULL;
    bool idle = req->complete || (req->persistent && !req->active);
    if (idle && req->kind == BMPI_REQ_COLL && req->persistent)
        bmpi_coll_persistent_free(req);
    if (idle) {
        int err = release_request(req);
        return err ? bmpi_err_noobj(err, "MPI_Request_free", "the free function of a "
                                    "generalized request returned %d", err) : MPI_SUCCESS;
    }
    /* freed when it completes */
    req->persistent = false;
    req->user_freed = true;
    return MPI_SUCCESS;
}

/* Receives that have not matched are cancelled; a send, once started,
 * cannot be recalled in bmpi and completes normally (MPI 4.1 deprecates
 * cancelling sends; MPI_Test_cancelled then reports false), and so does a
 * file access (kind BMPI_REQ_IO, io/). */
BMPI_API(MPI_Cancel)
int PMPI_Cancel(MPI_Request *request)
{
    struct bmpi_request *req;
    if (!request)
        return bmpi_err_noobj(MPI_ERR_REQUEST, "MPI_Cancel", "request is NULL");
    int err = lookup(*request, "MPI_Cancel", &req);
    if (err)
        return err;
    if (!req)
        return bmpi_err_noobj(MPI_ERR_REQUEST, "MPI_Cancel", "request 0x%x is null or inactive",
                              (unsigned)*request);
    if (req->kind == BMPI_REQ_RECV)
        bmpi_recv_cancel(req);
    if (req->kind == BMPI_REQ_GREQ) {
        err = req->gc(req->gstate, req->complete);
        if (err)
            return bmpi_err_noobj(err, "MPI_Cancel",
                                  "the cancel function of a generalized request returned %d", err);
    }
    return MPI_SUCCESS;
}

/* --- generalized requests --------------------------------------------------
 * The user's operation completes when it calls MPI_Grequest_complete;
 * query_fn fills the status when it is read, free_fn runs when the request
 * is freed (after completion, also for MPI_Request_free before it), and
 * cancel_fn on MPI_Cancel. */

BMPI_API(MPI_Grequest_start)
int PMPI_Grequest_start(MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn,
                        MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
                        MPI_Request *request)
{
    const char *fn = "MPI_Grequest_start";
    if (!query_fn || !free_fn || !cancel_fn || !request)
        return bmpi_err_noobj(MPI_ERR_ARG, fn, "%s is NULL",
                              !query_fn ? "query_fn" : !free_fn ? "free_fn"
                              : !cancel_fn ? "cancel_fn" : "request");
    struct bmpi_request *req = bmpi_request_new(BMPI_REQ_GREQ);
    if (!req)
        return bmpi_err_noobj(MPI_ERR_NO_MEM, fn, "out of memory");
    req->gq = query_fn;
    req->gf = free_fn;
    req->gc = cancel_fn;
    req->gstate = extra_state;
    *request = bmpi_request_handle(req);
    if (*request == MPI_REQUEST_NULL) {
        bmpi_request_free(req);
        return bmpi_err_noobj(MPI_ERR_NO_MEM, fn, "out of request handles");
    }
    return MPI_SUCCESS;
}

BMPI_API(MPI_Grequest_complete)
int PMPI_Grequest_complete(MPI_Request request)
{
    struct bmpi_request *req = bmpi_request_get(request);
    if (!req || req->kind != BMPI_REQ_GREQ || req->complete)
        return bmpi_err_noobj(MPI_ERR_REQUEST, "MPI_Grequest_complete",
                              "0x%x is not an incomplete generalized request", (unsigned)request);
    /* Freed by the user already: free_fn runs now, and the request goes
     * with bmpi_request_complete. */
    int err = req->user_freed ? req->gf(req->gstate) : MPI_SUCCESS;
    bmpi_request_complete(req);
    return err ? bmpi_err_noobj(err, "MPI_Grequest_complete",
                                "the free function of a generalized request returned %d", err)
               : MPI_SUCCESS;
}

BMPI_API(MPI_Test_cancelled)
int PMPI_Test_cancelled(const MPI_Status *status, int *flag)
{
    if (!status || !flag)
        return bmpi_err_noobj(MPI_ERR_ARG, "MPI_Test_cancelled", "%s is NULL", status ? "flag" : "status");
    *flag = status->count_hi_and_cancelled & 1;
    return MPI_SUCCESS;
}
