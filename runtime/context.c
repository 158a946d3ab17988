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

/* Bit s set: pair s (ids 2s, 2s+1) is free on this process. */
static struct {
    int ready;
    uint64_t free_mask[BMPI_CTX_WORDS];
} ctx;

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
    uint32_t slot = id / 2;
    if (slot < 2 || slot >= BMPI_CTX_SLOTS)
        return;
    ctx_init();
    ctx.free_mask[slot / 64] |= (uint64_t)1 << (slot % 64);
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

int bmpi_ctx_agree(struct bmpi_comm *parent, const int *members, int n, int me, int up_tag,
                   int down_tag, int *vals, int k, int want_id, uint32_t *id)
{
    ctx_init();
    size_t mbytes = want_id ? sizeof(ctx.free_mask) : 0;
    size_t total = mbytes + (size_t)n * (size_t)k * sizeof(int);
    unsigned char *buf = malloc(total ? total : 1);
    if (!buf)
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory agreeing on a context id");
    uint64_t *mask = (uint64_t *)buf;
    int *all = (int *)(buf + mbytes);
    if (want_id)
        memcpy(mask, ctx.free_mask, mbytes);
    if (k)
        memcpy(all + (size_t)me * k, vals + (size_t)me * k, (size_t)k * sizeof(int));

    uint32_t cid = parent->context_id + 1;
    int err = BMPI_OK;
    unsigned char *tmp = NULL;
    int top = lowbit(me, n);
    if (n > 1 && want_id && !(tmp = malloc(mbytes))) {
        err = bmpi_err_set(MPI_ERR_NO_MEM, "out of memory agreeing on a context id");
        goto out;
    }
    /* up: children me + b for b below my lowest bit, then to my parent */
    for (int b = 1; b < top && me + b < n; b <<= 1) {
        int child = me + b;
        int hi = child + b < n ? child + b : n;
        int src = members ? members[child] : child;
        if (want_id) {
            if ((err = bmpi_recv(tmp, mbytes, MPI_BYTE, src, up_tag, parent, cid, MPI_STATUS_IGNORE)))
                goto out;
            for (int w = 0; w < BMPI_CTX_WORDS; w++)
                mask[w] &= ((uint64_t *)tmp)[w];
        }
        if (k && (err = bmpi_recv(all + (size_t)child * k, (size_t)(hi - child) * k * sizeof(int), MPI_BYTE,
                                  src, up_tag, parent, cid, MPI_STATUS_IGNORE)))
            goto out;
    }
    if (me != 0) {
        int up = me - top;
        int hi = me + top < n ? me + top : n;
        int dst = members ? members[up] : up;
        if (want_id && (err = bmpi_send(mask, mbytes, MPI_BYTE, dst, up_tag, parent, cid)))
            goto out;
        if (k && (err = bmpi_send(all + (size_t)me * k, (size_t)(hi - me) * k * sizeof(int), MPI_BYTE, dst,
                                  up_tag, parent, cid)))
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
        memcpy(vals, all, (size_t)n * k * sizeof(int));
    if (want_id) {
        int slot = -1;
        for (int w = 0; w < BMPI_CTX_WORDS && slot < 0; w++)
            if (mask[w])
                slot = w * 64 + __builtin_ctzll(mask[w]);
        if (slot < 0) {
            err = bmpi_err_set(MPI_ERR_OTHER,
                               "out of context ids: %d communicators are live on some process; free "
                               "communicators that are no longer used",
                               BMPI_CTX_SLOTS - 2);
            goto out;
        }
        ctx.free_mask[slot / 64] &= ~((uint64_t)1 << (slot % 64));
        *id = (uint32_t)slot * 2;
    }
out:
    free(tmp);
    free(buf);
    return err;
}
