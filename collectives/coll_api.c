/*
 * The MPI_* collective entry points: argument validation, MPI_IN_PLACE
 * rules, then the schedule of the algorithm (one file per family in collectives/), run to
 * completion (blocking) or started (MPI_I*: blocking = start + wait on the
 * same schedule).
 */
#include "config.h"

#include <string.h>

#include "collectives/coll.h"
#include "runtime/api.h"
#include "runtime/p2p.h"

/* A schedule for this call: on the stack (blocking) or the heap. */
#define SCHED_BEGIN(c, request, fn)                                                                \
    struct bmpi_sched sched_stack_, *s;                                                            \
    if (request) {                                                                                 \
        s = bmpi_sched_new(c);                                                                     \
        if (!s)                                                                                    \
            return bmpi_err_comm((c)->handle, MPI_ERR_NO_MEM, fn, "out of memory");                \
    } else {                                                                                       \
        s = &sched_stack_;                                                                         \
        bmpi_sched_init(s, c);                                                                     \
    }

static int launch(struct bmpi_sched *s, int err, MPI_Request *request, struct bmpi_comm *c,
                  const char *fn)
{
    if (err) {
        bmpi_sched_destroy(s);
    } else if (request) {
        err = bmpi_sched_start(s, request);
    } else {
        err = bmpi_sched_run(s);
    }
    if (!err)
        return MPI_SUCCESS;
    if (err == MPI_ERR_TRUNCATE)
        return bmpi_err_comm(c->handle, err, fn,
                             "a message of the collective was longer than its receive buffer: "
                             "counts or types do not match across ranks");
    return bmpi_err_comm(c->handle, err, fn, NULL);
}

static int check_request(MPI_Comm comm, const char *fn, MPI_Request *request, bool nonblocking)
{
    if (nonblocking && !request)
        return bmpi_err_comm(comm, MPI_ERR_ARG, fn, "request is NULL");
    return MPI_SUCCESS;
}

static int check_root(struct bmpi_comm *c, const char *fn, int root)
{
    if (root < 0 || root >= c->size)
        return bmpi_err_comm(c->handle, MPI_ERR_ROOT, fn, "invalid root %d (communicator size %d)",
                             root, c->size);
    return MPI_SUCCESS;
}

static int check_op(struct bmpi_comm *c, const char *fn, MPI_Op op, MPI_Datatype type,
                    struct bmpi_op **o)
{
    *o = bmpi_op_get(op);
    if (!*o)
        return bmpi_err_comm(c->handle, MPI_ERR_OP, fn, "invalid op 0x%x", (unsigned)op);
    struct bmpi_datatype *dt = bmpi_dt_get(type);
    if (bmpi_op_check(*o, dt) != BMPI_OK)
        return bmpi_err_comm(c->handle, MPI_ERR_OP, fn, NULL);
    return MPI_SUCCESS;
}

static int check_not_in_place(struct bmpi_comm *c, const char *fn, const void *buf,
                              const char *what)
{
    if (buf == MPI_IN_PLACE)
        return bmpi_err_comm(c->handle, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE is not allowed as %s",
                             what);
    return MPI_SUCCESS;
}

/* sendbuf and recvbuf must not alias unless through MPI_IN_PLACE. */
static int check_alias(struct bmpi_comm *c, const char *fn, const void *sbuf, const void *rbuf,
                       int count)
{
    if (sbuf == rbuf && sbuf && count > 0)
        return bmpi_err_comm(c->handle, MPI_ERR_BUFFER, fn,
                             "sendbuf and recvbuf are the same buffer; use MPI_IN_PLACE");
    return MPI_SUCCESS;
}

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        int e_ = (x);                                                                              \
        if (e_)                                                                                    \
            return e_;                                                                             \
    } while (0)

/* --- barrier --------------------------------------------------------------- */

static int barrier(MPI_Comm comm, MPI_Request *request, const char *fn)
{
    struct bmpi_comm *c;
    CHECK(bmpi_check_comm(comm, fn, &c));
    SCHED_BEGIN(c, request, fn);
    return launch(s, bmpi_coll_barrier(s), request, c, fn);
}

BMPI_API(MPI_Barrier)
int PMPI_Barrier(MPI_Comm comm) { return barrier(comm, NULL, "MPI_Barrier"); }

BMPI_API(MPI_Ibarrier)
int PMPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
    if (!request)
        return check_request(comm, "MPI_Ibarrier", request, true);
    return barrier(comm, request, "MPI_Ibarrier");
}

/* --- bcast ----------------------------------------------------------------- */

static int bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm,
                 MPI_Request *request, const char *fn)
{
    struct bmpi_comm *c;
    CHECK(bmpi_check_comm(comm, fn, &c));
    CHECK(check_root(c, fn, root));
    CHECK(check_not_in_place(c, fn, buf, "the buffer"));
    CHECK(bmpi_check_buffer(comm, fn, buf, count, type));
    SCHED_BEGIN(c, request, fn);
    return launch(s, bmpi_coll_bcast(s, buf, (size_t)count, type, root), request, c, fn);
}

BMPI_API(MPI_Bcast)
int PMPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    return bcast(buffer, count, datatype, root, comm, NULL, "MPI_Bcast");
}

BMPI_API(MPI_Ibcast)
int PMPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                MPI_Request *request)
{
    if (!request)
        return check_request(comm, "MPI_Ibcast", request, true);
    return bcast(buffer, count, datatype, root, comm, request, "MPI_Ibcast");
}

/* --- reduce ---------------------------------------------------------------- */

static int reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                  MPI_Comm comm, MPI_Request *request, const char *fn)
{
    struct bmpi_comm *c;
    CHECK(bmpi_check_comm(comm, fn, &c));
    CHECK(check_root(c, fn, root));
    bool is_root = c->rank == root;
    if (sbuf == MPI_IN_PLACE && !is_root)
        return bmpi_err_comm(comm, MPI_ERR_BUFFER, fn,
                             "MPI_IN_PLACE as sendbuf is allowed at the root only (root %d, rank %d)",
                             root, c->rank);
    if (is_root) {
        CHECK(check_not_in_place(c, fn, rbuf, "recvbuf"));
        CHECK(bmpi_check_buffer(comm, fn, rbuf, count, type));
        CHECK(check_alias(c, fn, sbuf, rbuf, count));
    }
    if (sbuf != MPI_IN_PLACE)
        CHECK(bmpi_check_buffer(comm, fn, sbuf, count, type));
    struct bmpi_op *o;
    CHECK(check_op(c, fn, op, type, &o));
    SCHED_BEGIN(c, request, fn);
    bmpi_sched_set_op(s, o);
    return launch(s, bmpi_coll_reduce(s, sbuf, rbuf, (size_t)count, type, root), request, c, fn);
}

BMPI_API(MPI_Reduce)
int PMPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                int root, MPI_Comm comm)
{
    return reduce(sendbuf, recvbuf, count, datatype, op, root, comm, NULL, "MPI_Reduce");
}

BMPI_API(MPI_Ireduce)
int PMPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 int root, MPI_Comm comm, MPI_Request *request)
{
    if (!request)
        return check_request(comm, "MPI_Ireduce", request, true);
    return reduce(sendbuf, recvbuf, count, datatype, op, root, comm, request, "MPI_Ireduce");
}

/* --- allreduce ------------------------------------------------------------- */

static int allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                     MPI_Comm comm, MPI_Request *request, const char *fn)
{
    struct bmpi_comm *c;
    CHECK(bmpi_check_comm(comm, fn, &c));
    CHECK(check_not_in_place(c, fn, rbuf, "recvbuf"));
    CHECK(bmpi_check_buffer(comm, fn, rbuf, count, type));
    if (sbuf != MPI_IN_PLACE) {
        CHECK(bmpi_check_buffer(comm, fn, sbuf, count, type));
        CHECK(check_alias(c, fn, sbuf, rbuf, count));
    }
    struct bmpi_op *o;
    CHECK(check_op(c, fn, op, type, &o));
    SCHED_BEGIN(c, request, fn);
    bmpi_sched_set_op(s, o);
    return launch(s, bmpi_coll_allreduce(s, sbuf, rbuf, (size_t)count, type), request, c, fn);
}

BMPI_API(MPI_Allreduce)
int PMPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm)
{
    return allreduce(sendbuf, recvbuf, count, datatype, op, comm, NULL, "MPI_Allreduce");
}

BMPI_API(MPI_Iallreduce)
int PMPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                    MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    if (!request)
        return check_request(comm, "MPI_Iallreduce", request, true);
    return allreduce(sendbuf, recvbuf, count, datatype, op, comm, request, "MPI_Iallreduce");
}
