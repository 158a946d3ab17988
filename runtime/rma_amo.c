/*
 * Accumulates by the transport's atomics (docs/rma.md, "Atomics over the
 * network").
 *
 * A fetching accumulate (Get_accumulate, Fetch_and_op, Compare_and_swap)
 * to a NET target may go to the transport's amo() instead of an active
 * message when four things hold:
 *  - the transport's atomics are applied by the target's CPU with atomic
 *    instructions (BMPI_TL_RMA_AMO_CPU), so they are atomic with respect
 *    to the CPU atomics (rma_atomic.c) that the target, its node's ranks
 *    and the target's own active-message handler apply to the same
 *    elements; a NIC whose atomics are atomic only among themselves never
 *    carries an accumulate, since nothing could keep the node's CPUs off
 *    the element meanwhile;
 *  - the element type and op have a native form (amo_native);
 *  - every side is one contiguous run, and the target's elements sit at
 *    their natural alignment (as CPU atomics need them);
 *  - BMPI_RMA_NET_ATOMICS is not off.
 * MPI_Accumulate itself goes as active messages, gathered when small
 * (rma_batch.c): where amo() may carry it the target's CPU applies both
 * forms, and one message carries many Accumulates where amo() carries
 * one (docs/performance.md, "Across two simulated hosts").
 * Accumulates from one origin to one target keep their order (the
 * accumulate_ordering hint, "rar,raw,war,waw" by default): when a target's
 * accumulates switch between amo() and active messages, or when amo()s
 * themselves are not ordered by the transport (BMPI_TL_RMA_ORDERED or
 * BMPI_TL_RMA_AMO_ORDERED), the new one waits until everything issued to
 * that target has been answered.
 */
#include "config.h"

#include <string.h>

#include "runtime/op.h"
#include "runtime/rma_impl.h"
#include "transport/transport.h"

/* The transport's element type for a predefined MPI type, or -1. */
static int amo_type_of(MPI_Datatype t)
{
    switch (t) {
    case MPI_SIGNED_CHAR: case MPI_INT8_T: case MPI_INTEGER1:
        return BMPI_TL_AMO_INT8;
    case MPI_CHAR:
        return (char)-1 < 0 ? BMPI_TL_AMO_INT8 : BMPI_TL_AMO_UINT8;
    case MPI_UNSIGNED_CHAR: case MPI_UINT8_T: case MPI_BYTE: case MPI_C_BOOL:
        return BMPI_TL_AMO_UINT8;
    case MPI_SHORT: case MPI_INT16_T: case MPI_INTEGER2:
        return BMPI_TL_AMO_INT16;
    case MPI_UNSIGNED_SHORT: case MPI_UINT16_T:
        return BMPI_TL_AMO_UINT16;
    case MPI_INT: case MPI_INT32_T: case MPI_INTEGER: case MPI_INTEGER4:
        return BMPI_TL_AMO_INT32;
    case MPI_UNSIGNED: case MPI_UINT32_T:
        return BMPI_TL_AMO_UINT32;
    case MPI_LONG:
        return sizeof(long) == 8 ? BMPI_TL_AMO_INT64 : BMPI_TL_AMO_INT32;
    case MPI_UNSIGNED_LONG:
        return sizeof(long) == 8 ? BMPI_TL_AMO_UINT64 : BMPI_TL_AMO_UINT32;
    case MPI_LONG_LONG: case MPI_INT64_T: case MPI_INTEGER8: case MPI_AINT: case MPI_OFFSET: case MPI_COUNT:
        return BMPI_TL_AMO_INT64;
    case MPI_UNSIGNED_LONG_LONG: case MPI_UINT64_T:
        return BMPI_TL_AMO_UINT64;
    case MPI_FLOAT: case MPI_REAL: case MPI_REAL4:
        return BMPI_TL_AMO_FLOAT;
    case MPI_DOUBLE: case MPI_DOUBLE_PRECISION: case MPI_REAL8:
        return BMPI_TL_AMO_DOUBLE;
    default:
        return -1;
    }
}

/* The transport's operation for a call, or -1. */
static int amo_op_of(const struct bmpi_rma_call *c)
{
    if (c->kind == BMPI_RMA_CAS)
        return BMPI_TL_AMO_CSWAP;
    MPI_Op h = c->op->handle;
    if (h == MPI_SUM) return BMPI_TL_AMO_SUM;
    if (h == MPI_PROD) return BMPI_TL_AMO_PROD;
    if (h == MPI_MIN) return BMPI_TL_AMO_MIN;
    if (h == MPI_MAX) return BMPI_TL_AMO_MAX;
    if (h == MPI_BAND) return BMPI_TL_AMO_BAND;
    if (h == MPI_BOR) return BMPI_TL_AMO_BOR;
    if (h == MPI_BXOR) return BMPI_TL_AMO_BXOR;
    if (h == MPI_LAND) return BMPI_TL_AMO_LAND;
    if (h == MPI_LOR) return BMPI_TL_AMO_LOR;
    if (h == MPI_LXOR) return BMPI_TL_AMO_LXOR;
    if (h == MPI_REPLACE) return BMPI_TL_AMO_SWAP;
    if (h == MPI_NO_OP) return BMPI_TL_AMO_READ;
    return -1; /* MINLOC, MAXLOC */
}

static bool contiguous(const struct bmpi_datatype *dt) { return !dt || bmpi_dt_is_contig(dt); }

static const char *run_of(const void *buf, const struct bmpi_datatype *dt)
{
    return buf ? (const char *)buf + bmpi_dt_true_lb(dt) : NULL;
}

bool bmpi_rma_amo_fits(const struct bmpi_win *w, const struct bmpi_rma_call *c, struct bmpi_tl_amo *amo)
{
    const struct bmpi_win_target *t = &w->t[c->target];
    const unsigned need = BMPI_TL_RMA_AMO | BMPI_TL_RMA_AMO_CPU;
    if (!w->net_atomics || c->kind == BMPI_RMA_ACC || t->path != BMPI_RMA_NET || (t->tl->caps.flags & need) != need ||
        !c->bytes)
        return false;
    int type = amo_type_of(c->basic), op = amo_op_of(c);
    if (type < 0 || op < 0 || !contiguous(c->tdt) || !contiguous(c->odt) || !contiguous(c->rdt))
        return false;
    size_t elem = bmpi_dt_size(bmpi_dt_get(c->basic));
    uint64_t remote = t->base + c->offset + (uint64_t)bmpi_dt_true_lb(c->tdt);
    if (remote % elem)
        return false;
    if (!t->tl->ops->amo_native(t->tl, t->world, (enum bmpi_tl_amo_op)op, (enum bmpi_tl_amo_type)type,
                                c->result != NULL))
        return false;
    *amo = (struct bmpi_tl_amo){
        .op = (enum bmpi_tl_amo_op)op,
        .type = (enum bmpi_tl_amo_type)type,
        .count = c->bytes / elem,
        .operand = run_of(c->origin, c->odt),
        .compare = c->compare,
        .result = (void *)run_of(c->result, c->rdt),
        .remote_addr = remote,
        .rkey = t->rkey,
        .rkey_len = t->rkey_len,
    };
    return true;
}

static bool ordered(const struct bmpi_win *w) { return strcmp(w->accumulate_ordering, "none") != 0; }

void bmpi_rma_acc_order(struct bmpi_win *w, int target, enum bmpi_rma_acc_via via)
{
    struct bmpi_win_target *t = &w->t[target];
    bool unordered_amo =
        via == BMPI_ACC_AMO && !(t->tl->caps.flags & (BMPI_TL_RMA_ORDERED | BMPI_TL_RMA_AMO_ORDERED));
    if (ordered(w) && t->acked != t->issued && (t->acc_via != via || unordered_amo))
        bmpi_rma_wait_answered(w, target);
    t->acc_via = via;
}

static void amo_done(void *ctx, int status)
{
    bmpi_rma_track_piece(ctx, 0, NULL, 0, status);
}

int bmpi_rma_amo_issue(struct bmpi_win *w, const struct bmpi_rma_call *c, const struct bmpi_tl_amo *amo)
{
    struct bmpi_win_target *t = &w->t[c->target];
    bmpi_rma_acc_order(w, c->target, BMPI_ACC_AMO);
    struct bmpi_rma_track *track = bmpi_rma_track_new(w, c);
    if (!track)
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory for an RMA operation");
    t->issued++;
    w->ops_pending++;
    int err = t->tl->ops->amo(t->tl, t->world, amo, amo_done, track);
    if (err) {
        t->issued--;
        w->ops_pending--;
        bmpi_rma_track_drop(track);
        return err;
    }
    if (!amo->result && !(t->tl->caps.flags & BMPI_TL_RMA_REMOTE_DONE))
        t->net_unflushed = true;
    w->acc_count[BMPI_ACC_AMO]++;
    return BMPI_OK;
}
