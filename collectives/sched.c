/*
 * The schedule engine (see coll.h): steps issued in order, fences between
 * rounds, temporary memory from a small inline arena first so that a
 * small blocking collective does not call malloc.
 */
#include "config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "collectives/coll.h"
#include "runtime/error.h"
#include "runtime/p2p.h"
#include "runtime/progress.h"

static struct {
    struct bmpi_sched *head, *tail; /* active nonblocking schedules, in start order */
    bool busy;                      /* inside bmpi_coll_progress: no re-entry */
} active;

void bmpi_sched_init(struct bmpi_sched *s, struct bmpi_comm *comm)
{
    /* Field by field: this runs on every blocking collective, and the
     * inline arrays need no initialization. */
    s->comm = comm;
    s->tag = (int)(comm->coll_seq++ & (uint32_t)INT_MAX);
    s->op = NULL;
    s->err = 0;
    s->steps = s->inline_steps;
    s->nsteps = s->next = s->first_open = s->pending = 0;
    s->cap = BMPI_SCHED_INLINE_STEPS;
    s->arena_used = 0;
    s->ntmp = s->nmore = s->capmore = s->ndups = 0;
    s->more_tmp = NULL;
    s->dups = NULL;
    s->heap = false;
    s->persistent = false;
    s->req = NULL;
    s->next_active = NULL;
}

struct bmpi_sched *bmpi_sched_new(struct bmpi_comm *comm)
{
    struct bmpi_sched *s = malloc(sizeof(*s));
    if (!s)
        return NULL;
    bmpi_sched_init(s, comm);
    s->heap = true;
    return s;
}

void bmpi_sched_set_op(struct bmpi_sched *s, struct bmpi_op *op)
{
    bmpi_op_retain(op);
    s->op = op;
}

static struct bmpi_sched_step *push(struct bmpi_sched *s, enum bmpi_step_kind kind)
{
    if (s->nsteps == s->cap) {
        int cap = 2 * s->cap;
        struct bmpi_sched_step *n;
        if (s->steps == s->inline_steps) {
            n = malloc((size_t)cap * sizeof(*n));
            if (n)
                memcpy(n, s->steps, (size_t)s->nsteps * sizeof(*n));
        } else {
            n = realloc(s->steps, (size_t)cap * sizeof(*n));
        }
        if (!n) {
            if (!s->err)
                s->err = bmpi_err_set(MPI_ERR_NO_MEM, "out of memory building a collective schedule");
            return NULL;
        }
        s->steps = n;
        s->cap = cap;
    }
    /* The caller fills the whole step. */
    (void)kind;
    return &s->steps[s->nsteps++];
}

void bmpi_sched_send(struct bmpi_sched *s, const void *buf, size_t count, MPI_Datatype type,
                     int peer)
{
    struct bmpi_sched_step *st = push(s, BMPI_STEP_SEND);
    if (st)
        *st = (struct bmpi_sched_step){.kind = BMPI_STEP_SEND, .peer = peer, .src = buf,
                                       .count = count, .type = type, .tag = s->tag,
                                       .comm = s->comm};
}

void bmpi_sched_recv(struct bmpi_sched *s, void *buf, size_t count, MPI_Datatype type, int peer)
{
    struct bmpi_sched_step *st = push(s, BMPI_STEP_RECV);
    if (st)
        *st = (struct bmpi_sched_step){.kind = BMPI_STEP_RECV, .peer = peer, .dst = buf,
                                       .count = count, .type = type, .tag = s->tag,
                                       .comm = s->comm};
}

void bmpi_sched_reduce(struct bmpi_sched *s, const void *in, void *inout, size_t count,
                       MPI_Datatype type)
{
    if (count == 0)
        return;
    struct bmpi_sched_step *st = push(s, BMPI_STEP_REDUCE);
    if (st)
        *st = (struct bmpi_sched_step){.kind = BMPI_STEP_REDUCE, .src = in, .dst = inout,
                                       .count = count, .type = type};
}

void bmpi_sched_copy(struct bmpi_sched *s, const void *src, size_t scount, MPI_Datatype stype,
                     void *dst, size_t dcount, MPI_Datatype dtype)
{
    /* The same address is the same data only for the same layout: two
     * MPI_BOTTOMs with different absolute types are different buffers. */
    if (scount == 0 || dcount == 0 || (src == dst && scount == dcount && stype == dtype))
        return;
    struct bmpi_sched_step *st = push(s, BMPI_STEP_COPY);
    if (st)
        *st = (struct bmpi_sched_step){.kind = BMPI_STEP_COPY, .src = src, .dst = dst,
                                       .count = scount, .type = stype, .dcount = dcount,
                                       .dtype = dtype};
}

void bmpi_sched_fence(struct bmpi_sched *s)
{
    /* Two fences in a row, or a fence first, say nothing new. */
    if (s->nsteps == 0 || s->steps[s->nsteps - 1].kind == BMPI_STEP_FENCE)
        return;
    struct bmpi_sched_step *st = push(s, BMPI_STEP_FENCE);
    if (st)
        *st = (struct bmpi_sched_step){.kind = BMPI_STEP_FENCE, .type = MPI_DATATYPE_NULL,
                                       .dtype = MPI_DATATYPE_NULL};
}

static void *keep(struct bmpi_sched *s, void *p)
{
    if (!p) {
        if (!s->err)
            s->err = bmpi_err_set(MPI_ERR_NO_MEM, "out of memory for a collective's buffers");
        return NULL;
    }
    if (s->ntmp < BMPI_SCHED_MAX_TMP) {
        s->tmp[s->ntmp++] = p;
        return p;
    }
    if (s->nmore == s->capmore) {
        int cap = s->capmore ? 2 * s->capmore : 16;
        void **n = realloc(s->more_tmp, (size_t)cap * sizeof(*n));
        if (!n) {
            free(p);
            return keep(s, NULL);
        }
        s->more_tmp = n;
        s->capmore = cap;
    }
    s->more_tmp[s->nmore++] = p;
    return p;
}

void *bmpi_sched_alloc(struct bmpi_sched *s, size_t bytes)
{
    size_t need = (bytes + 15) & ~(size_t)15;
    if (need == 0)
        need = 16;
    if (need <= BMPI_SCHED_ARENA - s->arena_used) {
        void *p = s->arena + s->arena_used;
        s->arena_used += need;
        return p;
    }
    return keep(s, malloc(need));
}

void *bmpi_sched_tmpbuf(struct bmpi_sched *s, size_t count, MPI_Datatype type)
{
    struct bmpi_datatype *dt = bmpi_dt_get(type);
    MPI_Aint lo, hi;
    bmpi_dt_span(dt, count, &lo, &hi);
    char *p = bmpi_sched_alloc(s, (size_t)(hi - lo));
    return p ? bmpi_coll_origin(p, lo) : NULL;
}

int bmpi_coll_copy(const void *sbuf, size_t scount, MPI_Datatype stype, void *dbuf,
                   size_t dcount, MPI_Datatype dtype)
{
    struct bmpi_datatype *sdt = bmpi_dt_get(stype), *ddt = bmpi_dt_get(dtype);
    size_t sbytes = scount * bmpi_dt_size(sdt), dbytes = dcount * bmpi_dt_size(ddt);
    size_t n = sbytes < dbytes ? sbytes : dbytes;
    if (n)
        bmpi_dt_copy(sbuf, scount, sdt, dbuf, dcount, ddt, n);
    if (sbytes > dbytes)
        return bmpi_err_set(MPI_ERR_TRUNCATE, "collective: %zu bytes into a buffer of %zu",
                            sbytes, dbytes);
    return BMPI_OK;
}

/* Retire completed sends/receives among the issued steps. */
static void reap(struct bmpi_sched *s)
{
    int i = s->first_open;
    bool all_done_so_far = true;
    for (; i < s->next && s->pending > 0; i++) {
        struct bmpi_sched_step *st = &s->steps[i];
        if (!st->req) {
            if (all_done_so_far)
                s->first_open = i + 1;
            continue;
        }
        if (!st->req->complete) {
            all_done_so_far = false;
            continue;
        }
        int e = st->req->status.MPI_ERROR;
        if (e && !s->err)
            s->err = e;
        bmpi_request_free(st->req);
        st->req = NULL;
        s->pending--;
        if (all_done_so_far)
            s->first_open = i + 1;
    }
}

/* Issue what can be issued; true when the schedule is finished. */
static bool advance(struct bmpi_sched *s)
{
    if (s->pending > 0)
        reap(s);
    while (s->next < s->nsteps) {
        struct bmpi_sched_step *st = &s->steps[s->next];
        int e = 0;
        switch (st->kind) {
        case BMPI_STEP_FENCE:
            if (s->pending > 0)
                return false;
            s->first_open = s->next + 1;
            break;
        case BMPI_STEP_SEND:
            e = bmpi_isend(st->src, st->count, st->type, st->peer, st->tag, st->comm,
                           st->comm->context_id + 1, BMPI_SEND_STANDARD, &st->req);
            if (!e)
                s->pending++;
            break;
        case BMPI_STEP_RECV:
            e = bmpi_irecv(st->dst, st->count, st->type, st->peer, st->tag, st->comm,
                           st->comm->context_id + 1, &st->req);
            if (!e)
                s->pending++;
            break;
        case BMPI_STEP_REDUCE:
            bmpi_op_apply(s->op, st->src, st->dst, st->count, bmpi_dt_get(st->type));
            break;
        case BMPI_STEP_COPY:
            e = bmpi_coll_copy(st->src, st->count, st->type, st->dst, st->dcount, st->dtype);
            break;
        }
        if (e) {
            st->req = NULL;
            if (!s->err)
                s->err = e;
        }
        s->next++;
    }
    if (s->pending > 0)
        reap(s);
    return s->pending == 0;
}

static void release(struct bmpi_sched *s)
{
    if (s->dups) {
        for (int i = 0; i < s->ndups; i++)
            PMPI_Type_free(&s->dups[2 * i + 1]);
        free(s->dups);
    }
    for (int i = 0; i < s->ntmp; i++)
        free(s->tmp[i]);
    if (s->more_tmp) {
        for (int i = 0; i < s->nmore; i++)
            free(s->more_tmp[i]);
        free(s->more_tmp);
    }
    if (s->steps != s->inline_steps)
        free(s->steps);
    if (s->op)
        bmpi_op_release(s->op);
    if (s->heap)
        free(s);
}

void bmpi_sched_destroy(struct bmpi_sched *s)
{
    /* Never started: no step was issued. */
    release(s);
}

int bmpi_sched_run(struct bmpi_sched *s)
{
    int err = s->err;
    if (!err) {
        unsigned idle = 0;
        while (!advance(s)) {
            if (bmpi_progress())
                idle = 0;
            else
                bmpi_progress_idle(&idle);
        }
        err = s->err;
    }
    release(s);
    return err;
}

static void finish(struct bmpi_sched *s)
{
    struct bmpi_request *req = s->req;
    bmpi_status_empty(&req->status);
    req->status.MPI_ERROR = s->err;
    /* A persistent schedule stays for the next MPI_Start, unless the user
     * freed its request while it ran. */
    if (!s->persistent || req->user_freed)
        release(s);
    bmpi_request_complete(req);
}

/* Weak references: the datatype entry points live in another module
 * (runtime/type_api.c); a build without them still links, and the
 * schedule then keeps the caller's handles. */
#pragma weak PMPI_Type_dup
#pragma weak PMPI_Type_free

static bool derived(MPI_Datatype h)
{
    struct bmpi_datatype *dt = bmpi_dt_get(h);
    return dt && !bmpi_dt_is_predefined(dt);
}

/* The schedule's handle for the user's h (a dup made on first sight). */
static int own_type(struct bmpi_sched *s, MPI_Datatype *h)
{
    if (!derived(*h))
        return 0;
    for (int i = 0; i < s->ndups; i++)
        if (s->dups[2 * i] == *h) {
            *h = s->dups[2 * i + 1];
            return 0;
        }
    MPI_Datatype d;
    if (PMPI_Type_dup(*h, &d) != MPI_SUCCESS)
        return bmpi_err_set(MPI_ERR_NO_MEM, "cannot duplicate datatype %s for a nonblocking collective",
                            bmpi_dt_name(*h));
    s->dups[2 * s->ndups] = *h;
    s->dups[2 * s->ndups + 1] = d;
    s->ndups++;
    *h = d;
    return 0;
}

/* MPI lets the user free a derived datatype right after starting a
 * nonblocking collective, which invalidates the handle at once; the later
 * rounds of the schedule use handles of their own (MPI_Type_dup). */
static int own_types(struct bmpi_sched *s)
{
    int n = 0;
    if (!PMPI_Type_dup || !PMPI_Type_free)
        return 0;
    for (int i = 0; i < s->nsteps; i++)
        n += derived(s->steps[i].type) + (s->steps[i].kind == BMPI_STEP_COPY && derived(s->steps[i].dtype));
    if (n == 0)
        return 0;
    if (!(s->dups = malloc(2 * (size_t)n * sizeof(MPI_Datatype))))
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory for a nonblocking collective");
    for (int i = 0; i < s->nsteps; i++) {
        struct bmpi_sched_step *st = &s->steps[i];
        if (st->kind == BMPI_STEP_FENCE)
            continue;
        int e = own_type(s, &st->type);
        if (!e && st->kind == BMPI_STEP_COPY)
            e = own_type(s, &st->dtype);
        if (e)
            return e;
    }
    return 0;
}

/* The request a started or persistent schedule completes: it holds a
 * reference on the communicator until it is freed. */
static int attach_request(struct bmpi_sched *s, MPI_Request *request)
{
    if (!s->err)
        s->err = own_types(s);
    if (s->err) {
        int err = s->err;
        release(s);
        return err;
    }
    struct bmpi_request *req = bmpi_request_new(BMPI_REQ_COLL);
    if (!req) {
        release(s);
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory for a request");
    }
    req->comm = s->comm;
    s->comm->refcount++; /* released with the request */
    s->req = req;
    MPI_Request h = bmpi_request_handle(req);
    if (h == MPI_REQUEST_NULL) {
        release(s);
        bmpi_request_free(req);
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of request handles");
    }
    *request = h;
    return MPI_SUCCESS;
}

/* Issue the first round; finish at once or join the active list. */
static void activate(struct bmpi_sched *s)
{
    if (advance(s)) {
        finish(s);
        return;
    }
    s->next_active = NULL;
    if (active.tail)
        active.tail->next_active = s;
    else
        active.head = s;
    active.tail = s;
}

int bmpi_sched_start(struct bmpi_sched *s, MPI_Request *request)
{
    int err = attach_request(s, request);
    if (!err)
        activate(s);
    return err;
}

int bmpi_sched_persist(struct bmpi_sched *s, MPI_Request *request)
{
    s->persistent = true;
    int err = attach_request(s, request);
    if (err)
        return err;
    s->req->persistent = true;
    s->req->ctx = s;
    return MPI_SUCCESS;
}

int bmpi_coll_start(struct bmpi_request *req)
{
    struct bmpi_sched *s = req->ctx;
    /* Run again from the first step; the tag taken at MPI_*_init stays, so
     * starts need not be ordered with other collectives. */
    s->next = s->first_open = s->pending = 0;
    s->err = 0;
    req->complete = false;
    activate(s);
    return MPI_SUCCESS;
}

void bmpi_coll_persistent_free(struct bmpi_request *req)
{
    release(req->ctx);
    req->ctx = NULL;
}

int bmpi_coll_progress(void)
{
    if (!active.head || active.busy)
        return 0;
    active.busy = true;
    int events = 0;
    struct bmpi_sched *prev = NULL, *s = active.head;
    while (s) {
        struct bmpi_sched *nx = s->next_active;
        int before = s->next;
        int pend = s->pending;
        if (advance(s)) {
            if (prev)
                prev->next_active = nx;
            else
                active.head = nx;
            if (active.tail == s)
                active.tail = prev;
            finish(s);
            events++;
        } else {
            if (s->next != before || s->pending != pend)
                events++;
            prev = s;
        }
        s = nx;
    }
    active.busy = false;
    return events;
}
