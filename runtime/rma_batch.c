/*
 * Small Puts, Accumulates and Gets to targets reached by message,
 * gathered into one active message per target (runtime/rma_proto.h,
 * BATCH).
 *
 * Over a network each operation the transport carries alone costs about
 * a message and its acknowledgement; 64 Puts of 8 bytes then take as long
 * as 64 round trips. The standard lets an origin hold a Put or Accumulate
 * back until the next synchronization that completes it, so, as Open
 * MPI's osc/pt2pt does, small ones to a NET or AM target are gathered in
 * a per-target buffer (the data of the larger ones left where the caller
 * has it: BATCH_BY_REF_MIN) and go as one message when:
 *  - the next one does not fit;
 *  - any other operation to that target is issued (it must not overtake
 *    them: accumulates are ordered, and the transport orders messages
 *    per peer);
 *  - something waits for the target's answers (flush, unlock, an
 *    accumulate that changes path: bmpi_rma_wait_answered);
 *  - an active target epoch ends (fence, complete: rma_sync.c).
 * The target applies them in order (Accumulates through the same atomic
 * apply as every other path, runtime/rma_atomic.c). It answers only a
 * batch that something waits for, and that answer counts every batch
 * sent since the last answered one as well: the transport delivers in
 * order per peer, so they were applied first. A batch sent because the
 * buffer was full or another operation follows asks for no answer. At
 * the end of an active target epoch the fence's count or the PSCW
 * complete, which rides in the same message, tells the target the epoch
 * is over, so nothing is answered there and the origin counts them all
 * answered when sent. Errors are answered at once, whatever the batch.
 *
 * Gathered: MPI_Put (and MPI_Rput, whose request completes at once: the
 * data is copied) of at most BMPI_RMA_BATCH bytes (0: none), and
 * MPI_Accumulate (MPI_Raccumulate) of at most four times as many, 32 KiB
 * at most, whose target datatype fits a message; in a fence or PSCW
 * epoch to a target on another node, whose end rides with the batch,
 * Puts and Gets up to that bound too. A record lists the
 * target's segments, or, for a strided target side (a column, a vector)
 * outside dynamic windows, the runs that stand for them, which the target
 * serves in place as it does a message of runs (rma_am.c).
 *
 * Gets are gathered the same way: MPI_Get (not MPI_Rget, whose request
 * nothing would send) of at most twice BMPI_RMA_BATCH bytes, 16 KiB at
 * most. A Get record is the target's segments or runs alone; the target
 * reads them in record order and always answers a batch that holds Gets,
 * whatever it asked, with their data one after the other (none after an
 * error: every Get of that batch ends with it). The origin keeps the Gets
 * sent in a queue per target, in order (the transport delivers in order
 * per peer both ways), and hands each answer's data to the first ones.
 * A gathered Get counts as ordered (win.h, ordered_issued): the target
 * reads it before it takes any later message of this origin, so a fence's
 * count or a PSCW complete may follow it at once, and the data is waited
 * for after (rma_sync.c). One batch's Gets read at most what one answer
 * carries.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/comm.h"
#include "runtime/op.h"
#include "runtime/request.h"
#include "runtime/rma_impl.h"
#include "runtime/rma_proto.h"
#include "runtime/world.h"
#include "transport/copy.h"
#include "transport/transport.h"

/* Default bound on one gathered Put's data: 8 KiB Puts sent alone ran
 * at half the rate of gathered ones between hosts and a quarter over the
 * single copy on a node; from 16 KiB on gathering Puts gained nothing
 * (docs/rma.md, "Small operations gathered"). */
#define BATCH_OP_MAX 8192u
/* An Accumulate is gathered up to four times that bound, at most this:
 * the target's CPU applies it whichever way it comes, where a Put sent
 * alone may be the transport's own put(). With answers only where
 * something waits, 16 KiB Accumulates gathered ran 1.5 times as fast as
 * sent alone between hosts (docs/performance.md). So is every Put and
 * Get in an active target epoch whose end goes with the batch
 * (epoch_end_rides): sent alone, it makes that end wait for its
 * completion first, a round trip more (docs/rma.md, "Small operations
 * gathered"). */
#define BATCH_WIDE_MAX (32u * 1024u)
/* A Get is gathered up to twice the Put bound, at most this: between
 * simulated hosts 64 Gets of 16 KiB ran twice as fast gathered as one
 * transport get() each, of 32 KiB about as fast (docs/rma.md). */
#define BATCH_GET_MAX (16u * 1024u)
/* A strided target side (bmpi_rma_runs_pay) goes into a record as runs,
 * but not in a dynamic window, whose target expands them: there it is
 * gathered up to this much data, as a record that lists every block (two
 * bytes of segments for each byte of a column of doubles), where a
 * message of its own carries runs. Across hosts, Accumulates of every
 * other double listed so ran faster alone from 4 KiB of data on and
 * slower at 2 KiB (docs/performance.md, "Across hosts: what each message
 * costs"). */
#define BATCH_STRIDED_MAX 2048u
/* Bytes of records one message carries at most, and the buffer's first
 * size (it doubles as needed: a window keeps one per target it wrote). */
#define BATCH_BYTES_MAX (64u * 1024u)
#define BATCH_BYTES_FIRST 1024u
/* Target segments looked at per step while a record is built. */
#define SEG_STEP 16
/* A Put's or Accumulate's data of at least this many bytes, contiguous at
 * the origin, stays in the caller's buffer until its batch is sent rather
 * than being copied into the batch: the standard lets nobody change an
 * origin buffer before its operation completes, and whatever completes
 * one sends its batch first. Not for the request forms, whose request
 * completes when the call returns. The copy saved is one of two before
 * the data leaves (the transport packs the message), and the buffer's
 * pages untouched by it cost a first epoch most (docs/rma.md). */
#define BATCH_BY_REF_MIN 1024u
/* So a message holds at most this many such records. */
#define BATCH_REFS_MAX (BATCH_BYTES_MAX / BATCH_BY_REF_MIN)

/* A gathered Get awaiting its data. */
struct sent_get {
    struct bmpi_rma_track *track;
    size_t bytes;
};

/* Data a record carries from the caller's buffer (BATCH_BY_REF_MIN). */
struct data_ref {
    size_t at; /* where in the records it goes */
    const void *data;
    size_t bytes;
};

struct bmpi_rma_batch {
    size_t len, cap; /* bytes of records held here */
    size_t max;      /* what a message may carry and cap grow to, and the most data of one answer */
    size_t ref_bytes; /* bytes the refs add to the message, padded */
    struct data_ref *refs; /* in record order */
    uint32_t nrefs, refs_cap;
    uint32_t nops;
    uint32_t ngets;   /* Get records among the nops */
    size_t get_bytes; /* ... and what they read */
    /* Gets gathered, in order: [gets_head, gets_len) await their data,
     * the last ngets of them still in recs */
    struct sent_get *gets;
    size_t gets_head, gets_len, gets_cap;
    uint64_t recs[]; /* struct bmpi_rma_batch_rec ..., 8-byte aligned */
};

static size_t pad8(size_t n) { return (n + 7) & ~(size_t)7; }

size_t bmpi_rma_batch_limit(void) { return bmpi_env_uint("BMPI_RMA_BATCH", BATCH_OP_MAX); }

static struct bmpi_tl *tl_of(const struct bmpi_win_target *t) { return bmpi_world.peers[t->world].tl; }

static struct bmpi_rma_batch *batch_of(struct bmpi_win_target *t)
{
    if (t->batch)
        return t->batch;
    size_t max_am = tl_of(t)->caps.max_am;
    size_t room = max_am > sizeof(struct bmpi_rma_batch_hdr) ? max_am - sizeof(struct bmpi_rma_batch_hdr) : 0;
    size_t max = room < BATCH_BYTES_MAX ? room & ~(size_t)7 : BATCH_BYTES_MAX;
    if (max < sizeof(struct bmpi_rma_batch_rec) + sizeof(struct bmpi_rma_seg) + 8)
        return NULL;
    size_t cap = max < BATCH_BYTES_FIRST ? max : BATCH_BYTES_FIRST;
    struct bmpi_rma_batch *b = malloc(sizeof *b + cap);
    if (b)
        *b = (struct bmpi_rma_batch){.cap = cap, .max = max};
    return t->batch = b;
}

/* Room for need bytes of records in all, up to max: false when not. */
static bool batch_grow(struct bmpi_win_target *t, size_t need)
{
    struct bmpi_rma_batch *b = t->batch;
    if (need <= b->cap)
        return true;
    if (need > b->max)
        return false;
    size_t cap = b->cap;
    while (cap < need)
        cap = cap * 2 < b->max ? cap * 2 : b->max;
    struct bmpi_rma_batch *g = realloc(b, sizeof *g + cap);
    if (!g)
        return false;
    g->cap = cap;
    t->batch = g;
    return true;
}

void bmpi_rma_batch_free(struct bmpi_win_target *t)
{
    if (t->batch) {
        free(t->batch->gets);
        free(t->batch->refs);
    }
    free(t->batch);
    t->batch = NULL;
}

/* ---- origin -------------------------------------------------------------------- */

bool bmpi_rma_batch_pending(const struct bmpi_win_target *t)
{
    return t->batch && (t->batch->nops || t->batch_unanswered);
}

/* Counts the operations of a batch answered (with status). */
static void count_answered(struct bmpi_win *w, int target, uint32_t nops, int status)
{
    w->t[target].ordered_acked += nops;
    for (uint32_t i = 0; i < nops; i++)
        bmpi_rma_answered(w, target, status);
}

/* A tracking record for Get c, with room to queue it (NULL: out of
 * memory). */
static struct bmpi_rma_track *get_tracked(struct bmpi_win *w, const struct bmpi_rma_call *c)
{
    struct bmpi_rma_batch *b = w->t[c->target].batch;
    if (b->gets_len == b->gets_cap) {
        size_t cap = b->gets_cap ? 2 * b->gets_cap : 16;
        struct sent_get *g = realloc(b->gets, cap * sizeof *g);
        if (!g)
            return NULL;
        b->gets = g;
        b->gets_cap = cap;
    }
    return bmpi_rma_track_new(w, c);
}

/* The Gets queued from index from on end with status (their batch was
 * not sent). */
static void fail_gets(struct bmpi_rma_batch *b, size_t from, int status)
{
    for (size_t i = from; i < b->gets_len; i++)
        bmpi_rma_track_piece(b->gets[i].track, 0, NULL, 0, status);
    b->gets_len = from;
}

/* The first n Gets queued take their data from data[0..len) in order, or
 * end with status. */
static void answer_gets(struct bmpi_rma_batch *b, uint32_t n, const char *data, size_t len, int status)
{
    size_t want = 0;
    for (uint32_t i = 0; i < n && b->gets_head + i < b->gets_len; i++)
        want += b->gets[b->gets_head + i].bytes;
    if (!status && want != len)
        status = MPI_ERR_INTERN;
    for (uint32_t i = 0; i < n && b->gets_head < b->gets_len; i++) {
        struct sent_get *g = &b->gets[b->gets_head++];
        bmpi_rma_track_piece(g->track, 0, status ? NULL : data, status ? 0 : g->bytes, status);
        data += g->bytes;
    }
    if (b->gets_head == b->gets_len)
        b->gets_head = b->gets_len = 0;
}

/* The message of b's records in iov, the data they refer to in its place
 * (at most 3 * BATCH_REFS_MAX + 1 pieces): how many pieces. */
static int message_iov(const struct bmpi_rma_batch *b, struct iovec *iov)
{
    static const uint64_t zeros;
    size_t from = 0;
    int n = 0;
    for (uint32_t i = 0; i < b->nrefs; i++) {
        const struct data_ref *r = &b->refs[i];
        iov[n++] = (struct iovec){(char *)b->recs + from, r->at - from};
        iov[n++] = (struct iovec){(void *)r->data, r->bytes};
        if (pad8(r->bytes) != r->bytes)
            iov[n++] = (struct iovec){(void *)&zeros, pad8(r->bytes) - r->bytes};
        from = r->at;
    }
    if (b->len > from)
        iov[n++] = (struct iovec){(char *)b->recs + from, b->len - from};
    return n;
}

static void count_sent(struct bmpi_win_batches *n, const struct bmpi_rma_batch *b)
{
    n->sent++;
    n->ops += b->nops;
    n->by_ref += b->nrefs;
    if (b->len + b->ref_bytes > n->largest)
        n->largest = b->len + b->ref_bytes;
    if (b->len > n->largest_copied)
        n->largest_copied = b->len;
}

/* How a batch is sent: what its answer counts, and when its operations
 * count as answered here. */
enum batch_send {
    BATCH_ANSWERED,  /* the target answers for it and every unanswered one */
    BATCH_UNANSWERED, /* no answer: a later BATCH_ANSWERED one counts it */
    BATCH_END_EPOCH, /* no answer: all count as answered when sent */
};

/* The records gathered for target. With nothing gathered but unanswered
 * operations left, BATCH_ANSWERED sends an empty batch to have them
 * answered, BATCH_END_EPOCH counts them (one with a PSCW complete sends
 * it in an empty batch). */
static int send_batch(struct bmpi_win *w, int target, enum batch_send how, uint32_t flags)
{
    struct bmpi_win_target *t = &w->t[target];
    struct bmpi_rma_batch *b = t->batch;
    if (!b || (!b->nops && (how == BATCH_UNANSWERED || !t->batch_unanswered)))
        return BMPI_OK;
    if (!b->nops && how == BATCH_END_EPOCH && !(flags & BMPI_RMA_BATCH_COMPLETE)) {
        count_answered(w, target, t->batch_unanswered, 0);
        t->batch_unanswered = 0;
        return BMPI_OK;
    }
    if (how == BATCH_UNANSWERED && t->batch_unanswered > UINT32_MAX / 2)
        how = BATCH_ANSWERED; /* the count must fit the answer */
    uint32_t nops = b->nops - b->ngets; /* what the answer counts */
    uint32_t counted = t->batch_unanswered + nops;
    struct bmpi_rma_batch_hdr h = {.win = t->handle, .origin_win = w->handle, .origin = w->comm->rank,
                                   .nops = b->nops, .fences = (uint32_t)w->fences, .target = target,
                                   .flags = flags | (how == BATCH_ANSWERED ? BMPI_RMA_BATCH_ANSWER : 0),
                                   .answers = counted, .ngets = b->ngets, .get_bytes = (uint32_t)b->get_bytes};
    struct iovec iov[3 * BATCH_REFS_MAX + 1];
    int err = bmpi_rma_am_send(t->world, BMPI_AM_RMA_BATCH, &h, sizeof h, iov, message_iov(b, iov));
    if (err)
        fail_gets(b, b->gets_len - b->ngets, err);
    else
        count_sent(&w->batches, b);
    b->len = b->ref_bytes = 0;
    b->nrefs = 0;
    b->nops = b->ngets = 0;
    b->get_bytes = 0;
    if (how == BATCH_UNANSWERED && !err) {
        t->batch_unanswered += nops;
        return BMPI_OK;
    }
    t->batch_unanswered = 0;
    /* on error answered now, so that nobody waits for them */
    if (err || how == BATCH_END_EPOCH)
        count_answered(w, target, counted, err);
    return err;
}

int bmpi_rma_batch_send(struct bmpi_win *w, int target)
{
    return send_batch(w, target, BATCH_ANSWERED, 0);
}

int bmpi_rma_batch_send_ahead(struct bmpi_win *w, int target)
{
    return send_batch(w, target, BATCH_UNANSWERED, 0);
}

int bmpi_rma_batch_end_epoch(struct bmpi_win *w, int target, bool complete)
{
    return send_batch(w, target, BATCH_END_EPOCH, complete ? BMPI_RMA_BATCH_COMPLETE : 0);
}

uint64_t bmpi_rma_batch_gets_unanswered(const struct bmpi_win_target *t)
{
    return t->batch ? t->batch->gets_len - t->batch->gets_head : 0;
}

/* Bytes of the segments or runs that follow a record. */
static size_t targets_len(const struct bmpi_rma_batch_rec *rec)
{
    return rec->runs ? rec->runs * sizeof(struct bmpi_rma_run) : rec->nseg * sizeof(struct bmpi_rma_seg);
}

/* Bytes of data that follow them: a Get's come back in the answer. */
static size_t data_len(const struct bmpi_rma_batch_rec *rec)
{
    return rec->am_id == BMPI_AM_RMA_GET ? 0 : rec->bytes;
}

static uint16_t record_id(enum bmpi_rma_kind kind)
{
    return kind == BMPI_RMA_PUT ? BMPI_AM_RMA_PUT : kind == BMPI_RMA_GET ? BMPI_AM_RMA_GET : BMPI_AM_RMA_ACC;
}

/* Lists c's target segments after rec in room bytes: false when they do
 * not fit (nothing kept then). */
static bool append_segments(struct bmpi_rma_batch_rec *rec, const struct bmpi_rma_call *c, size_t room)
{
    struct bmpi_dt_cursor tc;
    /* displacements from the target's base (dynamic windows: addresses) */
    bmpi_dt_cursor_init(&tc, (void *)(uintptr_t)c->offset, c->tcount, c->tdt);
    struct bmpi_rma_seg *seg = (struct bmpi_rma_seg *)(rec + 1);
    struct iovec iov[SEG_STEP];
    size_t bytes;
    int n;
    rec->nseg = 0;
    while ((n = bmpi_dt_iov(&tc, iov, SEG_STEP, SIZE_MAX, &bytes)) > 0) {
        if ((rec->nseg + (size_t)n) * sizeof *seg > room)
            return false;
        for (int i = 0; i < n; i++)
            seg[rec->nseg++] = (struct bmpi_rma_seg){(uint64_t)(uintptr_t)iov[i].iov_base, iov[i].iov_len};
    }
    return true;
}

/* Lists c's target side after rec as runs in room bytes: false when they
 * do not fit (nothing kept then). */
static bool append_runs(struct bmpi_rma_batch_rec *rec, const struct bmpi_rma_call *c, size_t room)
{
    struct bmpi_dt_cursor tc;
    bmpi_dt_cursor_init(&tc, (void *)(uintptr_t)c->offset, c->tcount, c->tdt);
    struct bmpi_rma_run *runs = (struct bmpi_rma_run *)(rec + 1);
    size_t max = room / sizeof *runs < UINT16_MAX ? room / sizeof *runs : UINT16_MAX;
    struct bmpi_dt_run r;
    uint64_t blocks = 0;
    uint32_t m = 0;
    while (bmpi_dt_next_run(&tc, SIZE_MAX, SIZE_MAX, &r)) {
        if (m == max)
            return false; /* no room for a run of its own */
        bmpi_rma_run_add(runs, &m, &r);
        blocks += r.count;
    }
    if (blocks > UINT32_MAX)
        return false;
    rec->runs = (uint16_t)m;
    rec->nseg = (uint32_t)blocks;
    return true;
}

/* Where c's data starts, its origin datatype being contiguous. */
static const char *contig_origin(const struct bmpi_rma_call *c)
{
    return (const char *)c->origin + bmpi_dt_true_lb(c->odt);
}

/* Whether c's data goes by reference (BATCH_BY_REF_MIN), with room in
 * b's list for it. */
static bool by_reference(struct bmpi_rma_batch *b, const struct bmpi_rma_call *c)
{
    if (c->kind == BMPI_RMA_GET || c->req || c->bytes < BATCH_BY_REF_MIN || !bmpi_dt_is_contig(c->odt))
        return false;
    if (b->nrefs < b->refs_cap)
        return true;
    uint32_t cap = b->refs_cap ? 2 * b->refs_cap : 8;
    struct data_ref *r = realloc(b->refs, cap * sizeof *r);
    if (!r)
        return false; /* copied then */
    b->refs = r;
    b->refs_cap = cap;
    return true;
}

/* Whether b's message has room for c's record header and data (and its
 * answer for a Get's). */
static bool message_has_room(const struct bmpi_rma_batch *b, const struct bmpi_rma_call *c)
{
    bool get = c->kind == BMPI_RMA_GET;
    size_t data_pad = get ? 0 : pad8(c->bytes);
    return b->len + b->ref_bytes + sizeof(struct bmpi_rma_batch_rec) + data_pad <= b->max &&
           (!get || b->get_bytes + c->bytes <= b->max);
}

/* Builds c's record at the end of b, its target side as runs or as
 * segments: false when it does not fit in the buffer or the message. */
static bool append_record(struct bmpi_rma_batch *b, const struct bmpi_rma_call *c, bool as_runs)
{
    bool get = c->kind == BMPI_RMA_GET;
    size_t data_pad = get ? 0 : pad8(c->bytes);
    size_t head = sizeof(struct bmpi_rma_batch_rec);
    if (!message_has_room(b, c))
        return false;
    bool by_ref = by_reference(b, c);
    size_t here_pad = by_ref ? 0 : data_pad;
    if (b->len + head + here_pad > b->cap)
        return false;
    struct bmpi_rma_batch_rec *rec = (struct bmpi_rma_batch_rec *)((char *)b->recs + b->len);
    /* room for the target side: in the buffer, and in the message */
    size_t room = b->cap - b->len - head - here_pad;
    size_t message_room = b->max - b->len - b->ref_bytes - head - data_pad;
    if (message_room < room)
        room = message_room;
    rec->runs = 0;
    if (!(as_runs ? append_runs(rec, c, room) : append_segments(rec, c, room)))
        return false;
    rec->am_id = record_id(c->kind);
    rec->op = c->op ? c->op->handle : MPI_OP_NULL;
    rec->basic = c->basic;
    rec->bytes = c->bytes;
    char *data = (char *)(rec + 1) + targets_len(rec);
    if (get)
        b->get_bytes += c->bytes;
    else if (by_ref)
        b->refs[b->nrefs++] = (struct data_ref){(size_t)(data - (char *)b->recs), contig_origin(c), c->bytes};
    else if (bmpi_dt_is_contig(c->odt))
        bmpi_copy(data, contig_origin(c), c->bytes);
    else
        bmpi_dt_pack_all(c->origin, c->ocount, c->odt, data);
    b->len += (size_t)(data - (char *)rec) + here_pad;
    b->ref_bytes += data_pad - here_pad;
    b->nops++;
    b->ngets += get;
    return true;
}

/* Whether the message that ends the active target epoch to t goes with
 * t's batch: t is signalled by active message, not in the node region
 * (win.h, completes_out), so a fence's count or a PSCW complete to it
 * rides in the batch (rma_sync.c). */
static bool epoch_end_rides(const struct bmpi_win *w, const struct bmpi_win_target *t)
{
    return !t->completes_out && (w->access == BMPI_EPOCH_FENCE || w->access == BMPI_EPOCH_PSCW);
}

/* The most bytes of one operation of c's kind gathered to t. */
static size_t kind_bound(const struct bmpi_win *w, const struct bmpi_win_target *t, enum bmpi_rma_kind kind)
{
    size_t bound = w->batch_max;
    if (kind == BMPI_RMA_ACC || epoch_end_rides(w, t))
        return bound > BATCH_WIDE_MAX / 4 ? BATCH_WIDE_MAX : 4 * bound;
    if (kind == BMPI_RMA_GET)
        return bound > BATCH_GET_MAX / 2 ? BATCH_GET_MAX : 2 * bound;
    return bound;
}

bool bmpi_rma_batch_fits(const struct bmpi_win *w, const struct bmpi_rma_call *c)
{
    const struct bmpi_win_target *t = &w->t[c->target];
    size_t bound = kind_bound(w, t, c->kind);
    bool kind_fits = c->kind == BMPI_RMA_PUT || (c->kind == BMPI_RMA_ACC && c->origin) ||
                     (c->kind == BMPI_RMA_GET && !c->req);
    return kind_fits && c->bytes && c->bytes <= bound &&
           (t->path == BMPI_RMA_NET || t->path == BMPI_RMA_AM) &&
           (c->bytes <= BATCH_STRIDED_MAX || bmpi_dt_is_contig(c->tdt) || w->flavor != MPI_WIN_FLAVOR_DYNAMIC ||
            !bmpi_rma_runs_pay(c));
}

/* Appends c's record, growing the buffer a step at a time (batch_grow
 * doubles it, the last step up to max) as far as it may: while the
 * message has room for it and the buffer holds less than the message
 * may besides the data it refers to. */
static bool append_growing(struct bmpi_win_target *t, const struct bmpi_rma_call *c, bool as_runs)
{
    struct bmpi_rma_batch *b;
    while (!append_record(b = t->batch, c, as_runs))
        if (!message_has_room(b, c) || b->cap >= b->max - b->ref_bytes || !batch_grow(t, b->cap + 1))
            return false;
    return true;
}

int bmpi_rma_batch_add(struct bmpi_win *w, const struct bmpi_rma_call *c, bool *taken)
{
    struct bmpi_win_target *t = &w->t[c->target];
    *taken = false;
    if (!batch_of(t))
        return BMPI_OK;
    /* a Get's tracking record and room for it in the queue come first:
     * nothing can fail once its record is in */
    struct bmpi_rma_track *track = NULL;
    if (c->kind == BMPI_RMA_GET && !(track = get_tracked(w, c)))
        return BMPI_OK; /* out of memory: the caller sends it alone */
    bool as_runs = w->flavor != MPI_WIN_FLAVOR_DYNAMIC && bmpi_rma_runs_pay(c);
    if (!append_growing(t, c, as_runs)) {
        int err = bmpi_rma_batch_send_ahead(w, c->target);
        if (err || !append_record(t->batch, c, as_runs)) {
            if (track)
                bmpi_rma_track_drop(track);
            return err; /* too large for one message: the caller sends it alone */
        }
    }
    *taken = true;
    t->issued++;
    t->ordered_issued++;
    w->ops_pending++;
    if (track) {
        track->ordered = true;
        t->batch->gets[t->batch->gets_len++] = (struct sent_get){track, c->bytes};
        return BMPI_OK;
    }
    if (c->req && c->req->pending_ops == 0)
        bmpi_request_complete(c->req); /* the data is copied: locally complete */
    return BMPI_OK;
}

void bmpi_rma_batch_answered(const struct bmpi_rma_batch_answer *a, const void *data, size_t len)
{
    struct bmpi_win *w = bmpi_win_get(a->origin_win);
    if (!w || a->target < 0 || a->target >= w->comm->size)
        return;
    if (a->status && !w->op_error)
        w->op_error = a->status;
    count_answered(w, a->target, a->nops, 0);
    struct bmpi_rma_batch *b = w->t[a->target].batch;
    if (a->ngets && b)
        answer_gets(b, a->ngets, data, len, a->status);
}

/* ---- target -------------------------------------------------------------------- */

/* Whether a record's runs lie in the window and stand for its nseg
 * blocks and its bytes of data. */
static bool runs_fit(const struct bmpi_win *w, const struct bmpi_rma_batch_rec *rec, const struct bmpi_rma_run *r)
{
    uint64_t bytes;
    return bmpi_rma_runs_in_window(w, r, rec->runs, rec->nseg, &bytes) && bytes == rec->bytes;
}

/* Whether a record's segments lie in the window and cover its data. */
static bool segments_fit(const struct bmpi_win *w, const struct bmpi_rma_batch_rec *rec,
                         const struct bmpi_rma_seg *seg)
{
    uint64_t bytes = 0;
    for (uint32_t i = 0; i < rec->nseg; i++) {
        if (!bmpi_rma_am_segment(w, &seg[i]))
            return false;
        bytes += seg[i].len;
    }
    return bytes == rec->bytes;
}

/* Serves a record whose targets are checked: a Put's or Accumulate's
 * data goes into the window, a Get's bytes into out. */
static void apply_record(struct bmpi_win *w, const struct bmpi_rma_batch_rec *rec, const void *targets,
                         const char *data, char *out)
{
    bool get = rec->am_id == BMPI_AM_RMA_GET;
    if (rec->runs) {
        const struct bmpi_rma_run *r = targets;
        for (uint32_t i = 0; i < rec->runs; i++) {
            bmpi_rma_serve_run(w, (uint8_t)rec->am_id, rec->op, rec->basic, &r[i], data, out);
            if (get)
                out += r[i].count * r[i].len;
            else
                data += r[i].count * r[i].len;
        }
        return;
    }
    const struct bmpi_rma_seg *seg = targets;
    if (rec->am_id == BMPI_AM_RMA_ACC) {
        bmpi_rma_apply_segments(w, rec->op, rec->basic, seg, NULL, rec->nseg, data, NULL);
        return;
    }
    for (uint32_t i = 0; i < rec->nseg; i++) {
        char *at = bmpi_rma_am_segment(w, &seg[i]);
        if (get) {
            bmpi_copy(out, at, seg[i].len);
            out += seg[i].len;
        } else {
            bmpi_copy(at, data, seg[i].len);
            data += seg[i].len;
        }
    }
}

/* The record at p, if the bytes left hold all of it: its length. */
static size_t record_len(const char *p, size_t left)
{
    const struct bmpi_rma_batch_rec *rec = (const void *)p;
    if (left < sizeof *rec || (rec->runs ? rec->runs > left / sizeof(struct bmpi_rma_run)
                                         : rec->nseg > left / sizeof(struct bmpi_rma_seg)))
        return 0;
    size_t head = sizeof *rec + targets_len(rec);
    if (head > left || data_len(rec) > left - head || pad8(head + data_len(rec)) > left)
        return 0;
    return pad8(head + data_len(rec));
}

/* Serves a batch's records in order, the Gets' bytes into
 * reply[0..h->get_bytes): the first error. */
static int serve_records(struct bmpi_win *w, const struct bmpi_rma_batch_hdr *h, const char *p, size_t len,
                         char *reply)
{
    int status = 0;
    size_t got = 0;
    for (uint32_t i = 0; i < h->nops; i++) {
        size_t n = record_len(p, len);
        const struct bmpi_rma_batch_rec *rec = (const void *)p;
        bool get = n && rec->am_id == BMPI_AM_RMA_GET;
        if (!n || (get && rec->bytes > h->get_bytes - got))
            return MPI_ERR_INTERN;
        const void *targets = rec + 1;
        if (rec->runs ? runs_fit(w, rec, targets) : segments_fit(w, rec, targets))
            apply_record(w, rec, targets, (const char *)targets + targets_len(rec), get ? reply + got : NULL);
        else if (!status)
            status = MPI_ERR_RMA_RANGE;
        got += get ? rec->bytes : 0;
        p += n;
        len -= n;
    }
    return got == h->get_bytes || status ? status : MPI_ERR_INTERN;
}

void bmpi_rma_batch_serve(int peer, const struct bmpi_rma_batch_hdr *h, const void *payload, size_t len)
{
    struct bmpi_win *w = bmpi_win_get(h->win);
    struct bmpi_rma_batch_answer a = {.origin_win = h->origin_win, .target = h->target,
                                      .status = !w ? MPI_ERR_WIN : h->ngets > h->nops ? MPI_ERR_INTERN : 0,
                                      .ngets = h->ngets};
    char *reply = NULL;
    if (!a.status && h->ngets && !(reply = malloc(h->get_bytes ? h->get_bytes : 1)))
        a.status = MPI_ERR_NO_MEM;
    if (w) /* counted applied even when refused: a fence waits for the count */
        w->ordered_applied[h->fences & 1] += h->nops;
    if (!a.status)
        a.status = serve_records(w, h, payload, len, reply);
    if (w && (h->flags & BMPI_RMA_BATCH_COMPLETE) && h->origin >= 0 && h->origin < w->comm->size)
        w->t[h->origin].completes_am++;
    if (h->flags & BMPI_RMA_BATCH_ANSWER)
        a.nops = h->answers;
    else if (!a.status && !h->ngets)
        return;
    else
        a.nops = 0; /* counted by the origin otherwise */
    struct iovec data = {reply, a.status ? 0 : h->get_bytes};
    int rc = bmpi_rma_am_send(peer, BMPI_AM_RMA_BATCH_ACK, &a, sizeof a, &data, data.iov_len ? 1 : 0);
    free(reply);
    if (rc)
        bmpi_err_comm(MPI_COMM_WORLD, rc, "MPI progress", "cannot answer the RMA operations of peer %d", peer);
}
