/*
 * Allgather, linear: every rank offers its block to every other rank at
 * once and pulls the others' blocks straight from their owners. On shared
 * memory each pull is a single copy made by the receiver, so no block is
 * forwarded and no rank waits for a neighbour to be scheduled between
 * rounds, which is what the ring does when ranks outnumber cores. The own
 * block is copied into place while the peers pull it from the send buffer.
 */
#include "config.h"

#include "collectives/coll.h"
#include "collectives/coll_impl.h"

void bmpi_coll_allgather_linear(struct bmpi_sched *s, const void *sbuf, size_t scount,
                                MPI_Datatype stype, void *rbuf, size_t rcount, MPI_Datatype rtype)
{
    int p = s->comm->size, r = s->comm->rank;
    MPI_Aint blk = (MPI_Aint)rcount * bmpi_coll_extent(rtype);
    char *b = rbuf;
    /* Staggered, so that the ranks do not all start with rank 0's block. */
    for (int i = 1; i < p; i++) {
        int from = (r - i + p) % p;
        bmpi_sched_recv(s, b + from * blk, rcount, rtype, from);
    }
    for (int i = 1; i < p; i++) {
        int to = (r + i) % p;
        if (sbuf == MPI_IN_PLACE)
            bmpi_sched_send(s, b + r * blk, rcount, rtype, to);
        else
            bmpi_sched_send(s, sbuf, scount, stype, to);
    }
    if (sbuf != MPI_IN_PLACE)
        bmpi_sched_copy(s, sbuf, scount, stype, b + r * blk, rcount, rtype);
    bmpi_sched_fence(s);
}
