/*
 * MPI_Barrier on the shared-memory path (shm_coll_impl.h): an empty slot
 * from every rank.
 */
#include "config.h"

#include "collectives/shm_coll_impl.h"

int bmpi_shmcoll_barrier(struct bmpi_comm *c)
{
    struct call k;
    int err = shmc_path_for(c, BMPI_COLL_BARRIER, 0, &k);
    if (err || !k.g)
        return err ? err : BMPI_SHMCOLL_DECLINED;
    shmc_post(&k, shmc_claim(&k), 0);
    for (int i = 0; i < k.p; i++)
        shmc_await(&k, i);
    shmc_finish(&k);
    return BMPI_OK;
}
