/*
 * Reduce.
 *  binomial      log2 p rounds of whole vectors: small messages. With a
 *                non-commutative op the tree is rooted at rank 0 (every
 *                subtree is then a contiguous range of ranks, combined in
 *                rank order) and the result is sent on to the root.
 *  rabenseifner  reduce-scatter by recursive halving, then a binomial
 *                gather of the blocks: ~2n bytes per rank. Large
 *                messages, commutative ops.
 *  pipeline      segments up a binomial tree (reduce_pipeline.c).
 *  halves        2 ranks, each reducing half (reduce_halves.c).
 */
#include "config.h"

#include "collectives/coll.h"
#include "collectives/coll_impl.h"

/* In the order of select.c. */
enum { BINOMIAL, RABENSEIFNER, PIPELINE, HALVES };

static void binomial(struct bmpi_sched *s, const void *sbuf, void *rbuf, size_t count,
                     MPI_Datatype type, int root)
{
    int p = s->comm->size, r = s->comm->rank;
    bool commute = bmpi_op_commutative(s->op);
    int troot = commute ? root : 0; /* the tree's root */
    int rel = (r - troot + p) % p;
    const void *mine = sbuf == MPI_IN_PLACE ? rbuf : sbuf; /* in place: only at the root */
    bool children = rel % 2 == 0 && rel + 1 < p;
    char *acc, *tmp = NULL;
    if (!children) {
        acc = (char *)(uintptr_t)mine;
    } else {
        /* Accumulate in recvbuf at the root when the result stays there. */
        acc = r == root && r == troot ? rbuf : bmpi_sched_tmpbuf(s, count, type);
        tmp = bmpi_sched_tmpbuf(s, count, type);
        if (s->err) /* out of memory; acc may be MPI_BOTTOM, which is NULL */
            return;
        bmpi_sched_copy(s, mine, count, type, acc, count, type);
    }
    for (int mask = 1; mask < p; mask <<= 1) {
        if (rel & mask) {
            bmpi_sched_send(s, acc, count, type, (rel - mask + troot) % p);
            break;
        }
        if (rel + mask < p) {
            bmpi_sched_recv(s, tmp, count, type, (rel + mask + troot) % p);
            bmpi_sched_fence(s);
            if (commute) {
                bmpi_sched_reduce(s, tmp, acc, count, type);
            } else {
                /* acc covers the lower ranks: acc op tmp, into tmp. */
                bmpi_sched_reduce(s, acc, tmp, count, type);
                char *t = acc;
                acc = tmp;
                tmp = t;
            }
        }
    }
    if (r == troot) {
        if (troot == root)
            bmpi_sched_copy(s, acc, count, type, rbuf, count, type);
        else
            bmpi_sched_send(s, acc, count, type, root);
    } else if (r == root) {
        bmpi_sched_recv(s, rbuf, count, type, troot);
    }
    bmpi_sched_fence(s);
}

static void rabenseifner(struct bmpi_sched *s, const void *sbuf, void *rbuf, size_t count,
                         MPI_Datatype type, int root)
{
    int r = s->comm->rank;
    MPI_Aint ext = bmpi_coll_extent(type);
    const void *mine = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    int rem = s->comm->size - bmpi_coll_pof2_below(s->comm->size);
    int target = rem > 0 ? 1 : 0; /* the rank of newrank 0, where the blocks gather */
    /* The root that gathers accumulates in recvbuf: no final copy. */
    char *acc = r == root && r == target ? rbuf : bmpi_sched_tmpbuf(s, count, type);
    char *tmp = bmpi_sched_tmpbuf(s, count, type);
    if (s->err) /* out of memory; acc may be MPI_BOTTOM, which is NULL */
        return;
    struct bmpi_rs_state st;
    bmpi_coll_rs_halving(s, mine, acc, tmp, count, type, &st);
    int pof2 = st.pof2, newrank = st.newrank;
    if (newrank != -1) {
        size_t *d = st.disps;
        int send_idx = st.send_idx, last_idx = st.last_idx, recv_idx;
        for (int mask = pof2 / 2; mask > 0; mask >>= 1) {
            int newdst = newrank ^ mask;
            int dst = newdst < rem ? newdst * 2 + 1 : newdst + rem;
            if (newrank < newdst) {
                if (mask != pof2 / 2)
                    last_idx = last_idx + pof2 / (mask * 2);
                recv_idx = send_idx + pof2 / (mask * 2);
                bmpi_sched_recv(s, acc + (MPI_Aint)d[recv_idx] * ext,
                                d[last_idx] - d[recv_idx], type, dst);
                bmpi_sched_fence(s);
            } else {
                bmpi_sched_send(s, acc + (MPI_Aint)d[send_idx] * ext,
                                d[last_idx] - d[send_idx], type, dst);
                break;
            }
        }
    }
    bmpi_sched_fence(s);
    if (r == target) {
        if (r == root)
            bmpi_sched_copy(s, acc, count, type, rbuf, count, type);
        else
            bmpi_sched_send(s, acc, count, type, root);
    } else if (r == root) {
        bmpi_sched_recv(s, rbuf, count, type, target);
    }
    bmpi_sched_fence(s);
}

int bmpi_coll_reduce(struct bmpi_sched *s, const void *sbuf, void *rbuf, size_t count,
                     MPI_Datatype type, int root)
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
    int alg = bmpi_coll_select(BMPI_COLL_REDUCE, p, bytes, count, bmpi_op_commutative(s->op));
    if (!bmpi_op_commutative(s->op))
        alg = BINOMIAL;
    if (alg == RABENSEIFNER)
        rabenseifner(s, sbuf, rbuf, count, type, root);
    else if (alg == PIPELINE)
        bmpi_coll_reduce_pipeline(s, sbuf, rbuf, count, type, root);
    else if (alg == HALVES)
        bmpi_coll_reduce_halves(s, sbuf, rbuf, count, type, root);
    else
        binomial(s, sbuf, rbuf, count, type, root);
    return s->err;
}
