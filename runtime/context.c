/*
 * Context id allocation by agreement (see context.h for the scheme).
 *
 * The agreement is one binomial-tree reduce to member 0 followed by a
 * binomial broadcast: the bitmaps are ANDed on the way up, and each member's
 * few ints (a split's colour and key) are gathered along with them, so
 * MPI_Comm_split costs one round trip of the tree, not an allgather plus an
 * allreduce. It runs on the parent's collective context with negative tags
 * that no collective uses, so it needs nothing from collectives/ and cannot
 * be confused with a collective in flight. MPI_Comm_idup's agreement is
 * the same tree as a state machine that bmpi_progress() drives
 * (bmpi_ctx_progress, at the end of this file).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/context.h"
#include "runtime/error.h"
#include "runtime/p2p.h"
#include "runtime/world.h"

/*
 * Ids agreed ahead for later creations over all of one communicator (its
 * dups mostly): every member reserved the same ones in the same agreement
 * and consumes them in the same order, because creations over one
 * communicator are collective and ordered, so they stay identical
 * everywhere and a dup needs no message at all. The batch doubles with
 * each refill (1, 2, 4 ... BMPI_CTX_BATCH), so a communicator dup'ed once
 * hoards nothing and a loop of dup/free agrees once per 64 dups.
 */
#define BMPI_CTX_BATCH 64

struct ctx_cache {
    struct ctx_cache *next;
    uint32_t owner; /* context id of the communicator */
    int n, at;      /* ids[at .. n) are still unused */
    int batch;      /* size of the next refill */
    uint32_t ids[BMPI_CTX_BATCH];
};

/* What travels along the tree of a nonblocking agreement: of the round's
 * word, the pairs offered by everyone below and the pairs free (offered
 * or not) everywhere below; and how many words on (cyclically) the next
 * word lies in which every process below has a free pair. */
struct nb_msg {
    uint64_t pairs, free;
    int32_t hop;
    int32_t unused;
};

/* Children of a binomial tree node: at most one per bit of an int. */
#define NB_MAX_CHILDREN 32
/* A round offers one of 8 lanes of its word (pairs s with s % 8 == lane). */
#define NB_LANES 8
#define NB_LANE0 0x0101010101010101ull

/*
 * A nonblocking agreement (MPI_Comm_idup) in flight. Each round offers
 * some free pairs of one bitmap word and holds them (no other agreement on
 * this process is offered them until the round ends), so whatever the
 * round picks is still free here when it ends, however many creations ran
 * in between. The first round on a word offers a lane drawn from the
 * agreement's identity; when a round finds pairs free everywhere but not
 * offered everywhere (held by other agreements, started in another order
 * on some process), the next tries a few of those, drawn again, so
 * agreements in contention spread over them instead of chasing each other
 * through the words. When the word has too few pairs free everywhere, all
 * members move to the same later word.
 */
struct bmpi_ctx_nb {
    struct bmpi_ctx_nb *next;
    struct bmpi_comm *tree;   /* its members agree over its collective context */
    struct bmpi_comm *bridge; /* an intercommunicator whose leaders swap; or NULL */
    int up_tag, down_tag, swap_tag;
    int nids;
    uint64_t identity; /* the same on every member: context id and sequence number */
    int round, word;
    int dry; /* rounds in a row on words without nids pairs free everywhere */
    uint64_t target; /* the pairs of word this round tries; 0: a lane */
    uint64_t held;   /* offered in this round */
    enum { NB_UP, NB_SWAP, NB_DOWN, NB_FLUSH } phase;
    struct nb_msg acc, up, theirs, from_child[NB_MAX_CHILDREN];
    struct bmpi_request *reqs[NB_MAX_CHILDREN + 2];
    int nreqs, err;
    void (*done)(void *arg, int err, const uint32_t *ids);
    void *arg;
};

/* Bit s set: pair s (ids 2s, 2s+1) is free on this process. */
static struct {
    int ready;
    uint64_t free_mask[BMPI_CTX_WORDS];
    struct ctx_cache *caches;
} ctx;

/* The pairs of word w free here and not held by a nonblocking agreement
 * in flight (held pairs are promised to that agreement alone). */
static uint64_t available(int w)
{
    uint64_t held = 0;
    for (const struct bmpi_ctx_nb *nb = bmpi_world.ctx_nb; nb; nb = nb->next)
        if (nb->word == w)
            held |= nb->held;
    return ctx.free_mask[w] & ~held;
}

static void mark_free(uint32_t id)
{
    uint32_t slot = id / 2;
    if (slot >= 2 && slot < BMPI_CTX_SLOTS)
        ctx.free_mask[slot / 64] |= (uint64_t)1 << (slot % 64);
}

static void ctx_init(void)
{
    if (ctx.ready)
        return;
    memset(ctx.free_mask, 0xff, sizeof(ctx.free_mask));
    ctx.free_mask[0] &= ~(uint64_t)3; /* MPI_COMM_WORLD (0, 1), MPI_COMM_SELF (2, 3) */
    ctx.ready = 1;
}

void bmpi_ctx_release(uint32_t id)
{
    ctx_init();
    mark_free(id);
    /* the ids a communicator kept for its own dups go with it */
    for (struct ctx_cache **p = &ctx.caches; *p; p = &(*p)->next) {
        if ((*p)->owner == id) {
            struct ctx_cache *c = *p;
            for (int i = c->at; i < c->n; i++)
                mark_free(c->ids[i]);
            *p = c->next;
            free(c);
            break;
        }
    }
}

static int lowbit(int r, int n)
{
    if (r == 0) {
        int b = 1;
        while (b < n)
            b <<= 1;
        return b;
    }
    return r & -r;
}

/* The agreement; reserves up to want_id ids (at least one, or fails) in
 * ids[0 .. *got). The members' vals are gathered (n*k ints) or, with sum,
 * added element by element (k ints, the same size at every level). */
static int agree(struct bmpi_comm *parent, const int *members, int n, int me, int up_tag, int down_tag,
                 int *vals, int k, int sum, int want_id, uint32_t *ids, int *got)
{
    ctx_init();
    size_t mbytes = want_id ? sizeof(ctx.free_mask) : 0;
    size_t nvals = sum ? (size_t)k : (size_t)n * (size_t)k;
    size_t total = mbytes + nvals * sizeof(int);
    unsigned char *buf = malloc(total ? total : 1);
    if (!buf)
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory agreeing on a context id");
    uint64_t *mask = (uint64_t *)buf;
    int *all = (int *)(buf + mbytes);
    for (int w = 0; want_id && w < BMPI_CTX_WORDS; w++)
        mask[w] = available(w);
    if (k)
        memcpy(all + (sum ? 0 : (size_t)me * k), vals + (sum ? 0 : (size_t)me * k), (size_t)k * sizeof(int));

    uint32_t cid = parent->context_id + 1;
    int err = BMPI_OK;
    unsigned char *tmp = NULL;
    int top = lowbit(me, n);
    /* one message per tree edge on the way up: [mask][the subtree's vals] */
    if (n > 1 && !(tmp = malloc(total ? total : 1))) {
        err = bmpi_err_set(MPI_ERR_NO_MEM, "out of memory agreeing on a context id");
        goto out;
    }
    /* up: children me + b for b below my lowest bit, then to my parent */
    for (int b = 1; b < top && me + b < n; b <<= 1) {
        int child = me + b;
        int hi = child + b < n ? child + b : n;
        int src = members ? members[child] : child;
        size_t vbytes = (size_t)(sum ? 1 : hi - child) * k * sizeof(int);
        if ((err = bmpi_recv(tmp, mbytes + vbytes, MPI_BYTE, src, up_tag, parent, cid, MPI_STATUS_IGNORE)))
            goto out;
        for (size_t w = 0; w < mbytes / sizeof(uint64_t); w++)
            mask[w] &= ((uint64_t *)tmp)[w];
        if (sum) {
            const int *add = (const int *)(tmp + mbytes);
            for (int i = 0; i < k; i++)
                all[i] += add[i];
        } else {
            memcpy(all + (size_t)child * k, tmp + mbytes, vbytes);
        }
    }
    if (me != 0) {
        int up = me - top;
        int hi = me + top < n ? me + top : n;
        int dst = members ? members[up] : up;
        size_t vbytes = (size_t)(sum ? 1 : hi - me) * k * sizeof(int);
        memcpy(tmp, mask, mbytes);
        memcpy(tmp + mbytes, all + (sum ? 0 : (size_t)me * k), vbytes);
        if ((err = bmpi_send(tmp, mbytes + vbytes, MPI_BYTE, dst, up_tag, parent, cid)))
            goto out;
        /* down: the whole result from my parent */
        if ((err = bmpi_recv(buf, total, MPI_BYTE, dst, down_tag, parent, cid, MPI_STATUS_IGNORE)))
            goto out;
    }
    for (int b = top >> 1; b >= 1; b >>= 1) {
        if (me + b >= n)
            continue;
        int dst = members ? members[me + b] : me + b;
        if ((err = bmpi_send(buf, total, MPI_BYTE, dst, down_tag, parent, cid)))
            goto out;
    }

    if (k)
        memcpy(vals, all, nvals * sizeof(int));
    if (want_id) {
        /* batches never hoard more than a sixteenth of what is left, so
         * cached ids cannot starve other communicators */
        int avail = 0;
        for (int w = 0; w < BMPI_CTX_WORDS; w++)
            avail += __builtin_popcountll(mask[w]);
        if (want_id > 1 && want_id > avail / 16)
            want_id = avail / 16 > 1 ? avail / 16 : 1;
        int cnt = 0;
        for (int w = 0; w < BMPI_CTX_WORDS && cnt < want_id; w++) {
            while (mask[w] && cnt < want_id) {
                int slot = w * 64 + __builtin_ctzll(mask[w]);
                mask[w] &= mask[w] - 1;
                ctx.free_mask[slot / 64] &= ~((uint64_t)1 << (slot % 64));
                ids[cnt++] = (uint32_t)slot * 2;
            }
        }
        *got = cnt;
        if (cnt == 0) {
            err = bmpi_err_set(MPI_ERR_OTHER,
                               "out of context ids: %d communicators are live on some process; free "
                               "communicators that are no longer used",
                               BMPI_CTX_SLOTS - 2);
            goto out;
        }
    }
out:
    free(tmp);
    free(buf);
    return err;
}

int bmpi_ctx_agree(struct bmpi_comm *parent, const int *members, int n, int me, int up_tag, int down_tag,
                   int *vals, int k, int want_id, uint32_t *id)
{
    int got;
    return agree(parent, members, n, me, up_tag, down_tag, vals, k, 0, want_id ? 1 : 0, id, &got);
}

int bmpi_ctx_agree_sum(struct bmpi_comm *parent, int *vals, int k, uint32_t *id)
{
    int got;
    return agree(parent, NULL, parent->size, parent->rank, BMPI_TAG_CTX_UP, BMPI_TAG_CTX_DOWN, vals, k, 1, 1, id,
                 &got);
}

static struct ctx_cache *find_cache(const struct bmpi_comm *parent)
{
    struct ctx_cache *c = ctx.caches;
    while (c && c->owner != parent->context_id)
        c = c->next;
    return c;
}

bool bmpi_ctx_take_cached(struct bmpi_comm *parent, uint32_t *id)
{
    struct ctx_cache *c = find_cache(parent);
    if (!c || c->at == c->n)
        return false;
    *id = c->ids[c->at++];
    return true;
}

int bmpi_ctx_new(struct bmpi_comm *parent, uint32_t *id)
{
    ctx_init();
    if (bmpi_ctx_take_cached(parent, id))
        return BMPI_OK;
    struct ctx_cache *c = find_cache(parent);
    if (!c) {
        /* a communicator's first creation takes one id, and only then starts a cache */
        if (!(c = calloc(1, sizeof(*c))))
            return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory for the context id cache");
        c->owner = parent->context_id;
        c->batch = 1;
        c->next = ctx.caches;
        ctx.caches = c;
    }
    int err = agree(parent, NULL, parent->size, parent->rank, BMPI_TAG_CTX_UP, BMPI_TAG_CTX_DOWN, NULL, 0, 0,
                    c->batch, c->ids, &c->n);
    if (err) {
        c->n = c->at = 0;
        return err;
    }
    c->batch = c->batch * 2 > BMPI_CTX_BATCH ? BMPI_CTX_BATCH : c->batch * 2;
    c->at = 1;
    *id = c->ids[0];
    return BMPI_OK;
}

void bmpi_ctx_free_mask(uint64_t mask[BMPI_CTX_WORDS])
{
    ctx_init();
    for (int w = 0; w < BMPI_CTX_WORDS; w++)
        mask[w] = available(w);
}

int bmpi_ctx_reserve_lowest(const uint64_t mask[BMPI_CTX_WORDS], uint32_t *id)
{
    ctx_init();
    for (int w = 0; w < BMPI_CTX_WORDS; w++) {
        uint64_t both = mask[w] & ctx.free_mask[w];
        if (both) {
            int slot = w * 64 + __builtin_ctzll(both);
            ctx.free_mask[w] &= ~((uint64_t)1 << (slot % 64));
            *id = (uint32_t)slot * 2;
            return BMPI_OK;
        }
    }
    return bmpi_err_set(MPI_ERR_OTHER, "out of context ids: no pair is free on every process of "
                                       "both groups; free communicators that are no longer used");
}

/* --- nonblocking agreements ---------------------------------------------- */

static int child_of(const struct bmpi_ctx_nb *nb, int k)
{
    return nb->tree->rank + (1 << k);
}

static int nchildren(const struct bmpi_ctx_nb *nb)
{
    int me = nb->tree->rank, n = nb->tree->size, top = lowbit(me, n), k = 0;
    while ((1 << k) < top && me + (1 << k) < n)
        k++;
    return k;
}

static void nb_post(struct bmpi_ctx_nb *nb, int err, struct bmpi_request *req)
{
    if (err && !nb->err)
        nb->err = err;
    if (!err)
        nb->reqs[nb->nreqs++] = req;
}

static void nb_recv(struct bmpi_ctx_nb *nb, struct nb_msg *m, struct bmpi_comm *c, int peer, int tag)
{
    struct bmpi_request *req = NULL;
    int err = bmpi_irecv(m, sizeof(*m), MPI_BYTE, peer, tag, c, c->context_id + 1, &req);
    nb_post(nb, err, req);
}

static void nb_send(struct bmpi_ctx_nb *nb, const struct nb_msg *m, struct bmpi_comm *c, int peer, int tag)
{
    struct bmpi_request *req = NULL;
    int err = bmpi_isend(m, sizeof(*m), MPI_BYTE, peer, tag, c, c->context_id + 1, BMPI_SEND_STANDARD, &req);
    nb_post(nb, err, req);
}

/* Have all the messages of the current step arrived or left? */
static bool nb_settled(struct bmpi_ctx_nb *nb)
{
    for (int i = 0; i < nb->nreqs; i++)
        if (!nb->reqs[i]->complete)
            return false;
    for (int i = 0; i < nb->nreqs; i++) {
        if (nb->reqs[i]->status.MPI_ERROR && !nb->err)
            nb->err = nb->reqs[i]->status.MPI_ERROR;
        bmpi_request_free(nb->reqs[i]);
    }
    nb->nreqs = 0;
    return true;
}

/* How many words after w (cyclically) the next with a free pair is here;
 * BMPI_CTX_WORDS when only w has any. */
static int hop_to_free_word(int w)
{
    int d = 1;
    while (d < BMPI_CTX_WORDS && !ctx.free_mask[(w + d) % BMPI_CTX_WORDS])
        d++;
    return d;
}

/* A number drawn from the agreement's identity and round: the same on
 * every member, different for different agreements. */
static uint64_t round_draw(const struct bmpi_ctx_nb *nb)
{
    uint64_t x = nb->identity ^ ((uint64_t)nb->round * 0x9e3779b97f4a7c15ull);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* nids of the pairs in `free`, from a drawn one on (cyclically). */
static uint64_t draw_pairs(const struct bmpi_ctx_nb *nb, uint64_t free)
{
    /* the draw's lowest bit chose this mode (nb_evaluate) */
    int skip = (int)((round_draw(nb) >> 1) % (uint64_t)__builtin_popcountll(free));
    uint64_t rest = free;
    for (int i = 0; i < skip; i++)
        rest &= rest - 1;
    uint64_t picked = 0;
    for (int i = 0; i < nb->nids; i++) {
        if (!rest)
            rest = free & ~picked;
        picked |= rest & -rest;
        rest &= rest - 1;
    }
    return picked;
}

/* Offer this process's pairs of the round's target (or lane) and wait for
 * the children's. */
static void nb_start_round(struct bmpi_ctx_nb *nb)
{
    uint64_t lane = NB_LANE0 << (round_draw(nb) % NB_LANES);
    nb->held = available(nb->word) & (nb->target ? nb->target : lane);
    nb->acc = (struct nb_msg){nb->held, ctx.free_mask[nb->word], hop_to_free_word(nb->word), 0};
    for (int k = 0; k < nchildren(nb); k++)
        nb_recv(nb, &nb->from_child[k], nb->tree, child_of(nb, k), nb->up_tag);
    nb->phase = NB_UP;
}

static void fold(struct nb_msg *acc, const struct nb_msg *m)
{
    acc->pairs &= m->pairs;
    acc->free &= m->free;
    if (m->hop > acc->hop)
        acc->hop = m->hop;
}

/* The round's result is in acc on every member: take the ids, or try
 * another lane of the word, or go on to the word every member has pairs
 * in. True when the agreement is over. */
static bool nb_evaluate(struct bmpi_ctx_nb *nb, uint32_t *ids)
{
    nb->held = 0;
    if (__builtin_popcountll(nb->acc.pairs) >= nb->nids) {
        for (int i = 0; i < nb->nids; i++) {
            int bit = __builtin_ctzll(nb->acc.pairs);
            nb->acc.pairs &= nb->acc.pairs - 1;
            ctx.free_mask[nb->word] &= ~((uint64_t)1 << bit);
            ids[i] = (uint32_t)(nb->word * 64 + bit) * 2;
        }
        return true;
    }
    nb->round++;
    bool enough = __builtin_popcountll(nb->acc.free) >= nb->nids;
    nb->dry = enough ? 0 : nb->dry + 1;
    if (nb->dry > BMPI_CTX_WORDS) {
        nb->err = bmpi_err_set(MPI_ERR_OTHER, "out of context ids: no %d pairs are free on every process; "
                                              "free communicators that are no longer used", nb->nids);
        return true;
    }
    if (enough && round_draw(nb) % 2) {
        /* free everywhere, but held elsewhere for now or in other lanes:
         * try a drawn few of them; on every other round (drawn too) move
         * on instead, so that agreements in contention spread over the
         * words */
        nb->target = draw_pairs(nb, nb->acc.free);
    } else {
        nb->target = 0;
        nb->word = (nb->word + nb->acc.hop) % BMPI_CTX_WORDS;
    }
    nb_start_round(nb);
    return false;
}

/* One step after another as long as their messages are through. */
static bool nb_advance(struct bmpi_ctx_nb *nb, uint32_t *ids)
{
    while (nb_settled(nb)) {
        if (nb->err)
            return true;
        int me = nb->tree->rank;
        switch (nb->phase) {
        case NB_UP:
            for (int k = 0; k < nchildren(nb); k++)
                fold(&nb->acc, &nb->from_child[k]);
            if (me != 0) {
                nb->up = nb->acc;
                nb_send(nb, &nb->up, nb->tree, me - lowbit(me, nb->tree->size), nb->up_tag);
                nb_recv(nb, &nb->acc, nb->tree, me - lowbit(me, nb->tree->size), nb->down_tag);
                nb->phase = NB_DOWN;
            } else if (nb->bridge) {
                nb_send(nb, &nb->acc, nb->bridge, 0, nb->swap_tag);
                nb_recv(nb, &nb->theirs, nb->bridge, 0, nb->swap_tag);
                nb->phase = NB_SWAP;
            } else {
                nb->phase = NB_DOWN;
            }
            break;
        case NB_SWAP:
            fold(&nb->acc, &nb->theirs);
            nb->phase = NB_DOWN;
            break;
        case NB_DOWN:
            for (int k = 0; k < nchildren(nb); k++)
                nb_send(nb, &nb->acc, nb->tree, child_of(nb, k), nb->down_tag);
            nb->phase = NB_FLUSH;
            break;
        case NB_FLUSH:
            if (nb_evaluate(nb, ids))
                return true;
            break;
        }
    }
    return false;
}

/* Advance every agreement in flight; finish those that are over (their
 * done hooks may start new ones, so the scan starts again after each). */
int bmpi_ctx_progress(void)
{
    if (!bmpi_world.ctx_nb || bmpi_world.ctx_nb_busy)
        return 0;
    bmpi_world.ctx_nb_busy = true;
    int events = 0;
    uint32_t ids[2];
    struct bmpi_ctx_nb **p = &bmpi_world.ctx_nb;
    while (*p) {
        struct bmpi_ctx_nb *nb = *p;
        if (!nb_advance(nb, ids)) {
            p = &nb->next;
            continue;
        }
        *p = nb->next;
        nb->done(nb->arg, nb->err, ids);
        bmpi_comm_release(nb->tree);
        if (nb->bridge)
            bmpi_comm_release(nb->bridge);
        free(nb);
        events++;
        p = &bmpi_world.ctx_nb;
    }
    bmpi_world.ctx_nb_busy = false;
    return events;
}

int bmpi_ctx_agree_nb(struct bmpi_comm *comm, void (*done)(void *arg, int err, const uint32_t *ids), void *arg)
{
    ctx_init();
    struct bmpi_ctx_nb *nb = calloc(1, sizeof(*nb));
    if (!nb)
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory for a nonblocking agreement");
    bool inter = comm->remote_group != NULL;
    nb->tree = inter ? comm->local_comm : comm;
    nb->bridge = inter ? comm : NULL;
    nb->tree->refcount++;
    if (nb->bridge)
        nb->bridge->refcount++;
    nb->nids = inter ? 2 : 1;
    /* creations over comm are ordered alike everywhere, so the sequence
     * number is too: concurrent agreements get tags of their own */
    int seq = (int)(comm->nb_agree_seq++ % BMPI_TAG_NB_SPAN);
    nb->identity = (uint64_t)comm->context_id << 32 | (uint32_t)seq;
    nb->up_tag = BMPI_TAG_NB_BASE - 3 * seq;
    nb->down_tag = nb->up_tag - 1;
    nb->swap_tag = nb->up_tag - 2;
    nb->done = done;
    nb->arg = arg;
    nb_start_round(nb);
    struct bmpi_ctx_nb **tail = &bmpi_world.ctx_nb;
    while (*tail)
        tail = &(*tail)->next;
    *tail = nb;
    bmpi_ctx_progress();
    return BMPI_OK;
}
