/*
 * Point-to-point protocol engine: eager, RGET and RNDV (see p2p_proto.h).
 *
 * Sends pick a protocol from the capabilities of the transport that
 * reaches the peer. Matched messages (EAGER, RGET, RNDV) to one peer leave
 * in the order they were started: when the transport pushes back, they
 * wait in that peer's queue and everything after them queues behind.
 * Control messages (ACK, FIN, CTS) and fragments are not matched and may
 * overtake.
 */
#include "config.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/error.h"
#include "runtime/match.h"
#include "runtime/p2p.h"
#include "runtime/p2p_proto.h"
#include "runtime/rma_proto.h"
#include "runtime/win.h"
#include "runtime/progress.h"
#include "runtime/world.h"
#include "transport/copy.h"
#include "transport/shm/node.h"

/* Non-contiguous receives of RGET messages are pulled through a staging
 * buffer of this size, one chunk at a time. */
#define RGET_CHUNK (256u * 1024u)
/* Fragments of the RNDV protocol carry at most this much (and at most what
 * the transport's max_am allows): the staging buffer of a non-contiguous
 * send stays bounded. */
#define FRAG_MAX (256u * 1024u)
/* Contiguous RGET receives of at least this many bytes over a transport
 * with BMPI_TL_RMA_CPU are copied by both sides, split at a page boundary
 * so that the two copies never touch the same page. */
#define COOP_MIN (32u * 1024u)
#define COOP_ALIGN 4096u
/* How long MPI_Finalize keeps progressing transports that still report
 * data in flight once every send has completed. */
#define DRAIN_IN_FLIGHT_S 2.0

/* A message the transport could not take yet. */
struct pending {
    struct pending *next;
    int world_peer;
    uint8_t am_id;
    bool matched; /* keeps its place in the peer's order */
    size_t hdr_len;
    union {
        struct bmpi_envelope env;
        struct bmpi_rts rts;
        struct bmpi_ctl ctl;
        struct bmpi_cts cts;
        struct bmpi_putreq putreq;
        struct bmpi_putfin putfin;
    } hdr;
    struct iovec iov;
    void *owned;               /* payload copy owned by this entry */
    struct bmpi_request *req;  /* send completed once this leaves */
};

struct pending_queue {
    struct pending *head, *tail;
};

static struct {
    struct pending_queue *matched; /* per peer index (world ranks, then other jobs') */
    int nmatched;
    struct pending_queue control;
    struct bmpi_request *streaming; /* RNDV sends with fragments to go */
    int npending;
    int sends_open; /* started sends not yet complete: MPI_Finalize waits for them */
} p2p;

static struct bmpi_tl *peer_tl(int world_rank) { return bmpi_world.peers[world_rank].tl; }

/* A queue for every peer, those of other jobs added since included. */
static int ensure_queues(void)
{
    if (p2p.matched && p2p.nmatched >= bmpi_world.nprocs)
        return BMPI_OK;
    struct pending_queue *q = realloc(p2p.matched, (size_t)bmpi_world.nprocs * sizeof(*q));
    if (!q)
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory");
    int have = p2p.matched ? p2p.nmatched : 0;
    memset(q + have, 0, (size_t)(bmpi_world.nprocs - have) * sizeof(*q));
    p2p.matched = q;
    p2p.nmatched = bmpi_world.nprocs;
    return BMPI_OK;
}

static void queue_push(struct pending_queue *q, struct pending *p)
{
    p->next = NULL;
    if (q->tail)
        q->tail->next = p;
    else
        q->head = p;
    q->tail = p;
    p2p.npending++;
}

static int tl_send(const struct pending *p)
{
    struct bmpi_tl *tl = peer_tl(p->world_peer);
    return tl->ops->am_send(tl, p->world_peer, p->am_id, &p->hdr, p->hdr_len, &p->iov,
                            p->iov.iov_len ? 1 : 0);
}

static void send_done(struct bmpi_request *req)
{
    p2p.sends_open--;
    req->comm->sends_open--;
    bmpi_request_complete(req);
}

/* A matched send whose message has left: eager sends are done. */
static void sent(struct pending *p)
{
    if (p->req && p->am_id == BMPI_AM_EAGER)
        send_done(p->req);
}

/* Send now, or queue a copy of the message when the transport is full or
 * (for matched messages) when earlier ones to the same peer still wait.
 * The payload must stay valid until sent: it is either the user's buffer
 * of a pending request or owned by the entry. */
static int post_am(struct pending *msg)
{
    struct pending_queue *q = msg->matched ? &p2p.matched[msg->world_peer] : &p2p.control;
    if (!msg->matched || !q->head) {
        int rc = tl_send(msg);
        if (rc == BMPI_OK) {
            sent(msg);
            free(msg->owned);
            return BMPI_OK;
        }
        if (rc != BMPI_TL_EAGAIN)
            return rc;
    }
    struct pending *p = malloc(sizeof(*p));
    if (!p)
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory queueing a message");
    *p = *msg;
    queue_push(q, p);
    return BMPI_OK;
}

static int drain_queue(struct pending_queue *q)
{
    int events = 0;
    while (q->head) {
        struct pending *p = q->head;
        int rc = tl_send(p);
        if (rc == BMPI_TL_EAGAIN)
            break;
        q->head = p->next;
        if (!q->head)
            q->tail = NULL;
        p2p.npending--;
        if (rc == BMPI_OK)
            sent(p);
        else if (p->req) {
            p->req->status.MPI_ERROR = rc;
            send_done(p->req);
        }
        free(p->owned);
        free(p);
        events++;
    }
    return events;
}

static int send_ctl(int world_peer, uint8_t am_id, const void *hdr, size_t len)
{
    struct pending msg = {.world_peer = world_peer, .am_id = am_id, .hdr_len = len};
    memcpy(&msg.hdr, hdr, len);
    return post_am(&msg);
}

/* ---------------------------------------------------------------- send */

static size_t packed_size(const struct bmpi_request *req)
{
    return req->count * bmpi_dt_size(req->dt);
}

/* In integers: with a type on absolute addresses the buffer may be
 * MPI_BOTTOM, or a collective's temporary whose origin wrapped around. */
static void *data_at(const void *buf, const struct bmpi_datatype *dt)
{
    return (void *)((uintptr_t)buf + (uintptr_t)bmpi_dt_true_lb(dt));
}

static void *contig_base(const struct bmpi_request *req)
{
    return data_at(req->buf, req->dt);
}

static int send_eager(struct bmpi_request *req, struct bmpi_tl *tl)
{
    struct pending msg = {.world_peer = req->world_peer, .matched = true, .req = req};
    struct bmpi_envelope env = {req->context_id, req->comm->rank, req->tag};
    if (req->mode == BMPI_SEND_SYNC) {
        msg.am_id = BMPI_AM_EAGER_SYNC;
        msg.hdr.rts.env = env;
        msg.hdr.rts.len = req->bytes;
        msg.hdr.rts.sreq = bmpi_request_id(req);
        msg.hdr_len = BMPI_RTS_FIXED_LEN;
    } else {
        msg.am_id = BMPI_AM_EAGER;
        msg.hdr.env = env;
        msg.hdr_len = sizeof(env);
    }
    if (bmpi_dt_is_contig(req->dt) || req->bytes == 0) {
        msg.iov.iov_base = contig_base(req);
    } else {
        msg.owned = malloc(req->bytes);
        if (!msg.owned)
            return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory packing an eager message");
        struct bmpi_dt_cursor cur;
        bmpi_dt_cursor_init(&cur, req->buf, req->count, req->dt);
        bmpi_dt_pack(&cur, msg.owned, req->bytes);
        msg.iov.iov_base = msg.owned;
    }
    msg.iov.iov_len = req->bytes;
    (void)tl;
    return post_am(&msg);
}

static int send_rget(struct bmpi_request *req, struct bmpi_tl *tl)
{
    void *base = contig_base(req);
    int rc = tl->ops->mem_reg(tl, base, req->bytes, &req->memh);
    if (rc)
        return rc;
    struct pending msg = {.world_peer = req->world_peer, .am_id = BMPI_AM_RGET, .matched = true, .req = req};
    struct bmpi_rts *rts = &msg.hdr.rts;
    rts->env = (struct bmpi_envelope){req->context_id, req->comm->rank, req->tag};
    rts->len = req->bytes;
    rts->sreq = bmpi_request_id(req);
    rts->raddr = (uint64_t)(uintptr_t)base;
    size_t klen = sizeof(rts->rkey);
    rc = tl->ops->rkey_pack(tl, req->memh, rts->rkey, &klen);
    if (rc) {
        tl->ops->mem_dereg(tl, req->memh);
        req->memh = NULL;
        return rc;
    }
    rts->rkey_len = (uint32_t)klen;
    msg.hdr_len = BMPI_RTS_FIXED_LEN + klen;
    return post_am(&msg);
}

static int send_rndv(struct bmpi_request *req)
{
    struct pending msg = {.world_peer = req->world_peer, .am_id = BMPI_AM_RNDV, .matched = true, .req = req};
    msg.hdr.rts.env = (struct bmpi_envelope){req->context_id, req->comm->rank, req->tag};
    msg.hdr.rts.len = req->bytes;
    msg.hdr.rts.sreq = bmpi_request_id(req);
    msg.hdr_len = BMPI_RTS_FIXED_LEN;
    return post_am(&msg);
}

static int send_by_protocol(struct bmpi_request *req)
{
    struct bmpi_tl *tl = peer_tl(req->world_peer);
    size_t eager_hdr = req->mode == BMPI_SEND_SYNC ? BMPI_RTS_FIXED_LEN : sizeof(struct bmpi_envelope);
    if (req->bytes <= tl->caps.eager_limit && req->bytes + eager_hdr <= tl->caps.max_am) {
        req->proto = BMPI_PROTO_EAGER;
        return send_eager(req, tl);
    }
    if ((tl->caps.flags & BMPI_TL_RMA_GET) && bmpi_dt_is_contig(req->dt) &&
        (req->bytes >= tl->caps.rget_min ||
         ((tl->caps.flags & BMPI_TL_RMA_HEAP) &&
          bmpi_node_heap_owns(contig_base(req), req->bytes)))) {
        req->proto = BMPI_PROTO_RGET;
        return send_rget(req, tl);
    }
    req->proto = BMPI_PROTO_RNDV;
    return send_rndv(req);
}

int bmpi_send_start(struct bmpi_request *req)
{
    req->complete = false;
    req->cancelled = false;
    req->done_bytes = 0;
    req->memh = NULL;
    bmpi_status_empty(&req->status);
    if (req->peer == MPI_PROC_NULL) {
        bmpi_status_set(&req->status, MPI_PROC_NULL, MPI_ANY_TAG, MPI_SUCCESS, 0);
        bmpi_request_complete(req);
        return BMPI_OK;
    }
    int rc = ensure_queues();
    if (rc)
        return rc;
    req->world_peer = bmpi_comm_world_rank(req->comm, req->peer);
    req->bytes = packed_size(req);
    p2p.sends_open++;
    req->comm->sends_open++;
    rc = send_by_protocol(req);
    if (rc) {
        p2p.sends_open--;
        req->comm->sends_open--;
    }
    return rc;
}

/* Stream the fragments of one RNDV send; false when the transport is full. */
static bool stream_frags(struct bmpi_request *req)
{
    struct bmpi_tl *tl = peer_tl(req->world_peer);
    size_t chunk = tl->caps.max_am - sizeof(struct bmpi_frag);
    if (chunk > FRAG_MAX)
        chunk = FRAG_MAX;
    bool contig = bmpi_dt_is_contig(req->dt);
    while (req->done_bytes < req->bytes) {
        size_t len = req->bytes - req->done_bytes;
        if (len > chunk)
            len = chunk;
        struct iovec iov;
        if (contig) {
            iov.iov_base = (char *)contig_base(req) + req->done_bytes;
        } else {
            if (!req->bounce && !(req->bounce = malloc(chunk)))
                return false; /* retried on the next progress pass */
            bmpi_dt_cursor_seek(&req->cursor, req->done_bytes);
            bmpi_dt_pack(&req->cursor, req->bounce, len);
            iov.iov_base = req->bounce;
        }
        iov.iov_len = len;
        struct bmpi_frag hdr = {req->remote_req, req->done_bytes};
        int rc = tl->ops->am_send(tl, req->world_peer, BMPI_AM_FRAG, &hdr, sizeof(hdr), &iov, 1);
        if (rc == BMPI_TL_EAGAIN)
            return false;
        if (rc) {
            req->status.MPI_ERROR = rc;
            break;
        }
        req->done_bytes += len;
    }
    free(req->bounce);
    req->bounce = NULL;
    send_done(req);
    return true;
}

static int progress_streams(void)
{
    int events = 0;
    struct bmpi_request **link = &p2p.streaming;
    while (*link) {
        struct bmpi_request *req = *link;
        struct bmpi_request *next = req->next;
        /* a finished send may be freed at once (MPI_Request_free, bsend) */
        if (stream_frags(req)) {
            *link = next;
            events++;
        } else {
            link = &req->next;
        }
    }
    return events;
}

/* ------------------------------------------------------------- receive */

static void finish_recv(struct bmpi_request *req, int src, int tag)
{
    size_t got = req->bytes < req->capacity ? req->bytes : req->capacity;
    int err = req->bytes > req->capacity ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
    if (req->status.MPI_ERROR != MPI_SUCCESS)
        err = req->status.MPI_ERROR;
    bmpi_status_set(&req->status, src, tag, err, got);
    if (err == MPI_ERR_TRUNCATE)
        bmpi_err_set(MPI_ERR_TRUNCATE,
                     "message of %zu bytes from rank %d (tag %d) truncated to the %zu bytes of the receive buffer",
                     req->bytes, src, tag, req->capacity);
    free(req->bounce);
    req->bounce = NULL;
    bmpi_request_complete(req);
}

/* Copy (at most capacity bytes of) data into the receive buffer at offset. */
static void deliver_bytes(struct bmpi_request *req, size_t offset, const void *data, size_t len)
{
    if (offset >= req->capacity || len == 0) /* a zero-byte payload may be NULL */
        return;
    if (len > req->capacity - offset)
        len = req->capacity - offset;
    if (bmpi_dt_is_contig(req->dt)) {
        bmpi_copy((char *)contig_base(req) + offset, data, len);
        return;
    }
    bmpi_dt_cursor_seek(&req->cursor, offset);
    bmpi_dt_unpack(&req->cursor, data, len);
}

static void rget_next(struct bmpi_request *req);

static void rget_done(void *ctx, int status)
{
    struct bmpi_request *req = ctx;
    if (status != BMPI_OK)
        req->status.MPI_ERROR = status;
    req->pending_ops--;
    if (!bmpi_dt_is_contig(req->dt) && status == BMPI_OK) {
        deliver_bytes(req, req->done_bytes, req->bounce, req->staged);
        req->done_bytes += req->staged;
    }
    rget_next(req);
}

/* Pull the next piece (contiguous: all that fits, in rma_limit pieces;
 * otherwise one staged chunk); answer FIN when everything is here. */
static void rget_next(struct bmpi_request *req)
{
    struct bmpi_tl *tl = peer_tl(req->world_peer);
    size_t want = req->bytes < req->capacity ? req->bytes : req->capacity;
    bool contig = bmpi_dt_is_contig(req->dt);
    if (req->status.MPI_ERROR == MPI_SUCCESS && req->done_bytes < want && req->pending_ops == 0) {
        size_t len = want - req->done_bytes;
        void *dst;
        if (contig) {
            if (tl->caps.rma_limit && len > tl->caps.rma_limit)
                len = tl->caps.rma_limit;
            dst = (char *)contig_base(req) + req->done_bytes;
        } else {
            if (len > RGET_CHUNK)
                len = RGET_CHUNK;
            req->staged = len;
            if (!req->bounce && !(req->bounce = malloc(RGET_CHUNK))) {
                req->status.MPI_ERROR = bmpi_err_set(MPI_ERR_NO_MEM, "out of memory staging a receive");
                rget_next(req);
                return;
            }
            dst = req->bounce;
        }
        uint64_t raddr = req->rget_raddr + req->done_bytes;
        req->pending_ops++;
        if (contig)
            req->done_bytes += len;
        int rc = tl->ops->get(tl, req->world_peer, dst, NULL, len, raddr, req->rkey, req->rkey_len,
                              rget_done, req);
        if (rc != BMPI_OK) {
            req->pending_ops--;
            req->status.MPI_ERROR = rc;
        } else {
            return;
        }
    }
    if (req->pending_ops > 0 || req->put_pending)
        return;
    if (req->done_bytes < want && req->status.MPI_ERROR == MPI_SUCCESS)
        return;
    struct bmpi_ctl fin = {req->remote_req};
    send_ctl(req->world_peer, BMPI_AM_FIN, &fin, sizeof(fin));
    finish_recv(req, req->status.MPI_SOURCE, req->status.MPI_TAG);
}

/* Ask the sender to write the first share bytes of the message into the
 * receive buffer itself while this side pulls the rest: on a transport
 * whose RMA is a CPU copy, that puts the sender's idle core to work. The
 * message cannot complete before the sender answers PUTFIN, so small
 * messages, whose pull is over sooner than a round trip, are not split,
 * and neither are receives of a rank with sends of its own open, unless
 * the receive asks the sender to write all of it (see rget_start). */
static void ask_sender_to_put(struct bmpi_request *req, struct bmpi_tl *tl, size_t share)
{
    struct bmpi_putreq pr = {
        .sreq = req->remote_req,
        .rreq = bmpi_request_id(req),
        .raddr = (uint64_t)(uintptr_t)contig_base(req),
        .len = share & ~(size_t)(COOP_ALIGN - 1),
    };
    size_t klen = sizeof(pr.rkey);
    /* The sender writes into this buffer: it needs a registration of its
     * own (ofi's providers check remote keys; shm's is a no-op). */
    if (tl->ops->mem_reg(tl, contig_base(req), pr.len, &req->memh) != BMPI_OK)
        return;
    if (tl->ops->rkey_pack(tl, req->memh, pr.rkey, &klen) != BMPI_OK)
        goto dereg;
    pr.rkey_len = (uint32_t)klen;
    if (send_ctl(req->world_peer, BMPI_AM_PUTREQ, &pr, BMPI_PUTREQ_FIXED_LEN + klen) != BMPI_OK)
        goto dereg;
    req->put_pending = true;
    req->done_bytes = pr.len;
    return;
dereg:
    tl->ops->mem_dereg(tl, req->memh);
    req->memh = NULL;
}

static void rget_start(struct bmpi_request *req)
{
    struct bmpi_tl *tl = peer_tl(req->world_peer);
    /* the sender's PUTFIN says its part is in: its put must complete remotely */
    const unsigned coop = BMPI_TL_RMA_PUT | BMPI_TL_RMA_CPU | BMPI_TL_RMA_REMOTE_DONE;
    size_t want = req->bytes < req->capacity ? req->bytes : req->capacity;
    /* With sends of our own still open (bidirectional traffic), the peer's
     * core is busy pulling them: asking it for more only delays this one,
     * unless the receive wants the sender to write all of it. A receive
     * that reads all of it itself (BMPI_RECV_COPY_RECEIVER) never asks. */
    bool ask = req->copy == BMPI_RECV_COPY_SENDER || (req->copy == BMPI_RECV_COPY_SHARED && p2p.sends_open == 0);
    if (ask && want >= COOP_MIN && (tl->caps.flags & coop) == coop && !(tl->caps.flags & BMPI_TL_NEEDS_MR) &&
        bmpi_dt_is_contig(req->dt))
        ask_sender_to_put(req, tl, req->copy == BMPI_RECV_COPY_SENDER ? want : want / 2);
    rget_next(req);
}

/* A receive matched a message: take it in according to its protocol. */
static void start_matched(struct bmpi_request *req, int world_src, uint8_t am_id,
                          const struct bmpi_rts *rts, const void *data, size_t len)
{
    req->world_peer = world_src;
    req->status.MPI_SOURCE = rts->env.src;
    req->status.MPI_TAG = rts->env.tag;
    req->done_bytes = 0;
    switch (am_id) {
    case BMPI_AM_EAGER:
    case BMPI_AM_EAGER_SYNC:
        req->bytes = len;
        req->proto = BMPI_PROTO_EAGER;
        deliver_bytes(req, 0, data, len);
        if (am_id == BMPI_AM_EAGER_SYNC) {
            struct bmpi_ctl ack = {rts->sreq};
            send_ctl(world_src, BMPI_AM_ACK, &ack, sizeof(ack));
        }
        finish_recv(req, rts->env.src, rts->env.tag);
        return;
    case BMPI_AM_RGET:
        req->bytes = rts->len;
        req->proto = BMPI_PROTO_RGET;
        req->remote_req = rts->sreq;
        req->rget_raddr = rts->raddr;
        req->rkey_len = rts->rkey_len;
        memcpy(req->rkey, rts->rkey, rts->rkey_len);
        rget_start(req);
        return;
    case BMPI_AM_RNDV: {
        req->bytes = rts->len;
        req->proto = BMPI_PROTO_RNDV;
        struct bmpi_cts cts = {rts->sreq, bmpi_request_id(req)};
        send_ctl(world_src, BMPI_AM_CTS, &cts, sizeof(cts));
        return;
    }
    }
}

static void set_capacity(struct bmpi_request *req)
{
    req->capacity = req->count * bmpi_dt_size(req->dt);
    if (!bmpi_dt_is_contig(req->dt))
        bmpi_dt_cursor_init(&req->cursor, req->buf, req->count, req->dt);
}

/* A receive matches in its communicator's point-to-point or collective
 * context; any other context id is a bug in the caller. */
static struct bmpi_match_ctx *match_ctx_of(const struct bmpi_request *req)
{
    if (req->context_id == req->comm->context_id)
        return req->comm->pt2pt;
    assert(req->context_id == req->comm->context_id + 1);
    return req->comm->coll;
}

static void start_from_unexpected(struct bmpi_request *req, struct bmpi_unexpected *u)
{
    start_matched(req, u->world_src, u->am_id, &u->rts, u->data, u->len);
    free(u);
}

int bmpi_recv_start(struct bmpi_request *req)
{
    req->complete = false;
    req->cancelled = false;
    req->bounce = NULL;
    req->pending_ops = 0;
    req->put_pending = false;
    bmpi_status_empty(&req->status);
    if (req->peer == MPI_PROC_NULL) {
        bmpi_status_set(&req->status, MPI_PROC_NULL, MPI_ANY_TAG, MPI_SUCCESS, 0);
        bmpi_request_complete(req);
        return BMPI_OK;
    }
    set_capacity(req);
    struct bmpi_match_ctx *m = match_ctx_of(req);
    struct bmpi_unexpected *u = bmpi_match_unexpected(m, req->peer, req->tag, 1);
    if (u)
        start_from_unexpected(req, u);
    else
        bmpi_match_post(m, req);
    return BMPI_OK;
}

int bmpi_recv_cancel(struct bmpi_request *req)
{
    struct bmpi_match_ctx *m = match_ctx_of(req);
    if (req->complete || !bmpi_match_unpost(m, req))
        return BMPI_OK;
    bmpi_status_set(&req->status, req->peer, req->tag, MPI_SUCCESS, 0);
    bmpi_status_set_cancelled(&req->status, true);
    req->cancelled = true;
    bmpi_request_complete(req);
    return BMPI_OK;
}

/* ------------------------------------------------------------ delivery */

static void keep_unexpected(struct bmpi_match_ctx *m, int world_src, uint8_t am_id,
                            const struct bmpi_rts *rts, const void *data, size_t len)
{
    /* One allocation for the entry and its data: a receiver that falls
     * behind a stream of small messages pays one malloc/free per message. */
    struct bmpi_unexpected *u = malloc(sizeof(*u) + len);
    if (!u) {
        /* Nothing sane can continue: the message cannot be kept. */
        bmpi_err_comm(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI progress",
                      "out of memory keeping an unexpected message of %zu bytes from rank %d", len, world_src);
        return;
    }
    u->data = len ? u + 1 : NULL;
    if (len)
        memcpy(u->data, data, len);
    u->world_src = world_src;
    u->am_id = am_id;
    u->rts = *rts;
    u->len = len;
    bmpi_match_add_unexpected(m, u);
}

static void deliver_matchable(int world_src, uint8_t am_id, const void *hdr, size_t hdr_len,
                              const void *data, size_t len)
{
    struct bmpi_rts rts;
    if (am_id == BMPI_AM_EAGER) {
        memcpy(&rts.env, hdr, sizeof(rts.env));
        rts.len = len;
        rts.rkey_len = 0;
    } else {
        memset(&rts, 0, sizeof(rts));
        memcpy(&rts, hdr, hdr_len < sizeof(rts) ? hdr_len : sizeof(rts));
    }
    struct bmpi_match_ctx *m = bmpi_match_ctx_get(rts.env.context_id);
    if (!m) {
        bmpi_err_comm(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI progress", "out of memory matching a message");
        return;
    }
    struct bmpi_request *req = bmpi_match_posted(m, rts.env.src, rts.env.tag);
    if (req)
        start_matched(req, world_src, am_id, &rts, data, len);
    else
        keep_unexpected(m, world_src, am_id, &rts, data, len);
    bmpi_match_ctx_put(m);
}

static void deliver_frag(const struct bmpi_frag *f, const void *data, size_t len)
{
    struct bmpi_request *req = bmpi_request_from_id(f->rreq);
    deliver_bytes(req, f->offset, data, len);
    req->done_bytes += len;
    if (req->done_bytes >= req->bytes)
        finish_recv(req, req->status.MPI_SOURCE, req->status.MPI_TAG);
}

static void deliver_cts(const struct bmpi_cts *cts)
{
    struct bmpi_request *req = bmpi_request_from_id(cts->sreq);
    req->remote_req = cts->rreq;
    if (!bmpi_dt_is_contig(req->dt))
        bmpi_dt_cursor_init(&req->cursor, req->buf, req->count, req->dt);
    if (!stream_frags(req)) {
        req->next = p2p.streaming;
        p2p.streaming = req;
    }
}

static void deliver_fin(const struct bmpi_ctl *fin)
{
    struct bmpi_request *req = bmpi_request_from_id(fin->sreq);
    if (req->memh) {
        struct bmpi_tl *tl = peer_tl(req->world_peer);
        tl->ops->mem_dereg(tl, req->memh);
        req->memh = NULL;
    }
    send_done(req);
}

/* The receiver's part of a shared RGET is written: see whether it is all in. */
static void deliver_putfin(const struct bmpi_putfin *f)
{
    struct bmpi_request *req = bmpi_request_from_id(f->rreq);
    struct bmpi_tl *tl = peer_tl(req->world_peer);
    if (f->status != BMPI_OK && req->status.MPI_ERROR == MPI_SUCCESS)
        req->status.MPI_ERROR = f->status;
    tl->ops->mem_dereg(tl, req->memh);
    req->memh = NULL;
    req->put_pending = false;
    rget_next(req);
}

static void put_done(void *ctx, int status)
{
    struct bmpi_request *req = ctx;
    struct bmpi_putfin fin = {req->remote_req, status};
    send_ctl(req->world_peer, BMPI_AM_PUTFIN, &fin, sizeof(fin));
}

/* The receiver of an RGET asks this side to write the first part. The
 * send completes only on the receiver's FIN, which follows PUTFIN, so the
 * buffer stays valid throughout. */
static void deliver_putreq(const struct bmpi_putreq *pr)
{
    struct bmpi_request *req = bmpi_request_from_id(pr->sreq);
    struct bmpi_tl *tl = peer_tl(req->world_peer);
    req->remote_req = pr->rreq;
    int rc = pr->len <= req->bytes
                 ? tl->ops->put(tl, req->world_peer, contig_base(req), req->memh, pr->len, pr->raddr,
                                pr->rkey, pr->rkey_len, put_done, req)
                 : bmpi_err_set(MPI_ERR_INTERN, "PUTREQ for %llu bytes of a %zu-byte message",
                                (unsigned long long)pr->len, req->bytes);
    if (rc != BMPI_OK)
        put_done(req, rc);
}

void bmpi_am_deliver(int peer, uint8_t am_id, const void *hdr, size_t hdr_len, const void *payload,
                     size_t len)
{
    switch (am_id) {
    case BMPI_AM_EAGER:
    case BMPI_AM_EAGER_SYNC:
    case BMPI_AM_RGET:
    case BMPI_AM_RNDV:
        deliver_matchable(peer, am_id, hdr, hdr_len, payload, len);
        break;
    case BMPI_AM_ACK:
        send_done(bmpi_request_from_id(((const struct bmpi_ctl *)hdr)->sreq));
        break;
    case BMPI_AM_FIN:
        deliver_fin(hdr);
        break;
    case BMPI_AM_CTS:
        deliver_cts(hdr);
        break;
    case BMPI_AM_FRAG:
        deliver_frag(hdr, payload, len);
        break;
    case BMPI_AM_PUTREQ:
        deliver_putreq(hdr);
        break;
    case BMPI_AM_PUTFIN:
        deliver_putfin(hdr);
        break;
    default:
        if (am_id > BMPI_AM_MAX && am_id <= BMPI_AM_RMA_LAST) {
            bmpi_rma_deliver(peer, am_id, hdr, hdr_len, payload, len);
            break;
        }
        bmpi_err_comm(MPI_COMM_WORLD, MPI_ERR_INTERN, "MPI progress",
                      "unknown active message %u from rank %d", am_id, peer);
    }
}

/* ------------------------------------------------------- requests, API */

struct bmpi_request *bmpi_p2p_request_new(enum bmpi_req_kind kind, void *buf, size_t count,
                                          MPI_Datatype type, int peer, int tag, struct bmpi_comm *comm,
                                          uint32_t context_id)
{
    struct bmpi_request *req = bmpi_request_new(kind);
    if (!req)
        return NULL;
    req->buf = buf;
    req->count = count;
    req->type = type;
    req->dt = bmpi_dt_get(type);
    bmpi_dt_retain(req->dt);
    req->peer = peer;
    req->tag = tag;
    req->comm = comm;
    comm->refcount++;
    req->context_id = context_id;
    return req;
}

int bmpi_isend(const void *buf, size_t count, MPI_Datatype type, int dest, int tag,
               struct bmpi_comm *comm, uint32_t context_id, enum bmpi_send_mode mode,
               struct bmpi_request **out)
{
    struct bmpi_request *req =
        bmpi_p2p_request_new(BMPI_REQ_SEND, (void *)buf, count, type, dest, tag, comm, context_id);
    if (!req)
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory for a request");
    req->mode = mode;
    int rc = bmpi_send_start(req);
    if (rc) {
        bmpi_request_free(req);
        return rc;
    }
    *out = req;
    return BMPI_OK;
}

int bmpi_irecv_copied_by(void *buf, size_t count, MPI_Datatype type, int source, int tag, struct bmpi_comm *comm,
                         uint32_t context_id, enum bmpi_recv_copy who, struct bmpi_request **out)
{
    struct bmpi_request *req = bmpi_p2p_request_new(BMPI_REQ_RECV, buf, count, type, source, tag, comm, context_id);
    if (!req)
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory for a request");
    req->copy = who;
    int rc = bmpi_recv_start(req);
    if (rc) {
        bmpi_request_free(req);
        return rc;
    }
    *out = req;
    return BMPI_OK;
}

int bmpi_irecv(void *buf, size_t count, MPI_Datatype type, int source, int tag,
               struct bmpi_comm *comm, uint32_t context_id, struct bmpi_request **out)
{
    return bmpi_irecv_copied_by(buf, count, type, source, tag, comm, context_id, BMPI_RECV_COPY_SHARED, out);
}

int bmpi_send_immediate(const void *buf, size_t count, MPI_Datatype type, int dest, int tag,
                        struct bmpi_comm *comm, uint32_t context_id)
{
    const struct bmpi_datatype *dt = bmpi_dt_get(type);
    if (dest == MPI_PROC_NULL || !bmpi_dt_is_contig(dt) || ensure_queues())
        return BMPI_TL_EAGAIN;
    int world_peer = bmpi_comm_world_rank(comm, dest);
    struct bmpi_tl *tl = peer_tl(world_peer);
    size_t bytes = count * bmpi_dt_size(dt);
    struct bmpi_envelope env = {context_id, comm->rank, tag};
    /* Earlier messages to this peer still queued keep their place. */
    if (bytes > tl->caps.eager_limit || bytes + sizeof(env) > tl->caps.max_am ||
        p2p.matched[world_peer].head)
        return BMPI_TL_EAGAIN;
    struct iovec iov = {data_at(buf, dt), bytes};
    return tl->ops->am_send(tl, world_peer, BMPI_AM_EAGER, &env, sizeof(env), &iov, bytes ? 1 : 0);
}

int bmpi_send(const void *buf, size_t count, MPI_Datatype type, int dest, int tag,
              struct bmpi_comm *comm, uint32_t context_id)
{
    int rc = bmpi_send_immediate(buf, count, type, dest, tag, comm, context_id);
    if (rc != BMPI_TL_EAGAIN)
        return rc;
    struct bmpi_request *req = NULL;
    rc = bmpi_isend(buf, count, type, dest, tag, comm, context_id, BMPI_SEND_STANDARD, &req);
    return rc ? rc : bmpi_request_wait(req, MPI_STATUS_IGNORE);
}

int bmpi_recv(void *buf, size_t count, MPI_Datatype type, int source, int tag,
              struct bmpi_comm *comm, uint32_t context_id, MPI_Status *status)
{
    struct bmpi_request *req = NULL;
    int rc = bmpi_irecv(buf, count, type, source, tag, comm, context_id, &req);
    return rc ? rc : bmpi_request_wait(req, status);
}

int bmpi_iprobe(int source, int tag, struct bmpi_comm *comm, int *found, MPI_Status *status,
                struct bmpi_request **msg)
{
    struct bmpi_unexpected *u = bmpi_match_unexpected(comm->pt2pt, source, tag, msg != NULL);
    *found = u != NULL;
    if (!u)
        return BMPI_OK;
    if (status != MPI_STATUS_IGNORE)
        bmpi_status_set(status, u->rts.env.src, u->rts.env.tag, MPI_SUCCESS,
                        u->am_id == BMPI_AM_EAGER || u->am_id == BMPI_AM_EAGER_SYNC ? u->len : u->rts.len);
    if (msg) {
        struct bmpi_request *m = bmpi_request_new(BMPI_REQ_RECV);
        if (!m) {
            bmpi_match_add_unexpected(comm->pt2pt, u);
            return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory for a message handle");
        }
        m->comm = comm;
        comm->refcount++;
        m->context_id = comm->context_id;
        m->probe_only = true;
        m->ctx = u;
        *msg = m;
    }
    return BMPI_OK;
}

int bmpi_mrecv_start(struct bmpi_request *msg, void *buf, size_t count, MPI_Datatype type)
{
    struct bmpi_unexpected *u = msg->ctx;
    msg->ctx = NULL;
    msg->probe_only = false;
    msg->buf = buf;
    msg->count = count;
    msg->type = type;
    msg->dt = bmpi_dt_get(type);
    bmpi_dt_retain(msg->dt);
    msg->complete = false;
    bmpi_status_empty(&msg->status);
    set_capacity(msg);
    start_from_unexpected(msg, u);
    return BMPI_OK;
}

int bmpi_p2p_progress(void)
{
    if (!p2p.npending && !p2p.streaming)
        return 0;
    int events = drain_queue(&p2p.control);
    for (int r = 0; p2p.matched && r < p2p.nmatched && p2p.npending; r++)
        events += drain_queue(&p2p.matched[r]);
    return events + progress_streams();
}

int bmpi_p2p_drain(void)
{
    unsigned idle = 0;
    /* First until this rank's sends are complete (a rendezvous send may
     * still wait for its receiver's answer)... */
    while (p2p.npending || p2p.streaming || p2p.sends_open) {
        if (!bmpi_progress())
            bmpi_progress_idle(&idle);
    }
    /* ...then while the transports report bytes in flight: tcp;ofi_rxm
     * moves queued data only while the sender keeps calling it. Bounded,
     * because some providers (udp;ofi_rxd) keep reporting acknowledgements
     * in flight that no peer needs. */
    double until = PMPI_Wtime() + DRAIN_IN_FLIGHT_S;
    while (bmpi_progress() > 0 && PMPI_Wtime() < until)
        ;
    free(p2p.matched);
    p2p.matched = NULL;
    p2p.nmatched = 0;
    return BMPI_OK;
}
