/*
 * ofi: remote atomics, the transport contract's amo_native() and amo()
 * (docs/ofi.md, "RMA and atomics").
 *
 * The contract's operations map onto libfabric's one to one (SUM to
 * FI_SUM ... LXOR to FI_LXOR, SWAP to FI_ATOMIC_WRITE, READ to
 * FI_ATOMIC_READ, CSWAP to FI_CSWAP), its types onto FI_INT8 ...
 * FI_UINT64, FI_FLOAT, FI_DOUBLE. Every atomic fetches: CSWAP with
 * fi_compare_atomic, the others with fi_fetch_atomic, the old values
 * going to a scratch buffer when the runtime wants none. The completion
 * of a fetch comes once the peer has applied the operation, so done
 * means remote completion (BMPI_TL_RMA_REMOTE_DONE) on every provider.
 * fi_atomic with FI_DELIVERY_COMPLETE would say the same, but the shm
 * provider of libfabric 1.17 crashes in its progress under a stream of
 * those (docs/ofi.md, "RMA and atomics").
 *
 * What the provider does, and how many elements one call may carry,
 * fi_query_atomic says once, at open; amo_native() answers from that
 * table. A provider opened without FI_ATOMIC has an empty table: the
 * runtime then applies every atomic itself, from an active message.
 *
 * amo() copies the operand (and compare) into the operation, so that the
 * runtime may reuse its buffers at once, and goes into the same ordered
 * list as get/put (ofi.c): posted in pieces of whole elements, the
 * callback from progress once every piece has completed.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_atomic.h>
#include <rdma/fi_errno.h>

#include "runtime/error.h"
#include "transport/ofi/ofi.h"

static const enum fi_op fi_op_of[BMPI_TL_AMO_NOPS] = {
    [BMPI_TL_AMO_SUM] = FI_SUM,   [BMPI_TL_AMO_PROD] = FI_PROD,         [BMPI_TL_AMO_MIN] = FI_MIN,
    [BMPI_TL_AMO_MAX] = FI_MAX,   [BMPI_TL_AMO_BAND] = FI_BAND,         [BMPI_TL_AMO_BOR] = FI_BOR,
    [BMPI_TL_AMO_BXOR] = FI_BXOR, [BMPI_TL_AMO_LAND] = FI_LAND,         [BMPI_TL_AMO_LOR] = FI_LOR,
    [BMPI_TL_AMO_LXOR] = FI_LXOR, [BMPI_TL_AMO_SWAP] = FI_ATOMIC_WRITE, [BMPI_TL_AMO_READ] = FI_ATOMIC_READ,
    [BMPI_TL_AMO_CSWAP] = FI_CSWAP,
};

static const enum fi_datatype fi_type_of[BMPI_TL_AMO_NTYPES] = {
    [BMPI_TL_AMO_INT8] = FI_INT8,     [BMPI_TL_AMO_UINT8] = FI_UINT8, [BMPI_TL_AMO_INT16] = FI_INT16,
    [BMPI_TL_AMO_UINT16] = FI_UINT16, [BMPI_TL_AMO_INT32] = FI_INT32, [BMPI_TL_AMO_UINT32] = FI_UINT32,
    [BMPI_TL_AMO_INT64] = FI_INT64,   [BMPI_TL_AMO_UINT64] = FI_UINT64, [BMPI_TL_AMO_FLOAT] = FI_FLOAT,
    [BMPI_TL_AMO_DOUBLE] = FI_DOUBLE,
};

static const size_t elem_size[BMPI_TL_AMO_NTYPES] = {
    [BMPI_TL_AMO_INT8] = 1,  [BMPI_TL_AMO_UINT8] = 1,  [BMPI_TL_AMO_INT16] = 2,
    [BMPI_TL_AMO_UINT16] = 2, [BMPI_TL_AMO_INT32] = 4, [BMPI_TL_AMO_UINT32] = 4,
    [BMPI_TL_AMO_INT64] = 8, [BMPI_TL_AMO_UINT64] = 8, [BMPI_TL_AMO_FLOAT] = sizeof(float),
    [BMPI_TL_AMO_DOUBLE] = sizeof(double),
};

/* Elements of one call at most: far below what a byte count can hold. */
#define OFI_AMO_COUNT_MAX ((size_t)1 << 32)

/* The most elements of one call the provider takes for the pair, 0 if
 * it does not do it. */
static size_t query(struct ofi_state *s, enum bmpi_tl_amo_op op, enum bmpi_tl_amo_type type)
{
    uint64_t flags = op == BMPI_TL_AMO_CSWAP ? FI_COMPARE_ATOMIC : FI_FETCH_ATOMIC;
    struct fi_atomic_attr attr = {0, 0};
    if (fi_query_atomic(s->domain, fi_type_of[type], fi_op_of[op], &attr, flags) != 0)
        return 0;
    if (attr.size != elem_size[type]) /* a type of another size than C's: not ours */
        return 0;
    return attr.count < OFI_AMO_COUNT_MAX ? attr.count : OFI_AMO_COUNT_MAX;
}

bool ofi_amo_init(struct ofi_state *s)
{
    bool any = false;
    memset(s->amo_count, 0, sizeof(s->amo_count));
    if (!(s->info->caps & FI_ATOMIC))
        return false;
    for (int op = 0; op < BMPI_TL_AMO_NOPS; op++)
        for (int type = 0; type < BMPI_TL_AMO_NTYPES; type++) {
            size_t n = query(s, (enum bmpi_tl_amo_op)op, (enum bmpi_tl_amo_type)type);
            s->amo_count[op][type] = n;
            any = any || n > 0;
        }
    return any;
}

/* The most elements of one call for the pair, 0 when amo() cannot do it.
 * READ and CSWAP exist only with a result. */
static size_t native_count(const struct ofi_state *s, enum bmpi_tl_amo_op op, enum bmpi_tl_amo_type type,
                           bool fetch)
{
    if ((unsigned)op >= BMPI_TL_AMO_NOPS || (unsigned)type >= BMPI_TL_AMO_NTYPES)
        return 0;
    if (!fetch && (op == BMPI_TL_AMO_READ || op == BMPI_TL_AMO_CSWAP))
        return 0;
    return s->amo_count[op][type];
}

bool ofi_amo_native(struct bmpi_tl *tl, int peer, enum bmpi_tl_amo_op op, enum bmpi_tl_amo_type type, bool fetch)
{
    (void)peer; /* one provider for every peer */
    return native_count(tl->priv, op, type, fetch) > 0;
}

/* In memory the operation owns: the operand (zeros for READ, whose
 * operand the provider ignores), then compare for CSWAP, then the scratch
 * result when the runtime wants none; registered under FI_MR_LOCAL, with
 * the runtime's result buffer. */
static int take_buffers(struct ofi_state *s, struct ofi_op *op, const struct bmpi_tl_amo *a)
{
    size_t len = op->len;
    size_t total = len + (a->op == BMPI_TL_AMO_CSWAP ? len : 0) + (a->result ? 0 : len);
    op->copy = malloc(total);
    if (!op->copy)
        return bmpi_err_set(MPI_ERR_NO_MEM, "ofi: out of memory for an atomic of %zu bytes", len);
    if (a->operand)
        memcpy(op->copy, a->operand, len);
    else
        memset(op->copy, 0, len);
    if (a->op == BMPI_TL_AMO_CSWAP)
        memcpy((char *)op->copy + len, a->compare, len);
    op->local = op->copy;
    op->result = a->result ? a->result : (char *)op->copy + total - len;
    if (!(s->mr_mode & FI_MR_LOCAL))
        return BMPI_OK;
    int rc = ofi_mr_get(s, op->copy, total, &op->local_mr);
    if (!rc && a->result)
        rc = ofi_mr_get(s, a->result, len, &op->result_mr);
    return rc;
}

/* What the contract asks of the caller, and the provider's limits. */
static int check_amo(const struct ofi_state *s, int peer, const struct bmpi_tl_amo *a)
{
    bool fetch = a->result != NULL;
    if (!native_count(s, a->op, a->type, fetch))
        return bmpi_err_set(MPI_ERR_INTERN, "ofi (%s): atomic op %d on type %d %s a result is not native here",
                            s->prov, (int)a->op, (int)a->type, fetch ? "with" : "without");
    if (a->count == 0 || a->count > OFI_AMO_COUNT_MAX)
        return bmpi_err_set(MPI_ERR_INTERN, "ofi: atomic of %zu elements", a->count);
    if ((a->op != BMPI_TL_AMO_READ && !a->operand) || (a->op == BMPI_TL_AMO_CSWAP && !a->compare))
        return bmpi_err_set(MPI_ERR_INTERN, "ofi: atomic op %d without its operand or compare value", (int)a->op);
    if (peer < 0 || peer >= s->nranks || !s->peers || s->peers[peer].addr == FI_ADDR_NOTAVAIL)
        return bmpi_err_set(MPI_ERR_INTERN, "ofi: atomic towards peer %d, which ofi does not reach", peer);
    return BMPI_OK;
}

int ofi_amo(struct bmpi_tl *tl, int peer, const struct bmpi_tl_amo *a, bmpi_tl_done_fn done, void *ctx)
{
    struct ofi_state *s = tl->priv;
    int rc = check_amo(s, peer, a);
    if (rc)
        return rc;
    uint64_t raddr, key;
    rc = ofi_rkey_unpack(s, a->rkey, a->rkey_len, a->remote_addr, &raddr, &key);
    if (rc)
        return rc;
    struct ofi_op *op = ofi_rma_op_new(s);
    if (!op)
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory");
    bool fetch = a->result != NULL;
    op->kind = a->op == BMPI_TL_AMO_CSWAP ? OFI_OP_COMPARE_ATOMIC : OFI_OP_FETCH_ATOMIC;
    op->peer = peer;
    op->elem = elem_size[a->type];
    op->len = a->count * op->elem;
    op->piece_max = native_count(s, a->op, a->type, fetch) * op->elem;
    op->raddr = raddr;
    op->key = key;
    op->fi_op = fi_op_of[a->op];
    op->fi_type = fi_type_of[a->type];
    op->done = done;
    op->ctx = ctx;
    rc = take_buffers(s, op, a);
    if (rc) {
        ofi_rma_discard(s, op);
        return rc;
    }
    ofi_rma_submit(s, op);
    return BMPI_OK;
}

/* The old values come back once the peer has applied the operation:
 * the completion is remote. */
ssize_t ofi_amo_post(struct ofi_state *s, struct ofi_op *op, size_t len, void *context)
{
    size_t count = len / op->elem;
    void *buf = (char *)op->copy + op->posted;
    uint64_t raddr = op->raddr + op->posted;
    void *desc = op->local_mr ? op->local_mr->desc : NULL;
    void *result = (char *)op->result + op->posted;
    /* the runtime's result has its own registration, the scratch is in copy's */
    void *rdesc = op->result_mr ? op->result_mr->desc : desc;
    fi_addr_t dest = s->peers[op->peer].addr;
    enum fi_datatype type = (enum fi_datatype)op->fi_type;
    enum fi_op fop = (enum fi_op)op->fi_op;
    if (op->kind == OFI_OP_FETCH_ATOMIC)
        return fi_fetch_atomic(s->ep, buf, count, desc, result, rdesc, dest, raddr, op->key, type, fop, context);
    void *compare = (char *)op->copy + op->len + op->posted;
    return fi_compare_atomic(s->ep, buf, count, desc, compare, desc, result, rdesc, dest, raddr, op->key, type,
                             fop, context);
}
