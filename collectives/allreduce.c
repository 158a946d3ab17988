/*
 * Allreduce.
 *  recursive_doubling  log2 p exchanges of the whole vector (plus a fold
 *                      for non-power-of-two sizes): small messages, and
 *                      every non-commutative op (it keeps canonical order).
 *  rabenseifner        reduce-scatter by recursive halving, then allgather
 *                      by recursive doubling: ~2n bytes per rank. Large
 *                      messages, commutative ops.
 *  ring                reduce-scatter then allgather around a ring: p-1
 *                      steps each, bandwidth-optimal for any p. Commutative.
 *
 * Same bits on every rank: in recursive doubling both partners combine the
 * same two partial results (commutative ops give a op b == b op a
 * exactly); in the other two each block is reduced by one rank and then
 * copied to all.
 */
#include "config.h"

#include "collectives/coll.h"
#include "collectives/coll_impl.h"

/* In the order of select.c. */
enum { RECURSIVE_DOUBLING, RABENSEIFNER, RING };

int bmpi_coll_pof2_below(int p)
{
    int pof2 = 1;
    while (pof2 * 2 <= p)
        pof2 *= 2;
    return pof2;
}

static void recursive_doubling(struct bmpi_sched *s, const void *sbuf, void *rbuf, size_t count,
                               MPI_Datatype type)
{
    int p = s->comm->size, r = s->comm->rank;
    bool commute = bmpi_op_commutative(s->op);
    if (sbuf != MPI_IN_PLACE)
        bmpi_sched_copy(s, sbuf, count, type, rbuf, count, type);
    char *acc = rbuf;
    char *tmp = bmpi_sched_tmpbuf(s, count, type);
    if (!tmp)
        return;
    int pof2 = bmpi_coll_pof2_below(p), rem = p - pof2, newrank;
    if (r < 2 * rem) {
        if (r % 2 == 0) {
            bmpi_sched_send(s, acc, count, type, r + 1);
            newrank = -1;
        } else {
            bmpi_sched_recv(s, tmp, count, type, r - 1);
            bmpi_sched_fence(s);
            bmpi_sched_reduce(s, tmp, acc, count, type); /* lower rank's data is invec */
            newrank = r / 2;
        }
    } else {
        newrank = r - rem;
    }
    if (newrank != -1) {
        for (int mask = 1; mask < pof2; mask <<= 1) {
            int newdst = newrank ^ mask;
            int dst = newdst < rem ? newdst * 2 + 1 : newdst + rem;
            bmpi_sched_recv(s, tmp, count, type, dst);
            bmpi_sched_send(s, acc, count, type, dst);
            bmpi_sched_fence(s);
            if (commute || dst < r) {
                bmpi_sched_reduce(s, tmp, acc, count, type);
            } else {
                /* mine op theirs: the result lands in tmp; swap roles. */
                bmpi_sched_reduce(s, acc, tmp, count, type);
                char *t = acc;
                acc = tmp;
                tmp = t;
            }
        }
        if (acc != (char *)rbuf)
            bmpi_sched_copy(s, acc, count, type, rbuf, count, type);
    }
    if (r < 2 * rem) {
        bmpi_sched_fence(s);
        if (r % 2)
            bmpi_sched_send(s, rbuf, count, type, r - 1);
        else
            bmpi_sched_recv(s, rbuf, count, type, r + 1);
    }
}

void bmpi_coll_rs_halving(struct bmpi_sched *s, const char *src, char *acc, char *tmp,
                          size_t count, MPI_Datatype type, struct bmpi_rs_state *st)
{
    int p = s->comm->size, r = s->comm->rank;
    MPI_Aint ext = bmpi_coll_extent(type);
    int pof2 = bmpi_coll_pof2_below(p), rem = p - pof2;
    st->pof2 = pof2;
    st->rem = rem;
    if (r < 2 * rem) {
        if (r % 2 == 0) {
            bmpi_sched_send(s, src, count, type, r + 1);
            bmpi_sched_fence(s);
            st->newrank = -1;
            return;
        }
        bmpi_sched_recv(s, tmp, count, type, r - 1);
        bmpi_sched_copy(s, src, count, type, acc, count, type);
        bmpi_sched_fence(s);
        bmpi_sched_reduce(s, tmp, acc, count, type);
        src = acc;
        st->newrank = r / 2;
    } else {
        st->newrank = r - rem;
    }
    size_t *d = bmpi_sched_alloc(s, (size_t)(pof2 + 1) * sizeof(size_t));
    if (!d) {
        st->newrank = -1;
        return;
    }
    for (int i = 0; i <= pof2; i++)
        d[i] = (size_t)i * (count / (size_t)pof2) +
               ((size_t)i < count % (size_t)pof2 ? (size_t)i : count % (size_t)pof2);
    st->disps = d;
    int newrank = st->newrank, mask = 1, send_idx = 0, recv_idx = 0, last_idx = pof2;
    while (mask < pof2) {
        int newdst = newrank ^ mask;
        int dst = newdst < rem ? newdst * 2 + 1 : newdst + rem;
        int sfrom, sto, rfrom, rto;
        if (newrank < newdst) {
            send_idx = recv_idx + pof2 / (mask * 2);
            sfrom = send_idx, sto = last_idx, rfrom = recv_idx, rto = send_idx;
        } else {
            recv_idx = send_idx + pof2 / (mask * 2);
            sfrom = send_idx, sto = recv_idx, rfrom = recv_idx, rto = last_idx;
        }
        if (src != acc) {
            /* First step with the input elsewhere: the partner's half lands
             * in acc and my input is added to it, so the input is never
             * copied. */
            bmpi_sched_recv(s, acc + (MPI_Aint)d[rfrom] * ext, d[rto] - d[rfrom], type, dst);
            bmpi_sched_send(s, src + (MPI_Aint)d[sfrom] * ext, d[sto] - d[sfrom], type, dst);
            bmpi_sched_fence(s);
            bmpi_sched_reduce(s, src + (MPI_Aint)d[rfrom] * ext, acc + (MPI_Aint)d[rfrom] * ext,
                              d[rto] - d[rfrom], type);
            src = acc;
        } else {
            bmpi_sched_recv(s, tmp + (MPI_Aint)d[rfrom] * ext, d[rto] - d[rfrom], type, dst);
            bmpi_sched_send(s, acc + (MPI_Aint)d[sfrom] * ext, d[sto] - d[sfrom], type, dst);
            bmpi_sched_fence(s);
            bmpi_sched_reduce(s, tmp + (MPI_Aint)d[rfrom] * ext, acc + (MPI_Aint)d[rfrom] * ext,
                              d[rto] - d[rfrom], type);
        }
        send_idx = recv_idx;
        mask <<= 1;
        if (mask < pof2)
            last_idx = recv_idx + pof2 / mask;
    }
    st->send_idx = send_idx;
    st->last_idx = last_idx;
}

static void rabenseifner(struct bmpi_sched *s, const void *sbuf, void *rbuf, size_t count,
                         MPI_Datatype type)
{
    int r = s->comm->rank;
    MPI_Aint ext = bmpi_coll_extent(type);
    const char *src = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    char *acc = rbuf;
    char *tmp = bmpi_sched_tmpbuf(s, count, type);
    if (!tmp)
        return;
    struct bmpi_rs_state st;
    bmpi_coll_rs_halving(s, src, acc, tmp, count, type, &st);
    int pof2 = st.pof2, rem = st.rem, newrank = st.newrank;
    if (newrank != -1) {
        size_t *d = st.disps;
        int send_idx = st.send_idx, last_idx = st.last_idx, recv_idx;
        for (int mask = pof2 / 2; mask > 0; mask >>= 1) {
            int newdst = newrank ^ mask;
            int dst = newdst < rem ? newdst * 2 + 1 : newdst + rem;
            int sfrom, sto, rfrom, rto;
            if (newrank < newdst) {
                if (mask != pof2 / 2)
                    last_idx = last_idx + pof2 / (mask * 2);
                recv_idx = send_idx + pof2 / (mask * 2);
                sfrom = send_idx, sto = recv_idx, rfrom = recv_idx, rto = last_idx;
            } else {
                recv_idx = send_idx - pof2 / (mask * 2);
                sfrom = send_idx, sto = last_idx, rfrom = recv_idx, rto = send_idx;
            }
            bmpi_sched_recv(s, acc + (MPI_Aint)d[rfrom] * ext, d[rto] - d[rfrom], type, dst);
            bmpi_sched_send(s, acc + (MPI_Aint)d[sfrom] * ext, d[sto] - d[sfrom], type, dst);
            bmpi_sched_fence(s);
            if (newrank > newdst)
                send_idx = recv_idx;
        }
    }
    if (r < 2 * rem) {
        if (r % 2)
            bmpi_sched_send(s, acc, count, type, r - 1);
        else
            bmpi_sched_recv(s, acc, count, type, r + 1);
    }
}

/* Block i of p: [d(i), d(i+1)) elements. */
static size_t blk(size_t count, int p, int i)
{
    size_t q = count / (size_t)p, m = count % (size_t)p;
    return (size_t)i * q + ((size_t)i < m ? (size_t)i : m);
}

static void ring(struct bmpi_sched *s, const void *sbuf, void *rbuf, size_t count,
                 MPI_Datatype type)
{
    int p = s->comm->size, r = s->comm->rank;
    MPI_Aint ext = bmpi_coll_extent(type);
    if (sbuf != MPI_IN_PLACE)
        bmpi_sched_copy(s, sbuf, count, type, rbuf, count, type);
    char *acc = rbuf;
    size_t maxb = count / (size_t)p + 1;
    char *tmp = bmpi_sched_tmpbuf(s, maxb, type);
    if (!tmp)
        return;
    int left = (r - 1 + p) % p, right = (r + 1) % p;
    for (int i = 0; i < p - 1; i++) {
        int sb = (r - i + p) % p, rb = (r - i - 1 + p) % p;
        size_t s0 = blk(count, p, sb), s1 = blk(count, p, sb + 1);
        size_t r0 = blk(count, p, rb), r1 = blk(count, p, rb + 1);
        bmpi_sched_recv(s, tmp, r1 - r0, type, left);
        bmpi_sched_send(s, acc + (MPI_Aint)s0 * ext, s1 - s0, type, right);
        bmpi_sched_fence(s);
        bmpi_sched_reduce(s, tmp, acc + (MPI_Aint)r0 * ext, r1 - r0, type);
    }
    /* Rank r now holds the reduced block r + 1. */
    for (int i = 0; i < p - 1; i++) {
        int sb = (r + 1 - i + p) % p, rb = (r - i + p) % p;
        size_t s0 = blk(count, p, sb), s1 = blk(count, p, sb + 1);
        size_t r0 = blk(count, p, rb), r1 = blk(count, p, rb + 1);
        bmpi_sched_recv(s, acc + (MPI_Aint)r0 * ext, r1 - r0, type, left);
        bmpi_sched_send(s, acc + (MPI_Aint)s0 * ext, s1 - s0, type, right);
        bmpi_sched_fence(s);
    }
}

int bmpi_coll_allreduce(struct bmpi_sched *s, const void *sbuf, void *rbuf, size_t count,
                        MPI_Datatype type)
{
    int p = s->comm->size;
    if (count == 0)
        return s->err;
    if (p == 1) {
        if (sbuf != MPI_IN_PLACE)
            bmpi_sched_copy(s, sbuf, count, type, rbuf, count, type);
        return s->err;
    }
    size_t bytes = count * bmpi_coll_tsize(type);
    bool commute = bmpi_op_commutative(s->op);
    int alg = bmpi_coll_select(BMPI_COLL_ALLREDUCE, p, bytes, count, commute);
    if (!commute)
        alg = RECURSIVE_DOUBLING;
    if (alg == RABENSEIFNER)
        rabenseifner(s, sbuf, rbuf, count, type);
    else if (alg == RING)
        ring(s, sbuf, rbuf, count, type);
    else
        recursive_doubling(s, sbuf, rbuf, count, type);
    return s->err;
}
