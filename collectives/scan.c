/*
 * Scan and Exscan: recursive doubling, log2 p exchanges of the partial
 * reduction of a contiguous range of ranks; the lower range is always the
 * left operand, so non-commutative ops keep rank order.
 */
#include "config.h"

#include "collectives/coll.h"

int bmpi_coll_scan(struct bmpi_sched *s, const void *sbuf, void *rbuf, size_t count,
                   MPI_Datatype type, bool exclusive)
{
    int p = s->comm->size, r = s->comm->rank;
    if (count == 0)
        return s->err;
    const void *input = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    if (!exclusive && input != rbuf)
        bmpi_sched_copy(s, input, count, type, rbuf, count, type);
    if (p == 1)
        return s->err;
    bool commute = bmpi_op_commutative(s->op);
    char *partial = bmpi_sched_tmpbuf(s, count, type);
    char *tmp = bmpi_sched_tmpbuf(s, count, type);
    if (!partial || !tmp)
        return s->err;
    bmpi_sched_copy(s, exclusive ? input : rbuf, count, type, partial, count, type);
    bool have = false; /* exscan: recvbuf holds something */
    for (int mask = 1; mask < p; mask <<= 1) {
        int dst = r ^ mask;
        if (dst >= p)
            continue;
        bmpi_sched_recv(s, tmp, count, type, dst);
        bmpi_sched_send(s, partial, count, type, dst);
        bmpi_sched_fence(s);
        if (r > dst) {
            bmpi_sched_reduce(s, tmp, partial, count, type);
            if (!exclusive) {
                bmpi_sched_reduce(s, tmp, rbuf, count, type);
            } else if (!have) {
                bmpi_sched_copy(s, tmp, count, type, rbuf, count, type);
                have = true;
            } else {
                bmpi_sched_reduce(s, tmp, rbuf, count, type);
            }
        } else if (commute) {
            bmpi_sched_reduce(s, tmp, partial, count, type);
        } else {
            bmpi_sched_reduce(s, partial, tmp, count, type);
            char *t = partial;
            partial = tmp;
            tmp = t;
        }
    }
    return s->err;
}
