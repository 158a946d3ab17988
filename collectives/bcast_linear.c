/*
 * Broadcast, linear: the root offers the message to every other rank at
 * once and each pulls it straight from the root's buffer. On shared memory
 * a pull is a single copy made by the receiver, so nobody forwards, nobody
 * waits for a parent that is not scheduled, and the p-1 copies run on
 * whatever cores are free: the right shape when ranks outnumber cores.
 * Across a network the root's link would carry everything, so it is chosen
 * for few ranks only.
 */
#include "config.h"

#include "collectives/coll.h"
#include "collectives/coll_impl.h"

void bmpi_coll_bcast_linear(struct bmpi_sched *s, void *buf, size_t count, MPI_Datatype type,
                            int root)
{
    int p = s->comm->size, r = s->comm->rank;
    if (r == root)
        for (int i = 1; i < p; i++)
            bmpi_sched_send(s, buf, count, type, (root + i) % p);
    else
        bmpi_sched_recv(s, buf, count, type, root);
    bmpi_sched_fence(s);
}
