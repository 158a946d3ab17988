/*
 * Large Accumulates to a target the origin reaches over a transport with
 * get(): the target pulls the origin's data (runtime/rma_proto.h,
 * ACC_PULL) instead of receiving it in active messages.
 *
 * As active messages an accumulate travels in pieces of at most one
 * message (max_am, tens of KiB), each copied into the transport's send
 * buffer and out of its receive buffer, and over TCP every message costs
 * about as much as another whatever its size (docs/performance.md). The
 * pull moves the data with the transport's own RMA, in the transport's
 * pieces, straight into a staging buffer at the target; the origin sends
 * one small message for up to PULL_MSG_MAX bytes. MPICH and Open MPI
 * pull large messages of point-to-point the same way (runtime/p2p.c,
 * rget).
 *
 * Origin: the data, the user's buffer when contiguous or else a packed
 * copy, is registered with the transport for the whole call; the
 * registration and the copy go with the call's last answer (rma.c,
 * bmpi_rma_track_drop), which the target sends once it has applied the
 * data. These operations are therefore not "ordered" (win.h): the end of
 * an epoch waits for their answers, and an accumulate that takes another
 * path waits for them first (bmpi_rma_acc_order).
 *
 * Target: gets complete in any order, but accumulates from one origin are
 * applied in the order issued. A window keeps the pulls asked of it in
 * arrival order and applies each once it and every pull ahead of it are
 * in, through the same element-wise atomic apply as every other path.
 *
 * Calls: rma_am.c (messages, segments, apply, answers), the transport's
 * mem_reg/rkey_pack/mem_dereg/get.
 */
#include "config.h"

#include <assert.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "runtime/comm.h"
#include "runtime/error.h"
#include "runtime/rma_impl.h"
#include "runtime/rma_proto.h"
#include "runtime/world.h"
#include "transport/transport.h"

static_assert(BMPI_RMA_PULL_RKEY_MAX >= BMPI_TL_RKEY_MAX, "a transport's rkey fits an ACC_PULL message");

/* Accumulates of at least this many bytes are pulled: from 64 KiB one
 * goes as two or more active messages (docs/rma.md, "Large accumulates
 * pulled"). */
#define PULL_MIN_DEFAULT (64u * 1024u)
/* Bytes one ACC_PULL message asks for at most. */
#define PULL_MSG_MAX (1u << 20)
/* Pulls a window runs at once; the others wait their turn, so that
 * their staging buffers can be reused: fresh ones cost a page fault per
 * page, which made 16 pulls of 1 MiB at once, each with a buffer of its
 * own, slower than active messages. The transport bounds the bytes in
 * flight anyway. */
#define PULL_RUNNING 4

/* A staging buffer for the data of one pull. */
struct bmpi_rma_stage {
    struct bmpi_rma_stage *next; /* among a window's spares */
    size_t cap;
    char data[];
};

/* A pull asked of this target: the message, where its segments lie
 * here, where the data lies at the origin, and once started the staging
 * buffer the get fills. */
struct bmpi_rma_pulled {
    struct bmpi_rma_pulled *next;
    struct bmpi_win *w;
    int peer;
    struct bmpi_rma_stage *stage; /* NULL until started */
    bool done;                    /* the get has completed ... */
    int status;                   /* ... with this */
    size_t bytes;
    struct bmpi_rma_pull src;
    struct bmpi_rma_op_hdr h;
    struct bmpi_rma_seg segs[RMA_AM_MAX_SEGS];
    char *at[RMA_AM_MAX_SEGS];
};

size_t bmpi_rma_pull_limit(void) { return bmpi_env_uint("BMPI_RMA_ACC_PULL", PULL_MIN_DEFAULT); }

static struct bmpi_tl *tl_to(const struct bmpi_win_target *t) { return bmpi_world.peers[t->world].tl; }

/* Whether the first message would carry pull_min bytes: a target type
 * of many small blocks would make as many pulls as active messages. */
static bool first_message_full(const struct bmpi_rma_call *c, size_t pull_min)
{
    if (bmpi_dt_is_contig(c->tdt))
        return true;
    struct iovec iov[RMA_AM_MAX_SEGS];
    size_t bytes;
    bmpi_rma_target_pieces(c, iov, RMA_AM_MAX_SEGS, pull_min, &bytes);
    return bytes >= pull_min;
}

bool bmpi_rma_pull_fits(const struct bmpi_win *w, const struct bmpi_rma_call *c)
{
    const struct bmpi_win_target *t = &w->t[c->target];
    unsigned rma = tl_to(t)->caps.flags & (BMPI_TL_RMA_GET | BMPI_TL_RMA_CPU);
    return c->kind == BMPI_RMA_ACC && c->origin && w->pull_min && c->bytes >= w->pull_min &&
           (t->path == BMPI_RMA_NET || t->path == BMPI_RMA_AM) && rma == BMPI_TL_RMA_GET &&
           first_message_full(c, w->pull_min);
}

/* ---- origin -------------------------------------------------------------------- */

/* The origin data as one contiguous run, registered with tl until the
 * track ends; src says where it lies. */
static int pull_source(struct bmpi_tl *tl, struct bmpi_rma_track *track, const struct bmpi_rma_call *c,
                       struct bmpi_rma_pull *src)
{
    char *base;
    if (bmpi_dt_is_contig(c->odt)) {
        base = (char *)c->origin + bmpi_dt_true_lb(c->odt);
    } else {
        if (!(track->bounce = malloc(c->bytes)))
            return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory staging an accumulate of %zu bytes", c->bytes);
        bmpi_dt_pack_all(c->origin, c->ocount, c->odt, track->bounce);
        base = track->bounce;
    }
    int err = tl->ops->mem_reg(tl, base, c->bytes, &track->memh);
    if (err)
        return err;
    track->reg_tl = tl;
    *src = (struct bmpi_rma_pull){.addr = (uint64_t)(uintptr_t)base};
    size_t klen = sizeof src->rkey;
    err = tl->ops->rkey_pack(tl, track->memh, src->rkey, &klen);
    src->rkey_len = (uint32_t)klen;
    return err;
}

int bmpi_rma_pull_issue(struct bmpi_win *w, const struct bmpi_rma_call *c)
{
    struct bmpi_win_target *t = &w->t[c->target];
    struct bmpi_tl *tl = tl_to(t);
    struct bmpi_rma_track *track = bmpi_rma_track_new(w, c);
    if (!track)
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory for an RMA operation");
    struct bmpi_rma_pull src;
    int err = pull_source(tl, track, c, &src);
    size_t elem = (size_t)bmpi_dt_size(bmpi_dt_get(c->basic));
    size_t budget = tl->caps.rma_limit && tl->caps.rma_limit < PULL_MSG_MAX ? tl->caps.rma_limit : PULL_MSG_MAX;
    budget -= budget % elem;
    struct bmpi_dt_cursor tc;
    bmpi_dt_cursor_init(&tc, (void *)(uintptr_t)c->offset, c->tcount, c->tdt);
    struct iovec iov[RMA_AM_MAX_SEGS];
    size_t bytes;
    uint64_t off = 0, base = src.addr;
    int n;
    while (!err && (n = bmpi_dt_iov(&tc, iov, RMA_AM_MAX_SEGS, budget, &bytes)) > 0) {
        src.addr = base + off;
        struct iovec desc = {&src, offsetof(struct bmpi_rma_pull, rkey) + src.rkey_len};
        err = bmpi_rma_am_send_piece(w, c, track, BMPI_AM_RMA_ACC_PULL, iov, n, off, desc);
        off += bytes;
    }
    bmpi_rma_track_drop(track);
    return err;
}

/* ---- target -------------------------------------------------------------------- */

/* A staging buffer of at least bytes: a spare of w, or a new one. New
 * ones are private anonymous memory faulted in by one call: from the
 * shared heap (malloc) each page's first touch is a shared-memory fault,
 * which made a window's first pull slower (docs/rma.md, "Large
 * accumulates pulled"). */
static struct bmpi_rma_stage *stage_get(struct bmpi_win *w, size_t bytes)
{
    for (struct bmpi_rma_stage **sp = &w->pull_spares; *sp; sp = &(*sp)->next)
        if ((*sp)->cap >= bytes) {
            struct bmpi_rma_stage *st = *sp;
            *sp = st->next;
            return st;
        }
    void *m = mmap(NULL, sizeof(struct bmpi_rma_stage) + bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    struct bmpi_rma_stage *st = m;
    st->cap = bytes;
    return st;
}

static void stage_free(struct bmpi_rma_stage *st) { munmap(st, sizeof *st + st->cap); }

/* Kept for the next pull while fewer than PULL_RUNNING are (a window
 * never needs more at once), else freed. */
static void stage_put(struct bmpi_win *w, struct bmpi_rma_stage *st)
{
    int kept = 0;
    for (struct bmpi_rma_stage *k = w->pull_spares; k; k = k->next)
        kept++;
    if (kept + w->pulls_running >= PULL_RUNNING) {
        stage_free(st);
        return;
    }
    st->next = w->pull_spares;
    w->pull_spares = st;
}

void bmpi_rma_pull_forget(struct bmpi_win *w)
{
    while (w->pull_spares) {
        struct bmpi_rma_stage *st = w->pull_spares;
        w->pull_spares = st->next;
        stage_free(st);
    }
}

static void pulled(void *ctx, int status);

/* Starts the gets of the waiting pulls, in order, up to PULL_RUNNING. */
static void start_pulls(struct bmpi_win *w)
{
    for (struct bmpi_rma_pulled *p = w->pulls; p && w->pulls_running < PULL_RUNNING; p = p->next) {
        if (p->stage || p->done)
            continue;
        if (!(p->stage = stage_get(w, p->bytes))) {
            p->done = true;
            p->status = MPI_ERR_NO_MEM;
            continue;
        }
        w->pulls_running++;
        struct bmpi_tl *tl = bmpi_world.peers[p->peer].tl;
        int rc = tl->ops->get(tl, p->peer, p->stage->data, NULL, p->bytes, p->src.addr, p->src.rkey,
                              p->src.rkey_len, pulled, p);
        if (rc) {
            w->pulls_running--;
            p->done = true;
            p->status = rc;
        }
    }
}

/* Applies and answers the pulls at the head of w's list that are in. */
static void apply_ready(struct bmpi_win *w)
{
    struct bmpi_rma_pulled *p;
    while ((p = w->pulls) && p->done) {
        if (!(w->pulls = p->next))
            w->pulls_tail = NULL;
        if (!p->status)
            bmpi_rma_am_apply(w, &p->h, p->segs, p->at, p->stage->data, NULL);
        bmpi_rma_am_answer(p->peer, &p->h, w->comm->rank, p->status, NULL, 0);
        if (p->stage)
            stage_put(w, p->stage);
        free(p);
    }
}

static void pulled(void *ctx, int status)
{
    struct bmpi_rma_pulled *p = ctx;
    struct bmpi_win *w = p->w;
    w->pulls_running--;
    p->done = true;
    p->status = status;
    apply_ready(w);
    start_pulls(w);
}

/* The origin's description of its data, or false when the message is
 * too short to hold one. */
static bool read_source(const char *payload, size_t len, size_t seg_bytes, struct bmpi_rma_pull *src)
{
    size_t fixed = offsetof(struct bmpi_rma_pull, rkey);
    if (len < seg_bytes + fixed)
        return false;
    memcpy(src, payload + seg_bytes, fixed);
    if (src->rkey_len > sizeof src->rkey || len < seg_bytes + fixed + src->rkey_len)
        return false;
    memcpy(src->rkey, payload + seg_bytes + fixed, src->rkey_len);
    return true;
}

void bmpi_rma_pull_serve(int peer, const struct bmpi_rma_op_hdr *h, const void *payload, size_t len)
{
    char *at[RMA_AM_MAX_SEGS];
    size_t bytes;
    struct bmpi_win *w = bmpi_rma_am_target(peer, h, payload, len, at, &bytes);
    if (!w)
        return;
    struct bmpi_rma_pulled *p = malloc(sizeof *p);
    if (!p) {
        bmpi_rma_am_answer(peer, h, w->comm->rank, MPI_ERR_NO_MEM, NULL, 0);
        return;
    }
    *p = (struct bmpi_rma_pulled){.w = w, .peer = peer, .bytes = bytes, .h = *h};
    const struct bmpi_rma_seg *segs = payload;
    size_t seg_bytes = (size_t)h->nseg * sizeof *segs;
    if (!read_source(payload, len, seg_bytes, &p->src)) {
        bmpi_rma_am_answer(peer, h, w->comm->rank, MPI_ERR_INTERN, NULL, 0);
        free(p);
        return;
    }
    memcpy(p->segs, segs, seg_bytes);
    memcpy(p->at, at, h->nseg * sizeof at[0]);
    *(w->pulls ? &w->pulls_tail->next : &w->pulls) = p;
    w->pulls_tail = p;
    start_pulls(w);
    apply_ready(w); /* one that could not start */
}
