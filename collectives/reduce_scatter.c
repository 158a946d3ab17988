/*
 * Reduce_scatter and Reduce_scatter_block.
 *  ring    p-1 steps around a ring, each reducing one block: commutative
 *          ops, bandwidth-optimal for any p.
 *  basic   binomial reduce to rank 0 (canonical order), then scatterv:
 *          every non-commutative op.
 *  recursive_halving  log2 p exchanges of halving size: small messages on
 *          power-of-two sizes (others use ring), commutative ops.
 */
#include "config.h"

#include "collectives/coll.h"

/* In the order of select.c. */
enum { RING, BASIC, RECURSIVE_HALVING };

/* Rank r keeps the block range [lo, hi) that holds block r, halving it at
 * each step: the highest bit first, so that rank r ends with block r. */
static void recursive_halving(struct bmpi_sched *s, const char *in, void *rbuf,
                              struct bmpi_counts rcounts, const MPI_Aint *displs, size_t total,
                              MPI_Datatype type)
{
    int p = s->comm->size, r = s->comm->rank;
    MPI_Aint ext = bmpi_coll_extent(type);
    char *acc = bmpi_sched_tmpbuf(s, total, type);
    char *tmp = bmpi_sched_tmpbuf(s, total, type);
    if (!acc || !tmp)
        return;
    int lo = 0, hi = p;
    const char *src = in; /* the first step adds the input where it lies */
    for (int mask = p / 2; mask > 0; mask >>= 1) {
        int partner = r ^ mask, mid = lo + mask;
        int klo = r < mid ? lo : mid, khi = r < mid ? mid : hi; /* kept */
        int slo = r < mid ? mid : lo, shi = r < mid ? hi : mid; /* sent */
        size_t kn = (size_t)(displs[khi] - displs[klo]), sn = (size_t)(displs[shi] - displs[slo]);
        char *kacc = acc + displs[klo] * ext;
        bmpi_sched_recv(s, tmp, kn, type, partner);
        bmpi_sched_send(s, src + displs[slo] * ext, sn, type, partner);
        bmpi_sched_fence(s);
        if (src == in) {
            bmpi_sched_copy(s, in + displs[klo] * ext, kn, type, kacc, kn, type);
            src = acc;
        }
        bmpi_sched_reduce(s, tmp, kacc, kn, type);
        lo = klo, hi = khi;
    }
    size_t mine = (size_t)bmpi_count_at(rcounts, r);
    bmpi_sched_copy(s, acc + displs[r] * ext, mine, type, rbuf, mine, type);
}

int bmpi_coll_reduce_scatter(struct bmpi_sched *s, const void *sbuf, void *rbuf,
                             struct bmpi_counts rcounts, MPI_Datatype type)
{
    int p = s->comm->size, r = s->comm->rank;
    MPI_Aint ext = bmpi_coll_extent(type);
    const void *input = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    /* displs[p]: the total */
    MPI_Aint *displs = bmpi_sched_alloc(s, (size_t)(p + 1) * sizeof(MPI_Aint));
    if (!displs)
        return s->err;
    size_t total = 0, maxc = 0;
    for (int i = 0; i < p; i++) {
        size_t n = (size_t)bmpi_count_at(rcounts, i);
        displs[i] = (MPI_Aint)total;
        total += n;
        if (n > maxc)
            maxc = n;
    }
    displs[p] = (MPI_Aint)total;
    if (total == 0)
        return s->err;
    if (p == 1) {
        bmpi_sched_copy(s, input, total, type, rbuf, total, type);
        return s->err;
    }
    int alg = bmpi_coll_select(BMPI_COLL_REDUCE_SCATTER, p, total * bmpi_coll_tsize(type), total,
                               bmpi_op_commutative(s->op));
    if (!bmpi_op_commutative(s->op))
        alg = BASIC;
    if (alg == RECURSIVE_HALVING && (p & (p - 1)))
        alg = RING;
    if (alg == RECURSIVE_HALVING) {
        recursive_halving(s, input, rbuf, rcounts, displs, total, type);
        return s->err;
    }
    if (alg == BASIC) {
        char *tmp = NULL;
        if (r == 0 && !(tmp = bmpi_sched_tmpbuf(s, total, type)))
            return s->err;
        bmpi_coll_reduce(s, input, tmp, total, type, 0);
        bmpi_sched_fence(s);
        return bmpi_coll_scatterv(s, tmp, rcounts, (struct bmpi_displs){.w = displs}, type, rbuf,
                                  (size_t)bmpi_count_at(rcounts, r), type, 0);
    }
    /* The partial sum of a block travels around the ring in two staging
     * buffers (receive into one while the other is sent on); each rank
     * adds its own input block, so the input is never copied whole. */
    char *tmp[2] = {bmpi_sched_tmpbuf(s, maxc, type), bmpi_sched_tmpbuf(s, maxc, type)};
    if (!tmp[0] || !tmp[1])
        return s->err;
    const char *in = input;
    int left = (r - 1 + p) % p, right = (r + 1) % p;
    for (int i = 0; i < p - 1; i++) {
        int sb = (r - i - 1 + p) % p, rb = (r - i - 2 + p) % p;
        char *cur = tmp[i % 2];
        size_t rn = (size_t)bmpi_count_at(rcounts, rb), sn = (size_t)bmpi_count_at(rcounts, sb);
        bmpi_sched_recv(s, cur, rn, type, left);
        if (i == 0)
            bmpi_sched_send(s, in + displs[sb] * ext, sn, type, right);
        else
            bmpi_sched_send(s, tmp[(i - 1) % 2], sn, type, right);
        bmpi_sched_fence(s);
        bmpi_sched_reduce(s, in + displs[rb] * ext, cur, rn, type);
    }
    /* The last block reduced is mine (rb == r at i == p - 2). */
    size_t mine = (size_t)bmpi_count_at(rcounts, r);
    bmpi_sched_copy(s, tmp[(p - 2) % 2], mine, type, rbuf, mine, type);
    return s->err;
}
