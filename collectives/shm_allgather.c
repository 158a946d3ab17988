/*
 * MPI_Allgather on the shared-memory path (shm_coll_impl.h): every rank
 * posts its block (by reference where it may), or exposes it for a direct
 * call, and copies every other rank's.
 */
#include "config.h"

#include <stdint.h>

#include "collectives/shm_coll_impl.h"

/* Each rank exposes its block where it is (in rbuf when in place) and
 * copies every other rank's block from there. */
static int allgather_direct(struct call *k, const void *sbuf, size_t scount, MPI_Datatype stype,
                            void *rbuf, size_t rcount, MPI_Datatype rtype)
{
    struct bmpi_datatype *rdt = bmpi_dt_get(rtype);
    void *mine = bmpi_coll_ofs(rbuf, rcount * (size_t)k->me, rtype), *staged;
    struct exposed e;
    int err;
    if (sbuf == MPI_IN_PLACE) {
        err = shmc_expose(k, mine, rcount, rdt, &staged, &e);
    } else {
        err = shmc_expose(k, sbuf, scount, bmpi_dt_get(stype), &staged, &e);
    }
    for (int j = 1; j < k->p; j++) { /* from the next rank on, so readers spread out */
        int i = (k->me + j) % k->p;
        int e = shmc_fetch(k, i, 0, 1, bmpi_coll_ofs(rbuf, rcount * (size_t)i, rtype), rcount, rdt);
        err = err ? err : e;
    }
    /* the others learn this rank is done while it copies its own block */
    shmc_direct_done(k, err);
    int own = sbuf == MPI_IN_PLACE ? BMPI_OK
                                   : bmpi_coll_copy(sbuf, scount, stype, mine, rcount, rtype);
    return shmc_direct_wait(k, staged, err ? err : own);
}

int bmpi_shmcoll_allgather(struct bmpi_comm *c, const void *sbuf, size_t scount,
                           MPI_Datatype stype, void *rbuf, size_t rcount, MPI_Datatype rtype)
{
    struct bmpi_datatype *rdt = bmpi_dt_get(rtype);
    size_t block;
    struct call k = {0};
    if (!shmc_total_bytes(rdt, rcount, 0, &block))
        return BMPI_SHMCOLL_DECLINED;
    int err = shmc_direct_path(c, BMPI_COLL_ALLGATHER, block, &k);
    if (!err && k.g)
        return allgather_direct(&k, sbuf, scount, stype, rbuf, rcount, rtype);
    err = err ? err : shmc_path_for(c, BMPI_COLL_ALLGATHER, block, &k);
    if (err || !k.g)
        return err ? err : BMPI_SHMCOLL_DECLINED;
    void *mine = bmpi_coll_ofs(rbuf, rcount * (size_t)k.me, rtype);
    bool ref;
    if (sbuf == MPI_IN_PLACE) {
        ref = shmc_contribute_shared(&k, mine, rcount, rdt);
    } else {
        ref = shmc_contribute_shared(&k, sbuf, scount, bmpi_dt_get(stype));
        /* its own block straight across while the others still write */
        err = bmpi_coll_copy(sbuf, scount, stype, mine, rcount, rtype);
    }
    for (int j = 1; j < k.p; j++) {
        int i = (k.me + j) % k.p;
        int e = shmc_unpack_part(&k, i, 0, 1, bmpi_coll_ofs(rbuf, rcount * (size_t)i, rtype),
                                 rcount, rdt);
        err = err ? err : e;
    }
    shmc_finish(&k);
    if (ref)
        shmc_wait_readers(&k);
    return err;
}
