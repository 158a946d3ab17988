/*
 * Collectives on intercommunicators (MPI 4.1 §6.2.2 and each call's
 * intercommunicator paragraph): argument checks and schedules. The entry
 * points of coll_api.c hand an intercommunicator here, so the blocking,
 * nonblocking and persistent forms come from one schedule.
 *
 * Roles: in a rooted call the root passes MPI_ROOT, the rest of its group
 * MPI_PROC_NULL (they take no part), and every process of the other group
 * the root's rank in that group. In the calls without a root each group
 * receives what the other group sent or reduced.
 *
 * A schedule here has steps on two communicators: the intercommunicator
 * (ranks of the remote group, its collective context) and the hidden
 * intracommunicator over the local group (comm->local_comm,
 * runtime/intercomm.c), on which the intracommunicator algorithms do each
 * group's part. Each send and receive keeps the communicator and tag that
 * the schedule had when it was appended (sched.c); every call that may use
 * both takes a tag of each, so two calls in flight never cross-match and
 * none meets the agreements of dup and merge on the local communicator.
 *
 * Algorithms (MPICH's): Barrier, Allreduce, Allgather, Reduce_scatter:
 * each group combines at its leader (local rank 0), the two leaders swap,
 * each leader hands the result on in its group. Bcast and Reduce go
 * through the non-root group's leader. Gather(v), Scatter(v), Allgatherv
 * and Alltoall(v,w) are linear: every transfer posted at once.
 */
#include "config.h"

#include <limits.h>
#include <stdint.h>

#include "collectives/coll.h"
#include "collectives/coll_impl.h"
#include "runtime/p2p.h"

/* One intercommunicator collective being built. */
struct inter {
    struct bmpi_sched *s;
    struct bmpi_comm *c;
    int tag, local_tag;
    int rank, lsize, rsize; /* in the local group; the two groups' sizes */
};

static int begin(struct inter *x, struct bmpi_comm *c, MPI_Request *request,
                 struct bmpi_sched *stack, const char *fn)
{
    if (request) {
        if (!(x->s = bmpi_sched_new(c)))
            return bmpi_err_comm(c->handle, MPI_ERR_NO_MEM, fn, "out of memory");
    } else {
        x->s = stack;
        bmpi_sched_init(stack, c);
    }
    x->c = c;
    x->tag = x->s->tag;
    x->local_tag = (int)(c->local_comm->coll_seq++ & (uint32_t)INT_MAX);
    x->rank = c->rank;
    x->lsize = c->size;
    x->rsize = c->remote_group->size;
    return MPI_SUCCESS;
}

/* The schedule of this call on c, in x: on the stack when blocking. */
#define BEGIN(x, c, request, fn)                                                                   \
    struct bmpi_sched stack_;                                                                      \
    struct inter x;                                                                                \
    CHECK(begin(&x, c, request, &stack_, fn))

/* Steps appended next name ranks of, and go over, the local group's
 * intracommunicator ... */
static void on_local(struct inter *x)
{
    x->s->comm = x->c->local_comm;
    x->s->tag = x->local_tag;
}

/* ... or the intercommunicator (ranks of the remote group). */
static void on_remote(struct inter *x)
{
    x->s->comm = x->c;
    x->s->tag = x->tag;
}

static int finish(struct inter *x, MPI_Request *request, const char *fn)
{
    on_remote(x); /* the request holds the intercommunicator */
    return bmpi_coll_launch(x->s, x->s->err, request, x->c, fn);
}

/* --- argument checks ------------------------------------------------------- */

enum role { ROLE_ROOT, ROLE_IDLE, ROLE_REMOTE }; /* MPI_ROOT, MPI_PROC_NULL, the other group */

static int check_root(struct bmpi_comm *c, const char *fn, int root, enum role *role)
{
    int rsize = c->remote_group->size;
    if (root == MPI_ROOT)
        *role = ROLE_ROOT;
    else if (root == MPI_PROC_NULL)
        *role = ROLE_IDLE;
    else if (root >= 0 && root < rsize)
        *role = ROLE_REMOTE;
    else
        return bmpi_err_comm(c->handle, MPI_ERR_ROOT, fn,
                             "invalid root %d on an intercommunicator: MPI_ROOT or MPI_PROC_NULL "
                             "in the root's group, a rank of the remote group (size %d) in the "
                             "other",
                             root, rsize);
    return MPI_SUCCESS;
}

static int check_not_in_place(struct bmpi_comm *c, const char *fn, const void *buf,
                              const char *what)
{
    if (buf == MPI_IN_PLACE)
        return bmpi_err_comm(c->handle, MPI_ERR_BUFFER, fn,
                             "MPI_IN_PLACE as %s: not allowed on an intercommunicator", what);
    return MPI_SUCCESS;
}

/* A buffer of count elements of type, not MPI_IN_PLACE. */
static int check_buf(struct bmpi_comm *c, const char *fn, const void *buf, MPI_Count count,
                     MPI_Datatype type, const char *what)
{
    CHECK(check_not_in_place(c, fn, buf, what));
    return bmpi_check_buffer(c->handle, fn, buf, count, type);
}

/* The send and receive buffers of a call without a root. */
static int check_both(struct bmpi_comm *c, const char *fn, const void *sbuf, MPI_Count scount,
                      MPI_Datatype stype, void *rbuf, MPI_Count rcount, MPI_Datatype rtype)
{
    CHECK(check_buf(c, fn, sbuf, scount, stype, "sendbuf"));
    CHECK(check_buf(c, fn, rbuf, rcount, rtype, "recvbuf"));
    if (sbuf == rbuf && sbuf && scount > 0 && rcount > 0)
        return bmpi_err_comm(c->handle, MPI_ERR_BUFFER, fn,
                             "sendbuf and recvbuf are the same buffer");
    return MPI_SUCCESS;
}

/* A reduction's op on type. */
static int check_op(struct bmpi_comm *c, const char *fn, MPI_Datatype type, MPI_Op op,
                    struct bmpi_op **o)
{
    struct bmpi_datatype *dt;
    CHECK(bmpi_check_type(c->handle, fn, type, &dt));
    return bmpi_coll_check_op(c, fn, op, dt, o);
}

/* --- pieces ---------------------------------------------------------------- */

/* The two leaders swap out for in; everyone fences after. */
static void leaders_swap(struct inter *x, const void *out, size_t ocount, MPI_Datatype otype,
                         void *in, size_t icount, MPI_Datatype itype)
{
    if (x->rank == 0) {
        bmpi_sched_recv(x->s, in, icount, itype, 0);
        bmpi_sched_send(x->s, out, ocount, otype, 0);
    }
    bmpi_sched_fence(x->s);
}

/* This group's reduction of sbuf, at the leader in a temporary buffer
 * (NULL elsewhere, and on failure, kept in s->err). */
static void *reduce_to_leader(struct inter *x, const void *sbuf, size_t count, MPI_Datatype type)
{
    void *acc = NULL;
    if (x->rank == 0 && !(acc = bmpi_sched_tmpbuf(x->s, count, type)))
        return NULL;
    on_local(x);
    bmpi_coll_reduce(x->s, sbuf, acc, count, type, 0);
    bmpi_sched_fence(x->s);
    on_remote(x);
    return acc;
}

/* The root's transfers of gather(v) and scatter(v): block i, counts[i]
 * (or count) elements at displs[i] (or i * count), with remote rank i. */
static void root_linear(struct inter *x, bool send, const void *buf, MPI_Count count,
                        struct bmpi_counts counts, struct bmpi_displs displs, MPI_Datatype type)
{
    MPI_Aint ext = bmpi_coll_extent(type);
    bool v = !bmpi_counts_null(counts);
    for (int i = 0; i < x->rsize; i++) {
        MPI_Aint at = v ? bmpi_displ_at(displs, i) : (MPI_Aint)i * count;
        char *b = (char *)(uintptr_t)buf + at * ext;
        size_t n = (size_t)(v ? bmpi_count_at(counts, i) : count);
        if (send)
            bmpi_sched_send(x->s, b, n, type, i);
        else
            bmpi_sched_recv(x->s, b, n, type, i);
    }
}

/* --- barrier, bcast -------------------------------------------------------- */

int bmpi_inter_barrier(struct bmpi_comm *c, MPI_Request *request, const char *fn)
{
    BEGIN(x, c, request, fn);
    /* the leader enters the swap once its whole group has entered, and
     * its group leaves once the other leader has said the same */
    on_local(&x);
    bmpi_coll_barrier(x.s);
    bmpi_sched_fence(x.s);
    on_remote(&x);
    leaders_swap(&x, NULL, 0, MPI_BYTE, NULL, 0, MPI_BYTE);
    char *token = bmpi_sched_alloc(x.s, 1);
    on_local(&x);
    if (token)
        bmpi_coll_bcast(x.s, token, 1, MPI_BYTE, 0);
    return finish(&x, request, fn);
}

int bmpi_inter_bcast(struct bmpi_comm *c, void *buf, MPI_Count count, MPI_Datatype type, int root,
                     MPI_Request *request, const char *fn)
{
    enum role role = ROLE_IDLE;
    CHECK(check_root(c, fn, root, &role));
    if (role != ROLE_IDLE)
        CHECK(check_buf(c, fn, buf, count, type, "the buffer"));
    BEGIN(x, c, request, fn);
    if (role == ROLE_ROOT) {
        bmpi_sched_send(x.s, buf, (size_t)count, type, 0);
    } else if (role == ROLE_REMOTE) {
        if (x.rank == 0)
            bmpi_sched_recv(x.s, buf, (size_t)count, type, root);
        bmpi_sched_fence(x.s);
        on_local(&x);
        bmpi_coll_bcast(x.s, buf, (size_t)count, type, 0);
    }
    return finish(&x, request, fn);
}

/* --- reductions ------------------------------------------------------------ */

int bmpi_inter_reduce(struct bmpi_comm *c, const void *sbuf, void *rbuf, MPI_Count count,
                      MPI_Datatype type, MPI_Op op, int root, MPI_Request *request,
                      const char *fn)
{
    enum role role = ROLE_IDLE;
    struct bmpi_op *o = NULL;
    CHECK(check_root(c, fn, root, &role));
    if (role == ROLE_ROOT)
        CHECK(check_buf(c, fn, rbuf, count, type, "recvbuf"));
    else if (role == ROLE_REMOTE)
        CHECK(check_buf(c, fn, sbuf, count, type, "sendbuf"));
    if (role != ROLE_IDLE)
        CHECK(check_op(c, fn, type, op, &o));
    BEGIN(x, c, request, fn);
    if (role == ROLE_ROOT) {
        bmpi_sched_recv(x.s, rbuf, (size_t)count, type, 0);
    } else if (role == ROLE_REMOTE) {
        bmpi_sched_set_op(x.s, o);
        void *acc = reduce_to_leader(&x, sbuf, (size_t)count, type);
        if (acc)
            bmpi_sched_send(x.s, acc, (size_t)count, type, root);
    }
    return finish(&x, request, fn);
}

int bmpi_inter_allreduce(struct bmpi_comm *c, const void *sbuf, void *rbuf, MPI_Count count,
                         MPI_Datatype type, MPI_Op op, MPI_Request *request, const char *fn)
{
    struct bmpi_op *o;
    CHECK(check_both(c, fn, sbuf, count, type, rbuf, count, type));
    CHECK(check_op(c, fn, type, op, &o));
    BEGIN(x, c, request, fn);
    bmpi_sched_set_op(x.s, o);
    void *acc = reduce_to_leader(&x, sbuf, (size_t)count, type);
    leaders_swap(&x, acc, (size_t)count, type, rbuf, (size_t)count, type);
    on_local(&x);
    bmpi_coll_bcast(x.s, rbuf, (size_t)count, type, 0);
    return finish(&x, request, fn);
}

/* Reduce_scatter (rcounts: one per local rank) and Reduce_scatter_block
 * (rcounts NULL, rcount each): the other group's reduction of the vector,
 * scattered over this group. */
int bmpi_inter_reduce_scatter(struct bmpi_comm *c, const void *sbuf, void *rbuf,
                              struct bmpi_counts rcounts, MPI_Count rcount, MPI_Datatype type,
                              MPI_Op op, MPI_Request *request, const char *fn)
{
    bool block = bmpi_counts_null(rcounts);
    MPI_Count total = 0;
    for (int i = 0; i < c->size; i++) {
        MPI_Count n = block ? rcount : bmpi_count_at(rcounts, i);
        if (n < 0)
            return bmpi_err_comm(c->handle, MPI_ERR_COUNT, fn, "negative recvcount %lld (rank %d)",
                                 n, i);
        if (__builtin_add_overflow(total, n, &total))
            return bmpi_err_comm(c->handle, MPI_ERR_COUNT, fn, "the recvcounts overflow MPI_Count");
    }
    MPI_Count mine = block ? rcount : bmpi_count_at(rcounts, c->rank);
    struct bmpi_op *o;
    CHECK(check_both(c, fn, sbuf, total, type, rbuf, mine, type));
    CHECK(check_op(c, fn, type, op, &o));
    BEGIN(x, c, request, fn);
    bmpi_sched_set_op(x.s, o);
    MPI_Count *counts = bmpi_sched_alloc(x.s, (size_t)x.lsize * sizeof(MPI_Count));
    MPI_Aint *displs = bmpi_sched_alloc(x.s, (size_t)x.lsize * sizeof(MPI_Aint));
    void *acc = reduce_to_leader(&x, sbuf, (size_t)total, type);
    void *theirs = x.rank == 0 ? bmpi_sched_tmpbuf(x.s, (size_t)total, type) : NULL;
    if (!counts || !displs || (x.rank == 0 && (!acc || !theirs)))
        return finish(&x, request, fn);
    MPI_Aint at = 0;
    for (int i = 0; i < x.lsize; at += counts[i++]) {
        counts[i] = block ? rcount : bmpi_count_at(rcounts, i);
        displs[i] = at;
    }
    leaders_swap(&x, acc, (size_t)total, type, theirs, (size_t)total, type);
    on_local(&x);
    bmpi_coll_scatterv(x.s, theirs, (struct bmpi_counts){.w = counts},
                       (struct bmpi_displs){.w = displs}, type, rbuf, (size_t)mine, type, 0);
    return finish(&x, request, fn);
}

/* Scan and Exscan: the standard defines them on intracommunicators only. */
int bmpi_inter_scan(struct bmpi_comm *c, const char *fn)
{
    return bmpi_err_comm(c->handle, MPI_ERR_COMM, fn,
                         "communicator 0x%x is an intercommunicator: MPI defines no scan on "
                         "intercommunicators",
                         (unsigned)c->handle);
}

/* --- gather, scatter ------------------------------------------------------- */

/* A rooted call whose root has one block per remote rank (counts, or
 * count each when not v) and the other group one block each. */
struct rooted {
    bool to_root; /* gather(v); scatter(v) otherwise */
    bool v;
    const void *rootbuf;
    MPI_Count rootcount;
    struct bmpi_counts rootcounts;
    struct bmpi_displs displs;
    MPI_Datatype roottype;
    const void *buf;
    MPI_Count count;
    MPI_Datatype type;
};

static int check_rooted(struct bmpi_comm *c, const char *fn, const struct rooted *a,
                        enum role role)
{
    const char *at_root = a->to_root ? "recvbuf" : "sendbuf";
    const char *elsewhere = a->to_root ? "sendbuf" : "recvbuf";
    struct bmpi_datatype *dt;
    if (role == ROLE_REMOTE)
        return check_buf(c, fn, a->buf, a->count, a->type, elsewhere);
    if (role == ROLE_IDLE)
        return MPI_SUCCESS;
    if (!a->v)
        return check_buf(c, fn, a->rootbuf, a->rootcount, a->roottype, at_root);
    CHECK(check_not_in_place(c, fn, a->rootbuf, at_root));
    CHECK(bmpi_coll_check_counts(c, fn, a->rootcounts, a->displs, true,
                                 a->to_root ? "recvcounts" : "sendcounts"));
    return bmpi_check_type(c->handle, fn, a->roottype, &dt);
}

static int rooted(struct bmpi_comm *c, const struct rooted *a, int root, MPI_Request *request,
                  const char *fn)
{
    enum role role = ROLE_IDLE;
    CHECK(check_root(c, fn, root, &role));
    CHECK(check_rooted(c, fn, a, role));
    BEGIN(x, c, request, fn);
    void *buf = (void *)(uintptr_t)a->buf;
    if (role == ROLE_ROOT)
        root_linear(&x, !a->to_root, a->rootbuf, a->rootcount, a->rootcounts, a->displs,
                    a->roottype);
    else if (role == ROLE_REMOTE && a->to_root)
        bmpi_sched_send(x.s, buf, (size_t)a->count, a->type, root);
    else if (role == ROLE_REMOTE)
        bmpi_sched_recv(x.s, buf, (size_t)a->count, a->type, root);
    return finish(&x, request, fn);
}

int bmpi_inter_gather(struct bmpi_comm *c, const void *sbuf, MPI_Count scount, MPI_Datatype stype,
                      void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int root,
                      MPI_Request *request, const char *fn)
{
    struct rooted a = {.to_root = true, .rootbuf = rbuf, .rootcount = rcount, .roottype = rtype,
                       .buf = sbuf, .count = scount, .type = stype};
    return rooted(c, &a, root, request, fn);
}

int bmpi_inter_gatherv(struct bmpi_comm *c, const void *sbuf, MPI_Count scount, MPI_Datatype stype,
                       void *rbuf, struct bmpi_counts rcounts, struct bmpi_displs displs,
                       MPI_Datatype rtype, int root, MPI_Request *request, const char *fn)
{
    struct rooted a = {.to_root = true, .v = true, .rootbuf = rbuf, .rootcounts = rcounts,
                       .displs = displs, .roottype = rtype, .buf = sbuf, .count = scount,
                       .type = stype};
    return rooted(c, &a, root, request, fn);
}

int bmpi_inter_scatter(struct bmpi_comm *c, const void *sbuf, MPI_Count scount, MPI_Datatype stype,
                       void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int root,
                       MPI_Request *request, const char *fn)
{
    struct rooted a = {.rootbuf = sbuf, .rootcount = scount, .roottype = stype, .buf = rbuf,
                       .count = rcount, .type = rtype};
    return rooted(c, &a, root, request, fn);
}

int bmpi_inter_scatterv(struct bmpi_comm *c, const void *sbuf, struct bmpi_counts scounts,
                        struct bmpi_displs displs, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                        MPI_Datatype rtype, int root, MPI_Request *request, const char *fn)
{
    struct rooted a = {.v = true, .rootbuf = sbuf, .rootcounts = scounts, .displs = displs,
                       .roottype = stype, .buf = rbuf, .count = rcount, .type = rtype};
    return rooted(c, &a, root, request, fn);
}

/* --- allgather, alltoall --------------------------------------------------- */

int bmpi_inter_allgather(struct bmpi_comm *c, const void *sbuf, MPI_Count scount,
                         MPI_Datatype stype, void *rbuf, MPI_Count rcount, MPI_Datatype rtype,
                         MPI_Request *request, const char *fn)
{
    CHECK(check_both(c, fn, sbuf, scount, stype, rbuf, rcount, rtype));
    BEGIN(x, c, request, fn);
    size_t ours = (size_t)x.lsize * (size_t)scount, theirs = (size_t)x.rsize * (size_t)rcount;
    void *all = x.rank == 0 ? bmpi_sched_tmpbuf(x.s, ours, stype) : NULL;
    if (x.rank == 0 && !all)
        return finish(&x, request, fn);
    on_local(&x);
    bmpi_coll_gather(x.s, sbuf, (size_t)scount, stype, all, (size_t)scount, stype, 0);
    bmpi_sched_fence(x.s);
    on_remote(&x);
    leaders_swap(&x, all, ours, stype, rbuf, theirs, rtype);
    on_local(&x);
    bmpi_coll_bcast(x.s, rbuf, theirs, rtype, 0);
    return finish(&x, request, fn);
}

int bmpi_inter_allgatherv(struct bmpi_comm *c, const void *sbuf, MPI_Count scount,
                          MPI_Datatype stype, void *rbuf, struct bmpi_counts rcounts,
                          struct bmpi_displs displs, MPI_Datatype rtype, MPI_Request *request,
                          const char *fn)
{
    struct bmpi_datatype *dt;
    CHECK(check_buf(c, fn, sbuf, scount, stype, "sendbuf"));
    CHECK(check_not_in_place(c, fn, rbuf, "recvbuf"));
    CHECK(bmpi_coll_check_counts(c, fn, rcounts, displs, true, "recvcounts"));
    CHECK(bmpi_check_type(c->handle, fn, rtype, &dt));
    BEGIN(x, c, request, fn);
    root_linear(&x, false, rbuf, 0, rcounts, displs, rtype);
    for (int i = 0; i < x.rsize; i++)
        bmpi_sched_send(x.s, sbuf, (size_t)scount, stype, (x.rank + i) % x.rsize);
    return finish(&x, request, fn);
}

int bmpi_inter_alltoall(struct bmpi_comm *c, const void *sbuf, MPI_Count scount, MPI_Datatype stype,
                        void *rbuf, MPI_Count rcount, MPI_Datatype rtype, MPI_Request *request,
                        const char *fn)
{
    CHECK(check_both(c, fn, sbuf, scount, stype, rbuf, rcount, rtype));
    BEGIN(x, c, request, fn);
    root_linear(&x, false, rbuf, rcount, (struct bmpi_counts){0}, (struct bmpi_displs){0}, rtype);
    root_linear(&x, true, sbuf, scount, (struct bmpi_counts){0}, (struct bmpi_displs){0}, stype);
    return finish(&x, request, fn);
}

int bmpi_inter_alltoallw(struct bmpi_sched *s, const void *sbuf, struct bmpi_counts scounts,
                         const MPI_Aint *sdispls, const MPI_Datatype *stypes, void *rbuf,
                         struct bmpi_counts rcounts, const MPI_Aint *rdispls,
                         const MPI_Datatype *rtypes)
{
    struct bmpi_comm *c = s->comm;
    int p = c->remote_group->size;
    for (int i = 0; i < p; i++)
        bmpi_sched_recv(s, (char *)rbuf + rdispls[i], bmpi_count_at(rcounts, i), rtypes[i], i);
    for (int i = 0; i < p; i++) {
        int to = (c->rank + i) % p;
        bmpi_sched_send(s, (const char *)sbuf + sdispls[to], bmpi_count_at(scounts, to), stypes[to],
                        to);
    }
    return s->err;
}
