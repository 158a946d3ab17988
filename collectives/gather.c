/*
 * Gather(v) and Scatter(v).
 *  linear    the root posts all p-1 transfers at once (the transport
 *            pipelines them); every other rank does one.
 *  binomial  (gather, scatter) log2 p rounds through a tree, relaying
 *            subtree blocks: fewer messages at the root for small data.
 */
#include "config.h"

#include "collectives/coll.h"

/* In the order of select.c. */
enum { LINEAR, BINOMIAL };

int bmpi_coll_gatherv(struct bmpi_sched *s, const void *sbuf, size_t scount, MPI_Datatype stype,
                      void *rbuf, struct bmpi_counts rcounts, struct bmpi_displs displs,
                      MPI_Datatype rtype, int root)
{
    int p = s->comm->size, r = s->comm->rank;
    if (r != root) {
        bmpi_sched_send(s, sbuf, scount, stype, root);
        return s->err;
    }
    MPI_Aint ext = bmpi_coll_extent(rtype);
    for (int i = 0; i < p; i++) {
        char *dst = (char *)rbuf + bmpi_displ_at(displs, i) * ext;
        if (i == r) {
            if (sbuf != MPI_IN_PLACE)
                bmpi_sched_copy(s, sbuf, scount, stype, dst, bmpi_count_at(rcounts, i), rtype);
        } else {
            bmpi_sched_recv(s, dst, bmpi_count_at(rcounts, i), rtype, i);
        }
    }
    return s->err;
}

/* Binomial gather in packed bytes: the subtree of relative rank v holds
 * blocks [v, v + size) in a temporary buffer, in relative order. */
static void gather_binomial(struct bmpi_sched *s, const void *sbuf, size_t scount,
                            MPI_Datatype stype, void *rbuf, size_t rcount, MPI_Datatype rtype,
                            int root)
{
    int p = s->comm->size, r = s->comm->rank;
    int rel = (r - root + p) % p;
    size_t bs = r == root ? rcount * bmpi_coll_tsize(rtype) : scount * bmpi_coll_tsize(stype);
    /* My subtree's size: up to the lowest set bit of rel. */
    int sub = 1;
    while (sub < p && !(rel & sub))
        sub <<= 1;
    int have = rel + sub < p ? sub : p - rel;
    char *tmp = bmpi_sched_alloc(s, (size_t)have * bs);
    if (!tmp)
        return;
    if (r == root && sbuf == MPI_IN_PLACE) {
        MPI_Aint blk = (MPI_Aint)rcount * bmpi_coll_extent(rtype);
        bmpi_sched_copy(s, (char *)rbuf + r * blk, rcount, rtype, tmp, bs, MPI_BYTE);
    } else {
        bmpi_sched_copy(s, sbuf, scount, stype, tmp, bs, MPI_BYTE);
    }
    for (int mask = 1; mask < p; mask <<= 1) {
        if (rel & mask) {
            bmpi_sched_fence(s);
            bmpi_sched_send(s, tmp, (size_t)have * bs, MPI_BYTE, (r - mask + p) % p);
            return;
        }
        if (rel + mask < p) {
            int n = rel + 2 * mask <= p ? mask : p - rel - mask;
            bmpi_sched_recv(s, tmp + (size_t)mask * bs, (size_t)n * bs, MPI_BYTE, (r + mask) % p);
        }
    }
    bmpi_sched_fence(s);
    /* The root: relative block i belongs to rank (i + root) % p. */
    MPI_Aint blk = (MPI_Aint)rcount * bmpi_coll_extent(rtype);
    bmpi_sched_copy(s, tmp, (size_t)(p - root) * bs, MPI_BYTE, (char *)rbuf + root * blk,
                    (size_t)(p - root) * rcount, rtype);
    bmpi_sched_copy(s, tmp + (size_t)(p - root) * bs, (size_t)root * bs, MPI_BYTE, rbuf,
                    (size_t)root * rcount, rtype);
}

int bmpi_coll_gather(struct bmpi_sched *s, const void *sbuf, size_t scount, MPI_Datatype stype,
                     void *rbuf, size_t rcount, MPI_Datatype rtype, int root)
{
    int p = s->comm->size, r = s->comm->rank;
    size_t bs = r == root ? rcount * bmpi_coll_tsize(rtype) : scount * bmpi_coll_tsize(stype);
    int alg = bmpi_coll_select(BMPI_COLL_GATHER, p, bs * (size_t)p, 0, true);
    if (alg == BINOMIAL && p > 1) {
        gather_binomial(s, sbuf, scount, stype, rbuf, rcount, rtype, root);
        return s->err;
    }
    if (r != root) {
        bmpi_sched_send(s, sbuf, scount, stype, root);
        return s->err;
    }
    MPI_Aint blk = (MPI_Aint)rcount * bmpi_coll_extent(rtype);
    for (int i = 0; i < p; i++) {
        char *dst = (char *)rbuf + i * blk;
        if (i == r) {
            if (sbuf != MPI_IN_PLACE)
                bmpi_sched_copy(s, sbuf, scount, stype, dst, rcount, rtype);
        } else {
            bmpi_sched_recv(s, dst, rcount, rtype, i);
        }
    }
    return s->err;
}

int bmpi_coll_scatterv(struct bmpi_sched *s, const void *sbuf, struct bmpi_counts scounts,
                       struct bmpi_displs displs, MPI_Datatype stype, void *rbuf, size_t rcount,
                       MPI_Datatype rtype, int root)
{
    int p = s->comm->size, r = s->comm->rank;
    if (r != root) {
        bmpi_sched_recv(s, rbuf, rcount, rtype, root);
        return s->err;
    }
    MPI_Aint ext = bmpi_coll_extent(stype);
    for (int i = 0; i < p; i++) {
        const char *src = (const char *)sbuf + bmpi_displ_at(displs, i) * ext;
        if (i == r) {
            if (rbuf != MPI_IN_PLACE)
                bmpi_sched_copy(s, src, bmpi_count_at(scounts, i), stype, rbuf, rcount, rtype);
        } else {
            bmpi_sched_send(s, src, bmpi_count_at(scounts, i), stype, i);
        }
    }
    return s->err;
}

/* Binomial scatter in packed bytes, the mirror of gather_binomial. */
static void scatter_binomial(struct bmpi_sched *s, const void *sbuf, size_t scount,
                             MPI_Datatype stype, void *rbuf, size_t rcount, MPI_Datatype rtype,
                             int root)
{
    int p = s->comm->size, r = s->comm->rank;
    int rel = (r - root + p) % p;
    size_t bs = r == root ? scount * bmpi_coll_tsize(stype) : rcount * bmpi_coll_tsize(rtype);
    int sub = 1;
    while (sub < p && !(rel & sub))
        sub <<= 1;
    int have = rel + sub < p ? sub : p - rel;
    char *tmp = bmpi_sched_alloc(s, (size_t)have * bs);
    if (!tmp)
        return;
    int mask = 1;
    if (r == root) {
        MPI_Aint blk = (MPI_Aint)scount * bmpi_coll_extent(stype);
        bmpi_sched_copy(s, (const char *)sbuf + root * blk, (size_t)(p - root) * scount, stype, tmp,
                        (size_t)(p - root) * bs, MPI_BYTE);
        bmpi_sched_copy(s, sbuf, (size_t)root * scount, stype, tmp + (size_t)(p - root) * bs,
                        (size_t)root * bs, MPI_BYTE);
        mask = sub;
    } else {
        for (; mask < p; mask <<= 1)
            if (rel & mask) {
                bmpi_sched_recv(s, tmp, (size_t)have * bs, MPI_BYTE, (r - mask + p) % p);
                bmpi_sched_fence(s);
                break;
            }
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (rel + mask < p) {
            int n = rel + 2 * mask <= p ? mask : p - rel - mask;
            bmpi_sched_send(s, tmp + (size_t)mask * bs, (size_t)n * bs, MPI_BYTE, (r + mask) % p);
        }
    if (!(r == root && rbuf == MPI_IN_PLACE))
        bmpi_sched_copy(s, tmp, bs, MPI_BYTE, rbuf, rcount, rtype);
    bmpi_sched_fence(s);
}

int bmpi_coll_scatter(struct bmpi_sched *s, const void *sbuf, size_t scount, MPI_Datatype stype,
                      void *rbuf, size_t rcount, MPI_Datatype rtype, int root)
{
    int p = s->comm->size, r = s->comm->rank;
    size_t bs = r == root ? scount * bmpi_coll_tsize(stype) : rcount * bmpi_coll_tsize(rtype);
    int alg = bmpi_coll_select(BMPI_COLL_SCATTER, p, bs * (size_t)p, 0, true);
    if (alg == BINOMIAL && p > 1) {
        scatter_binomial(s, sbuf, scount, stype, rbuf, rcount, rtype, root);
        return s->err;
    }
    if (r != root) {
        bmpi_sched_recv(s, rbuf, rcount, rtype, root);
        return s->err;
    }
    MPI_Aint blk = (MPI_Aint)scount * bmpi_coll_extent(stype);
    for (int i = 0; i < p; i++) {
        const char *src = (const char *)sbuf + i * blk;
        if (i == r) {
            if (rbuf != MPI_IN_PLACE)
                bmpi_sched_copy(s, src, scount, stype, rbuf, rcount, rtype);
        } else {
            bmpi_sched_send(s, src, scount, stype, i);
        }
    }
    return s->err;
}
