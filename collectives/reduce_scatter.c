/*
 * Reduce_scatter and Reduce_scatter_block.
 *  ring    p-1 steps around a ring, each reducing one block: commutative
 *          ops, bandwidth-optimal for any p.
 *  basic   binomial reduce to rank 0 (canonical order), then scatterv:
 *          every non-commutative op.
 */
#include "config.h"

#include "collectives/coll.h"

static const char *const names[] = {"ring", "basic"};
enum { RING, BASIC };

int bmpi_coll_reduce_scatter(struct bmpi_sched *s, const void *sbuf, void *rbuf,
                             const int *rcounts, MPI_Datatype type)
{
    int p = s->comm->size, r = s->comm->rank;
    MPI_Aint ext = bmpi_coll_extent(type);
    const void *input = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    int *displs = bmpi_sched_alloc(s, (size_t)(p + 1) * sizeof(int));
    if (!displs)
        return s->err;
    size_t total = 0, maxc = 0;
    for (int i = 0; i < p; i++) {
        displs[i] = (int)total;
        total += (size_t)rcounts[i];
        if ((size_t)rcounts[i] > maxc)
            maxc = (size_t)rcounts[i];
    }
    if (total == 0)
        return s->err;
    if (p == 1) {
        bmpi_sched_copy(s, input, total, type, rbuf, total, type);
        return s->err;
    }
    int alg = bmpi_coll_forced(BMPI_COLL_REDUCE_SCATTER, names, 2);
    if (alg < 0 || !bmpi_op_commutative(s->op))
        alg = bmpi_op_commutative(s->op) ? RING : BASIC;
    if (alg == BASIC) {
        char *tmp = NULL;
        if (r == 0 && !(tmp = bmpi_sched_tmpbuf(s, total, type)))
            return s->err;
        bmpi_coll_reduce(s, input, tmp, total, type, 0);
        bmpi_sched_fence(s);
        return bmpi_coll_scatterv(s, tmp, rcounts, displs, type, rbuf, (size_t)rcounts[r], type, 0);
    }
    char *acc = bmpi_sched_tmpbuf(s, total, type);
    char *tmp = bmpi_sched_tmpbuf(s, maxc, type);
    if (!acc || !tmp)
        return s->err;
    bmpi_sched_copy(s, input, total, type, acc, total, type);
    int left = (r - 1 + p) % p, right = (r + 1) % p;
    for (int i = 0; i < p - 1; i++) {
        int sb = (r - i - 1 + p) % p, rb = (r - i - 2 + p) % p;
        bmpi_sched_recv(s, tmp, (size_t)rcounts[rb], type, left);
        bmpi_sched_send(s, acc + (MPI_Aint)displs[sb] * ext, (size_t)rcounts[sb], type, right);
        bmpi_sched_fence(s);
        bmpi_sched_reduce(s, tmp, acc + (MPI_Aint)displs[rb] * ext, (size_t)rcounts[rb], type);
    }
    bmpi_sched_copy(s, acc + (MPI_Aint)displs[r] * ext, (size_t)rcounts[r], type, rbuf,
                    (size_t)rcounts[r], type);
    return s->err;
}
