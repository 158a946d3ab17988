/*
 * Point-to-point entry points: validate every argument, then hand over to
 * the protocol engine (runtime/p2p.c).
 */
#include "config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "collectives/coll.h"
#include "runtime/api.h"
#include "runtime/p2p.h"
#include "runtime/progress.h"
#include "runtime/world.h"

/* Tags above this are invalid (the value of the MPI_TAG_UB attribute). */
#define BMPI_TAG_UB INT_MAX

enum peer_role { TO_PEER, FROM_PEER };

struct p2p_args {
    const char *fn;
    MPI_Comm comm;
    const void *buf;
    MPI_Count count;
    MPI_Datatype type;
    int peer;
    int tag;
    enum peer_role role;
};

int bmpi_check_comm(MPI_Comm comm, const char *fn, struct bmpi_comm **c)
{
    if (!bmpi_initialized())
        return bmpi_err_comm(comm, MPI_ERR_OTHER, fn, "called before MPI_Init or after MPI_Finalize");
    *c = bmpi_comm_get(comm);
    if (!*c)
        return bmpi_err_comm(comm, MPI_ERR_COMM, fn, "invalid communicator 0x%x", (unsigned)comm);
    return MPI_SUCCESS;
}

int bmpi_check_type(MPI_Comm comm, const char *fn, MPI_Datatype type, struct bmpi_datatype **dt)
{
    if (bmpi_dt_check_usable(type, dt) != BMPI_OK)
        return bmpi_err_comm(comm, MPI_ERR_TYPE, fn, NULL);
    return MPI_SUCCESS;
}

int bmpi_check_buffer_of(MPI_Comm comm, const char *fn, const void *buf, MPI_Count count,
                         const struct bmpi_datatype *dt)
{
    if (count < 0)
        return bmpi_err_comm(comm, MPI_ERR_COUNT, fn, "negative count %lld", count);
    /* MPI_BOTTOM is NULL: valid for a type whose data starts at an
     * absolute address. As MPICH, a predefined type or one whose data
     * starts at its origin (true lower bound 0) cannot be there. */
    if (!buf && count > 0 && bmpi_dt_size(dt) > 0 &&
        (bmpi_dt_is_predefined(dt) || bmpi_dt_true_lb(dt) == 0))
        return bmpi_err_comm(comm, MPI_ERR_BUFFER, fn, "NULL buffer for %lld elements of %s", count,
                             bmpi_dt_name(dt->handle));
    return MPI_SUCCESS;
}

int bmpi_check_buffer(MPI_Comm comm, const char *fn, const void *buf, MPI_Count count,
                      MPI_Datatype type)
{
    if (count < 0) /* a bad count is reported before a bad type */
        return bmpi_err_comm(comm, MPI_ERR_COUNT, fn, "negative count %lld", count);
    struct bmpi_datatype *dt;
    int err = bmpi_check_type(comm, fn, type, &dt);
    return err ? err : bmpi_check_buffer_of(comm, fn, buf, count, dt);
}

static int check_p2p(const struct p2p_args *a, struct bmpi_comm **c)
{
    int err = bmpi_check_comm(a->comm, a->fn, c);
    if (err)
        return err;
    if ((err = bmpi_check_buffer(a->comm, a->fn, a->buf, a->count, a->type)))
        return err;
    bool wildcard_ok = a->role == FROM_PEER;
    if (a->peer != MPI_PROC_NULL && !(wildcard_ok && a->peer == MPI_ANY_SOURCE) &&
        (a->peer < 0 || a->peer >= bmpi_comm_peer_size(*c)))
        return bmpi_err_comm(a->comm, MPI_ERR_RANK, a->fn, "invalid rank %d (communicator size %d)",
                             a->peer, bmpi_comm_peer_size(*c));
    if (!(wildcard_ok && a->tag == MPI_ANY_TAG) && (a->tag < 0 || a->tag > BMPI_TAG_UB))
        return bmpi_err_comm(a->comm, MPI_ERR_TAG, a->fn, "invalid tag %d (valid: 0..%d%s)", a->tag,
                             BMPI_TAG_UB, wildcard_ok ? " or MPI_ANY_TAG" : "");
    return MPI_SUCCESS;
}

/* A nonblocking or persistent call: its arguments and the request it
 * writes (a NULL there is an error, never a blocking call). */
static int check_p2p_request(const struct p2p_args *a, struct bmpi_comm **c, MPI_Request *request)
{
    int err = check_p2p(a, c);
    if (!err && !request)
        err = bmpi_err_comm(a->comm, MPI_ERR_ARG, a->fn, "request is NULL");
    return err;
}

/* The error of a completed operation, through the communicator's handler. */
int bmpi_report_status(struct bmpi_comm *c, const char *fn, const MPI_Status *st)
{
    if (st->MPI_ERROR == MPI_ERR_TRUNCATE)
        return bmpi_err_comm(c->handle, MPI_ERR_TRUNCATE, fn,
                             "message from rank %d (tag %d) is longer than the receive buffer; "
                             "the buffer was filled and the rest discarded",
                             st->MPI_SOURCE, st->MPI_TAG);
    return bmpi_err_comm(c->handle, st->MPI_ERROR, fn, NULL);
}

/* Post the send of a (checked); errors go through the handler. */
static int post_send(const struct p2p_args *a, struct bmpi_comm *c, enum bmpi_send_mode mode,
                     struct bmpi_request **req)
{
    int err = bmpi_isend(a->buf, (size_t)a->count, a->type, a->peer, a->tag, c, c->context_id, mode, req);
    return err ? bmpi_err_comm(a->comm, err, a->fn, NULL) : MPI_SUCCESS;
}

/* The blocking sends: small standard and ready sends may go out at once,
 * without a request. */
static int send_mode(const struct p2p_args *a, enum bmpi_send_mode mode)
{
    struct bmpi_comm *c;
    int err = check_p2p(a, &c);
    if (err)
        return err;
    if (mode != BMPI_SEND_SYNC) {
        err = bmpi_send_immediate(a->buf, (size_t)a->count, a->type, a->peer, a->tag, c, c->context_id);
        if (err != BMPI_TL_EAGAIN)
            return err ? bmpi_err_comm(a->comm, err, a->fn, NULL) : MPI_SUCCESS;
    }
    struct bmpi_request *req;
    if ((err = post_send(a, c, mode, &req)))
        return err;
    MPI_Status st;
    err = bmpi_request_wait(req, &st);
    return err ? bmpi_report_status(c, a->fn, &st) : MPI_SUCCESS;
}

static int isend_mode(const struct p2p_args *a, enum bmpi_send_mode mode, MPI_Request *request)
{
    struct bmpi_comm *c;
    struct bmpi_request *req;
    int err = check_p2p_request(a, &c, request);
    if (!err && !(err = post_send(a, c, mode, &req)))
        *request = bmpi_request_handle(req);
    return err;
}

#define SEND_ARGS(name) \
    {.fn = name, .comm = comm, .buf = buf, .count = count, .type = datatype, .peer = dest, .tag = tag, .role = TO_PEER}

BMPI_API(MPI_Send)
int PMPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    struct p2p_args a = SEND_ARGS("MPI_Send");
    return send_mode(&a, BMPI_SEND_STANDARD);
}

BMPI_API(MPI_Send_c)
int PMPI_Send_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                MPI_Comm comm)
{
    struct p2p_args a = SEND_ARGS("MPI_Send_c");
    return send_mode(&a, BMPI_SEND_STANDARD);
}

BMPI_API(MPI_Ssend)
int PMPI_Ssend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    struct p2p_args a = SEND_ARGS("MPI_Ssend");
    return send_mode(&a, BMPI_SEND_SYNC);
}

BMPI_API(MPI_Ssend_c)
int PMPI_Ssend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                 MPI_Comm comm)
{
    struct p2p_args a = SEND_ARGS("MPI_Ssend_c");
    return send_mode(&a, BMPI_SEND_SYNC);
}

/* A ready send may assume the receive is posted; sending it as a standard
 * send is always correct. */
BMPI_API(MPI_Rsend)
int PMPI_Rsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    struct p2p_args a = SEND_ARGS("MPI_Rsend");
    return send_mode(&a, BMPI_SEND_READY);
}

BMPI_API(MPI_Rsend_c)
int PMPI_Rsend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                 MPI_Comm comm)
{
    struct p2p_args a = SEND_ARGS("MPI_Rsend_c");
    return send_mode(&a, BMPI_SEND_READY);
}

BMPI_API(MPI_Isend)
int PMPI_Isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request *request)
{
    struct p2p_args a = SEND_ARGS("MPI_Isend");
    return isend_mode(&a, BMPI_SEND_STANDARD, request);
}

BMPI_API(MPI_Isend_c)
int PMPI_Isend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                 MPI_Comm comm, MPI_Request *request)
{
    struct p2p_args a = SEND_ARGS("MPI_Isend_c");
    return isend_mode(&a, BMPI_SEND_STANDARD, request);
}

BMPI_API(MPI_Issend)
int PMPI_Issend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                MPI_Request *request)
{
    struct p2p_args a = SEND_ARGS("MPI_Issend");
    return isend_mode(&a, BMPI_SEND_SYNC, request);
}

BMPI_API(MPI_Issend_c)
int PMPI_Issend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                  MPI_Comm comm, MPI_Request *request)
{
    struct p2p_args a = SEND_ARGS("MPI_Issend_c");
    return isend_mode(&a, BMPI_SEND_SYNC, request);
}

BMPI_API(MPI_Irsend)
int PMPI_Irsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                MPI_Request *request)
{
    struct p2p_args a = SEND_ARGS("MPI_Irsend");
    return isend_mode(&a, BMPI_SEND_READY, request);
}

BMPI_API(MPI_Irsend_c)
int PMPI_Irsend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                  MPI_Comm comm, MPI_Request *request)
{
    struct p2p_args a = SEND_ARGS("MPI_Irsend_c");
    return isend_mode(&a, BMPI_SEND_READY, request);
}

/* Post the receive of a (checked); errors go through the handler. */
static int post_recv(const struct p2p_args *a, struct bmpi_comm *c, struct bmpi_request **req)
{
    int err = bmpi_irecv((void *)a->buf, (size_t)a->count, a->type, a->peer, a->tag, c, c->context_id, req);
    return err ? bmpi_err_comm(a->comm, err, a->fn, NULL) : MPI_SUCCESS;
}

/* Wait for a receive posted for a blocking call and report its result. */
static int finish_recv(struct bmpi_comm *c, const char *fn, struct bmpi_request *req, MPI_Status *status)
{
    MPI_Status st;
    int err = bmpi_request_wait(req, &st);
    bmpi_status_out(status, &st);
    return err ? bmpi_report_status(c, fn, &st) : MPI_SUCCESS;
}
#define RECV_ARGS(name) \
    {.fn = name, .comm = comm, .buf = buf, .count = count, .type = datatype, .peer = source, .tag = tag, .role = FROM_PEER}

static int recv(const char *fn, void *buf, MPI_Count count, MPI_Datatype datatype, int source,
                int tag, MPI_Comm comm, MPI_Status *status)
{
    struct p2p_args a = RECV_ARGS(fn);
    struct bmpi_comm *c;
    struct bmpi_request *req;
    int err = check_p2p(&a, &c);
    if (!err)
        err = post_recv(&a, c, &req);
    return err ? err : finish_recv(c, a.fn, req, status);
}

BMPI_API(MPI_Recv)
int PMPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
              MPI_Status *status)
{
    return recv("MPI_Recv", buf, count, datatype, source, tag, comm, status);
}

BMPI_API(MPI_Recv_c)
int PMPI_Recv_c(void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                MPI_Comm comm, MPI_Status *status)
{
    return recv("MPI_Recv_c", buf, count, datatype, source, tag, comm, status);
}

static int irecv(const char *fn, void *buf, MPI_Count count, MPI_Datatype datatype, int source,
                 int tag, MPI_Comm comm, MPI_Request *request)
{
    struct p2p_args a = RECV_ARGS(fn);
    struct bmpi_comm *c;
    struct bmpi_request *req;
    int err = check_p2p_request(&a, &c, request);
    if (!err && !(err = post_recv(&a, c, &req)))
        *request = bmpi_request_handle(req);
    return err;
}

BMPI_API(MPI_Irecv)
int PMPI_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
               MPI_Request *request)
{
    return irecv("MPI_Irecv", buf, count, datatype, source, tag, comm, request);
}

BMPI_API(MPI_Irecv_c)
int PMPI_Irecv_c(void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                 MPI_Comm comm, MPI_Request *request)
{
    return irecv("MPI_Irecv_c", buf, count, datatype, source, tag, comm, request);
}

/* Receive and send at once, after checking both halves. */
/* Both halves of a send-receive pair (the same communicator). */
static int check_halves(const struct p2p_args *s, const struct p2p_args *r, struct bmpi_comm **c)
{
    int err = check_p2p(s, c);
    return err ? err : check_p2p(r, c);
}

static int sendrecv_checked(const struct p2p_args *s, const struct p2p_args *r, size_t send_count,
                            MPI_Datatype send_type, MPI_Status *status)
{
    struct bmpi_comm *c;
    int err = check_halves(s, r, &c);
    if (err)
        return err;
    struct bmpi_request *rreq, *sreq;
    err = bmpi_irecv((void *)r->buf, (size_t)r->count, r->type, r->peer, r->tag, c, c->context_id, &rreq);
    if (err)
        return bmpi_err_comm(s->comm, err, s->fn, NULL);
    err = bmpi_isend(s->buf, send_count, send_type, s->peer, s->tag, c, c->context_id, BMPI_SEND_STANDARD,
                     &sreq);
    if (err) {
        bmpi_recv_cancel(rreq);
        bmpi_request_wait(rreq, MPI_STATUS_IGNORE);
        return bmpi_err_comm(s->comm, err, s->fn, NULL);
    }
    MPI_Status sst, rst;
    int serr = bmpi_request_wait(sreq, &sst);
    int rerr = bmpi_request_wait(rreq, &rst);
    bmpi_status_out(status, &rst);
    if (serr)
        return bmpi_report_status(c, s->fn, &sst);
    return rerr ? bmpi_report_status(c, s->fn, &rst) : MPI_SUCCESS;
}

static int sendrecv(const char *fn, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                    int dest, int sendtag, void *recvbuf, MPI_Count recvcount,
                    MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                    MPI_Status *status)
{
    struct p2p_args s = {fn, comm, sendbuf, sendcount, sendtype, dest, sendtag, TO_PEER};
    struct p2p_args r = {fn, comm, recvbuf, recvcount, recvtype, source, recvtag, FROM_PEER};
    return sendrecv_checked(&s, &r, (size_t)(sendcount > 0 ? sendcount : 0), sendtype, status);
}

BMPI_API(MPI_Sendrecv)
int PMPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                  void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                  MPI_Comm comm, MPI_Status *status)
{
    return sendrecv("MPI_Sendrecv", sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                    recvtype, source, recvtag, comm, status);
}

BMPI_API(MPI_Sendrecv_c)
int PMPI_Sendrecv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest,
                    int sendtag, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                    int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    return sendrecv("MPI_Sendrecv_c", sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
                    recvcount, recvtype, source, recvtag, comm, status);
}

/* A packed copy of what a replace sends, so the buffer can take the reply. */
static int packed_copy(const struct p2p_args *a, void **packed, size_t *bytes)
{
    struct bmpi_datatype *dt = bmpi_dt_get(a->type);
    *bytes = (size_t)a->count * bmpi_dt_size(dt);
    if (!(*packed = malloc(*bytes ? *bytes : 1)))
        return bmpi_err_comm(a->comm, MPI_ERR_NO_MEM, a->fn,
                             "out of memory for a %zu-byte copy of the message", *bytes);
    bmpi_dt_pack_all(a->buf, (size_t)a->count, dt, *packed);
    return MPI_SUCCESS;
}

/* The message goes out of a packed copy, so the buffer can take the reply. */
static int sendrecv_replace(const char *fn, void *buf, MPI_Count count, MPI_Datatype datatype,
                            int dest, int sendtag, int source, int recvtag, MPI_Comm comm,
                            MPI_Status *status)
{
    struct p2p_args s = {fn, comm, buf, count, datatype, dest, sendtag, TO_PEER};
    struct p2p_args r = {fn, comm, buf, count, datatype, source, recvtag, FROM_PEER};
    struct bmpi_comm *c;
    int err = check_p2p(&s, &c);
    if (err)
        return err;
    size_t bytes;
    void *packed;
    if ((err = packed_copy(&s, &packed, &bytes)))
        return err;
    s.buf = packed;
    err = sendrecv_checked(&s, &r, bytes, MPI_BYTE, status);
    free(packed);
    return err;
}

BMPI_API(MPI_Sendrecv_replace)
int PMPI_Sendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                          int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    return sendrecv_replace("MPI_Sendrecv_replace", buf, count, datatype, dest, sendtag, source,
                            recvtag, comm, status);
}

BMPI_API(MPI_Sendrecv_replace_c)
int PMPI_Sendrecv_replace_c(void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
                            int sendtag, int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    return sendrecv_replace("MPI_Sendrecv_replace_c", buf, count, datatype, dest, sendtag, source,
                            recvtag, comm, status);
}

/* MPI_Isendrecv(_replace): the receive and the send are the parts of one
 * composite request that completes with the receive's status. packed (the
 * copy a replace sends from, or NULL) goes with the request. */
static int isendrecv_checked(const struct p2p_args *s, const struct p2p_args *r, size_t send_count,
                             MPI_Datatype send_type, void *packed, MPI_Request *request)
{
    struct bmpi_request *pair = bmpi_request_new(BMPI_REQ_COMPOSITE);
    if (!pair || bmpi_request_handle(pair) == MPI_REQUEST_NULL) {
        free(packed);
        if (pair)
            bmpi_request_free(pair);
        return bmpi_err_comm(s->comm, MPI_ERR_NO_MEM, s->fn, "out of memory for the request");
    }
    struct bmpi_comm *c = bmpi_comm_get(s->comm);
    pair->comm = c;
    c->refcount++; /* released with the request */
    pair->bounce = packed;
    pair->pending_ops = 1; /* held until both parts are posted */
    struct bmpi_request *part;
    int err = bmpi_irecv((void *)r->buf, (size_t)r->count, r->type, r->peer, r->tag, c, c->context_id,
                         &part);
    if (!err) {
        bmpi_request_adopt(pair, part, true);
        err = bmpi_isend(s->buf, send_count, send_type, s->peer, s->tag, c, c->context_id,
                         BMPI_SEND_STANDARD, &part);
        if (!err)
            bmpi_request_adopt(pair, part, false);
    }
    /* a part already posted still completes into the request, which then
     * carries the error */
    if (err && !pair->status.MPI_ERROR)
        pair->status.MPI_ERROR = err;
    *request = pair->handle;
    bmpi_request_part_done_all(pair);
    return err ? bmpi_err_comm(s->comm, err, s->fn, NULL) : MPI_SUCCESS;
}

static int check_pair(const struct p2p_args *s, const struct p2p_args *r, MPI_Request *request)
{
    struct bmpi_comm *c;
    int err = check_halves(s, r, &c);
    if (!err && !request)
        err = bmpi_err_comm(s->comm, MPI_ERR_ARG, s->fn, "request is NULL");
    return err;
}

static int isendrecv(const char *fn, const void *sendbuf, MPI_Count sendcount,
                     MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
                     MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag,
                     MPI_Comm comm, MPI_Request *request)
{
    struct p2p_args s = {fn, comm, sendbuf, sendcount, sendtype, dest, sendtag, TO_PEER};
    struct p2p_args r = {fn, comm, recvbuf, recvcount, recvtype, source, recvtag, FROM_PEER};
    int err = check_pair(&s, &r, request);
    if (err)
        return err;
    return isendrecv_checked(&s, &r, (size_t)sendcount, sendtype, NULL, request);
}

BMPI_API(MPI_Isendrecv)
int PMPI_Isendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                   void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                   MPI_Comm comm, MPI_Request *request)
{
    return isendrecv("MPI_Isendrecv", sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
                     recvcount, recvtype, source, recvtag, comm, request);
}

BMPI_API(MPI_Isendrecv_c)
int PMPI_Isendrecv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest,
                     int sendtag, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                     int source, int recvtag, MPI_Comm comm, MPI_Request *request)
{
    return isendrecv("MPI_Isendrecv_c", sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
                     recvcount, recvtype, source, recvtag, comm, request);
}

static int isendrecv_replace(const char *fn, void *buf, MPI_Count count, MPI_Datatype datatype,
                             int dest, int sendtag, int source, int recvtag, MPI_Comm comm,
                             MPI_Request *request)
{
    struct p2p_args s = {fn, comm, buf, count, datatype, dest, sendtag, TO_PEER};
    struct p2p_args r = {fn, comm, buf, count, datatype, source, recvtag, FROM_PEER};
    int err = check_pair(&s, &r, request);
    if (err)
        return err;
    size_t bytes;
    void *packed;
    if ((err = packed_copy(&s, &packed, &bytes)))
        return err;
    s.buf = packed;
    return isendrecv_checked(&s, &r, bytes, MPI_BYTE, packed, request);
}

BMPI_API(MPI_Isendrecv_replace)
int PMPI_Isendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                           int source, int recvtag, MPI_Comm comm, MPI_Request *request)
{
    return isendrecv_replace("MPI_Isendrecv_replace", buf, count, datatype, dest, sendtag, source,
                             recvtag, comm, request);
}

BMPI_API(MPI_Isendrecv_replace_c)
int PMPI_Isendrecv_replace_c(void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
                             int sendtag, int source, int recvtag, MPI_Comm comm,
                             MPI_Request *request)
{
    return isendrecv_replace("MPI_Isendrecv_replace_c", buf, count, datatype, dest, sendtag, source,
                             recvtag, comm, request);
}

/* ---------------------------------------------------------------- probe */

static int probe_checked(const char *fn, int source, int tag, MPI_Comm comm, int *flag,
                         MPI_Message *message, MPI_Status *status, bool blocking)
{
    struct p2p_args a = {fn, comm, NULL, 0, MPI_BYTE, source, tag, FROM_PEER};
    struct bmpi_comm *c;
    int err = check_p2p(&a, &c);
    if (err)
        return err;
    if (!blocking && !flag)
        return bmpi_err_comm(comm, MPI_ERR_ARG, fn, "flag is NULL");
    MPI_Status st;
    if (source == MPI_PROC_NULL) {
        if (flag)
            *flag = 1;
        if (message)
            *message = MPI_MESSAGE_NO_PROC;
        bmpi_status_set(&st, MPI_PROC_NULL, MPI_ANY_TAG, MPI_SUCCESS, 0);
        bmpi_status_out(status, &st);
        return MPI_SUCCESS;
    }
    int found = 0;
    unsigned idle = 0;
    struct bmpi_request *msg = NULL;
    for (;;) {
        int events = bmpi_progress();
        err = bmpi_iprobe(source, tag, c, &found, &st, message ? &msg : NULL);
        if (err)
            return bmpi_err_comm(comm, err, fn, NULL);
        if (found)
            break;
        if (!blocking) {
            bmpi_progress_missed(events);
            break;
        }
        bmpi_progress_idle(&idle);
    }
    if (found)
        bmpi_status_out(status, &st);
    if (flag)
        *flag = found;
    if (message)
        *message = found ? bmpi_request_handle(msg) : MPI_MESSAGE_NULL;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Iprobe)
int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    return probe_checked("MPI_Iprobe", source, tag, comm, flag, NULL, status, false);
}

BMPI_API(MPI_Probe)
int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    return probe_checked("MPI_Probe", source, tag, comm, NULL, NULL, status, true);
}

BMPI_API(MPI_Improbe)
int PMPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status)
{
    if (!message)
        return bmpi_err_comm(comm, MPI_ERR_ARG, "MPI_Improbe", "message is NULL");
    return probe_checked("MPI_Improbe", source, tag, comm, flag, message, status, false);
}

BMPI_API(MPI_Mprobe)
int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    if (!message)
        return bmpi_err_comm(comm, MPI_ERR_ARG, "MPI_Mprobe", "message is NULL");
    return probe_checked("MPI_Mprobe", source, tag, comm, NULL, message, status, true);
}

/* Start the receive of a matched message: its request (already complete
 * for MPI_MESSAGE_NO_PROC, with *c NULL), *message becomes MPI_MESSAGE_NULL. */
static int start_mrecv(const char *fn, void *buf, MPI_Count count, MPI_Datatype datatype,
                       MPI_Message *message, struct bmpi_comm **c, struct bmpi_request **req)
{
    if (!message)
        return bmpi_err_noobj(MPI_ERR_ARG, fn, "message is NULL");
    *c = NULL;
    if (*message == MPI_MESSAGE_NO_PROC) {
        if (!(*req = bmpi_request_new(BMPI_REQ_RECV)))
            return bmpi_err_noobj(MPI_ERR_NO_MEM, fn, "out of memory");
        bmpi_status_set(&(*req)->status, MPI_PROC_NULL, MPI_ANY_TAG, MPI_SUCCESS, 0);
        bmpi_request_complete(*req);
        *message = MPI_MESSAGE_NULL;
        return MPI_SUCCESS;
    }
    struct bmpi_request *msg = bmpi_request_get(*message);
    if (!msg || !msg->probe_only)
        return bmpi_err_noobj(MPI_ERR_REQUEST, fn, "invalid message handle 0x%x", (unsigned)*message);
    int err = bmpi_check_buffer(msg->comm->handle, fn, buf, count, datatype);
    if (err)
        return err;
    *message = MPI_MESSAGE_NULL;
    bmpi_mrecv_start(msg, buf, (size_t)count, datatype);
    *c = msg->comm;
    *req = msg;
    return MPI_SUCCESS;
}

static int mrecv(const char *fn, void *buf, MPI_Count count, MPI_Datatype datatype,
                 MPI_Message *message, MPI_Status *status)
{
    struct bmpi_comm *c;
    struct bmpi_request *req;
    int err = start_mrecv(fn, buf, count, datatype, message, &c, &req);
    return err ? err : finish_recv(c, fn, req, status);
}

BMPI_API(MPI_Mrecv)
int PMPI_Mrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
               MPI_Status *status)
{
    return mrecv("MPI_Mrecv", buf, count, datatype, message, status);
}

BMPI_API(MPI_Mrecv_c)
int PMPI_Mrecv_c(void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Message *message,
                 MPI_Status *status)
{
    return mrecv("MPI_Mrecv_c", buf, count, datatype, message, status);
}

static int imrecv(const char *fn, void *buf, MPI_Count count, MPI_Datatype datatype,
                  MPI_Message *message, MPI_Request *request)
{
    if (!request)
        return bmpi_err_noobj(MPI_ERR_ARG, fn, "request is NULL");
    struct bmpi_comm *c;
    struct bmpi_request *req;
    int err = start_mrecv(fn, buf, count, datatype, message, &c, &req);
    if (!err)
        *request = bmpi_request_handle(req);
    return err;
}

BMPI_API(MPI_Imrecv)
int PMPI_Imrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
                MPI_Request *request)
{
    return imrecv("MPI_Imrecv", buf, count, datatype, message, request);
}

BMPI_API(MPI_Imrecv_c)
int PMPI_Imrecv_c(void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Message *message,
                  MPI_Request *request)
{
    return imrecv("MPI_Imrecv_c", buf, count, datatype, message, request);
}

/* ----------------------------------------------------------- persistent */

static int persistent_init(const struct p2p_args *a, enum bmpi_req_kind kind, enum bmpi_send_mode mode,
                           MPI_Request *request)
{
    struct bmpi_comm *c;
    int err = check_p2p_request(a, &c, request);
    if (err)
        return err;
    struct bmpi_request *req = bmpi_p2p_request_new(kind, (void *)a->buf, (size_t)a->count, a->type,
                                                    a->peer, a->tag, c, c->context_id);
    if (!req)
        return bmpi_err_comm(a->comm, MPI_ERR_NO_MEM, a->fn, "out of memory");
    req->persistent = true;
    req->complete = true; /* inactive */
    req->mode = mode;
    *request = bmpi_request_handle(req);
    return MPI_SUCCESS;
}

BMPI_API(MPI_Send_init)
int PMPI_Send_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                   MPI_Request *request)
{
    struct p2p_args a = SEND_ARGS("MPI_Send_init");
    return persistent_init(&a, BMPI_REQ_SEND, BMPI_SEND_STANDARD, request);
}

BMPI_API(MPI_Send_init_c)
int PMPI_Send_init_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                     MPI_Comm comm, MPI_Request *request)
{
    struct p2p_args a = SEND_ARGS("MPI_Send_init_c");
    return persistent_init(&a, BMPI_REQ_SEND, BMPI_SEND_STANDARD, request);
}

BMPI_API(MPI_Ssend_init)
int PMPI_Ssend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                    MPI_Request *request)
{
    struct p2p_args a = SEND_ARGS("MPI_Ssend_init");
    return persistent_init(&a, BMPI_REQ_SEND, BMPI_SEND_SYNC, request);
}

BMPI_API(MPI_Ssend_init_c)
int PMPI_Ssend_init_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                      MPI_Comm comm, MPI_Request *request)
{
    struct p2p_args a = SEND_ARGS("MPI_Ssend_init_c");
    return persistent_init(&a, BMPI_REQ_SEND, BMPI_SEND_SYNC, request);
}

BMPI_API(MPI_Rsend_init)
int PMPI_Rsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                    MPI_Request *request)
{
    struct p2p_args a = SEND_ARGS("MPI_Rsend_init");
    return persistent_init(&a, BMPI_REQ_SEND, BMPI_SEND_READY, request);
}

BMPI_API(MPI_Rsend_init_c)
int PMPI_Rsend_init_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                      MPI_Comm comm, MPI_Request *request)
{
    struct p2p_args a = SEND_ARGS("MPI_Rsend_init_c");
    return persistent_init(&a, BMPI_REQ_SEND, BMPI_SEND_READY, request);
}

BMPI_API(MPI_Recv_init)
int PMPI_Recv_init(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                   MPI_Request *request)
{
    struct p2p_args a = RECV_ARGS("MPI_Recv_init");
    return persistent_init(&a, BMPI_REQ_RECV, BMPI_SEND_STANDARD, request);
}

BMPI_API(MPI_Recv_init_c)
int PMPI_Recv_init_c(void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                     MPI_Comm comm, MPI_Request *request)
{
    struct p2p_args a = RECV_ARGS("MPI_Recv_init_c");
    return persistent_init(&a, BMPI_REQ_RECV, BMPI_SEND_STANDARD, request);
}

int bmpi_request_start(struct bmpi_request *req)
{
    req->active = true;
    if (req->kind == BMPI_REQ_COLL)
        return bmpi_coll_start(req);
    if (req->kind == BMPI_REQ_RECV)
        return bmpi_recv_start(req);
    if (req->mode == BMPI_SEND_BUFFERED)
        return bmpi_bsend_start(req);
    return bmpi_send_start(req);
}

static int start_one(MPI_Request *request, const char *fn)
{
    struct bmpi_request *req = request ? bmpi_request_get(*request) : NULL;
    if (!req || !req->persistent)
        return bmpi_err_noobj(MPI_ERR_REQUEST, fn, "0x%x is not a persistent request",
                              request ? (unsigned)*request : 0u);
    if (req->active)
        return bmpi_err_comm(req->comm->handle, MPI_ERR_REQUEST, fn, "request 0x%x is already active",
                             (unsigned)*request);
    int err = bmpi_request_start(req);
    return err ? bmpi_err_comm(req->comm->handle, err, fn, NULL) : MPI_SUCCESS;
}

BMPI_API(MPI_Start)
int PMPI_Start(MPI_Request *request)
{
    return start_one(request, "MPI_Start");
}

BMPI_API(MPI_Startall)
int PMPI_Startall(int count, MPI_Request array_of_requests[])
{
    if (count < 0)
        return bmpi_err_noobj(MPI_ERR_COUNT, "MPI_Startall", "negative count %d", count);
    if (count > 0 && !array_of_requests)
        return bmpi_err_noobj(MPI_ERR_ARG, "MPI_Startall", "array_of_requests is NULL");
    for (int i = 0; i < count; i++) {
        int err = start_one(&array_of_requests[i], "MPI_Startall");
        if (err)
            return err;
    }
    return MPI_SUCCESS;
}
