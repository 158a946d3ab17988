/*
 * MPI_Alltoall on the shared-memory path (shm_coll_impl.h): every rank
 * posts its blocks (by reference where it may) and reads its own block
 * from every other rank's, in rounds when they do not fit a slot; big
 * blocks go direct.
 */
#include "config.h"

#include <stdint.h>

#include "collectives/shm_coll_impl.h"

/* Each rank exposes its send buffer; every rank copies its block from
 * each of them. */
static int alltoall_direct(struct call *k, const void *sbuf, size_t scount, MPI_Datatype stype,
                           void *rbuf, size_t rcount, MPI_Datatype rtype)
{
    struct bmpi_datatype *rdt = bmpi_dt_get(rtype);
    size_t p = (size_t)k->p, me = (size_t)k->me;
    void *staged;
    struct exposed e;
    int err = shmc_expose(k, sbuf, scount * p, bmpi_dt_get(stype), &staged, &e);
    for (size_t j = 1; j < p; j++) { /* from the next rank on, so readers spread out */
        size_t i = (me + j) % p;
        int e = shmc_fetch(k, (int)i, me, p, bmpi_coll_ofs(rbuf, rcount * i, rtype), rcount, rdt);
        err = err ? err : e;
    }
    /* the others learn this rank is done while it copies its own block */
    shmc_direct_done(k, err);
    int own = bmpi_coll_copy(bmpi_coll_ofs(sbuf, scount * me, stype), scount, stype,
                             bmpi_coll_ofs(rbuf, rcount * me, rtype), rcount, rtype);
    return shmc_direct_wait(k, staged, err ? err : own);
}

/* Posts the blocks of an alltoall as shmc_contribute_shared() does, but in
 * place copies them: the rank overwrites them with what it receives while
 * the others may still read them. */
static bool contribute_blocks(const struct call *k, const void *buf, size_t count,
                              const struct bmpi_datatype *dt, bool in_place)
{
    if (!in_place)
        return shmc_contribute_shared(k, buf, count, dt);
    shmc_contribute(k, buf, count, dt);
    return false;
}

#define ALLTOALL_SLOT_BLOCK (64u << 10) /* largest block through slots among > 2 ranks */
/* Most rounds an alltoall among more than 2 ranks takes through the
 * slots. A round carries the blocks for only as many destinations as fit
 * a slot, and only those destinations read in it while the others wait,
 * so in r rounds the copies run r steps in a row on p / r cores. Big slots
 * shrink as ranks grow (BIG_CAP), so 64 KiB blocks took 16 rounds of one
 * reader each at 16 ranks, five times as long as point-to-point, where
 * every rank reads at once (docs/collectives.md, "Shared-memory path"). Three
 * rounds is what 64 KiB blocks take at 8 ranks, where the slots won. */
#define ALLTOALL_MAX_ROUNDS 3

/* Alltoall between two ranks through the slots: only the block for the
 * other rank crosses; this rank's own block is copied locally (in place it
 * is already there). */
static int alltoall_pair(struct call *k, const void *sbuf, size_t scount, MPI_Datatype stype,
                         void *rbuf, size_t rcount, MPI_Datatype rtype)
{
    size_t me = (size_t)k->me, other = 1 - me;
    const void *src = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    size_t scnt = sbuf == MPI_IN_PLACE ? rcount : scount;
    MPI_Datatype st = sbuf == MPI_IN_PLACE ? rtype : stype;
    bool ref = contribute_blocks(k, bmpi_coll_ofs(src, scnt * other, st), scnt, bmpi_dt_get(st),
                                 sbuf == MPI_IN_PLACE);
    int err = BMPI_OK;
    if (sbuf != MPI_IN_PLACE)
        err = bmpi_coll_copy(bmpi_coll_ofs(sbuf, scount * me, stype), scount, stype,
                             bmpi_coll_ofs(rbuf, rcount * me, rtype), rcount, rtype);
    int e = shmc_unpack_part(k, (int)other, 0, 1, bmpi_coll_ofs(rbuf, rcount * other, rtype),
                             rcount, bmpi_dt_get(rtype));
    shmc_finish(k);
    if (ref)
        shmc_wait_readers(k);
    return err ? err : e;
}

int bmpi_shmcoll_alltoall(struct bmpi_comm *c, const void *sbuf, size_t scount, MPI_Datatype stype,
                          void *rbuf, size_t rcount, MPI_Datatype rtype)
{
    struct bmpi_datatype *rdt = bmpi_dt_get(rtype);
    size_t p = (size_t)c->size, block, all;
    bool in_place = sbuf == MPI_IN_PLACE;
    struct call k = {0};
    int err = 0;
    if (!shmc_total_bytes(rdt, rcount, 0, &block) || !shmc_total_bytes(rdt, rcount, p, &all))
        return BMPI_SHMCOLL_DECLINED;
    /* In place, a rank's blocks would be overwritten while others read them. */
    err = in_place ? BMPI_OK : shmc_direct_path(c, BMPI_COLL_ALLTOALL, block, &k);
    if (!err && k.g)
        return alltoall_direct(&k, sbuf, scount, stype, rbuf, rcount, rtype);
    /* Bigger blocks among more ranks go point-to-point (all posted at once
     * up to 8 ranks, select.c): through slots, in rounds of a few
     * destinations each, 8 ranks at 128 KiB were slower than pairwise
     * (docs/collectives.md, "What goes where"). */
    if (!err && p > 2 && block > ALLTOALL_SLOT_BLOCK)
        return BMPI_SHMCOLL_DECLINED;
    /* In place, this rank's blocks go to its slot before any of them is
     * overwritten, so all p must fit one slot (at 2 ranks, only the other
     * rank's block goes through the slot). */
    size_t slot = p == 2 ? block : in_place ? all : block;
    err = err ? err : shmc_path_for(c, BMPI_COLL_ALLTOALL, slot, &k);
    if (err || !k.g)
        return err ? err : BMPI_SHMCOLL_DECLINED;
    if (p == 2)
        return alltoall_pair(&k, sbuf, scount, stype, rbuf, rcount, rtype);
    /* When the p blocks of a rank do not fit a slot, the call goes in
     * rounds, each carrying the blocks for as many destinations as fit. */
    size_t cap = k.r->ring[BIG].slot_bytes, per = all <= cap ? p : cap / block;
    if ((p + per - 1) / per > ALLTOALL_MAX_ROUNDS) /* alike on every rank: the region's geometry */
        return BMPI_SHMCOLL_DECLINED;
    bool mapped;
    if ((err = shmc_rings_mapped(&k, per * block, &mapped)) || !mapped)
        return err ? err : BMPI_SHMCOLL_DECLINED;
    shmc_use_ring(&k, per * block);
    const void *src = in_place ? rbuf : sbuf;
    size_t scnt = in_place ? rcount : scount;
    MPI_Datatype st = in_place ? rtype : stype;
    for (size_t d0 = 0; d0 < p; d0 += per) {
        size_t nd = p - d0 < per ? p - d0 : per, me = (size_t)k.me;
        bool ref = contribute_blocks(&k, bmpi_coll_ofs(src, scnt * d0, st), scnt * nd,
                                     bmpi_dt_get(st), in_place);
        for (size_t j = 0; me >= d0 && me < d0 + nd && j < p; j++) {
            size_t i = (me + j) % p; /* own slot first, as in allgather */
            int e = shmc_unpack_part(&k, (int)i, me - d0, nd,
                                     bmpi_coll_ofs(rbuf, rcount * i, rtype), rcount, rdt);
            err = err ? err : e;
        }
        shmc_finish(&k);
        if (ref)
            shmc_wait_readers(&k);
    }
    return err;
}
