/*
 * Broadcast.
 *  binomial           ceil(log2 p) rounds of whole messages: small messages.
 *  scatter_allgather  van de Geijn: binomial scatter of p chunks, then a
 *                     ring allgather; ~2x the bytes of one message per rank
 *                     whatever p is: large messages.
 *  pipeline           segments down a binomial tree (bcast_pipeline.c).
 *  linear             every rank pulls from the root (bcast_linear.c).
 */
#include "config.h"

#include "collectives/coll.h"
#include "collectives/coll_impl.h"

/* In the order of select.c. */
enum { BINOMIAL, SCATTER_ALLGATHER, PIPELINE, LINEAR };

static void binomial(struct bmpi_sched *s, void *buf, size_t count, MPI_Datatype type, int root)
{
    int p = s->comm->size, r = s->comm->rank;
    int rel = (r - root + p) % p;
    int mask = 1;
    while (mask < p) {
        if (rel & mask) {
            bmpi_sched_recv(s, buf, count, type, (r - mask + p) % p);
            bmpi_sched_fence(s);
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (rel + mask < p)
            bmpi_sched_send(s, buf, count, type, (r + mask) % p);
}

static size_t clip(long long v) { return v > 0 ? (size_t)v : 0; }

static void scatter_allgather(struct bmpi_sched *s, void *buf, size_t count, MPI_Datatype type,
                              int root)
{
    int p = s->comm->size, r = s->comm->rank;
    struct bmpi_datatype *dt = bmpi_dt_get(type);
    size_t n = count * bmpi_dt_size(dt);
    char *b;
    bool packed = !bmpi_dt_is_contig(dt);
    if (packed) {
        b = bmpi_sched_alloc(s, n);
        if (!b)
            return;
        if (r == root)
            bmpi_sched_copy(s, buf, count, type, b, n, MPI_BYTE);
    } else {
        b = (char *)buf + bmpi_dt_true_lb(dt);
    }
    int rel = (r - root + p) % p;
    size_t cs = (n + (size_t)p - 1) / (size_t)p;
    /* Binomial scatter: the subtree under rel gets chunks [rel, rel + mask). */
    size_t have = rel == 0 ? n : 0;
    int mask = 1;
    while (mask < p) {
        if (rel & mask) {
            have = clip((long long)n - (long long)((size_t)rel * cs));
            if (have > cs * (size_t)mask)
                have = cs * (size_t)mask;
            bmpi_sched_recv(s, b + (size_t)rel * cs, have, MPI_BYTE, (r - mask + p) % p);
            bmpi_sched_fence(s);
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1) {
        if (rel + mask < p) {
            long long off = (long long)((size_t)(rel + mask) * cs);
            size_t len = clip((long long)n - off);
            if (len > cs * (size_t)mask)
                len = cs * (size_t)mask;
            bmpi_sched_send(s, b + off, len, MPI_BYTE, (r + mask) % p);
        }
    }
    bmpi_sched_fence(s);
    /* Ring allgather of the chunks, by relative rank. */
    int left = (r - 1 + p) % p, right = (r + 1) % p;
    for (int i = 0; i < p - 1; i++) {
        int sc = (rel - i + p) % p, rc = (rel - i - 1 + p) % p;
        size_t soff = (size_t)sc * cs, roff = (size_t)rc * cs;
        size_t slen = clip((long long)n - (long long)soff), rlen = clip((long long)n - (long long)roff);
        if (slen > cs)
            slen = cs;
        if (rlen > cs)
            rlen = cs;
        bmpi_sched_recv(s, b + roff, rlen, MPI_BYTE, left);
        bmpi_sched_send(s, b + soff, slen, MPI_BYTE, right);
        bmpi_sched_fence(s);
    }
    if (packed && r != root)
        bmpi_sched_copy(s, b, n, MPI_BYTE, buf, count, type);
}

int bmpi_coll_bcast(struct bmpi_sched *s, void *buf, size_t count, MPI_Datatype type, int root)
{
    int p = s->comm->size;
    if (p == 1 || count == 0)
        return s->err;
    size_t bytes = count * bmpi_coll_tsize(type);
    int alg = bmpi_coll_select(BMPI_COLL_BCAST, p, bytes, count, true);
    if (alg == BINOMIAL)
        binomial(s, buf, count, type, root);
    else if (alg == PIPELINE)
        bmpi_coll_bcast_pipeline(s, buf, count, type, root);
    else if (alg == LINEAR)
        bmpi_coll_bcast_linear(s, buf, count, type, root);
    else
        scatter_allgather(s, buf, count, type, root);
    return s->err;
}
