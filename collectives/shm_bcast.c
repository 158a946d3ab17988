/*
 * MPI_Bcast on the shared-memory path (shm_coll_impl.h): the root writes
 * its slot, the others read it, in rounds of a slot when the message is
 * bigger; between 2 ranks big messages go direct, each side copying half.
 */
#include "config.h"

#include <stdint.h>

#include "collectives/shm_coll_impl.h"

/* Where the two ranks of a bcast split the copy: a page boundary near the
 * middle, so the two copies never touch the same page. */
static size_t split_point(size_t len)
{
    return (len / 2) & ~(size_t)4095;
}

/* The root of a bcast between two ranks writes the upper part of the
 * message straight into the other rank's buffer, if that is contiguous,
 * while the other rank reads the lower part: both cores copy. */
static int bcast_pair_root(struct call *k, void *buf, size_t count, const struct bmpi_datatype *dt)
{
    void *staged;
    struct exposed src, dst;
    int err = shmc_expose(k, buf, count, dt, &staged, &src);
    int e = shmc_exposed_by(k, 1 - k->me, &dst);
    size_t cut = split_point(src.bytes), end = src.bytes < dst.bytes ? src.bytes : dst.bytes;
    err = err ? err : e;
    if (!err && dst.addr && end > cut)
        err = bmpi_node_peer_write((int)dst.pid, (const char *)(uintptr_t)src.addr + cut,
                                   dst.addr + cut, end - cut);
    return shmc_finish_direct(k, staged, err);
}

/* The other rank: posts where the message goes (0: not contiguous, the
 * root writes nothing) and reads the lower part, or all of it. */
static int bcast_pair_leaf(struct call *k, void *buf, size_t count, const struct bmpi_datatype *dt)
{
    size_t room = count * bmpi_dt_size(dt);
    struct exposed dst = {0, room, 0, k->r->pid}, src;
    if (bmpi_dt_is_contig(dt))
        dst.addr = (uintptr_t)buf + (uintptr_t)bmpi_dt_true_lb(dt);
    shmc_post_exposed(k, &dst);
    int err = shmc_exposed_by(k, 1 - k->me, &src);
    if (!err) {
        size_t n = dst.addr ? split_point(src.bytes) : src.bytes;
        err = shmc_read_into(k, (int)src.pid, src.addr, n < room ? n : room, buf, count, dt);
    }
    err = shmc_finish_direct(k, NULL, err);
    return err ? err : shmc_check_fit(src.bytes, room);
}

int bmpi_shmcoll_bcast(struct bmpi_comm *c, void *buf, size_t count,
                       const struct bmpi_datatype *dt, int root)
{
    size_t bytes;
    struct call k = {0};
    if (!shmc_total_bytes(dt, count, 0, &bytes))
        return BMPI_SHMCOLL_DECLINED;
    int err = shmc_direct_path(c, BMPI_COLL_BCAST, bytes, &k);
    if (!err && k.g) /* only between 2 ranks (direct_factor) */
        return k.me == root ? bcast_pair_root(&k, buf, count, dt)
                            : bcast_pair_leaf(&k, buf, count, dt);
    /* a message bigger than a slot goes in rounds of a slot each */
    err = err ? err : shmc_path_for(c, BMPI_COLL_BCAST, bytes < MIN_SLOT ? bytes : MIN_SLOT, &k);
    if (err || !k.g)
        return err ? err : BMPI_SHMCOLL_DECLINED;
    if (bytes <= k.g->slot_bytes) {
        if (k.me == root)
            shmc_contribute(&k, buf, count, dt);
        else
            err = shmc_unpack_chunks(&k, root, buf, count, dt, 0);
        shmc_finish(&k);
        return err;
    }
    bool mapped;
    if ((err = shmc_rings_mapped(&k, bytes, &mapped)) || !mapped)
        return err ? err : BMPI_SHMCOLL_DECLINED;
    shmc_use_ring(&k, bytes);
    for (size_t from = 0; from < bytes; from += k.g->slot_bytes) {
        size_t len = bytes - from < k.g->slot_bytes ? bytes - from : k.g->slot_bytes;
        int e = BMPI_OK;
        if (k.me == root)
            shmc_contribute_range(&k, buf, count, dt, from, len);
        else
            e = shmc_unpack_chunks(&k, root, buf, count, dt, from);
        err = err ? err : e;
        shmc_finish(&k);
    }
    return err;
}
