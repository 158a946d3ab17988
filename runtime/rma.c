/*
 * The communication calls of one-sided communication: Put, Get,
 * Accumulate, Get_accumulate, Fetch_and_op, Compare_and_swap and their
 * request forms (runtime/win.h for the paths, docs/rma.md).
 *
 * Each call is checked (window, target, counts, types, displacement
 * range, op, epoch) into a struct bmpi_rma_call, then goes down the
 * target's path: DIRECT moves the data here and now with loads, stores
 * and the element-wise atomics of rma_atomic.c; NET gives contiguous
 * pieces of puts and gets to the transport; everything else is an active
 * message (rma_am.c). Both datatypes are walked here: the target's
 * layout is described by a datatype of this process, as the standard
 * says, so a DIRECT or NET target needs nothing from the target.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/api.h"
#include "runtime/comm.h"
#include "runtime/op.h"
#include "runtime/request.h"
#include "runtime/rma_atomic.h"
#include "runtime/rma_impl.h"
#include "runtime/world.h"
#include "transport/copy.h"

/* Bytes of staging for a non-contiguous side of a DIRECT accumulate. */
#define STAGE 4096u
/* Contiguous pieces asked of the datatype engine at a time. */
#define PIECES 16
/* A NET Put or Get whose target pieces average fewer bytes goes as
 * active messages (net_pieces_small). */
#define NET_PIECE_MIN 1024u

/* ---- tracking --------------------------------------------------------------- */

struct bmpi_rma_track *bmpi_rma_track_new(struct bmpi_win *w, const struct bmpi_rma_call *c)
{
    struct bmpi_rma_track *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->win = w;
    t->target = c->target;
    t->req = c->req;
    t->refs = 1;
    if (c->kind != BMPI_RMA_PUT && c->kind != BMPI_RMA_ACC) {
        t->buf = c->result;
        t->count = c->rcount;
        t->dt = c->rdt;
        bmpi_dt_retain(t->dt);
    }
    if (t->req)
        t->req->pending_ops++;
    return t;
}

void bmpi_rma_track_drop(struct bmpi_rma_track *t)
{
    if (--t->refs > 0)
        return;
    if (t->unpack_at_end && !(t->req && t->req->status.MPI_ERROR))
        bmpi_dt_unpack_all(t->bounce, t->buf, t->count, t->dt);
    if (t->dt)
        bmpi_dt_release(t->dt);
    if (t->reg_tl)
        t->reg_tl->ops->mem_dereg(t->reg_tl, t->memh);
    free(t->bounce);
    if (t->req && --t->req->pending_ops == 0)
        bmpi_request_complete(t->req);
    free(t);
}

void bmpi_rma_track_piece(struct bmpi_rma_track *t, uint64_t offset, const void *data, size_t len,
                          int status)
{
    if (len && !status) {
        struct bmpi_dt_cursor cur;
        bmpi_dt_cursor_init(&cur, t->buf, t->count, t->dt);
        bmpi_dt_cursor_seek(&cur, (size_t)offset);
        bmpi_dt_unpack(&cur, data, len);
    }
    if (status && t->req && !t->req->status.MPI_ERROR)
        t->req->status.MPI_ERROR = status;
    t->win->t[t->target].ordered_acked += t->ordered;
    bmpi_rma_answered(t->win, t->target, status);
    bmpi_rma_track_drop(t);
}

/* ---- DIRECT ------------------------------------------------------------------- */

static char *direct_at(const struct bmpi_win *w, const struct bmpi_rma_call *c)
{
    const struct bmpi_win_target *t = &w->t[c->target];
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC)
        return (char *)(uintptr_t)c->offset; /* only this process is DIRECT in a dynamic window */
    return t->map + c->offset;
}

static void direct_put(char *at, const struct bmpi_rma_call *c)
{
    bmpi_dt_copy(c->origin, c->ocount, c->odt, at, c->tcount, c->tdt, c->bytes);
}

static void direct_get(char *at, const struct bmpi_rma_call *c)
{
    bmpi_dt_copy(at, c->tcount, c->tdt, c->result, c->rcount, c->rdt, c->bytes);
}

/* Accumulate, with or without fetching, one run of target blocks (a
 * staging chunk at most) at a time: the origin's elements packed, the run
 * updated as one strided update, the old values unpacked into the
 * result. */
static void direct_acc(struct bmpi_win *w, char *at, const struct bmpi_rma_call *c)
{
    struct bmpi_win_target *t = &w->t[c->target];
    size_t elem = (size_t)bmpi_dt_size(bmpi_dt_get(c->basic));
    if (bmpi_dt_is_contig(c->tdt) && (!c->origin || bmpi_dt_is_contig(c->odt)) &&
        (!c->result || bmpi_dt_is_contig(c->rdt))) {
        /* every side one run: no staging (Fetch_and_op on a counter) */
        bmpi_rma_atomic_apply(c->op, c->basic, c->origin ? (const char *)c->origin + bmpi_dt_true_lb(c->odt) : NULL,
                              at + bmpi_dt_true_lb(c->tdt),
                              c->result ? (char *)c->result + bmpi_dt_true_lb(c->rdt) : NULL, c->bytes / elem,
                              bmpi_rma_guard_of(w, t->ctl));
        return;
    }
    size_t stage = STAGE - STAGE % elem;
    char obuf[STAGE] __attribute__((aligned(16))), rbuf[STAGE] __attribute__((aligned(16)));
    struct bmpi_dt_cursor oc, tc, rc;
    if (c->origin)
        bmpi_dt_cursor_init(&oc, (void *)c->origin, c->ocount, c->odt);
    if (c->result)
        bmpi_dt_cursor_init(&rc, c->result, c->rcount, c->rdt);
    bmpi_dt_cursor_init(&tc, at, c->tcount, c->tdt);
    struct bmpi_dt_run r;
    size_t bytes;
    while ((bytes = bmpi_dt_next_run(&tc, stage, SIZE_MAX, &r)) > 0) {
        if (c->origin)
            bmpi_dt_pack(&oc, obuf, bytes);
        bmpi_rma_atomic_apply_strided(c->op, c->basic, c->origin ? obuf : NULL, (char *)r.addr, r.stride, r.len,
                                      r.count, c->result ? rbuf : NULL, bmpi_rma_guard_of(w, t->ctl));
        if (c->result)
            bmpi_dt_unpack(&rc, rbuf, bytes);
    }
}

static void direct_issue(struct bmpi_win *w, const struct bmpi_rma_call *c)
{
    char *at = direct_at(w, c);
    switch (c->kind) {
    case BMPI_RMA_PUT:
        direct_put(at, c);
        break;
    case BMPI_RMA_GET:
        direct_get(at, c);
        break;
    case BMPI_RMA_ACC:
    case BMPI_RMA_GACC:
        direct_acc(w, at, c);
        break;
    case BMPI_RMA_CAS:
        bmpi_rma_atomic_cswap(c->basic, c->compare, c->origin, at, c->result,
                              bmpi_rma_guard_of(w, w->t[c->target].ctl));
        break;
    }
}

/* ---- NET ---------------------------------------------------------------------- */

static void net_done(void *ctx, int status)
{
    struct bmpi_rma_track *track = ctx;
    bmpi_rma_track_piece(track, 0, NULL, 0, status);
}

/* The origin side as one contiguous run: the user's buffer, or a packed
 * copy (put) or a staging buffer unpacked at the end (get). */
static int net_local(struct bmpi_rma_track *track, const struct bmpi_rma_call *c, char **local)
{
    bool put = c->kind == BMPI_RMA_PUT;
    const struct bmpi_datatype *dt = put ? c->odt : c->rdt;
    const void *buf = put ? c->origin : c->result;
    if (bmpi_dt_is_contig(dt)) {
        *local = (char *)buf + bmpi_dt_true_lb(dt);
        return BMPI_OK;
    }
    if (!(track->bounce = malloc(c->bytes ? c->bytes : 1)))
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory staging %zu bytes", c->bytes);
    if (put)
        bmpi_dt_pack_all(c->origin, c->ocount, c->odt, track->bounce);
    *local = track->bounce;
    return BMPI_OK;
}

static int net_issue(struct bmpi_win *w, const struct bmpi_rma_call *c)
{
    struct bmpi_win_target *t = &w->t[c->target];
    struct bmpi_rma_track *track = bmpi_rma_track_new(w, c);
    if (!track)
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory for an RMA operation");
    char *local = NULL;
    int err = net_local(track, c, &local);
    /* a get through a staging buffer is unpacked when the last piece is in */
    track->unpack_at_end = c->kind == BMPI_RMA_GET && track->bounce;
    struct bmpi_dt_cursor tc;
    bmpi_dt_cursor_init(&tc, (void *)(uintptr_t)(t->base + c->offset), c->tcount, c->tdt);
    size_t limit = t->tl->caps.rma_limit ? t->tl->caps.rma_limit : SIZE_MAX;
    struct iovec iov[PIECES];
    size_t bytes;
    int n;
    while (!err && (n = bmpi_dt_iov(&tc, iov, PIECES, limit, &bytes)) > 0)
        for (int i = 0; i < n && !err; i++) {
            uint64_t remote = (uint64_t)(uintptr_t)iov[i].iov_base;
            track->refs++;
            t->issued++;
            w->ops_pending++;
            err = c->kind == BMPI_RMA_PUT
                      ? t->tl->ops->put(t->tl, t->world, local, NULL, iov[i].iov_len, remote, t->rkey,
                                        t->rkey_len, net_done, track)
                      : t->tl->ops->get(t->tl, t->world, local, NULL, iov[i].iov_len, remote, t->rkey,
                                        t->rkey_len, net_done, track);
            if (err) {
                track->refs--;
                t->issued--;
                w->ops_pending--;
            }
            local += iov[i].iov_len;
        }
    if (c->kind == BMPI_RMA_PUT && !(t->tl->caps.flags & BMPI_TL_RMA_REMOTE_DONE))
        t->net_unflushed = true;
    bmpi_rma_track_drop(track);
    return err;
}

int bmpi_rma_target_pieces(const struct bmpi_rma_call *c, struct iovec *iov, int max, size_t max_bytes,
                           size_t *bytes)
{
    struct bmpi_dt_cursor tc;
    bmpi_dt_cursor_init(&tc, (void *)(uintptr_t)c->offset, c->tcount, c->tdt);
    *bytes = 0;
    return bmpi_dt_iov(&tc, iov, max, max_bytes, bytes);
}

/* Whether a Put or Get over NET goes better as active messages: its
 * target side is many small pieces, each of which would be a get() or
 * put() of its own (a round trip each through a software provider, and
 * few reads at once on RDMA hardware), where one message carries
 * hundreds of them (rma_am.c). The first pieces decide. */
static bool net_pieces_small(const struct bmpi_rma_call *c)
{
    if (bmpi_dt_is_contig(c->tdt))
        return false;
    struct iovec iov[PIECES];
    size_t bytes;
    int n = bmpi_rma_target_pieces(c, iov, PIECES, SIZE_MAX, &bytes);
    return n > 1 && bytes / (size_t)n < NET_PIECE_MIN;
}

/* ---- dispatch ------------------------------------------------------------------ */

static int issue(struct bmpi_win *w, const struct bmpi_rma_call *c)
{
    struct bmpi_win_target *t = &w->t[c->target];
    bool data_only = c->kind == BMPI_RMA_PUT || c->kind == BMPI_RMA_GET;
    w->epoch_ops++;
    if (t->path == BMPI_RMA_DIRECT) {
        direct_issue(w, c);
        w->acc_count[BMPI_ACC_DIRECT] += !data_only;
        if (c->req && c->req->pending_ops == 0)
            bmpi_request_complete(c->req);
        return BMPI_OK;
    }
    if (bmpi_rma_batch_fits(w, c)) {
        bool taken;
        if (c->kind == BMPI_RMA_ACC)
            bmpi_rma_acc_order(w, c->target, BMPI_ACC_AM);
        int err = bmpi_rma_batch_add(w, c, &taken);
        if (err || taken) {
            w->acc_count[BMPI_ACC_AM] += taken && !data_only;
            return err;
        }
    }
    int err = t->batch ? bmpi_rma_batch_send_ahead(w, c->target) : BMPI_OK; /* what is gathered goes first */
    if (err)
        return err;
    if (t->path == BMPI_RMA_NET && data_only && !net_pieces_small(c))
        return net_issue(w, c);
    if (!data_only) {
        struct bmpi_tl_amo amo;
        if (bmpi_rma_amo_fits(w, c, &amo))
            return bmpi_rma_amo_issue(w, c, &amo);
        if (bmpi_rma_pull_fits(w, c)) {
            bmpi_rma_acc_order(w, c->target, BMPI_ACC_PULL);
            w->acc_count[BMPI_ACC_PULL]++;
            return bmpi_rma_pull_issue(w, c);
        }
        bmpi_rma_acc_order(w, c->target, BMPI_ACC_AM);
        w->acc_count[BMPI_ACC_AM]++;
    }
    return bmpi_rma_am_issue(w, c);
}

/* ---- checks ------------------------------------------------------------------ */

/* A call's arguments as the user gave them (counts widened). */
struct rma_args {
    const char *fn;
    enum bmpi_rma_kind kind;
    const void *origin;
    MPI_Count ocount;
    MPI_Datatype otype;
    void *result;
    MPI_Count rcount;
    MPI_Datatype rtype;
    const void *compare;
    int target;
    MPI_Aint disp;
    MPI_Count tcount;
    MPI_Datatype ttype;
    MPI_Op op;
    MPI_Win win;
    bool request_form;    /* MPI_Rput and friends: request must not be NULL */
    MPI_Request *request;
};

static int check_side(struct bmpi_win *w, const struct rma_args *a, const char *what, MPI_Count count,
                      MPI_Datatype type, struct bmpi_datatype **dt)
{
    if (count < 0)
        return bmpi_err_win_obj(w, MPI_ERR_COUNT, a->fn, "negative %s count %lld", what, (long long)count);
    if (bmpi_dt_check_usable(type, dt))
        return bmpi_err_win_obj(w, MPI_ERR_TYPE, a->fn, "%s datatype: %s", what, bmpi_err_reason());
    return MPI_SUCCESS;
}

static int check_bytes(struct bmpi_win *w, const struct rma_args *a, const char *what,
                       const struct bmpi_datatype *dt, MPI_Count count, size_t want)
{
    size_t bytes;
    if (!bmpi_dt_total(dt, (size_t)count, &bytes) || bytes != want)
        return bmpi_err_win_obj(w, MPI_ERR_TYPE, a->fn,
                                "the %s buffer holds %zu bytes of data, the target %zu: the type signatures differ",
                                what, bytes, want);
    return MPI_SUCCESS;
}

/* The target's bytes [offset + lo, offset + hi) must lie in its window. */
static int check_range(struct bmpi_win *w, struct bmpi_rma_call *c, const struct rma_args *a)
{
    const struct bmpi_win_target *t = &w->t[c->target];
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC) {
        /* an address: other targets check what they have attached */
        c->offset = (uint64_t)a->disp;
        MPI_Aint lo, hi;
        bmpi_dt_span(c->tdt, c->tcount, &lo, &hi);
        if (c->target == w->comm->rank && c->bytes &&
            !bmpi_win_attached(w, c->offset + (uint64_t)lo, (uint64_t)(hi - lo)))
            return bmpi_err_win_obj(w, MPI_ERR_RMA_RANGE, a->fn,
                                    "address 0x%llx (+%lld bytes) is not in memory attached to the window",
                                    (unsigned long long)(c->offset + (uint64_t)lo), (long long)(hi - lo));
        return MPI_SUCCESS;
    }
    if (a->disp < 0)
        return bmpi_err_win_obj(w, MPI_ERR_DISP, a->fn, "negative target displacement %lld", (long long)a->disp);
    MPI_Aint lo, hi;
    bmpi_dt_span(c->tdt, c->tcount, &lo, &hi);
    __int128 off = (__int128)a->disp * t->disp_unit;
    if (c->bytes && (off + lo < 0 || off + hi > (__int128)t->size))
        return bmpi_err_win_obj(w, MPI_ERR_RMA_RANGE, a->fn,
                                "bytes [%lld, %lld) at target %d lie outside its window of %llu bytes",
                                (long long)(off + lo), (long long)(off + hi), c->target,
                                (unsigned long long)t->size);
    c->offset = (uint64_t)off;
    return MPI_SUCCESS;
}

/* Accumulates: a predefined op, and one predefined element type on every
 * side. */
static int check_elements(struct bmpi_win *w, struct bmpi_rma_call *c, const struct rma_args *a)
{
    c->basic = bmpi_dt_basic(c->tdt);
    if (c->basic == MPI_DATATYPE_NULL)
        return bmpi_err_win_obj(w, MPI_ERR_TYPE, a->fn,
                                "target datatype %s is not made of one predefined type", bmpi_dt_name(a->ttype));
    const struct bmpi_datatype *sides[2] = {c->origin ? c->odt : NULL, c->result ? c->rdt : NULL};
    for (int i = 0; i < 2; i++)
        if (sides[i] && c->bytes && bmpi_dt_basic(sides[i]) != c->basic)
            return bmpi_err_win_obj(w, MPI_ERR_TYPE, a->fn, "%s datatype is not made of %s as the target's is",
                                    i ? "result" : "origin", bmpi_dt_name(c->basic));
    if (a->kind == BMPI_RMA_CAS) {
        if (bmpi_rma_cswap_check(c->basic))
            return bmpi_err_win_obj(w, MPI_ERR_TYPE, a->fn, "%s", bmpi_err_reason());
        return MPI_SUCCESS;
    }
    if (!(c->op = bmpi_op_get(a->op)))
        return bmpi_err_win_obj(w, MPI_ERR_OP, a->fn, "invalid op 0x%x", (unsigned)a->op);
    if (bmpi_rma_atomic_check(c->op, c->basic))
        return bmpi_err_win_obj(w, MPI_ERR_OP, a->fn, "%s", bmpi_err_reason());
    return MPI_SUCCESS;
}

static int check_sides(struct bmpi_win *w, struct bmpi_rma_call *c, const struct rma_args *a)
{
    int err = check_side(w, a, "target", a->tcount, a->ttype, &c->tdt);
    if (err)
        return err;
    c->tcount = (size_t)a->tcount;
    if (!bmpi_dt_total(c->tdt, c->tcount, &c->bytes))
        return bmpi_err_win_obj(w, MPI_ERR_COUNT, a->fn, "target count %lld overflows", (long long)a->tcount);
    bool no_origin = a->kind == BMPI_RMA_GET || (a->kind == BMPI_RMA_GACC && a->op == MPI_NO_OP);
    if (!no_origin) {
        if ((err = check_side(w, a, "origin", a->ocount, a->otype, &c->odt)) ||
            (err = check_bytes(w, a, "origin", c->odt, a->ocount, c->bytes)))
            return err;
        c->origin = a->origin;
        c->ocount = (size_t)a->ocount;
    }
    if (a->kind != BMPI_RMA_PUT && a->kind != BMPI_RMA_ACC) {
        if ((err = check_side(w, a, a->kind == BMPI_RMA_GET ? "origin" : "result", a->rcount, a->rtype, &c->rdt)) ||
            (err = check_bytes(w, a, a->kind == BMPI_RMA_GET ? "origin" : "result", c->rdt, a->rcount, c->bytes)))
            return err;
        c->result = a->result;
        c->rcount = (size_t)a->rcount;
    }
    c->compare = a->compare;
    return MPI_SUCCESS;
}

static int check_call(struct bmpi_win *w, struct bmpi_rma_call *c, const struct rma_args *a)
{
    /* field by field: zeroing the whole structure costs more than a small
     * put on a mapped target */
    c->kind = a->kind;
    c->target = a->target;
    c->origin = c->result = NULL;
    c->odt = c->rdt = NULL;
    c->ocount = c->rcount = 0;
    c->op = NULL;
    c->basic = MPI_DATATYPE_NULL;
    if (a->target < 0 || a->target >= w->comm->size)
        return bmpi_err_win_obj(w, MPI_ERR_RANK, a->fn, "invalid target rank %d (window of %d ranks)",
                                a->target, w->comm->size);
    int err = check_sides(w, c, a);
    if (!err)
        err = check_range(w, c, a);
    if (!err && a->kind != BMPI_RMA_PUT && a->kind != BMPI_RMA_GET)
        err = check_elements(w, c, a);
    if (err)
        return err;
    if (!bmpi_rma_access_ok(w, a->target, a->request_form))
        return bmpi_err_win_obj(w, MPI_ERR_RMA_SYNC, a->fn,
                                a->request_form ? "no passive target epoch (lock or lock_all) is open to rank %d"
                                           : "no access epoch is open to rank %d", a->target);
    return MPI_SUCCESS;
}

/* ---- entry ---------------------------------------------------------------------- */

static int rma_request(struct bmpi_win *w, const struct rma_args *a, struct bmpi_request **req)
{
    *req = NULL;
    if (!a->request_form)
        return MPI_SUCCESS;
    if (!(*req = bmpi_request_new(BMPI_REQ_RMA)))
        return bmpi_err_win_obj(w, MPI_ERR_NO_MEM, a->fn, "out of memory for a request");
    *a->request = bmpi_request_handle(*req);
    if (*a->request == MPI_REQUEST_NULL) {
        bmpi_request_free(*req);
        return bmpi_err_win_obj(w, MPI_ERR_NO_MEM, a->fn, "out of request handles");
    }
    return MPI_SUCCESS;
}

/* The most elements a short path takes: with elements of at most 1 MiB
 * (direct_type_size) the bytes stay below direct_range's 2^61. */
#define DIRECT_COUNT_MAX (1ull << 40)

/* The short paths below: where bytes [disp * disp_unit + lb, + len) of
 * the call's target lie in this process, when the target is mapped here
 * (DIRECT, not a dynamic window), an epoch is open to it and the bytes
 * lie inside its window; NULL sends the call the general way, which
 * reports whatever is wrong. lb and len below 2^61, disp below 2^31 and
 * disp_unit an int: no sum or product wraps. */
static char *direct_range(struct bmpi_win *w, int target, MPI_Aint disp, uint64_t lb, uint64_t len,
                          struct bmpi_win_target **tp)
{
    if (disp < 0 || disp > INT32_MAX || (unsigned)target >= (unsigned)w->comm->size ||
        w->flavor == MPI_WIN_FLAVOR_DYNAMIC)
        return NULL;
    struct bmpi_win_target *t = &w->t[target];
    if (t->path != BMPI_RMA_DIRECT || t->disp_unit <= 0)
        return NULL;
    uint64_t off = (uint64_t)disp * (uint64_t)t->disp_unit + lb;
    if (off + len > t->size || !bmpi_rma_access_ok(w, target, false))
        return NULL;
    *tp = t;
    return t->map + off;
}

/* A Put's or Get's arguments, as the direct path reads them. */
struct direct_args {
    bool put;
    char *buf; /* a Put's origin buffer, a Get's result buffer: cast, a Put reads it only */
    MPI_Count count;
    MPI_Datatype type;
    int target;
    MPI_Aint disp;
    MPI_Count tcount;
    MPI_Datatype ttype;
};

/* The size of one element of a datatype direct_contig() can copy, and
 * its true lower bound; 0 when it cannot (the general path then reports
 * whatever is wrong). */
static size_t direct_type_size(struct bmpi_win *w, MPI_Datatype type, MPI_Aint *true_lb)
{
    *true_lb = 0;
    if (type == w->direct_type)
        return w->direct_type_size;
    const struct bmpi_datatype *dt = bmpi_dt_get(type);
    if (!dt || !(dt->flags & BMPI_DT_COMMITTED) || !bmpi_dt_is_contig(dt) || bmpi_dt_size(dt) > (1u << 20) ||
        bmpi_dt_true_lb(dt) < 0 || bmpi_dt_true_lb(dt) > INT32_MAX)
        return 0;
    if (bmpi_dt_is_predefined(dt) && bmpi_dt_true_lb(dt) == 0) {
        w->direct_type = type;
        w->direct_type_size = bmpi_dt_size(dt);
    }
    *true_lb = bmpi_dt_true_lb(dt);
    return bmpi_dt_size(dt);
}

/* Put or Get of a contiguous run of one datatype, the same on both sides,
 * to a mapped target in an open epoch: what latency loops, halo exchanges
 * of rows and most one-sided codes issue. Checked and copied here without
 * the general path's per-side datatype walk; anything else (and every
 * error, so that it is reported the usual way) returns false for
 * check_call and issue(). */
static bool direct_contig(struct bmpi_win *w, const struct direct_args *a)
{
    if (a->type != a->ttype || a->count != a->tcount || a->tcount <= 0 || (uint64_t)a->tcount > DIRECT_COUNT_MAX)
        return false;
    MPI_Aint lb;
    size_t size = direct_type_size(w, a->ttype, &lb);
    uint64_t bytes = (uint64_t)a->tcount * size;
    struct bmpi_win_target *t;
    char *at = size ? direct_range(w, a->target, a->disp, (uint64_t)lb, bytes, &t) : NULL;
    if (!at)
        return false;
    if (a->put)
        bmpi_copy(at, a->buf + lb, bytes);
    else
        bmpi_copy(a->buf + lb, at, bytes);
    w->epoch_ops++;
    return true;
}

/* An Accumulate's or Get_accumulate's arguments, as the direct path
 * reads them: origin, result (NULL for an Accumulate) and target the
 * same count of one datatype. */
struct direct_acc_args {
    const void *origin;
    void *result;
    MPI_Count count;
    MPI_Datatype type;
    int target;
    MPI_Aint disp;
    MPI_Op op;
};

/* Accumulate, Get_accumulate or Fetch_and_op of a contiguous run of one
 * predefined type on a mapped target: one call of the atomic update (CPU
 * atomics, or one wide update under the gate), as a counter, a lock word
 * or a vector of sums wants it. Like direct_contig(), anything else, and
 * every error, goes the general way; the window remembers the last
 * predefined type and op found valid together, which never change
 * meaning, so that a loop of them skips their lookups and checks. */
static bool direct_acc_contig(struct bmpi_win *w, const struct direct_acc_args *a)
{
    if (a->count <= 0 || (uint64_t)a->count > DIRECT_COUNT_MAX || !a->origin)
        return false;
    if (a->type != w->direct_acc_type || a->op != w->direct_acc_op) {
        const struct bmpi_datatype *dt = bmpi_dt_get(a->type);
        struct bmpi_op *op = bmpi_op_get(a->op);
        if (!dt || !bmpi_dt_is_predefined(dt) || !op || !op->predefined || bmpi_rma_atomic_check(op, a->type))
            return false;
        bmpi_rma_elem_resolve(&w->direct_acc, op, a->type);
        w->direct_acc_type = a->type;
        w->direct_acc_op = a->op;
    }
    struct bmpi_win_target *t;
    char *at = direct_range(w, a->target, a->disp, 0, (uint64_t)a->count * bmpi_dt_size(w->direct_acc.dt), &t);
    if (!at)
        return false;
    bmpi_rma_atomic_apply_elem(&w->direct_acc, a->origin, at, a->result, (size_t)a->count,
                               bmpi_rma_guard_of(w, t->ctl));
    w->epoch_ops++;
    w->acc_count[BMPI_ACC_DIRECT]++;
    return true;
}

static int rma_entry(struct bmpi_win *w, const struct rma_args *a)
{
    int err;
    if (a->request_form && !a->request)
        return bmpi_err_win_obj(w, MPI_ERR_ARG, a->fn, "request is NULL");
    struct bmpi_rma_call c;
    c.req = NULL;
    if (a->target == MPI_PROC_NULL) {
        /* no data moves, but the call is still checked against the epoch */
        if (w->access == BMPI_EPOCH_NONE)
            return bmpi_err_win_obj(w, MPI_ERR_RMA_SYNC, a->fn, "no access epoch is open");
        if ((err = rma_request(w, a, &c.req)))
            return err;
        if (c.req)
            bmpi_request_complete(c.req);
        return MPI_SUCCESS;
    }
    if ((err = check_call(w, &c, a)) || (err = rma_request(w, a, &c.req)))
        return err;
    if (c.bytes == 0) {
        if (c.req)
            bmpi_request_complete(c.req);
        return MPI_SUCCESS;
    }
    if ((err = issue(w, &c)))
        return bmpi_err_win_obj(w, err, a->fn, NULL);
    return MPI_SUCCESS;
}

/* Put and Get: the direct copy where it applies, the general path for
 * everything else, the rma_args of which are built only then. */
static int put_get_call(const char *fn, const struct direct_args *d, MPI_Win win, bool request_form,
                        MPI_Request *request)
{
    struct bmpi_win *w;
    int err = bmpi_win_check(win, fn, &w);
    if (err)
        return err;
    if (!request_form && direct_contig(w, d))
        return MPI_SUCCESS;
    struct rma_args a = {.fn = fn, .kind = d->put ? BMPI_RMA_PUT : BMPI_RMA_GET, .target = d->target,
                         .disp = d->disp, .tcount = d->tcount, .ttype = d->ttype, .win = win,
                         .request_form = request_form, .request = request};
    if (d->put) {
        a.origin = d->buf;
        a.ocount = d->count;
        a.otype = d->type;
    } else {
        a.result = d->buf;
        a.rcount = d->count;
        a.rtype = d->type;
    }
    return rma_entry(w, &a);
}

/* One builder per call kind, shared by the int and MPI_Count forms and by
 * the request forms (request_form: MPI_Rput and friends, whose request
 * must not be NULL). */
static int put_call(const char *fn, const void *o, MPI_Count oc, MPI_Datatype ot, int r, MPI_Aint d,
                    MPI_Count tc, MPI_Datatype tt, MPI_Win win, bool request_form, MPI_Request *request)
{
    struct direct_args a = {.put = true, .buf = (char *)o, .count = oc, .type = ot, .target = r, .disp = d,
                            .tcount = tc, .ttype = tt};
    return put_get_call(fn, &a, win, request_form, request);
}

static int get_call(const char *fn, void *o, MPI_Count oc, MPI_Datatype ot, int r, MPI_Aint d, MPI_Count tc,
                    MPI_Datatype tt, MPI_Win win, bool request_form, MPI_Request *request)
{
    struct direct_args a = {.put = false, .buf = o, .count = oc, .type = ot, .target = r, .disp = d,
                            .tcount = tc, .ttype = tt};
    return put_get_call(fn, &a, win, request_form, request);
}

/* Compare_and_swap: no direct copy of its own (the general path's direct
 * issue is one CPU compare-and-swap). */
static int rma_call(const struct rma_args *a)
{
    struct bmpi_win *w;
    int err = bmpi_win_check(a->win, a->fn, &w);
    if (err)
        return err;
    return rma_entry(w, a);
}

/* Accumulate and Get_accumulate (and Fetch_and_op through the latter): the
 * direct update where it applies, the general path, whose arguments are
 * built only then, for everything else. */
static int acc_call(const char *fn, const void *o, MPI_Count oc, MPI_Datatype ot, int r, MPI_Aint d,
                    MPI_Count tc, MPI_Datatype tt, MPI_Op op, MPI_Win win, bool request_form,
                    MPI_Request *request)
{
    struct bmpi_win *w;
    int err = bmpi_win_check(win, fn, &w);
    if (err)
        return err;
    if (!request_form && ot == tt && oc == tc &&
        direct_acc_contig(w, &(struct direct_acc_args){.origin = o, .result = NULL, .count = tc, .type = tt,
                                                       .target = r, .disp = d, .op = op}))
        return MPI_SUCCESS;
    struct rma_args a = {.fn = fn, .kind = BMPI_RMA_ACC, .origin = o, .ocount = oc, .otype = ot, .target = r,
                         .disp = d, .tcount = tc, .ttype = tt, .op = op, .win = win,
                         .request_form = request_form, .request = request};
    return rma_entry(w, &a);
}

static int gacc_call(const char *fn, const void *o, MPI_Count oc, MPI_Datatype ot, void *res, MPI_Count rc,
                     MPI_Datatype rt, int r, MPI_Aint d, MPI_Count tc, MPI_Datatype tt, MPI_Op op, MPI_Win win,
                     bool request_form, MPI_Request *request)
{
    struct bmpi_win *w;
    int err = bmpi_win_check(win, fn, &w);
    if (err)
        return err;
    if (!request_form && ot == tt && rt == tt && oc == tc && rc == tc &&
        direct_acc_contig(w, &(struct direct_acc_args){.origin = o, .result = res, .count = tc, .type = tt,
                                                       .target = r, .disp = d, .op = op}))
        return MPI_SUCCESS;
    struct rma_args a = {.fn = fn, .kind = BMPI_RMA_GACC, .origin = o, .ocount = oc, .otype = ot, .result = res,
                         .rcount = rc, .rtype = rt, .target = r, .disp = d, .tcount = tc, .ttype = tt,
                         .op = op, .win = win, .request_form = request_form, .request = request};
    return rma_entry(w, &a);
}

BMPI_API(MPI_Put)
int PMPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win)
{
    return put_call("MPI_Put", origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                    target_count, target_datatype, win, false, NULL);
}

BMPI_API(MPI_Put_c)
int PMPI_Put_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank,
               MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win)
{
    return put_call("MPI_Put_c", origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                    target_count, target_datatype, win, false, NULL);
}

BMPI_API(MPI_Rput)
int PMPI_Rput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
              MPI_Request *request)
{
    return put_call("MPI_Rput", origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                    target_count, target_datatype, win, true, request);
}

BMPI_API(MPI_Rput_c)
int PMPI_Rput_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank,
                MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win,
                MPI_Request *request)
{
    return put_call("MPI_Rput_c", origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                    target_count, target_datatype, win, true, request);
}

BMPI_API(MPI_Get)
int PMPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win)
{
    return get_call("MPI_Get", origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                    target_count, target_datatype, win, false, NULL);
}

BMPI_API(MPI_Get_c)
int PMPI_Get_c(void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank,
               MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win)
{
    return get_call("MPI_Get_c", origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                    target_count, target_datatype, win, false, NULL);
}

BMPI_API(MPI_Rget)
int PMPI_Rget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
              MPI_Request *request)
{
    return get_call("MPI_Rget", origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                    target_count, target_datatype, win, true, request);
}

BMPI_API(MPI_Rget_c)
int PMPI_Rget_c(void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank,
                MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win,
                MPI_Request *request)
{
    return get_call("MPI_Rget_c", origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                    target_count, target_datatype, win, true, request);
}

BMPI_API(MPI_Accumulate)
int PMPI_Accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                    MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    return acc_call("MPI_Accumulate", origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                    target_count, target_datatype, op, win, false, NULL);
}

BMPI_API(MPI_Accumulate_c)
int PMPI_Accumulate_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                      int target_rank, MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype,
                      MPI_Op op, MPI_Win win)
{
    return acc_call("MPI_Accumulate_c", origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                    target_count, target_datatype, op, win, false, NULL);
}

BMPI_API(MPI_Raccumulate)
int PMPI_Raccumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                     MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op,
                     MPI_Win win, MPI_Request *request)
{
    return acc_call("MPI_Raccumulate", origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                    target_count, target_datatype, op, win, true, request);
}

BMPI_API(MPI_Raccumulate_c)
int PMPI_Raccumulate_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                       int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                       MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request)
{
    return acc_call("MPI_Raccumulate_c", origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                    target_count, target_datatype, op, win, true, request);
}

BMPI_API(MPI_Get_accumulate)
int PMPI_Get_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, void *result_addr,
                        int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                        int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    return gacc_call("MPI_Get_accumulate", origin_addr, origin_count, origin_datatype, result_addr, result_count,
                     result_datatype, target_rank, target_disp, target_count, target_datatype, op, win, false,
                     NULL);
}

BMPI_API(MPI_Get_accumulate_c)
int PMPI_Get_accumulate_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                          void *result_addr, MPI_Count result_count, MPI_Datatype result_datatype,
                          int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                          MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    return gacc_call("MPI_Get_accumulate_c", origin_addr, origin_count, origin_datatype, result_addr,
                     result_count, result_datatype, target_rank, target_disp, target_count, target_datatype, op,
                     win, false, NULL);
}

BMPI_API(MPI_Rget_accumulate)
int PMPI_Rget_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                         void *result_addr, int result_count, MPI_Datatype result_datatype, int target_rank,
                         MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op,
                         MPI_Win win, MPI_Request *request)
{
    return gacc_call("MPI_Rget_accumulate", origin_addr, origin_count, origin_datatype, result_addr,
                     result_count, result_datatype, target_rank, target_disp, target_count, target_datatype, op,
                     win, true, request);
}

BMPI_API(MPI_Rget_accumulate_c)
int PMPI_Rget_accumulate_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                           void *result_addr, MPI_Count result_count, MPI_Datatype result_datatype,
                           int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                           MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request)
{
    return gacc_call("MPI_Rget_accumulate_c", origin_addr, origin_count, origin_datatype, result_addr,
                     result_count, result_datatype, target_rank, target_disp, target_count, target_datatype, op,
                     win, true, request);
}

BMPI_API(MPI_Fetch_and_op)
int PMPI_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype, int target_rank,
                      MPI_Aint target_disp, MPI_Op op, MPI_Win win)
{
    return gacc_call("MPI_Fetch_and_op", origin_addr, 1, datatype, result_addr, 1, datatype, target_rank,
                     target_disp, 1, datatype, op, win, false, NULL);
}

BMPI_API(MPI_Compare_and_swap)
int PMPI_Compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr,
                          MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Win win)
{
    struct rma_args a = {.fn = "MPI_Compare_and_swap", .kind = BMPI_RMA_CAS, .origin = origin_addr, .ocount = 1,
                         .otype = datatype, .result = result_addr, .rcount = 1, .rtype = datatype,
                         .compare = compare_addr, .target = target_rank, .disp = target_disp, .tcount = 1,
                         .ttype = datatype, .op = MPI_OP_NULL, .win = win};
    return rma_call(&a);
}
