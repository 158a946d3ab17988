/*
 * Barrier: dissemination (Hensgen, Finkel, Manber). ceil(log2 p) rounds;
 * in round k every rank signals rank + 2^k and waits for rank - 2^k, so any
 * size works without a fold step.
 */
#include "config.h"

#include "collectives/coll.h"

int bmpi_coll_barrier(struct bmpi_sched *s)
{
    int p = s->comm->size, r = s->comm->rank;
    for (int k = 1; k < p; k <<= 1) {
        bmpi_sched_recv(s, NULL, 0, MPI_BYTE, (r - k + p) % p);
        bmpi_sched_send(s, NULL, 0, MPI_BYTE, (r + k) % p);
        bmpi_sched_fence(s);
    }
    return s->err;
}
