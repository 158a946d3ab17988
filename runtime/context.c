/*
 * Context id allocation by agreement (see context.h for the scheme).
 *
 * The agreement is one binomial-tree reduce to member 0 followed by a
 * binomial broadcast: the bitmaps are ANDed on the way up, and each member's
 * few ints (a split's colour and key) are gathered along with them, so
 * MPI_Comm_split costs one round trip of the tree, not an allgather plus an
 * allreduce. It runs on the parent's collective context with negative tags
 * that no collective uses, so it needs nothing from collectives/ and cannot
 * be confused with a collective in flight.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/context.h"
#include "runtime/error.h"
#include "runtime/p2p.h"

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

/* Bit s set: pair s (ids 2s, 2s+1) is free on this process. */
static struct {
    int ready;
    uint64_t free_mask[BMPI_CTX_WORDS];
    struct ctx_cache *caches;
} ctx;

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
    if (want_id)
        memcpy(mask, ctx.free_mask, mbytes);
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

int bmpi_ctx_new(struct bmpi_comm *parent, uint32_t *id)
{
    ctx_init();
    struct ctx_cache *c = ctx.caches;
    while (c && c->owner != parent->context_id)
        c = c->next;
    if (c && c->at < c->n) {
        *id = c->ids[c->at++];
        return BMPI_OK;
    }
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
    memcpy(mask, ctx.free_mask, sizeof(ctx.free_mask));
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
