/*
 * One-sided communication by active messages (runtime/rma_proto.h): the
 * origin side that cuts an operation into messages, the target side that
 * applies them from its progress engine, the answers, and the lock words
 * of the control blocks.
 *
 * An operation is cut along the target's datatype into messages of at
 * most RMA_AM_MAX_SEGS contiguous segments and as much data as fits
 * beside them, or, when the target side is strided, of runs of segments
 * (rma_proto.h); accumulates are cut on element boundaries. The
 * transport delivers in order per peer, so accumulates from one origin
 * to one target are applied in the order they were issued. A message
 * the transport cannot take now waits, in order, in this file's queue.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/comm.h"
#include "runtime/op.h"
#include "runtime/rma_atomic.h"
#include "runtime/rma_impl.h"
#include "runtime/rma_proto.h"
#include "runtime/world.h"
#include "transport/copy.h"

/* Data bytes one message carries at most, besides its segments. */
#define AM_DATA_MAX (32u * 1024u)
/* Segments applied under one close of the target's gate, at most. */
#define RMA_AM_APPLY_RUNS 256
/* Data bytes of a message of runs through a transport whose copies are
 * the CPU's (one node): there messages cost little and a column goes
 * faster in several that overlap than in one; through a network, where
 * each message costs as much as a round trip, in as few as possible
 * (docs/performance.md, "Across hosts: what each message costs"). */
#define RUNS_DATA_NODE 4096u

/* A message waiting for the transport. */
struct am_msg {
    struct am_msg *next;
    int peer;
    uint8_t am_id;
    size_t hdr_len, len;
    char bytes[]; /* header, then payload */
};

/* A lock request from another node waiting for this rank's lock. */
struct bmpi_rma_lock_wait {
    struct bmpi_rma_lock_wait *next;
    int peer;
    struct bmpi_rma_ctl ctl;
};

static struct {
    struct am_msg *head, *tail;
    int waiting_windows; /* windows with lock requests waiting */
} rma_am;

/* ---- lock words ------------------------------------------------------------------ */

bool bmpi_rma_lock_try(struct bmpi_win_ctl *ctl, int lock_type)
{
    uint64_t v = __atomic_load_n(&ctl->lock, __ATOMIC_RELAXED);
    if (lock_type == MPI_LOCK_EXCLUSIVE)
        return v == 0 && __atomic_compare_exchange_n(&ctl->lock, &v, BMPI_WIN_LOCK_EXCL, false,
                                                      __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
    while (!(v & BMPI_WIN_LOCK_EXCL))
        if (__atomic_compare_exchange_n(&ctl->lock, &v, v + 1, true, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
            return true;
    return false;
}

void bmpi_rma_lock_release(struct bmpi_win_ctl *ctl, int lock_type)
{
    if (lock_type == MPI_LOCK_EXCLUSIVE)
        __atomic_store_n(&ctl->lock, 0, __ATOMIC_RELEASE);
    else
        __atomic_fetch_sub(&ctl->lock, 1, __ATOMIC_RELEASE);
}

/* ---- sending ----------------------------------------------------------------------- */

static int queue_copy(int peer, uint8_t am_id, const void *hdr, size_t hdr_len, const struct iovec *iov,
                      int iovcnt)
{
    size_t len = 0;
    for (int i = 0; i < iovcnt; i++)
        len += iov[i].iov_len;
    struct am_msg *m = malloc(sizeof *m + hdr_len + len);
    if (!m)
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory queueing an RMA message");
    *m = (struct am_msg){.peer = peer, .am_id = am_id, .hdr_len = hdr_len, .len = len};
    memcpy(m->bytes, hdr, hdr_len);
    char *at = m->bytes + hdr_len;
    for (int i = 0; i < iovcnt; i++, at += iov[i - 1].iov_len)
        memcpy(at, iov[i].iov_base, iov[i].iov_len);
    if (rma_am.tail)
        rma_am.tail->next = m;
    else
        rma_am.head = m;
    rma_am.tail = m;
    return BMPI_OK;
}

int bmpi_rma_am_send(int peer, uint8_t am_id, const void *hdr, size_t hdr_len, const struct iovec *iov, int iovcnt)
{
    if (!rma_am.head) {
        struct bmpi_tl *tl = bmpi_world.peers[peer].tl;
        int rc = tl->ops->am_send(tl, peer, am_id, hdr, hdr_len, iov, iovcnt);
        if (rc != BMPI_TL_EAGAIN)
            return rc;
    }
    return queue_copy(peer, am_id, hdr, hdr_len, iov, iovcnt);
}

static int drain_queue(void)
{
    int events = 0;
    while (rma_am.head) {
        struct am_msg *m = rma_am.head;
        struct bmpi_tl *tl = bmpi_world.peers[m->peer].tl;
        struct iovec iov = {m->bytes + m->hdr_len, m->len};
        int rc = tl->ops->am_send(tl, m->peer, m->am_id, m->bytes, m->hdr_len, &iov, m->len ? 1 : 0);
        if (rc == BMPI_TL_EAGAIN)
            break;
        if (rc)
            bmpi_err_comm(MPI_COMM_WORLD, rc, "MPI progress", "an RMA message to peer %d could not be sent",
                          m->peer);
        rma_am.head = m->next;
        if (!rma_am.head)
            rma_am.tail = NULL;
        free(m);
        events++;
    }
    return events;
}

int bmpi_rma_am_ctl(struct bmpi_win *w, int target, uint8_t am_id, int lock_type)
{
    const struct bmpi_win_target *t = &w->t[target];
    struct bmpi_rma_ctl ctl = {.win = t->handle, .from = w->comm->rank, .lock_type = lock_type,
                               .sender_win = w->handle};
    return bmpi_rma_am_send(t->world, am_id, &ctl, sizeof ctl, NULL, 0);
}

/* ---- origin: cutting an operation into messages ---------------------------------- */

static uint8_t am_id_of(enum bmpi_rma_kind k)
{
    switch (k) {
    case BMPI_RMA_PUT:
        return BMPI_AM_RMA_PUT;
    case BMPI_RMA_GET:
        return BMPI_AM_RMA_GET;
    case BMPI_RMA_ACC:
        return BMPI_AM_RMA_ACC;
    case BMPI_RMA_GACC:
        return BMPI_AM_RMA_GACC;
    default:
        return BMPI_AM_RMA_CAS;
    }
}

/* The origin data of one message: in place when the origin is
 * contiguous, else packed into stage. */
static const void *origin_piece(const struct bmpi_rma_call *c, struct bmpi_dt_cursor *oc, uint64_t off,
                                size_t bytes, char *stage)
{
    if (bmpi_dt_is_contig(c->odt))
        return (const char *)c->origin + bmpi_dt_true_lb(c->odt) + off;
    bmpi_dt_pack(oc, stage, bytes);
    return stage;
}

static struct bmpi_rma_op_hdr op_hdr(const struct bmpi_win *w, const struct bmpi_rma_call *c,
                                     const struct bmpi_rma_track *track, uint32_t nseg, uint64_t off)
{
    return (struct bmpi_rma_op_hdr){.win = w->t[c->target].handle, .origin_win = w->handle,
                                    .origin = w->comm->rank, .op = c->op ? c->op->handle : MPI_OP_NULL,
                                    .basic = c->basic, .nseg = nseg, .track = (uint64_t)(uintptr_t)track,
                                    .offset = off, .fences = (uint32_t)w->fences};
}

/* One message of c: h, then its segments (or runs), the compare operand
 * of a CAS and data; counted as issued to the target, answered through
 * track. */
static int send_op(struct bmpi_win *w, const struct bmpi_rma_call *c, struct bmpi_rma_track *track, uint8_t am_id,
                   const struct bmpi_rma_op_hdr *h, struct iovec segs, struct iovec data)
{
    struct bmpi_win_target *t = &w->t[c->target];
    struct iovec payload[3] = {segs};
    int cnt = 1;
    if (c->kind == BMPI_RMA_CAS)
        payload[cnt++] = (struct iovec){(void *)c->compare, data.iov_len};
    if (data.iov_base)
        payload[cnt++] = data;
    track->refs++;
    t->issued++;
    t->ordered_issued += track->ordered;
    w->ops_pending++;
    int err = bmpi_rma_am_send(t->world, am_id, h, sizeof *h, payload, cnt);
    if (err) {
        track->refs--;
        t->issued--;
        t->ordered_issued -= track->ordered;
        w->ops_pending--;
    }
    return err;
}

int bmpi_rma_am_send_piece(struct bmpi_win *w, const struct bmpi_rma_call *c, struct bmpi_rma_track *track,
                           uint8_t am_id, const struct iovec *iov, int n, uint64_t off, struct iovec data)
{
    struct bmpi_rma_op_hdr h = op_hdr(w, c, track, (uint32_t)n, off);
    struct bmpi_rma_seg segs[RMA_AM_MAX_SEGS];
    for (int i = 0; i < n; i++)
        segs[i] = (struct bmpi_rma_seg){(uint64_t)(uintptr_t)iov[i].iov_base, iov[i].iov_len};
    return send_op(w, c, track, am_id, &h, (struct iovec){segs, (size_t)n * sizeof segs[0]}, data);
}

/* Data bytes per message towards a peer over tl: whole elements, room
 * left for the header, nseg segments and a compare operand. */
static size_t data_budget(const struct bmpi_tl *tl, size_t elem, int nseg)
{
    size_t room = sizeof(struct bmpi_rma_op_hdr) + (size_t)nseg * sizeof(struct bmpi_rma_seg) + elem;
    size_t budget = tl->caps.max_am > room ? tl->caps.max_am - room : elem;
    if (budget > AM_DATA_MAX)
        budget = AM_DATA_MAX;
    return budget < elem ? elem : budget - budget % elem;
}

/* The next message's segments and its data bytes (*bytes): as much data
 * as fits beside the segments it needs, so that a type of many small
 * blocks fills a message with segments and one of large blocks with
 * data. When the segments leave less room than one would, the cursor
 * goes back and takes less. */
static int next_message(struct bmpi_dt_cursor *tc, const struct bmpi_tl *tl, size_t elem, struct iovec *iov,
                        size_t *bytes)
{
    size_t start = tc->pos;
    int n = bmpi_dt_iov(tc, iov, RMA_AM_MAX_SEGS, data_budget(tl, elem, 1), bytes);
    if (n > 1 && *bytes > data_budget(tl, elem, n)) {
        bmpi_dt_cursor_seek(tc, start);
        n = bmpi_dt_iov(tc, iov, n, data_budget(tl, elem, n), bytes);
    }
    return n;
}

/* ---- origin: strided target sides as runs ----------------------------------------- */

void bmpi_rma_run_add(struct bmpi_rma_run *runs, uint32_t *m, const struct bmpi_dt_run *r)
{
    uint64_t at = (uint64_t)r->addr;
    struct bmpi_rma_run *last = *m ? &runs[*m - 1] : NULL;
    if (last && last->len == r->len) {
        int64_t step = last->count == 1 ? (int64_t)(at - last->disp) : last->stride;
        if (at == last->disp + last->count * (uint64_t)step && (r->count == 1 || r->stride == step)) {
            last->stride = step;
            last->count += r->count;
            return;
        }
    }
    runs[(*m)++] = (struct bmpi_rma_run){.disp = at, .len = r->len, .count = r->count,
                                         .stride = r->count > 1 ? (int64_t)r->stride : 0};
}

bool bmpi_rma_runs_pay(const struct bmpi_rma_call *c)
{
    if (bmpi_dt_is_contig(c->tdt))
        return false;
    struct bmpi_dt_cursor tc;
    bmpi_dt_cursor_init(&tc, (void *)(uintptr_t)c->offset, c->tcount, c->tdt);
    struct bmpi_rma_run runs[16];
    struct bmpi_dt_run r;
    uint32_t m = 0;
    uint64_t blocks = 0;
    while (m < 16 && bmpi_dt_next_run(&tc, SIZE_MAX, SIZE_MAX, &r)) {
        bmpi_rma_run_add(runs, &m, &r);
        blocks += r.count;
    }
    return blocks > 1 && m * 4 <= blocks;
}

/* The next message's runs from tc: as many blocks as fit with their runs
 * beside their data in room bytes, data_max bytes of data and max_blocks
 * blocks at most, ending on a whole element of elem bytes. Returns the
 * runs (0 at the end); *blocks and *bytes what they stand for. */
static uint32_t take_runs(struct bmpi_dt_cursor *tc, size_t room, size_t data_max, size_t max_blocks, size_t elem,
                          struct bmpi_rma_run *runs, uint32_t *blocks, size_t *bytes)
{
    size_t start = tc->pos;
    uint32_t m = 0;
    struct bmpi_dt_run r;
    *blocks = 0;
    *bytes = 0;
    for (;;) {
        size_t records = (size_t)(m + 1) * sizeof *runs;
        if (*bytes >= data_max || records + *bytes >= room)
            break;
        size_t max = room - records - *bytes < data_max - *bytes ? room - records - *bytes : data_max - *bytes;
        size_t got = bmpi_dt_next_run(tc, max, max_blocks - *blocks, &r);
        if (!got)
            break;
        bmpi_rma_run_add(runs, &m, &r);
        *blocks += (uint32_t)r.count;
        *bytes += got;
    }
    if (*bytes % elem == 0)
        return m;
    /* stopped by room or blocks inside an element: take up to its start */
    bmpi_dt_cursor_seek(tc, start);
    return take_runs(tc, room, *bytes - *bytes % elem, max_blocks, elem, runs, blocks, bytes);
}

static int am_issue_runs(struct bmpi_win *w, const struct bmpi_rma_call *c, struct bmpi_rma_track *track,
                         size_t elem, char *stage)
{
    const struct bmpi_tl *tl = w->t[c->target].tl;
    size_t fixed = sizeof(struct bmpi_rma_op_hdr) + elem;
    size_t room = tl->caps.max_am > fixed ? tl->caps.max_am - fixed : 0;
    /* no more blocks than basic elements: a short column asks for little */
    uint64_t blocks_max;
    if (__builtin_mul_overflow((uint64_t)c->tcount, (uint64_t)bmpi_dt_nelem(c->tdt), &blocks_max) ||
        blocks_max > RMA_AM_MAX_RUN_SEGS)
        blocks_max = RMA_AM_MAX_RUN_SEGS;
    size_t runs_max = room / sizeof(struct bmpi_rma_run) < blocks_max ? room / sizeof(struct bmpi_rma_run)
                                                                         : (size_t)blocks_max;
    struct bmpi_rma_run *runs = malloc((runs_max ? runs_max : 1) * sizeof *runs);
    if (!runs)
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory for an RMA operation");
    struct bmpi_dt_cursor tc, oc;
    bmpi_dt_cursor_init(&tc, (void *)(uintptr_t)c->offset, c->tcount, c->tdt);
    if (c->origin)
        bmpi_dt_cursor_init(&oc, (void *)c->origin, c->ocount, c->odt);
    size_t data_max = data_budget(tl, elem, 2), bytes;
    if ((tl->caps.flags & BMPI_TL_RMA_CPU) && data_max > RUNS_DATA_NODE)
        data_max = RUNS_DATA_NODE < elem ? elem : RUNS_DATA_NODE - RUNS_DATA_NODE % elem;
    uint64_t off = 0;
    uint32_t m, n;
    int err = BMPI_OK;
    while (!err && (m = take_runs(&tc, room, data_max, (size_t)blocks_max, elem, runs, &n, &bytes)) > 0) {
        const void *data = c->origin ? origin_piece(c, &oc, off, bytes, stage) : NULL;
        struct bmpi_rma_op_hdr h = op_hdr(w, c, track, n, off);
        h.runs = m;
        err = send_op(w, c, track, am_id_of(c->kind), &h, (struct iovec){runs, m * sizeof *runs},
                      (struct iovec){(void *)data, bytes});
        off += bytes;
    }
    free(runs);
    return err;
}

static int am_issue_segments(struct bmpi_win *w, const struct bmpi_rma_call *c, struct bmpi_rma_track *track,
                             size_t elem, char *stage)
{
    const struct bmpi_tl *tl = w->t[c->target].tl;
    struct bmpi_dt_cursor tc, oc;
    bmpi_dt_cursor_init(&tc, (void *)(uintptr_t)c->offset, c->tcount, c->tdt);
    if (c->origin)
        bmpi_dt_cursor_init(&oc, (void *)c->origin, c->ocount, c->odt);
    struct iovec iov[RMA_AM_MAX_SEGS];
    size_t bytes;
    uint64_t off = 0;
    int n, err = BMPI_OK;
    while (!err && (n = next_message(&tc, tl, elem, iov, &bytes)) > 0) {
        const void *data = c->origin ? origin_piece(c, &oc, off, bytes, stage) : NULL;
        err = bmpi_rma_am_send_piece(w, c, track, am_id_of(c->kind), iov, n, off,
                                     (struct iovec){(void *)data, bytes});
        off += bytes;
    }
    return err;
}

int bmpi_rma_am_issue(struct bmpi_win *w, const struct bmpi_rma_call *c)
{
    struct bmpi_rma_track *track = bmpi_rma_track_new(w, c);
    /* origin data is packed a message at a time only when not contiguous */
    bool packs = c->origin && !bmpi_dt_is_contig(c->odt);
    char *stage = packs ? malloc(AM_DATA_MAX) : NULL;
    if (!track || (packs && !stage)) {
        free(track);
        free(stage);
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory for an RMA operation");
    }
    track->ordered = c->kind == BMPI_RMA_PUT || c->kind == BMPI_RMA_ACC;
    size_t elem = c->kind == BMPI_RMA_PUT || c->kind == BMPI_RMA_GET
                      ? 1
                      : (size_t)bmpi_dt_size(bmpi_dt_get(c->basic));
    int err = c->kind != BMPI_RMA_CAS && bmpi_rma_runs_pay(c) ? am_issue_runs(w, c, track, elem, stage)
                                                    : am_issue_segments(w, c, track, elem, stage);
    free(stage);
    bmpi_rma_track_drop(track);
    return err;
}

/* ---- target: applying messages ------------------------------------------------------- */

void bmpi_rma_am_answer(int peer, const struct bmpi_rma_op_hdr *h, int me, int status, const void *data,
                        size_t len)
{
    struct bmpi_rma_answer a = {.origin_win = h->origin_win, .target = me, .status = status,
                                .track = h->track, .offset = h->offset};
    struct iovec iov = {(void *)data, len};
    uint8_t id = data || status ? BMPI_AM_RMA_RESP : BMPI_AM_RMA_ACK;
    int rc = bmpi_rma_am_send(peer, id, &a, sizeof a, &iov, len ? 1 : 0);
    if (rc)
        bmpi_err_comm(MPI_COMM_WORLD, rc, "MPI progress", "cannot answer an RMA operation of peer %d", peer);
}

char *bmpi_rma_am_segment(const struct bmpi_win *w, const struct bmpi_rma_seg *s)
{
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC)
        return bmpi_win_attached(w, s->disp, s->len) ? (char *)(uintptr_t)s->disp : NULL;
    if (s->disp > (uint64_t)w->size || s->len > (uint64_t)w->size - s->disp)
        return NULL;
    return (char *)w->base + s->disp;
}

static int check_segments(const struct bmpi_win *w, const struct bmpi_rma_seg *segs, uint32_t n, char **at,
                          size_t *bytes)
{
    *bytes = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (!(at[i] = bmpi_rma_am_segment(w, &segs[i])))
            return bmpi_err_set(MPI_ERR_RMA_RANGE, "bytes [%llu, +%llu) are outside the window",
                                (unsigned long long)segs[i].disp, (unsigned long long)segs[i].len);
        *bytes += segs[i].len;
    }
    return BMPI_OK;
}

/* The window h names and its segments checked (ok: the message's own
 * checks passed), or NULL after answering the origin with the error. */
static struct bmpi_win *target_segments(int peer, const struct bmpi_rma_op_hdr *h, const struct bmpi_rma_seg *segs,
                                        bool ok, char **at, size_t *bytes)
{
    struct bmpi_win *w = bmpi_win_get(h->win);
    if (!w) {
        struct bmpi_rma_answer a = {.origin_win = h->origin_win, .target = -1, .status = MPI_ERR_WIN,
                                    .track = h->track};
        bmpi_rma_am_send(peer, BMPI_AM_RMA_RESP, &a, sizeof a, NULL, 0);
        return NULL;
    }
    if (!ok || check_segments(w, segs, h->nseg, at, bytes)) {
        bmpi_rma_am_answer(peer, h, w->comm->rank, MPI_ERR_RMA_RANGE, NULL, 0);
        return NULL;
    }
    return w;
}

struct bmpi_win *bmpi_rma_am_target(int peer, const struct bmpi_rma_op_hdr *h, const void *payload, size_t len,
                                    char **at, size_t *bytes)
{
    bool ok = !h->runs && h->nseg <= RMA_AM_MAX_SEGS && (size_t)h->nseg * sizeof(struct bmpi_rma_seg) <= len;
    return target_segments(peer, h, payload, ok, at, bytes);
}

/* The segments h->runs runs stand for (runs_add_up), into segs[h->nseg]. */
static void expand_runs(const struct bmpi_rma_op_hdr *h, const struct bmpi_rma_run *runs, struct bmpi_rma_seg *segs)
{
    uint64_t n = 0;
    for (uint32_t i = 0; i < h->runs; i++)
        for (uint64_t k = 0; k < runs[i].count; k++)
            segs[n++] = (struct bmpi_rma_seg){runs[i].disp + k * (uint64_t)runs[i].stride, runs[i].len};
}

void bmpi_rma_apply_segments(struct bmpi_win *w, MPI_Op op_handle, MPI_Datatype basic,
                             const struct bmpi_rma_seg *segs, char *const *at, uint32_t nseg, const char *data,
                             char *out)
{
    struct bmpi_op *op = bmpi_op_get(op_handle);
    struct iovec runs[RMA_AM_APPLY_RUNS];
    for (uint32_t i = 0; i < nseg;) {
        size_t n = 0, bytes = 0;
        for (; n < RMA_AM_APPLY_RUNS && i < nseg; n++, i++) {
            runs[n] = (struct iovec){at ? at[i] : bmpi_rma_am_segment(w, &segs[i]), segs[i].len};
            bytes += segs[i].len;
        }
        bmpi_rma_atomic_apply_runs(op, basic, data, runs, n, out, bmpi_rma_guard_of(w, w->ctl));
        data = data ? data + bytes : NULL;
        out = out ? out + bytes : NULL;
    }
}

void bmpi_rma_am_apply(struct bmpi_win *w, const struct bmpi_rma_op_hdr *h, const struct bmpi_rma_seg *segs,
                       char *const *at, const char *data, char *out)
{
    bmpi_rma_apply_segments(w, h->op, h->basic, segs, at, h->nseg, data, out);
}

static void serve_data(struct bmpi_win *w, int peer, uint8_t am_id, const struct bmpi_rma_op_hdr *h,
                       const struct bmpi_rma_seg *segs, char **at, const char *data, size_t bytes)
{
    int me = w->comm->rank;
    if (am_id == BMPI_AM_RMA_PUT) {
        for (uint32_t i = 0; i < h->nseg; data += segs[i].len, i++)
            bmpi_copy(at[i], data, segs[i].len);
        bmpi_rma_am_answer(peer, h, me, 0, NULL, 0);
        return;
    }
    char *out = am_id == BMPI_AM_RMA_ACC ? NULL : malloc(bytes ? bytes : 1);
    if (am_id != BMPI_AM_RMA_ACC && !out) {
        bmpi_rma_am_answer(peer, h, me, MPI_ERR_NO_MEM, NULL, 0);
        return;
    }
    if (am_id == BMPI_AM_RMA_GET) {
        char *o = out;
        for (uint32_t i = 0; i < h->nseg; o += segs[i].len, i++)
            bmpi_copy(o, at[i], segs[i].len);
    } else if (am_id == BMPI_AM_RMA_CAS) {
        bmpi_rma_atomic_cswap(h->basic, data, data + bytes, at[0], out, bmpi_rma_guard_of(w, w->ctl));
    } else {
        bmpi_rma_am_apply(w, h, segs, at, h->op == MPI_NO_OP ? NULL : data, out);
    }
    bmpi_rma_am_answer(peer, h, me, 0, out, out ? bytes : 0);
    free(out);
}

char *bmpi_rma_run_at(const struct bmpi_win *w, const struct bmpi_rma_run *r)
{
    uint64_t step = r->stride < 0 ? -(uint64_t)r->stride : (uint64_t)r->stride, span, lo, end;
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC || !r->count || __builtin_mul_overflow(r->count - 1, step, &span) ||
        (r->stride < 0 && span > r->disp))
        return NULL;
    lo = r->stride < 0 ? r->disp - span : r->disp;
    if (__builtin_add_overflow(lo, span, &end) || __builtin_add_overflow(end, r->len, &end) ||
        end > (uint64_t)w->size)
        return NULL;
    return (char *)w->base + r->disp;
}

bool bmpi_rma_runs_in_window(const struct bmpi_win *w, const struct bmpi_rma_run *runs, uint32_t n, uint64_t nseg,
                             uint64_t *bytes)
{
    uint64_t blocks = 0, len;
    *bytes = 0;
    for (uint32_t i = 0; i < n; i++)
        if (!bmpi_rma_run_at(w, &runs[i]) || __builtin_mul_overflow(runs[i].count, runs[i].len, &len) ||
            __builtin_add_overflow(*bytes, len, bytes) || __builtin_add_overflow(blocks, runs[i].count, &blocks))
            return false;
    return blocks == nseg;
}

void bmpi_rma_serve_run(struct bmpi_win *w, uint8_t am_id, MPI_Op op, MPI_Datatype basic,
                        const struct bmpi_rma_run *r, const char *data, char *out)
{
    char *at = (char *)w->base + r->disp;
    ptrdiff_t stride = (ptrdiff_t)r->stride, len = (ptrdiff_t)r->len;
    if (am_id == BMPI_AM_RMA_PUT)
        bmpi_copy_blocks(at, stride, data, len, r->len, r->count);
    else if (am_id == BMPI_AM_RMA_GET)
        bmpi_copy_blocks(out, len, at, stride, r->len, r->count);
    else
        bmpi_rma_atomic_apply_strided(bmpi_op_get(op), basic, data, at, stride, r->len, r->count, out,
                                      bmpi_rma_guard_of(w, w->ctl));
}

/* A message of runs into a window of one region: each run checked, then
 * served run by run, with no list of segments. */
static void serve_runs_in_place(struct bmpi_win *w, int peer, uint8_t am_id, const struct bmpi_rma_op_hdr *h,
                                const struct bmpi_rma_run *runs, size_t data_len)
{
    int me = w->comm->rank;
    uint64_t bytes;
    if (!bmpi_rma_runs_in_window(w, runs, h->runs, h->nseg, &bytes)) {
        bmpi_rma_am_answer(peer, h, me, MPI_ERR_RMA_RANGE, NULL, 0);
        return;
    }
    bool fetch = am_id == BMPI_AM_RMA_GET || am_id == BMPI_AM_RMA_GACC;
    bool sends = am_id != BMPI_AM_RMA_GET && h->op != MPI_NO_OP;
    const char *data = sends ? (const char *)(runs + h->runs) : NULL;
    if (sends && bytes > data_len) {
        bmpi_rma_am_answer(peer, h, me, MPI_ERR_RMA_RANGE, NULL, 0);
        return;
    }
    char *out = fetch ? malloc(bytes ? bytes : 1) : NULL;
    if (fetch && !out) {
        bmpi_rma_am_answer(peer, h, me, MPI_ERR_NO_MEM, NULL, 0);
        return;
    }
    size_t done = 0;
    for (uint32_t i = 0; i < h->runs; done += runs[i].count * runs[i].len, i++)
        bmpi_rma_serve_run(w, am_id, h->op, h->basic, &runs[i], data ? data + done : NULL,
                           out ? out + done : NULL);
    bmpi_rma_am_answer(peer, h, me, 0, out, out ? bytes : 0);
    free(out);
}

/* Whether h's runs stand for its h->nseg segments. */
static bool runs_add_up(const struct bmpi_rma_op_hdr *h, const struct bmpi_rma_run *runs)
{
    uint64_t n = 0;
    for (uint32_t i = 0; i < h->runs; i++) {
        if (runs[i].count == 0 || runs[i].count > h->nseg - n)
            return false;
        n += runs[i].count;
    }
    return n == h->nseg;
}

/* A message whose segments come as runs: served along them in a window
 * of one region, else expanded and served as any. */
static void serve_runs(int peer, uint8_t am_id, const struct bmpi_rma_op_hdr *h, const char *payload, size_t len)
{
    size_t run_bytes = (size_t)h->runs * sizeof(struct bmpi_rma_run);
    const struct bmpi_rma_run *runs = (const void *)payload;
    bool ok = h->nseg > 0 && h->nseg <= RMA_AM_MAX_RUN_SEGS && run_bytes <= len && runs_add_up(h, runs);
    struct bmpi_win *w = bmpi_win_get(h->win);
    if (ok && w && w->flavor != MPI_WIN_FLAVOR_DYNAMIC && am_id != BMPI_AM_RMA_CAS) {
        serve_runs_in_place(w, peer, am_id, h, runs, len - run_bytes);
        return;
    }
    struct bmpi_rma_seg *segs = ok ? malloc((size_t)h->nseg * sizeof *segs) : NULL;
    char **at = ok ? malloc((size_t)h->nseg * sizeof *at) : NULL;
    ok = segs && at;
    if (ok)
        expand_runs(h, runs, segs);
    size_t bytes;
    if ((w = target_segments(peer, h, segs, ok, at, &bytes)))
        serve_data(w, peer, am_id, h, segs, at, payload + run_bytes, bytes);
    free(segs);
    free(at);
}

static void serve_op(int peer, uint8_t am_id, const struct bmpi_rma_op_hdr *h, const char *payload, size_t len)
{
    struct bmpi_win *w = bmpi_win_get(h->win);
    /* counted applied even when refused: a fence waits for the count */
    if (w)
        w->ordered_applied[h->fences & 1] += am_id == BMPI_AM_RMA_PUT || am_id == BMPI_AM_RMA_ACC;
    if (h->runs) {
        serve_runs(peer, am_id, h, payload, len);
        return;
    }
    char *at[RMA_AM_MAX_SEGS];
    size_t bytes;
    if (!(w = bmpi_rma_am_target(peer, h, payload, len, at, &bytes)))
        return;
    const struct bmpi_rma_seg *segs = (const void *)payload;
    serve_data(w, peer, am_id, h, segs, at, payload + (size_t)h->nseg * sizeof *segs, bytes);
}

static void serve_answer(const struct bmpi_rma_answer *a, const void *data, size_t len)
{
    struct bmpi_rma_track *track = (struct bmpi_rma_track *)(uintptr_t)a->track;
    bmpi_rma_track_piece(track, a->offset, data, len, a->status);
}

/* ---- target: locks, PSCW ------------------------------------------------------------ */

static void grant(int peer, const struct bmpi_rma_ctl *req, int me)
{
    struct bmpi_rma_ctl g = {.win = req->sender_win, .from = me};
    int rc = bmpi_rma_am_send(peer, BMPI_AM_RMA_GRANT, &g, sizeof g, NULL, 0);
    if (rc)
        bmpi_err_comm(MPI_COMM_WORLD, rc, "MPI progress", "cannot grant a lock to peer %d", peer);
}

static void serve_lock(int peer, const struct bmpi_rma_ctl *req)
{
    struct bmpi_win *w = bmpi_win_get(req->win);
    if (!w)
        return;
    if (!w->lock_waiters && bmpi_rma_lock_try(w->ctl, req->lock_type)) {
        grant(peer, req, w->comm->rank);
        return;
    }
    struct bmpi_rma_lock_wait *lw = malloc(sizeof *lw), **tail = &w->lock_waiters;
    if (!lw) {
        bmpi_err_comm(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI progress", "out of memory queueing a lock request");
        return;
    }
    *lw = (struct bmpi_rma_lock_wait){.peer = peer, .ctl = *req};
    while (*tail)
        tail = &(*tail)->next;
    if (!w->lock_waiters)
        rma_am.waiting_windows++;
    *tail = lw;
}

/* Grant waiting requests in arrival order, as far as the lock allows. */
static int serve_waiters(struct bmpi_win *w)
{
    int events = 0;
    while (w->lock_waiters && bmpi_rma_lock_try(w->ctl, w->lock_waiters->ctl.lock_type)) {
        struct bmpi_rma_lock_wait *lw = w->lock_waiters;
        w->lock_waiters = lw->next;
        grant(lw->peer, &lw->ctl, w->comm->rank);
        free(lw);
        events++;
    }
    if (events && !w->lock_waiters)
        rma_am.waiting_windows--;
    return events;
}

void bmpi_rma_am_forget(struct bmpi_win *w)
{
    if (w->lock_waiters)
        rma_am.waiting_windows--;
    while (w->lock_waiters) {
        struct bmpi_rma_lock_wait *lw = w->lock_waiters;
        w->lock_waiters = lw->next;
        free(lw);
    }
}

static void serve_ctl(uint8_t am_id, int peer, const struct bmpi_rma_ctl *c)
{
    struct bmpi_win *w = bmpi_win_get(c->win);
    if (!w || c->from < 0 || c->from >= w->comm->size)
        return;
    struct bmpi_win_target *t = &w->t[c->from];
    switch (am_id) {
    case BMPI_AM_RMA_LOCK:
        serve_lock(peer, c);
        break;
    case BMPI_AM_RMA_GRANT:
        t->lock_granted = true;
        break;
    case BMPI_AM_RMA_UNLOCK:
        bmpi_rma_lock_release(w->ctl, c->lock_type);
        serve_waiters(w);
        break;
    case BMPI_AM_RMA_POST:
        t->posts_am++;
        break;
    default:
        t->completes_am++;
        break;
    }
}

void bmpi_rma_deliver(int peer, uint8_t am_id, const void *hdr, size_t hdr_len, const void *payload, size_t len)
{
    (void)hdr_len;
    switch (am_id) {
    case BMPI_AM_RMA_PUT:
    case BMPI_AM_RMA_GET:
    case BMPI_AM_RMA_ACC:
    case BMPI_AM_RMA_GACC:
    case BMPI_AM_RMA_CAS:
        serve_op(peer, am_id, hdr, payload, len);
        break;
    case BMPI_AM_RMA_ACK:
    case BMPI_AM_RMA_RESP:
        serve_answer(hdr, payload, len);
        break;
    case BMPI_AM_RMA_BATCH:
        bmpi_rma_batch_serve(peer, hdr, payload, len);
        break;
    case BMPI_AM_RMA_BATCH_ACK:
        bmpi_rma_batch_answered(hdr, payload, len);
        break;
    case BMPI_AM_RMA_ACC_PULL:
        bmpi_rma_pull_serve(peer, hdr, payload, len);
        break;
    default:
        serve_ctl(am_id, peer, hdr);
        break;
    }
}

int bmpi_rma_progress(void)
{
    if (!rma_am.head && !rma_am.waiting_windows)
        return 0;
    int events = drain_queue();
    if (rma_am.waiting_windows)
        events += bmpi_win_foreach(serve_waiters);
    return events;
}
