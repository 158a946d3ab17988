/*
 * Alltoall, Alltoallv, Alltoallw.
 *  bruck     ceil(log2 p) steps, each moving the blocks whose index has
 *            bit k set (packed in bytes): small messages, many ranks.
 *  pairwise  p-1 rounds, in round i send to rank + i and receive from
 *            rank - i: large messages (one pair of transfers at a time).
 *  linear    everything posted at once.
 * Alltoallv/w: linear. MPI_IN_PLACE: the receive buffer is first copied
 * aside and then serves as the send buffer.
 */
#include "config.h"

#include "collectives/coll.h"

/* In the order of select.c. */
enum { BRUCK, PAIRWISE, LINEAR };

static void bruck(struct bmpi_sched *s, const char *sbuf, size_t scount, MPI_Datatype stype,
                  char *rbuf, size_t rcount, MPI_Datatype rtype)
{
    int p = s->comm->size, r = s->comm->rank;
    size_t bs = rcount * bmpi_coll_tsize(rtype);
    MPI_Aint sblk = (MPI_Aint)scount * bmpi_coll_extent(stype);
    MPI_Aint rblk = (MPI_Aint)rcount * bmpi_coll_extent(rtype);
    char *tmp = bmpi_sched_alloc(s, (size_t)p * bs);
    char *out = bmpi_sched_alloc(s, (size_t)(p / 2 + 1) * bs);
    char *in = bmpi_sched_alloc(s, (size_t)(p / 2 + 1) * bs);
    if (!tmp || !out || !in)
        return;
    /* tmp block i: my block for rank (r + i) % p. */
    bmpi_sched_copy(s, sbuf + r * sblk, (size_t)(p - r) * scount, stype, tmp, (size_t)(p - r) * bs,
                    MPI_BYTE);
    bmpi_sched_copy(s, sbuf, (size_t)r * scount, stype, tmp + (size_t)(p - r) * bs, (size_t)r * bs,
                    MPI_BYTE);
    for (int k = 1; k < p; k <<= 1) {
        int n = 0;
        for (int i = 1; i < p; i++)
            if (i & k)
                bmpi_sched_copy(s, tmp + (size_t)i * bs, bs, MPI_BYTE, out + (size_t)n++ * bs, bs,
                                MPI_BYTE);
        bmpi_sched_recv(s, in, (size_t)n * bs, MPI_BYTE, (r - k + p) % p);
        bmpi_sched_send(s, out, (size_t)n * bs, MPI_BYTE, (r + k) % p);
        bmpi_sched_fence(s);
        n = 0;
        for (int i = 1; i < p; i++)
            if (i & k)
                bmpi_sched_copy(s, in + (size_t)n++ * bs, bs, MPI_BYTE, tmp + (size_t)i * bs, bs,
                                MPI_BYTE);
    }
    /* tmp block i came from rank (r - i) % p. */
    for (int i = 0; i < p; i++)
        bmpi_sched_copy(s, tmp + (size_t)i * bs, bs, MPI_BYTE, rbuf + ((r - i + p) % p) * rblk,
                        rcount, rtype);
}

/* Copy the bytes [lo, hi) of buf aside, as the schedule's first step (a
 * persistent schedule copies again at every start); returns the pointer
 * that plays buf. */
static const char *aside(struct bmpi_sched *s, const void *buf, MPI_Aint lo, MPI_Aint hi)
{
    if (hi <= lo)
        return buf;
    char *t = bmpi_sched_alloc(s, (size_t)(hi - lo));
    if (!t)
        return NULL;
    bmpi_sched_copy(s, (const char *)buf + lo, (size_t)(hi - lo), MPI_BYTE, t, (size_t)(hi - lo),
                    MPI_BYTE);
    return bmpi_coll_origin(t, lo);
}

int bmpi_coll_alltoall(struct bmpi_sched *s, const void *sbuf, size_t scount, MPI_Datatype stype,
                       void *rbuf, size_t rcount, MPI_Datatype rtype)
{
    int p = s->comm->size, r = s->comm->rank;
    size_t bs = rcount * bmpi_coll_tsize(rtype);
    if (bs == 0)
        return s->err;
    if (sbuf == MPI_IN_PLACE) {
        MPI_Aint lo, hi;
        bmpi_dt_span(bmpi_dt_get(rtype), (size_t)p * rcount, &lo, &hi);
        sbuf = aside(s, rbuf, lo, hi);
        if (!sbuf)
            return s->err;
        scount = rcount;
        stype = rtype;
    }
    int alg = bmpi_coll_select(BMPI_COLL_ALLTOALL, p, bs, rcount, true);
    MPI_Aint sblk = (MPI_Aint)scount * bmpi_coll_extent(stype);
    MPI_Aint rblk = (MPI_Aint)rcount * bmpi_coll_extent(rtype);
    const char *sb = sbuf;
    char *rb = rbuf;
    if (alg == BRUCK) {
        bruck(s, sb, scount, stype, rb, rcount, rtype);
        return s->err;
    }
    bmpi_sched_copy(s, sb + r * sblk, scount, stype, rb + r * rblk, rcount, rtype);
    for (int i = 1; i < p; i++) {
        int to = (r + i) % p, from = (r - i + p) % p;
        bmpi_sched_recv(s, rb + from * rblk, rcount, rtype, from);
        bmpi_sched_send(s, sb + to * sblk, scount, stype, to);
        if (alg == PAIRWISE)
            bmpi_sched_fence(s);
    }
    return s->err;
}

int bmpi_coll_alltoallw(struct bmpi_sched *s, const void *sbuf, struct bmpi_counts scounts,
                        const MPI_Aint *sdispls, const MPI_Datatype *stypes, void *rbuf,
                        struct bmpi_counts rcounts, const MPI_Aint *rdispls,
                        const MPI_Datatype *rtypes)
{
    int p = s->comm->size, r = s->comm->rank;
    if (sbuf == MPI_IN_PLACE) {
        MPI_Aint lo = 0, hi = 0;
        bool any = false;
        for (int i = 0; i < p; i++) {
            MPI_Aint l, h;
            bmpi_dt_span(bmpi_dt_get(rtypes[i]), bmpi_count_at(rcounts, i), &l, &h);
            if (l == h)
                continue;
            l += rdispls[i], h += rdispls[i];
            if (!any || l < lo)
                lo = l;
            if (!any || h > hi)
                hi = h;
            any = true;
        }
        sbuf = aside(s, rbuf, lo, hi);
        if (!sbuf)
            return s->err;
        scounts = rcounts, sdispls = rdispls, stypes = rtypes;
    }
    const char *sb = sbuf;
    char *rb = rbuf;
    bmpi_sched_copy(s, sb + sdispls[r], bmpi_count_at(scounts, r), stypes[r], rb + rdispls[r],
                    bmpi_count_at(rcounts, r), rtypes[r]);
    for (int i = 1; i < p; i++) {
        int from = (r - i + p) % p;
        bmpi_sched_recv(s, rb + rdispls[from], bmpi_count_at(rcounts, from), rtypes[from], from);
    }
    for (int i = 1; i < p; i++) {
        int to = (r + i) % p;
        bmpi_sched_send(s, sb + sdispls[to], bmpi_count_at(scounts, to), stypes[to], to);
    }
    return s->err;
}
