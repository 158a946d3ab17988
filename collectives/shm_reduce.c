/*
 * MPI_Reduce and MPI_Allreduce on the shared-memory path
 * (shm_coll_impl.h).
 *
 * Reductions fold the p contributions in rank order, the same on every
 * rank, so allreduce gives identical bits everywhere and non-commutative
 * ops keep the canonical order.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "collectives/shm_coll_impl.h"
#include "runtime/op.h"
#include "transport/copy.h"

#define PAIR_TWO_PHASE_MIN (128u << 10) /* TWO_PHASE_MIN between 2 ranks (two_phases()) */

/* Elements [lo, lo + n) of rank i's contribution to a reduction, laid out
 * as the type says (contiguous: at the type's origin): own (this rank's
 * send buffer, MPI_IN_PLACE when its data is in rbuf) or the rank's slot,
 * once they are written. own may be MPI_BOTTOM (NULL) with a type at an
 * absolute address, so MPI_IN_PLACE, not NULL, says "none", and addresses
 * are computed in integers. */
static const char *contribution(const struct call *k, int i, const void *own, MPI_Aint lb,
                                size_t size, size_t lo, size_t n)
{
    if (i == k->me && own != MPI_IN_PLACE)
        return (const char *)((uintptr_t)own + lo * size);
    const struct slot *s = shmc_await_bytes(k, i, (lo + n) * size);
    return bmpi_coll_origin(s->data, lb - (MPI_Aint)(lo * size));
}

/* Reductions go element range by element range of about CHUNK bytes, so
 * they start on the first chunk of a big payload while it is written. */
static size_t chunk_elems(size_t size)
{
    return size >= CHUNK ? 1 : CHUNK / size;
}

/* rbuf = x0 op (x1 op (... op x(p-1))) for elements [first, first + count)
 * (rbuf is the origin of element 0): the rank order of the standard,
 * folded from the top so the user function always gets the lower ranks'
 * data as invec, straight from their slots; every rank computes the same
 * expression, so all get the same bits. The first step starts from this
 * rank's own data when it may (it is x(p-1), or x(p-2) and the op
 * commutes: a op b == b op a exactly), which saves a pass over a slot. */
static void fold_range(const struct call *k, const void *own, void *rbuf, size_t first,
                       size_t count, const struct bmpi_datatype *dt, const struct bmpi_op *op)
{
    MPI_Aint lb = bmpi_dt_true_lb(dt);
    size_t size = bmpi_dt_size(dt), step = chunk_elems(size);
    int top = k->p - 1, next = k->p - 2;
    if (own != MPI_IN_PLACE && k->me == next && bmpi_op_commutative(op)) {
        top = next;
        next = k->p - 1;
    }
    for (size_t lo = first; lo < first + count; lo += step) {
        size_t n = first + count - lo < step ? first + count - lo : step;
        char *acc = (char *)((uintptr_t)rbuf + lo * size);
        bmpi_op_apply_into(op, contribution(k, next, own, lb, size, lo, n),
                           contribution(k, top, own, lb, size, lo, n), acc, n, dt);
        for (int i = k->p - 3; i >= 0; i--)
            bmpi_op_apply(op, contribution(k, i, own, lb, size, lo, n), acc, n, dt);
    }
}

/* Whether a reduction of count elements, bytes in all, takes two phases:
 * big enough that sharing the folding pays for a second round of slots.
 * A reduce at 2 ranks stays in one, where the leaf returns at once, and
 * so does a reduce on a node with more ranks than cores, whose ranks
 * cannot fold their segments at the same time anyway: there the second
 * round cost every rank a wait for all others on the shared cores, and
 * one phase was faster at 4 and 8 ranks on 2 cores from 16 KiB to 1 MiB.
 * An allreduce, whose ranks would each fold everything in one phase,
 * keeps two there (8 ranks, 256 KiB: one phase was much slower). An
 * allreduce at 2 ranks halves its folding only, and in one phase was
 * faster up to 64 KiB, even at 128 KiB (docs/collectives.md, "What goes
 * where"). */
static bool two_phases(const struct call *k, size_t count, size_t bytes, bool rooted)
{
    size_t min = k->p == 2 ? PAIR_TWO_PHASE_MIN : TWO_PHASE_MIN;
    return bytes >= min && count >= (size_t)k->p &&
           (!rooted || (k->p > 2 && !k->r->oversubscribed));
}

/* Elements [i * count / p, (i + 1) * count / p): rank i's segment. */
static size_t seg_lo(size_t count, int i, int p)
{
    return count * (size_t)i / (size_t)p;
}

/* A rank's data for the first phase of a reduction in two: all of it, or,
 * when it folds its own segment from its own buffer (own_folded), the
 * other ranks' segments only. */
static void contribute_segments(const struct call *k, const void *data, bool own_folded,
                                size_t count, const struct bmpi_datatype *dt)
{
    size_t size = bmpi_dt_size(dt);
    if (!own_folded) {
        shmc_contribute(k, data, count, dt);
        return;
    }
    shmc_contribute_but(k, (const char *)data + bmpi_dt_true_lb(dt), count * size,
                        seg_lo(count, k->me, k->p) * size, seg_lo(count, k->me + 1, k->p) * size);
}

/* A big reduction in two calls of the ring, so the ranks share the
 * folding instead of each doing all of it: in the first (everyone has
 * posted its contribution already) each rank folds its own segment into
 * its slot of the next call; in the second it posts that slot, and the
 * ranks that want the result (all for allreduce, the root for reduce)
 * copy every segment into rbuf. Each element is still folded once, in
 * rank order. */
static void fold_two_phases(struct call *k, const void *own, void *rbuf, size_t count,
                            const struct bmpi_datatype *dt, const struct bmpi_op *op,
                            bool want_result)
{
    MPI_Aint lb = bmpi_dt_true_lb(dt);
    size_t size = bmpi_dt_size(dt);
    size_t lo = seg_lo(count, k->me, k->p), n = seg_lo(count, k->me + 1, k->p) - lo;
    struct slot *t = shmc_claim_ahead(k, 1);
    fold_range(k, own, bmpi_coll_origin(t->data, lb + (MPI_Aint)(lo * size)), lo, n, dt, op);
    shmc_finish(k);
    shmc_post(k, t, n * size);
    for (int i = 0; i < k->p && want_result; i++) {
        size_t ilo = seg_lo(count, i, k->p), in = seg_lo(count, i + 1, k->p) - ilo;
        bmpi_copy((char *)rbuf + lb + ilo * size, shmc_await(k, i)->data, in * size);
    }
    shmc_finish(k);
}

/* The root of a reduce with a commutative op may combine in any order:
 * it starts from its own data, already in rbuf when in place, and applies
 * each other slot once. */
static void fold_commutative(const struct call *k, const void *own, void *rbuf, size_t count,
                             const struct bmpi_datatype *dt, const struct bmpi_op *op)
{
    MPI_Aint lb = bmpi_dt_true_lb(dt);
    size_t size = bmpi_dt_size(dt), step = chunk_elems(size);
    for (size_t lo = 0; lo < count; lo += step) {
        size_t n = count - lo < step ? count - lo : step;
        char *acc = (char *)((uintptr_t)rbuf + lo * size);
        bool first = own != MPI_IN_PLACE; /* the first other slot goes into acc with own */
        for (int i = k->p - 1; i >= 0; i--) {
            if (i == k->me)
                continue;
            const char *in = contribution(k, i, MPI_IN_PLACE, lb, size, lo, n);
            if (first)
                bmpi_op_apply_into(op, in, contribution(k, k->me, own, lb, size, lo, n), acc, n,
                                   dt);
            else
                bmpi_op_apply(op, in, acc, n, dt);
            first = false;
        }
    }
}

/* Reductions bigger than a slot go in rounds of a slot each with more
 * than 2 ranks (faster than point-to-point for an 8-rank 1 MiB
 * allreduce); at 2 ranks point-to-point with both sides copying is faster
 * (docs/collectives.md, "Rounds"). bytes: of the whole reduction. */
static int reduce_path(struct bmpi_comm *c, enum bmpi_coll_id id, size_t bytes, struct call *k)
{
    return shmc_path_for(c, id, c->size > 2 && bytes > MIN_SLOT ? MIN_SLOT : bytes, k);
}

/* Elements per round of a reduction: as many as fill a big slot (0: an
 * element does not fit). */
static size_t round_elems(const struct call *k, const struct bmpi_datatype *dt)
{
    size_t size = bmpi_dt_size(dt);
    return size ? k->r->ring[BIG].slot_bytes / size : SIZE_MAX;
}

/* Rounds of per elements that count takes; a count of 0 still takes one. */
static size_t rounds_for(size_t count, size_t per)
{
    return count ? (count - 1) / per + 1 : 1;
}

/* Elements the root of a pair reduce folds, from the first on; the leaf,
 * which also has to write its part into the root's buffer, folds the rest. */
static size_t root_share(size_t count)
{
    return count - count * 2 / 5;
}

/* The root's part: the leaf's elements come straight into rbuf, or
 * through a staging buffer when rbuf holds the root's own. */
static int fold_root_part(const struct exposed *leaf, const void *sbuf, void *rbuf, size_t n,
                          const struct bmpi_datatype *dt, const struct bmpi_op *op)
{
    MPI_Aint lb = bmpi_dt_true_lb(dt);
    size_t bytes = n * bmpi_dt_size(dt);
    if (sbuf != MPI_IN_PLACE) {
        int err = bmpi_node_peer_read(leaf->pid, (char *)rbuf + lb, leaf->addr, bytes);
        if (!err)
            bmpi_op_apply(op, sbuf, rbuf, n, dt);
        return err;
    }
    char *tmp;
    int err = shmc_staging(bytes, &tmp);
    if (err)
        return err;
    if (!(err = bmpi_node_peer_read(leaf->pid, tmp, leaf->addr, bytes)))
        bmpi_op_apply(op, bmpi_coll_origin(tmp, lb), rbuf, n, dt);
    free(tmp);
    return err;
}

/* The leaf's part, elements [first, first + n): the root's elements are
 * folded with the leaf's own and written into the root's rbuf. */
static int fold_leaf_part(const struct exposed *root, const void *sbuf, size_t first, size_t n,
                          const struct bmpi_datatype *dt, const struct bmpi_op *op)
{
    MPI_Aint lb = bmpi_dt_true_lb(dt);
    size_t size = bmpi_dt_size(dt), bytes = n * size;
    char *tmp;
    int err = shmc_staging(bytes, &tmp);
    if (err)
        return err;
    if (!(err = bmpi_node_peer_read(root->pid, tmp, root->addr + first * size, bytes))) {
        bmpi_op_apply(op, (const char *)sbuf + first * size, bmpi_coll_origin(tmp, lb), n, dt);
        err = bmpi_node_peer_write(root->pid, tmp, root->dst + first * size, bytes);
    }
    free(tmp);
    return err;
}

/* A reduce between two ranks with a commutative op, direct: each folds
 * part of the message reading the other's buffer, so both cores work and
 * every element crosses between them once. */
static int reduce_pair(struct call *k, const void *sbuf, void *rbuf, size_t count,
                       const struct bmpi_datatype *dt, const struct bmpi_op *op, int root)
{
    MPI_Aint lb = bmpi_dt_true_lb(dt);
    const void *own = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    struct exposed mine = {(uintptr_t)own + (uintptr_t)lb, count * bmpi_dt_size(dt),
                           k->me == root ? (uintptr_t)rbuf + (uintptr_t)lb : 0, k->r->pid};
    struct exposed other;
    size_t cut = root_share(count);
    shmc_post_exposed(k, &mine);
    int err = shmc_exposed_by(k, 1 - k->me, &other);
    if (!err)
        err = k->me == root ? fold_root_part(&other, sbuf, rbuf, cut, dt, op)
                            : fold_leaf_part(&other, sbuf, cut, count - cut, dt, op);
    return shmc_finish_direct(k, NULL, err);
}

/* One round of a reduce: count elements that fit a slot. own: this
 * rank's data, MPI_IN_PLACE when the root's is in rbuf. */
static void reduce_round(struct call *k, const void *own, void *rbuf, size_t count,
                         const struct bmpi_datatype *dt, const struct bmpi_op *op, int root)
{
    if (two_phases(k, count, count * bmpi_dt_size(dt), true)) {
        contribute_segments(k, own != MPI_IN_PLACE ? own : rbuf, own != MPI_IN_PLACE, count, dt);
        fold_two_phases(k, own, rbuf, count, dt, op, k->me == root);
        return;
    }
    if (k->me != root) {
        shmc_contribute(k, own, count, dt);
    } else if (bmpi_op_commutative(op)) {
        fold_commutative(k, own, rbuf, count, dt, op);
    } else {
        if (own == MPI_IN_PLACE) /* the fold overwrites rbuf: keep a copy */
            shmc_contribute(k, rbuf, count, dt);
        fold_range(k, own, rbuf, 0, count, dt, op);
    }
    shmc_finish(k);
}

/* One round of an allreduce, as reduce_round. */
static void allreduce_round(struct call *k, const void *own, void *rbuf, size_t count,
                            const struct bmpi_datatype *dt, const struct bmpi_op *op)
{
    if (two_phases(k, count, count * bmpi_dt_size(dt), false)) {
        contribute_segments(k, own != MPI_IN_PLACE ? own : rbuf, own != MPI_IN_PLACE, count, dt);
        fold_two_phases(k, own, rbuf, count, dt, op, true);
        return;
    }
    shmc_contribute(k, own != MPI_IN_PLACE ? own : rbuf, count, dt);
    fold_range(k, own, rbuf, 0, count, dt, op);
    shmc_finish(k);
}

/* One round of a reduce, or of an allreduce if root < 0, on the ring for
 * its bytes. */
static void reduction_round(struct call *k, const void *own, void *rbuf, size_t count,
                            const struct bmpi_datatype *dt, const struct bmpi_op *op, int root)
{
    shmc_use_ring(k, count * bmpi_dt_size(dt));
    if (root < 0)
        allreduce_round(k, own, rbuf, count, dt, op);
    else
        reduce_round(k, own, rbuf, count, dt, op, root);
}

/* A reduce (an allreduce if root < 0) of bytes in all (of a contiguous
 * dt) in rounds of as many elements as fill a big slot; one round if they
 * all fit, the common case, which takes no division. */
static int reduce_in_rounds(struct call *k, const void *sbuf, void *rbuf, size_t count,
                            size_t bytes, const struct bmpi_datatype *dt, const struct bmpi_op *op,
                            int root)
{
    bool mapped;
    int err = shmc_rings_mapped(k, bytes, &mapped);
    if (err || !mapped)
        return err ? err : BMPI_SHMCOLL_DECLINED;
    if (bytes <= k->r->ring[BIG].slot_bytes) {
        reduction_round(k, sbuf, rbuf, count, dt, op, root);
        return BMPI_OK;
    }
    size_t per = round_elems(k, dt);
    if (per == 0)
        return BMPI_SHMCOLL_DECLINED;
    for (size_t r = 0, lo = 0; r < rounds_for(count, per); r++, lo += per) {
        size_t n = count - lo < per ? count - lo : per;
        MPI_Aint ofs = (MPI_Aint)lo * bmpi_dt_extent(dt);
        const void *o = sbuf == MPI_IN_PLACE ? sbuf : (const void *)((uintptr_t)sbuf + ofs);
        reduction_round(k, o, (void *)((uintptr_t)rbuf + ofs), n, dt, op, root);
    }
    return BMPI_OK;
}

/* bytes of count elements of dt if a reduction of them may take the path
 * (contiguous, no overflow); false if not. Only contiguous types: the
 * slots then hold the data exactly as the type lays it out, and ops apply
 * to them in place. */
static bool reducible(const struct bmpi_datatype *dt, size_t count, size_t *bytes)
{
    return bmpi_dt_is_contig(dt) && shmc_total_bytes(dt, count, 0, bytes);
}

int bmpi_shmcoll_reduce(struct bmpi_comm *c, const void *sbuf, void *rbuf, size_t count,
                        const struct bmpi_datatype *dt, struct bmpi_op *op, int root)
{
    struct call k;
    size_t bytes;
    if (!reducible(dt, count, &bytes))
        return BMPI_SHMCOLL_DECLINED;
    if (c->size == 2 && bmpi_op_commutative(op)) {
        int err = shmc_direct_path(c, BMPI_COLL_REDUCE, bytes, &k);
        if (err || k.g)
            return err ? err : reduce_pair(&k, sbuf, rbuf, count, dt, op, root);
    }
    int err = reduce_path(c, BMPI_COLL_REDUCE, bytes, &k);
    if (err || !k.g)
        return err ? err : BMPI_SHMCOLL_DECLINED;
    return reduce_in_rounds(&k, sbuf, rbuf, count, bytes, dt, op, root);
}

int bmpi_shmcoll_allreduce(struct bmpi_comm *c, const void *sbuf, void *rbuf, size_t count,
                           const struct bmpi_datatype *dt, struct bmpi_op *op)
{
    struct call k;
    size_t bytes;
    if (!reducible(dt, count, &bytes))
        return BMPI_SHMCOLL_DECLINED;
    int err = reduce_path(c, BMPI_COLL_ALLREDUCE, bytes, &k);
    if (err || !k.g)
        return err ? err : BMPI_SHMCOLL_DECLINED;
    return reduce_in_rounds(&k, sbuf, rbuf, count, bytes, dt, op, -1);
}
