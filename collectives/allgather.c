/*
 * Allgather and Allgatherv.
 *  recursive_doubling  log2 p exchanges of doubling size; power-of-two
 *                      sizes only (others use bruck): small messages.
 *  bruck               ceil(log2 p) steps for any p, then one local rotation.
 *  ring                p-1 steps of one block each: large messages.
 *  linear              everything posted at once, each rank pulling every
 *                      block from its owner (allgather_linear.c).
 * Allgatherv: ring.
 */
#include "config.h"

#include "collectives/coll.h"
#include "collectives/coll_impl.h"

/* In the order of select.c. */
enum { RECURSIVE_DOUBLING, BRUCK, RING, LINEAR };

/* Own block into place (unless MPI_IN_PLACE put it there already). */
static void own_block(struct bmpi_sched *s, const void *sbuf, size_t scount, MPI_Datatype stype,
                      void *dst, size_t rcount, MPI_Datatype rtype)
{
    if (sbuf != MPI_IN_PLACE)
        bmpi_sched_copy(s, sbuf, scount, stype, dst, rcount, rtype);
}

static void recursive_doubling(struct bmpi_sched *s, char *rbuf, size_t rcount,
                               MPI_Datatype rtype)
{
    int p = s->comm->size, r = s->comm->rank;
    MPI_Aint blk = (MPI_Aint)rcount * bmpi_coll_extent(rtype);
    for (int mask = 1; mask < p; mask <<= 1) {
        int peer = r ^ mask;
        int mine = r & ~(mask - 1), theirs = peer & ~(mask - 1);
        bmpi_sched_recv(s, rbuf + theirs * blk, (size_t)mask * rcount, rtype, peer);
        bmpi_sched_send(s, rbuf + mine * blk, (size_t)mask * rcount, rtype, peer);
        bmpi_sched_fence(s);
    }
}

static void bruck(struct bmpi_sched *s, const void *sbuf, size_t scount, MPI_Datatype stype,
                  char *rbuf, size_t rcount, MPI_Datatype rtype)
{
    int p = s->comm->size, r = s->comm->rank;
    MPI_Aint blk = (MPI_Aint)rcount * bmpi_coll_extent(rtype);
    char *tmp = bmpi_sched_tmpbuf(s, (size_t)p * rcount, rtype);
    if (!tmp)
        return;
    if (sbuf == MPI_IN_PLACE)
        bmpi_sched_copy(s, rbuf + r * blk, rcount, rtype, tmp, rcount, rtype);
    else
        bmpi_sched_copy(s, sbuf, scount, stype, tmp, rcount, rtype);
    /* tmp block i holds rank (r + i)'s block. */
    for (int k = 1; k < p; k <<= 1) {
        int cnt = k < p - k ? k : p - k;
        bmpi_sched_recv(s, tmp + k * blk, (size_t)cnt * rcount, rtype, (r + k) % p);
        bmpi_sched_send(s, tmp, (size_t)cnt * rcount, rtype, (r - k + p) % p);
        bmpi_sched_fence(s);
    }
    bmpi_sched_copy(s, tmp, (size_t)(p - r) * rcount, rtype, rbuf + r * blk,
                    (size_t)(p - r) * rcount, rtype);
    bmpi_sched_copy(s, tmp + (p - r) * blk, (size_t)r * rcount, rtype, rbuf, (size_t)r * rcount,
                    rtype);
}

static void ring(struct bmpi_sched *s, char *rbuf, size_t rcount, MPI_Datatype rtype)
{
    int p = s->comm->size, r = s->comm->rank;
    MPI_Aint blk = (MPI_Aint)rcount * bmpi_coll_extent(rtype);
    int left = (r - 1 + p) % p, right = (r + 1) % p;
    for (int i = 0; i < p - 1; i++) {
        int sb = (r - i + p) % p, rb = (r - i - 1 + p) % p;
        bmpi_sched_recv(s, rbuf + rb * blk, rcount, rtype, left);
        bmpi_sched_send(s, rbuf + sb * blk, rcount, rtype, right);
        bmpi_sched_fence(s);
    }
}

int bmpi_coll_allgather(struct bmpi_sched *s, const void *sbuf, size_t scount, MPI_Datatype stype,
                        void *rbuf, size_t rcount, MPI_Datatype rtype)
{
    int p = s->comm->size, r = s->comm->rank;
    MPI_Aint blk = (MPI_Aint)rcount * bmpi_coll_extent(rtype);
    size_t total = (size_t)p * rcount * bmpi_coll_tsize(rtype);
    if (total == 0)
        return s->err;
    bool pof2 = (p & (p - 1)) == 0;
    int alg = bmpi_coll_select(BMPI_COLL_ALLGATHER, p, total, (size_t)p * rcount, true);
    if (alg == RECURSIVE_DOUBLING && !pof2)
        alg = BRUCK;
    if (alg == BRUCK) {
        bruck(s, sbuf, scount, stype, rbuf, rcount, rtype);
        return s->err;
    }
    if (alg == LINEAR) {
        bmpi_coll_allgather_linear(s, sbuf, scount, stype, rbuf, rcount, rtype);
        return s->err;
    }
    own_block(s, sbuf, scount, stype, (char *)rbuf + r * blk, rcount, rtype);
    if (alg == RECURSIVE_DOUBLING)
        recursive_doubling(s, rbuf, rcount, rtype);
    else
        ring(s, rbuf, rcount, rtype);
    return s->err;
}

int bmpi_coll_allgatherv(struct bmpi_sched *s, const void *sbuf, size_t scount,
                         MPI_Datatype stype, void *rbuf, struct bmpi_counts rcounts,
                         struct bmpi_displs displs, MPI_Datatype rtype)
{
    int p = s->comm->size, r = s->comm->rank;
    MPI_Aint ext = bmpi_coll_extent(rtype);
    char *b = rbuf;
    own_block(s, sbuf, scount, stype, b + bmpi_displ_at(displs, r) * ext, bmpi_count_at(rcounts, r),
              rtype);
    int left = (r - 1 + p) % p, right = (r + 1) % p;
    for (int i = 0; i < p - 1; i++) {
        int sb = (r - i + p) % p, rb = (r - i - 1 + p) % p;
        bmpi_sched_recv(s, b + bmpi_displ_at(displs, rb) * ext, bmpi_count_at(rcounts, rb), rtype,
                        left);
        bmpi_sched_send(s, b + bmpi_displ_at(displs, sb) * ext, bmpi_count_at(rcounts, sb), rtype,
                        right);
        bmpi_sched_fence(s);
    }
    return s->err;
}
