/*
 * Single copy in the shared-memory collectives (shm_coll_impl.h), through
 * the node-level service (transport/shm/node.h).
 *
 * Calls that move big blocks (bcast, allgather, alltoall, and a reduce
 * at 2 ranks, from BMPI_COLL_SHM_DIRECT bytes; direct_pays() in
 * shm_region.c says which, and never below what amortizes a system call
 * on this machine) are direct when every rank has CMA: a rank posts where
 * its data is instead of the data, the others copy it straight into their
 * receive buffers with process_vm_readv (one copy instead of two, and
 * none through lines the other core owns), and the rank returns once
 * every rank has finished the call. Below that floor, a writer of an
 * allgather or alltoall whose block lies in its shared heap posts only
 * where the block is, and its readers copy it from their mapping of that
 * heap: one copy too. Each writer decides this for itself, and one that
 * did waits for its readers before it returns.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "collectives/shm_coll_impl.h"

/* --- direct calls ----------------------------------------------------------- */

void shmc_post_exposed(const struct call *k, const struct exposed *e)
{
    struct slot *s = shmc_claim(k);
    memcpy(s->data, e, sizeof *e);
    shmc_publish(k, s, sizeof *e, true);
}

/* A buffer of bytes to stage data of a direct call in (free it after). */
int shmc_staging(size_t bytes, char **buf)
{
    *buf = malloc(bytes ? bytes : 1);
    if (!*buf)
        return bmpi_err_set(MPI_ERR_NO_MEM, "shm collective: no memory to stage %zu bytes",
                            bytes);
    return BMPI_OK;
}

/* Posts where this rank's count elements of dt are, into *out too. A
 * non-contiguous type is packed into *staged first (free it once
 * shmc_finish_direct returned); without memory for that the rank posts pid 0
 * and fails the call like the others. */
int shmc_expose(const struct call *k, const void *buf, size_t count,
                const struct bmpi_datatype *dt, void **staged, struct exposed *out)
{
    size_t bytes = count * bmpi_dt_size(dt);
    struct exposed e = {(uintptr_t)buf + (uintptr_t)bmpi_dt_true_lb(dt), bytes, 0, k->r->pid};
    int err = BMPI_OK;
    *staged = NULL;
    if (!bmpi_dt_is_contig(dt)) {
        char *packed;
        err = shmc_staging(bytes, &packed);
        if (!err)
            bmpi_dt_pack_all(buf, count, dt, packed);
        *staged = packed; /* NULL without memory */
        e = (struct exposed){(uintptr_t)packed, bytes, 0, err ? 0 : k->r->pid};
    }
    shmc_post_exposed(k, &e);
    *out = e;
    return err;
}

/* What rank w exposed in this call. */
int shmc_exposed_by(const struct call *k, int w, struct exposed *e)
{
    memcpy(e, shmc_await(k, w)->data, sizeof *e);
    if (!e->pid)
        return bmpi_err_set(MPI_ERR_NO_MEM, "shm collective: rank %d could not stage its data", w);
    return BMPI_OK;
}

/* n bytes at addr in process pid into (buf, count, dt). */
int shmc_read_into(const struct call *k, int pid, uint64_t addr, size_t n, void *buf,
                   size_t count, const struct bmpi_datatype *dt)
{
    if (bmpi_dt_is_contig(dt))
        return bmpi_node_peer_read(pid, (char *)buf + bmpi_dt_true_lb(dt), addr, n);
    char *tmp;
    int err = shmc_staging(n, &tmp);
    if (err)
        return err;
    if (!(err = bmpi_node_peer_read(pid, tmp, addr, n)))
        shmc_unpack(k, buf, count, dt, tmp, n);
    free(tmp);
    return err;
}

/* Copies block i of the nblocks equal blocks e exposes into (buf, count,
 * dt), truncating like shmc_unpack(). */
static int read_block(const struct call *k, const struct exposed *e, size_t i, size_t nblocks,
                      void *buf, size_t count, const struct bmpi_datatype *dt)
{
    size_t len = e->bytes / nblocks, room = count * bmpi_dt_size(dt), n = len < room ? len : room;
    if (e->pid == k->r->pid) /* an alltoall among more than 2 ranks reads its own slot too */
        return shmc_unpack(k, buf, count, dt, (const char *)(uintptr_t)e->addr + i * len, len);
    int err = shmc_read_into(k, (int)e->pid, e->addr + i * len, n, buf, count, dt);
    return err ? err : shmc_check_fit(len, room);
}

/* Copies block i of the nblocks equal blocks rank w exposed into
 * (buf, count, dt), truncating like shmc_unpack(). */
int shmc_fetch(const struct call *k, int w, size_t i, size_t nblocks, void *buf, size_t count,
               const struct bmpi_datatype *dt)
{
    struct exposed e;
    int err = shmc_exposed_by(k, w, &e);
    return err ? err : read_block(k, &e, i, nblocks, buf, count, dt);
}

/* This rank has finished its part of a direct call, with result err. A
 * direct call writes into other ranks' buffers too (bcast, reduce), so a
 * rank that failed its part says so before it counts the call done, and
 * the call fails on every rank. */
void shmc_direct_done(struct call *k, int err)
{
    if (err)
        __atomic_store_n(&shmc_line_of(k, k->me)->failed, k->g->n + 1, __ATOMIC_RELAXED);
    shmc_finish(k); /* its release store publishes failed too */
}

/* Waits until every rank has finished the direct call shmc_direct_done ended
 * here: then nobody reads what this rank exposed any more. Returns err, or
 * the failure of another rank. */
int shmc_direct_wait(struct call *k, void *staged, int err)
{
    uint64_t n = k->g->n;
    shmc_await_done(k, n);
    free(staged);
    for (int i = 0; i < k->p && !err; i++)
        if (__atomic_load_n(&shmc_line_of(k, i)->failed, __ATOMIC_RELAXED) == n)
            err = bmpi_err_set(MPI_ERR_OTHER,
                               "shm collective: rank %d failed its part of the call", i);
    return err;
}

/* Ends a direct call with this rank's result err. */
int shmc_finish_direct(struct call *k, void *staged, int err)
{
    shmc_direct_done(k, err);
    return shmc_direct_wait(k, staged, err);
}

/* --- slots by reference ------------------------------------------------------ */

/* Payload bytes from which a writer whose payload lies in its shared heap
 * posts only where it is: each reader copies it once, by memcpy from the
 * heap mapped in its process, and the writer waits until all have. Each
 * writer decides for itself, so a buffer outside the heap (static, on the
 * stack, from glibc below 64 KiB) still goes through its slot rather than
 * by process_vm_readv, as a direct call would take it. Between 2 ranks
 * bound to cores, allgather and alltoall by reference came out faster
 * from 2 KiB, the more so the bigger the blocks, and slower at 1 KiB,
 * where the writer's wait for its readers costs more than the second
 * copy it saves (docs/collectives.md, "Slots by reference"). */
#define REF_MIN 2048

/* Whether this rank posts (buf, count, dt) by reference. Not on a node
 * with more ranks than cores: there the writer's wait for its readers
 * costs a round of the scheduler, and allgathers of 2-16 KiB by reference
 * were slower at 4 and 8 ranks on 2 cores (docs/collectives.md, "Slots by
 * reference"). */
static bool ref_suits(const struct call *k, const void *buf, size_t count,
                      const struct bmpi_datatype *dt)
{
    size_t bytes = count * bmpi_dt_size(dt);
    const char *at = (const char *)buf + bmpi_dt_true_lb(dt);
    return bytes >= REF_MIN && k->r->cma && !k->r->oversubscribed && bmpi_dt_is_contig(dt) &&
           bmpi_node_heap_owns(at, bytes);
}

/* Posts this rank's data: where it is if ref_suits(), else a copy of it.
 * Returns whether by reference; the rank must then shmc_wait_readers()
 * after shmc_finish() before it returns, and must not overwrite the data
 * till then. */
bool shmc_contribute_shared(const struct call *k, const void *buf, size_t count,
                            const struct bmpi_datatype *dt)
{
    if (!ref_suits(k, buf, count, dt)) {
        shmc_contribute(k, buf, count, dt);
        return false;
    }
    struct exposed e = {(uintptr_t)buf + (uintptr_t)bmpi_dt_true_lb(dt),
                        count * bmpi_dt_size(dt), 0, k->r->pid};
    shmc_post_exposed(k, &e);
    return true;
}

/* Part i of the nparts equal parts of rank w's payload into (buf, count,
 * dt), wherever the payload is, truncating like shmc_unpack(). */
int shmc_unpack_part(const struct call *k, int w, size_t i, size_t nparts, void *buf,
                     size_t count, const struct bmpi_datatype *dt)
{
    const struct slot *s = shmc_await(k, w);
    if (!s->ref) {
        size_t len = s->bytes / nparts;
        return shmc_unpack(k, buf, count, dt, s->data + i * len, len);
    }
    struct exposed e;
    memcpy(&e, s->data, sizeof e);
    return read_block(k, &e, i, nparts, buf, count, dt);
}
