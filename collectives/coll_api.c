/*
 * The MPI_* collective entry points: argument validation, MPI_IN_PLACE
 * rules, then the schedule of the algorithm (one file per family in collectives/), run to
 * completion (blocking) or started (MPI_I*: blocking = start + wait on the
 * same schedule).
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "collectives/coll.h"
#include "collectives/coll_impl.h"
#include "collectives/shm_coll.h"
#include "runtime/api.h"
#include "runtime/info.h"
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

/* Set only around the build of one persistent collective (MPI_*_init):
 * bmpi offers at most MPI_THREAD_SERIALIZED, so a flag is enough. */
static bool building_persistent;

/* The outcome of a collective, through the communicator's error handler. */
static int report(struct bmpi_comm *c, int err, const char *fn)
{
    if (!err)
        return MPI_SUCCESS;
    if (err == MPI_ERR_TRUNCATE)
        return bmpi_err_comm(c->handle, err, fn,
                             "a message of the collective was longer than its receive buffer: "
                             "counts or types do not match across ranks");
    return bmpi_err_comm(c->handle, err, fn, NULL);
}

static int launch(struct bmpi_sched *s, int err, MPI_Request *request, struct bmpi_comm *c,
                  const char *fn)
{
    if (err) {
        bmpi_sched_destroy(s);
    } else if (request && building_persistent) {
        err = bmpi_sched_persist(s, request);
    } else if (request) {
        err = bmpi_sched_start(s, request);
    } else {
        err = bmpi_sched_run(s);
    }
    return report(c, err, fn);
}

/* Blocking calls try the shared-memory path first (shm_coll.h); a call it
 * declines goes on to the point-to-point schedule. */
#define TRY_SHM(c, request, fn, call)                                                              \
    do {                                                                                           \
        if (!(request)) {                                                                          \
            int e_ = (call);                                                                       \
            if (e_ != BMPI_SHMCOLL_DECLINED)                                                       \
                return report(c, e_, fn);                                                          \
        }                                                                                          \
    } while (0)

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

/* op on dt, a datatype bmpi_check_type() has passed */
static int check_op(struct bmpi_comm *c, const char *fn, MPI_Op op, const struct bmpi_datatype *dt,
                    struct bmpi_op **o)
{
    *o = bmpi_op_get(op);
    if (!*o)
        return bmpi_err_comm(c->handle, MPI_ERR_OP, fn, "invalid op 0x%x", (unsigned)op);
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
                       MPI_Count count)
{
    if (sbuf == rbuf && sbuf && count > 0)
        return bmpi_err_comm(c->handle, MPI_ERR_BUFFER, fn,
                             "sendbuf and recvbuf are the same buffer; use MPI_IN_PLACE");
    return MPI_SUCCESS;
}

/* --- barrier --------------------------------------------------------------- */

static int barrier(MPI_Comm comm, MPI_Request *request, const char *fn)
{
    struct bmpi_comm *c;
    CHECK(bmpi_check_comm(comm, fn, &c));
    if (c->remote_group)
        return bmpi_inter_barrier(c, request, fn);
    TRY_SHM(c, request, fn, bmpi_shmcoll_barrier(c));
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

static int bcast(void *buf, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm,
                 MPI_Request *request, const char *fn)
{
    struct bmpi_comm *c;
    CHECK(bmpi_check_comm(comm, fn, &c));
    if (c->remote_group)
        return bmpi_inter_bcast(c, buf, count, type, root, request, fn);
    CHECK(check_root(c, fn, root));
    CHECK(check_not_in_place(c, fn, buf, "the buffer"));
    struct bmpi_datatype *dt;
    CHECK(bmpi_check_type(comm, fn, type, &dt));
    CHECK(bmpi_check_buffer_of(comm, fn, buf, count, dt));
    TRY_SHM(c, request, fn, bmpi_shmcoll_bcast(c, buf, (size_t)count, dt, root));
    SCHED_BEGIN(c, request, fn);
    return launch(s, bmpi_coll_bcast(s, buf, (size_t)count, type, root), request, c, fn);
}

BMPI_API(MPI_Bcast)
int PMPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    return bcast(buffer, count, datatype, root, comm, NULL, "MPI_Bcast");
}

BMPI_API(MPI_Bcast_c)
int PMPI_Bcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    return bcast(buffer, count, datatype, root, comm, NULL, "MPI_Bcast_c");
}

BMPI_API(MPI_Ibcast)
int PMPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                MPI_Request *request)
{
    if (!request)
        return check_request(comm, "MPI_Ibcast", request, true);
    return bcast(buffer, count, datatype, root, comm, request, "MPI_Ibcast");
}

BMPI_API(MPI_Ibcast_c)
int PMPI_Ibcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm,
                  MPI_Request *request)
{
    if (!request)
        return check_request(comm, "MPI_Ibcast_c", request, true);
    return bcast(buffer, count, datatype, root, comm, request, "MPI_Ibcast_c");
}

/* --- reduce ---------------------------------------------------------------- */

static int reduce(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype type, MPI_Op op,
                  int root, MPI_Comm comm, MPI_Request *request, const char *fn)
{
    struct bmpi_comm *c;
    CHECK(bmpi_check_comm(comm, fn, &c));
    if (c->remote_group)
        return bmpi_inter_reduce(c, sbuf, rbuf, count, type, op, root, request, fn);
    CHECK(check_root(c, fn, root));
    bool is_root = c->rank == root;
    if (sbuf == MPI_IN_PLACE && !is_root)
        return bmpi_err_comm(comm, MPI_ERR_BUFFER, fn,
                             "MPI_IN_PLACE as sendbuf is allowed at the root only (root %d, rank %d)",
                             root, c->rank);
    struct bmpi_datatype *dt;
    CHECK(bmpi_check_type(comm, fn, type, &dt));
    if (is_root) {
        CHECK(check_not_in_place(c, fn, rbuf, "recvbuf"));
        CHECK(bmpi_check_buffer_of(comm, fn, rbuf, count, dt));
        CHECK(check_alias(c, fn, sbuf, rbuf, count));
    }
    if (sbuf != MPI_IN_PLACE)
        CHECK(bmpi_check_buffer_of(comm, fn, sbuf, count, dt));
    struct bmpi_op *o;
    CHECK(check_op(c, fn, op, dt, &o));
    TRY_SHM(c, request, fn, bmpi_shmcoll_reduce(c, sbuf, rbuf, (size_t)count, dt, o, root));
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

BMPI_API(MPI_Reduce_c)
int PMPI_Reduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                  MPI_Op op, int root, MPI_Comm comm)
{
    return reduce(sendbuf, recvbuf, count, datatype, op, root, comm, NULL, "MPI_Reduce_c");
}

BMPI_API(MPI_Ireduce)
int PMPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 int root, MPI_Comm comm, MPI_Request *request)
{
    if (!request)
        return check_request(comm, "MPI_Ireduce", request, true);
    return reduce(sendbuf, recvbuf, count, datatype, op, root, comm, request, "MPI_Ireduce");
}

BMPI_API(MPI_Ireduce_c)
int PMPI_Ireduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                   MPI_Op op, int root, MPI_Comm comm, MPI_Request *request)
{
    if (!request)
        return check_request(comm, "MPI_Ireduce_c", request, true);
    return reduce(sendbuf, recvbuf, count, datatype, op, root, comm, request, "MPI_Ireduce_c");
}

/* --- allreduce ------------------------------------------------------------- */

/* The arguments of a reduction whose result every rank receives
 * (allreduce, scan, exscan): recvbuf, sendbuf unless in place, and op on
 * type; the checked type and op into *dt and *o. */
static inline int check_reduction_to_all(struct bmpi_comm *c, const char *fn, const void *sbuf,
                                         void *rbuf, MPI_Count count, MPI_Datatype type, MPI_Op op,
                                         struct bmpi_datatype **dt, struct bmpi_op **o)
{
    CHECK(check_not_in_place(c, fn, rbuf, "recvbuf"));
    CHECK(bmpi_check_type(c->handle, fn, type, dt));
    CHECK(bmpi_check_buffer_of(c->handle, fn, rbuf, count, *dt));
    if (sbuf != MPI_IN_PLACE) {
        CHECK(bmpi_check_buffer_of(c->handle, fn, sbuf, count, *dt));
        CHECK(check_alias(c, fn, sbuf, rbuf, count));
    }
    return check_op(c, fn, op, *dt, o);
}

static int allreduce(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype type, MPI_Op op,
                     MPI_Comm comm, MPI_Request *request, const char *fn)
{
    struct bmpi_comm *c;
    CHECK(bmpi_check_comm(comm, fn, &c));
    if (c->remote_group)
        return bmpi_inter_allreduce(c, sbuf, rbuf, count, type, op, request, fn);
    struct bmpi_datatype *dt;
    struct bmpi_op *o;
    CHECK(check_reduction_to_all(c, fn, sbuf, rbuf, count, type, op, &dt, &o));
    TRY_SHM(c, request, fn, bmpi_shmcoll_allreduce(c, sbuf, rbuf, (size_t)count, dt, o));
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

BMPI_API(MPI_Allreduce_c)
int PMPI_Allreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                     MPI_Op op, MPI_Comm comm)
{
    return allreduce(sendbuf, recvbuf, count, datatype, op, comm, NULL, "MPI_Allreduce_c");
}

BMPI_API(MPI_Iallreduce)
int PMPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                    MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    if (!request)
        return check_request(comm, "MPI_Iallreduce", request, true);
    return allreduce(sendbuf, recvbuf, count, datatype, op, comm, request, "MPI_Iallreduce");
}

BMPI_API(MPI_Iallreduce_c)
int PMPI_Iallreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                      MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    if (!request)
        return check_request(comm, "MPI_Iallreduce_c", request, true);
    return allreduce(sendbuf, recvbuf, count, datatype, op, comm, request, "MPI_Iallreduce_c");
}

/* --- shared checks of the gather/scatter family ---------------------------- */

static int check_type(struct bmpi_comm *c, const char *fn, MPI_Datatype type)
{
    struct bmpi_datatype *dt;
    if (bmpi_dt_check_usable(type, &dt) != BMPI_OK)
        return bmpi_err_comm(c->handle, MPI_ERR_TYPE, fn, NULL);
    return MPI_SUCCESS;
}

/* An array of counts (and displacements, if displs is given), one per rank
 * that point-to-point on c names (of the remote group on an intercommunicator). */
static int check_counts(struct bmpi_comm *c, const char *fn, struct bmpi_counts counts,
                        struct bmpi_displs displs, bool want_displs, const char *what)
{
    if (bmpi_counts_null(counts))
        return bmpi_err_comm(c->handle, MPI_ERR_ARG, fn, "%s is NULL", what);
    if (want_displs && !displs.i && !displs.w)
        return bmpi_err_comm(c->handle, MPI_ERR_ARG, fn, "the displacements of %s are NULL", what);
    for (int i = 0; i < bmpi_comm_peer_size(c); i++)
        if (bmpi_count_at(counts, i) < 0)
            return bmpi_err_comm(c->handle, MPI_ERR_COUNT, fn, "%s[%d] is negative (%lld)", what, i,
                                 bmpi_count_at(counts, i));
    return MPI_SUCCESS;
}

static int check_buf_nip(struct bmpi_comm *c, const char *fn, const void *buf, MPI_Count count,
                         MPI_Datatype type, const char *what)
{
    CHECK(check_not_in_place(c, fn, buf, what));
    return bmpi_check_buffer(c->handle, fn, buf, count, type);
}

#define NB_ENTRY(fn)                                                                               \
    if (!request)                                                                                  \
        return check_request(comm, fn, request, true);

/* --- gather ---------------------------------------------------------------- */

static int gather(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                  MPI_Count rcount, MPI_Datatype rtype, int root, MPI_Comm comm,
                  MPI_Request *request, const char *fn)
{
    struct bmpi_comm *c;
    CHECK(bmpi_check_comm(comm, fn, &c));
    if (c->remote_group)
        return bmpi_inter_gather(c, sbuf, scount, stype, rbuf, rcount, rtype, root, request, fn);
    CHECK(check_root(c, fn, root));
    bool is_root = c->rank == root;
    if (is_root) {
        CHECK(check_buf_nip(c, fn, rbuf, rcount, rtype, "recvbuf"));
        if (sbuf != MPI_IN_PLACE)
            CHECK(bmpi_check_buffer(comm, fn, sbuf, scount, stype));
    } else {
        CHECK(check_buf_nip(c, fn, sbuf, scount, stype, "sendbuf at a non-root"));
    }
    SCHED_BEGIN(c, request, fn);
    return launch(s, bmpi_coll_gather(s, sbuf, (size_t)scount, stype, rbuf, (size_t)rcount, rtype, root),
                  request, c, fn);
}

BMPI_API(MPI_Gather)
int PMPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, NULL,
                  "MPI_Gather");
}

BMPI_API(MPI_Gather_c)
int PMPI_Gather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                  MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, NULL,
                  "MPI_Gather_c");
}

BMPI_API(MPI_Igather)
int PMPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request *request)
{
    NB_ENTRY("MPI_Igather");
    return gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request,
                  "MPI_Igather");
}

BMPI_API(MPI_Igather_c)
int PMPI_Igather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                   MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                   MPI_Request *request)
{
    NB_ENTRY("MPI_Igather_c");
    return gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request,
                  "MPI_Igather_c");
}

static int gatherv(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                   struct bmpi_counts rcounts, struct bmpi_displs displs, MPI_Datatype rtype,
                   int root, MPI_Comm comm, MPI_Request *request, const char *fn)
{
    struct bmpi_comm *c;
    CHECK(bmpi_check_comm(comm, fn, &c));
    if (c->remote_group)
        return bmpi_inter_gatherv(c, sbuf, scount, stype, rbuf, rcounts, displs, rtype, root,
                                  request, fn);
    CHECK(check_root(c, fn, root));
    if (c->rank == root) {
        CHECK(check_not_in_place(c, fn, rbuf, "recvbuf"));
        CHECK(check_counts(c, fn, rcounts, displs, true, "recvcounts"));
        CHECK(check_type(c, fn, rtype));
        if (sbuf != MPI_IN_PLACE)
            CHECK(bmpi_check_buffer(comm, fn, sbuf, scount, stype));
    } else {
        CHECK(check_buf_nip(c, fn, sbuf, scount, stype, "sendbuf at a non-root"));
    }
    SCHED_BEGIN(c, request, fn);
    return launch(s, bmpi_coll_gatherv(s, sbuf, (size_t)scount, stype, rbuf, rcounts, displs, rtype, root),
                  request, c, fn);
}

BMPI_API(MPI_Gatherv)
int PMPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm)
{
    return gatherv(sendbuf, sendcount, sendtype, recvbuf, BMPI_COUNTS(recvcounts),
                   BMPI_DISPLS(displs), recvtype, root, comm, NULL, "MPI_Gatherv");
}

BMPI_API(MPI_Gatherv_c)
int PMPI_Gatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                   int root, MPI_Comm comm)
{
    return gatherv(sendbuf, sendcount, sendtype, recvbuf, BMPI_COUNTS(recvcounts),
                   BMPI_DISPLS(displs), recvtype, root, comm, NULL, "MPI_Gatherv_c");
}

BMPI_API(MPI_Igatherv)
int PMPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                  MPI_Comm comm, MPI_Request *request)
{
    NB_ENTRY("MPI_Igatherv");
    return gatherv(sendbuf, sendcount, sendtype, recvbuf, BMPI_COUNTS(recvcounts),
                   BMPI_DISPLS(displs), recvtype, root, comm, request, "MPI_Igatherv");
}

BMPI_API(MPI_Igatherv_c)
int PMPI_Igatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                    int root, MPI_Comm comm, MPI_Request *request)
{
    NB_ENTRY("MPI_Igatherv_c");
    return gatherv(sendbuf, sendcount, sendtype, recvbuf, BMPI_COUNTS(recvcounts),
                   BMPI_DISPLS(displs), recvtype, root, comm, request, "MPI_Igatherv_c");
}

/* --- scatter --------------------------------------------------------------- */

static int scatter(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                   MPI_Count rcount, MPI_Datatype rtype, int root, MPI_Comm comm,
                   MPI_Request *request, const char *fn)
{
    struct bmpi_comm *c;
    CHECK(bmpi_check_comm(comm, fn, &c));
    if (c->remote_group)
        return bmpi_inter_scatter(c, sbuf, scount, stype, rbuf, rcount, rtype, root, request, fn);
    CHECK(check_root(c, fn, root));
    if (c->rank == root) {
        CHECK(check_buf_nip(c, fn, sbuf, scount, stype, "sendbuf"));
        if (rbuf != MPI_IN_PLACE)
            CHECK(bmpi_check_buffer(comm, fn, rbuf, rcount, rtype));
    } else {
        CHECK(check_buf_nip(c, fn, rbuf, rcount, rtype, "recvbuf at a non-root"));
    }
    SCHED_BEGIN(c, request, fn);
    return launch(s, bmpi_coll_scatter(s, sbuf, (size_t)scount, stype, rbuf, (size_t)rcount, rtype, root),
                  request, c, fn);
}

BMPI_API(MPI_Scatter)
int PMPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, NULL,
                   "MPI_Scatter");
}

BMPI_API(MPI_Scatter_c)
int PMPI_Scatter_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                   MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, NULL,
                   "MPI_Scatter_c");
}

BMPI_API(MPI_Iscatter)
int PMPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                  MPI_Request *request)
{
    NB_ENTRY("MPI_Iscatter");
    return scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request,
                   "MPI_Iscatter");
}

BMPI_API(MPI_Iscatter_c)
int PMPI_Iscatter_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                    MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                    MPI_Request *request)
{
    NB_ENTRY("MPI_Iscatter_c");
    return scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request,
                   "MPI_Iscatter_c");
}

static int scatterv(const void *sbuf, struct bmpi_counts scounts, struct bmpi_displs displs,
                    MPI_Datatype stype,
                    void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int root, MPI_Comm comm,
                    MPI_Request *request, const char *fn)
{
    struct bmpi_comm *c;
    CHECK(bmpi_check_comm(comm, fn, &c));
    if (c->remote_group)
        return bmpi_inter_scatterv(c, sbuf, scounts, displs, stype, rbuf, rcount, rtype, root,
                                   request, fn);
    CHECK(check_root(c, fn, root));
    if (c->rank == root) {
        CHECK(check_not_in_place(c, fn, sbuf, "sendbuf"));
        CHECK(check_counts(c, fn, scounts, displs, true, "sendcounts"));
        CHECK(check_type(c, fn, stype));
        if (rbuf != MPI_IN_PLACE)
            CHECK(bmpi_check_buffer(comm, fn, rbuf, rcount, rtype));
    } else {
        CHECK(check_buf_nip(c, fn, rbuf, rcount, rtype, "recvbuf at a non-root"));
    }
    SCHED_BEGIN(c, request, fn);
    return launch(s, bmpi_coll_scatterv(s, sbuf, scounts, displs, stype, rbuf, (size_t)rcount, rtype, root),
                  request, c, fn);
}

BMPI_API(MPI_Scatterv)
int PMPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm)
{
    return scatterv(sendbuf, BMPI_COUNTS(sendcounts), BMPI_DISPLS(displs), sendtype, recvbuf,
                    recvcount, recvtype, root, comm, NULL, "MPI_Scatterv");
}

BMPI_API(MPI_Scatterv_c)
int PMPI_Scatterv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                    MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                    MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return scatterv(sendbuf, BMPI_COUNTS(sendcounts), BMPI_DISPLS(displs), sendtype, recvbuf,
                    recvcount, recvtype, root, comm, NULL, "MPI_Scatterv_c");
}

BMPI_API(MPI_Iscatterv)
int PMPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                   MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                   int root, MPI_Comm comm, MPI_Request *request)
{
    NB_ENTRY("MPI_Iscatterv");
    return scatterv(sendbuf, BMPI_COUNTS(sendcounts), BMPI_DISPLS(displs), sendtype, recvbuf,
                    recvcount, recvtype, root, comm, request, "MPI_Iscatterv");
}

BMPI_API(MPI_Iscatterv_c)
int PMPI_Iscatterv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                     MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                     MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    NB_ENTRY("MPI_Iscatterv_c");
    return scatterv(sendbuf, BMPI_COUNTS(sendcounts), BMPI_DISPLS(displs), sendtype, recvbuf,
                    recvcount, recvtype, root, comm, request, "MPI_Iscatterv_c");
}

/* --- allgather ------------------------------------------------------------- */

static int allgather(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                     MPI_Count rcount, MPI_Datatype rtype, MPI_Comm comm, MPI_Request *request,
                     const char *fn)
{
    struct bmpi_comm *c;
    CHECK(bmpi_check_comm(comm, fn, &c));
    if (c->remote_group)
        return bmpi_inter_allgather(c, sbuf, scount, stype, rbuf, rcount, rtype, request, fn);
    CHECK(check_buf_nip(c, fn, rbuf, rcount, rtype, "recvbuf"));
    if (sbuf != MPI_IN_PLACE)
        CHECK(bmpi_check_buffer(comm, fn, sbuf, scount, stype));
    TRY_SHM(c, request, fn,
            bmpi_shmcoll_allgather(c, sbuf, (size_t)scount, stype, rbuf, (size_t)rcount, rtype));
    SCHED_BEGIN(c, request, fn);
    return launch(s, bmpi_coll_allgather(s, sbuf, (size_t)scount, stype, rbuf, (size_t)rcount, rtype),
                  request, c, fn);
}

BMPI_API(MPI_Allgather)
int PMPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, NULL,
                     "MPI_Allgather");
}

BMPI_API(MPI_Allgather_c)
int PMPI_Allgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                     MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, NULL,
                     "MPI_Allgather_c");
}

BMPI_API(MPI_Iallgather)
int PMPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    NB_ENTRY("MPI_Iallgather");
    return allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request,
                     "MPI_Iallgather");
}

BMPI_API(MPI_Iallgather_c)
int PMPI_Iallgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                      void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                      MPI_Request *request)
{
    NB_ENTRY("MPI_Iallgather_c");
    return allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request,
                     "MPI_Iallgather_c");
}

static int allgatherv(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                      struct bmpi_counts rcounts, struct bmpi_displs displs, MPI_Datatype rtype,
                      MPI_Comm comm,
                      MPI_Request *request, const char *fn)
{
    struct bmpi_comm *c;
    CHECK(bmpi_check_comm(comm, fn, &c));
    if (c->remote_group)
        return bmpi_inter_allgatherv(c, sbuf, scount, stype, rbuf, rcounts, displs, rtype, request,
                                     fn);
    CHECK(check_not_in_place(c, fn, rbuf, "recvbuf"));
    CHECK(check_counts(c, fn, rcounts, displs, true, "recvcounts"));
    CHECK(check_type(c, fn, rtype));
    if (sbuf != MPI_IN_PLACE)
        CHECK(bmpi_check_buffer(comm, fn, sbuf, scount, stype));
    SCHED_BEGIN(c, request, fn);
    return launch(s, bmpi_coll_allgatherv(s, sbuf, (size_t)scount, stype, rbuf, rcounts, displs, rtype),
                  request, c, fn);
}

BMPI_API(MPI_Allgatherv)
int PMPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm)
{
    return allgatherv(sendbuf, sendcount, sendtype, recvbuf, BMPI_COUNTS(recvcounts),
                      BMPI_DISPLS(displs), recvtype, comm, NULL, "MPI_Allgatherv");
}

BMPI_API(MPI_Allgatherv_c)
int PMPI_Allgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                      void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                      MPI_Datatype recvtype, MPI_Comm comm)
{
    return allgatherv(sendbuf, sendcount, sendtype, recvbuf, BMPI_COUNTS(recvcounts),
                      BMPI_DISPLS(displs), recvtype, comm, NULL, "MPI_Allgatherv_c");
}

BMPI_API(MPI_Iallgatherv)
int PMPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                     MPI_Comm comm, MPI_Request *request)
{
    NB_ENTRY("MPI_Iallgatherv");
    return allgatherv(sendbuf, sendcount, sendtype, recvbuf, BMPI_COUNTS(recvcounts),
                      BMPI_DISPLS(displs), recvtype, comm, request, "MPI_Iallgatherv");
}

BMPI_API(MPI_Iallgatherv_c)
int PMPI_Iallgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                       void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                       MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    NB_ENTRY("MPI_Iallgatherv_c");
    return allgatherv(sendbuf, sendcount, sendtype, recvbuf, BMPI_COUNTS(recvcounts),
                      BMPI_DISPLS(displs), recvtype, comm, request, "MPI_Iallgatherv_c");
}

/* --- alltoall -------------------------------------------------------------- */

static int alltoall(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                    MPI_Count rcount, MPI_Datatype rtype, MPI_Comm comm, MPI_Request *request,
                    const char *fn)
{
    struct bmpi_comm *c;
    CHECK(bmpi_check_comm(comm, fn, &c));
    if (c->remote_group)
        return bmpi_inter_alltoall(c, sbuf, scount, stype, rbuf, rcount, rtype, request, fn);
    CHECK(check_buf_nip(c, fn, rbuf, rcount, rtype, "recvbuf"));
    if (sbuf != MPI_IN_PLACE) {
        CHECK(bmpi_check_buffer(comm, fn, sbuf, scount, stype));
        CHECK(check_alias(c, fn, sbuf, rbuf, rcount));
    }
    TRY_SHM(c, request, fn,
            bmpi_shmcoll_alltoall(c, sbuf, (size_t)scount, stype, rbuf, (size_t)rcount, rtype));
    SCHED_BEGIN(c, request, fn);
    return launch(s, bmpi_coll_alltoall(s, sbuf, (size_t)scount, stype, rbuf, (size_t)rcount, rtype),
                  request, c, fn);
}

BMPI_API(MPI_Alltoall)
int PMPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, NULL,
                    "MPI_Alltoall");
}

BMPI_API(MPI_Alltoall_c)
int PMPI_Alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                    MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, NULL,
                    "MPI_Alltoall_c");
}

BMPI_API(MPI_Ialltoall)
int PMPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    NB_ENTRY("MPI_Ialltoall");
    return alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request,
                    "MPI_Ialltoall");
}

BMPI_API(MPI_Ialltoall_c)
int PMPI_Ialltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                     MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                     MPI_Request *request)
{
    NB_ENTRY("MPI_Ialltoall_c");
    return alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request,
                    "MPI_Ialltoall_c");
}

/* Alltoallv and alltoallw share one schedule: v's element displacements
 * become byte displacements and its one type becomes p of them. */
static int alltoallvw(const void *sbuf, struct bmpi_counts scounts, struct bmpi_displs sdispls,
                      const MPI_Datatype *stypes, MPI_Datatype stype, void *rbuf,
                      struct bmpi_counts rcounts, struct bmpi_displs rdispls,
                      const MPI_Datatype *rtypes,
                      MPI_Datatype rtype, MPI_Comm comm, MPI_Request *request, const char *fn)
{
    struct bmpi_comm *c;
    CHECK(bmpi_check_comm(comm, fn, &c));
    if (c->remote_group)
        CHECK(check_not_in_place(c, fn, sbuf, "sendbuf on an intercommunicator"));
    int p = bmpi_comm_peer_size(c);
    bool w = stypes || rtypes || (fn[strlen(fn) - 1] == 'w');
    CHECK(check_not_in_place(c, fn, rbuf, "recvbuf"));
    CHECK(check_counts(c, fn, rcounts, rdispls, true, "recvcounts"));
    if (w) {
        if (!rtypes)
            return bmpi_err_comm(comm, MPI_ERR_ARG, fn, "recvtypes is NULL");
        for (int i = 0; i < p; i++)
            CHECK(check_type(c, fn, rtypes[i]));
    } else {
        CHECK(check_type(c, fn, rtype));
    }
    if (sbuf != MPI_IN_PLACE) {
        CHECK(check_counts(c, fn, scounts, sdispls, true, "sendcounts"));
        if (w) {
            if (!stypes)
                return bmpi_err_comm(comm, MPI_ERR_ARG, fn, "sendtypes is NULL");
            for (int i = 0; i < p; i++)
                CHECK(check_type(c, fn, stypes[i]));
        } else {
            CHECK(check_type(c, fn, stype));
        }
    }
    SCHED_BEGIN(c, request, fn);
    MPI_Aint *sd = bmpi_sched_alloc(s, 2 * (size_t)p * sizeof(MPI_Aint));
    MPI_Datatype *st = w ? NULL : bmpi_sched_alloc(s, 2 * (size_t)p * sizeof(MPI_Datatype));
    if (!sd || (!w && !st))
        return launch(s, s->err, request, c, fn);
    MPI_Aint *rd = sd + p;
    MPI_Aint sext = sbuf == MPI_IN_PLACE || w ? 1 : bmpi_coll_extent(stype);
    MPI_Aint rext = w ? 1 : bmpi_coll_extent(rtype);
    for (int i = 0; i < p; i++) {
        rd[i] = bmpi_displ_at(rdispls, i) * rext;
        if (sbuf != MPI_IN_PLACE)
            sd[i] = bmpi_displ_at(sdispls, i) * sext;
        if (!w) {
            st[i] = stype;
            st[p + i] = rtype;
        }
    }
    if (!w) {
        stypes = st;
        rtypes = st + p;
    }
    if (c->remote_group)
        return launch(s,
                      bmpi_inter_alltoallw(s, sbuf, scounts, sd, stypes, rbuf, rcounts, rd, rtypes),
                      request, c, fn);
    return launch(s, bmpi_coll_alltoallw(s, sbuf, scounts, sd, stypes, rbuf, rcounts, rd, rtypes),
                  request, c, fn);
}

BMPI_API(MPI_Alltoallv)
int PMPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    return alltoallvw(sendbuf, BMPI_COUNTS(sendcounts), BMPI_DISPLS(sdispls), NULL, sendtype,
                      recvbuf, BMPI_COUNTS(recvcounts), BMPI_DISPLS(rdispls), NULL, recvtype, comm,
                      NULL, "MPI_Alltoallv");
}

BMPI_API(MPI_Alltoallv_c)
int PMPI_Alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                     MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                     const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    return alltoallvw(sendbuf, BMPI_COUNTS(sendcounts), BMPI_DISPLS(sdispls), NULL, sendtype,
                      recvbuf, BMPI_COUNTS(recvcounts), BMPI_DISPLS(rdispls), NULL, recvtype, comm,
                      NULL, "MPI_Alltoallv_c");
}

BMPI_API(MPI_Ialltoallv)
int PMPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                    MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                    const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                    MPI_Request *request)
{
    NB_ENTRY("MPI_Ialltoallv");
    return alltoallvw(sendbuf, BMPI_COUNTS(sendcounts), BMPI_DISPLS(sdispls), NULL, sendtype,
                      recvbuf, BMPI_COUNTS(recvcounts), BMPI_DISPLS(rdispls), NULL, recvtype, comm,
                      request, "MPI_Ialltoallv");
}

BMPI_API(MPI_Ialltoallv_c)
int PMPI_Ialltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                      MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                      const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                      MPI_Request *request)
{
    NB_ENTRY("MPI_Ialltoallv_c");
    return alltoallvw(sendbuf, BMPI_COUNTS(sendcounts), BMPI_DISPLS(sdispls), NULL, sendtype,
                      recvbuf, BMPI_COUNTS(recvcounts), BMPI_DISPLS(rdispls), NULL, recvtype, comm,
                      request, "MPI_Ialltoallv_c");
}

BMPI_API(MPI_Alltoallw)
int PMPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    return alltoallvw(sendbuf, BMPI_COUNTS(sendcounts), BMPI_DISPLS(sdispls), sendtypes,
                      MPI_DATATYPE_NULL, recvbuf, BMPI_COUNTS(recvcounts), BMPI_DISPLS(rdispls),
                      recvtypes, MPI_DATATYPE_NULL, comm, NULL, "MPI_Alltoallw");
}

BMPI_API(MPI_Alltoallw_c)
int PMPI_Alltoallw_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                     const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                     const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    return alltoallvw(sendbuf, BMPI_COUNTS(sendcounts), BMPI_DISPLS(sdispls), sendtypes,
                      MPI_DATATYPE_NULL, recvbuf, BMPI_COUNTS(recvcounts), BMPI_DISPLS(rdispls),
                      recvtypes, MPI_DATATYPE_NULL, comm, NULL, "MPI_Alltoallw_c");
}

BMPI_API(MPI_Ialltoallw)
int PMPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                    const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                    const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                    MPI_Request *request)
{
    NB_ENTRY("MPI_Ialltoallw");
    return alltoallvw(sendbuf, BMPI_COUNTS(sendcounts), BMPI_DISPLS(sdispls), sendtypes,
                      MPI_DATATYPE_NULL, recvbuf, BMPI_COUNTS(recvcounts), BMPI_DISPLS(rdispls),
                      recvtypes, MPI_DATATYPE_NULL, comm, request, "MPI_Ialltoallw");
}

BMPI_API(MPI_Ialltoallw_c)
int PMPI_Ialltoallw_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                      const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                      const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                      MPI_Request *request)
{
    NB_ENTRY("MPI_Ialltoallw_c");
    return alltoallvw(sendbuf, BMPI_COUNTS(sendcounts), BMPI_DISPLS(sdispls), sendtypes,
                      MPI_DATATYPE_NULL, recvbuf, BMPI_COUNTS(recvcounts), BMPI_DISPLS(rdispls),
                      recvtypes, MPI_DATATYPE_NULL, comm, request, "MPI_Ialltoallw_c");
}

/* --- reduce_scatter -------------------------------------------------------- */

static int reduce_scatter(const void *sbuf, void *rbuf, struct bmpi_counts rcounts,
                          MPI_Count rcount, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                          MPI_Request *request, const char *fn)
{
    struct bmpi_comm *c;
    CHECK(bmpi_check_comm(comm, fn, &c));
    if (c->remote_group)
        return bmpi_inter_reduce_scatter(c, sbuf, rbuf, rcounts, rcount, type, op, request, fn);
    int p = c->size;
    bool block = bmpi_counts_null(rcounts);
    if (block && rcount < 0)
        return bmpi_err_comm(comm, MPI_ERR_COUNT, fn, "negative recvcount %lld", rcount);
    if (!block)
        CHECK(check_counts(c, fn, rcounts, (struct bmpi_displs){0}, false, "recvcounts"));
    CHECK(check_not_in_place(c, fn, rbuf, "recvbuf"));
    MPI_Count total = 0;
    for (int i = 0; i < p; i++)
        if (__builtin_add_overflow(total, block ? rcount : bmpi_count_at(rcounts, i), &total))
            return bmpi_err_comm(comm, MPI_ERR_COUNT, fn, "the recvcounts overflow MPI_Count");
    MPI_Count mine = block ? rcount : bmpi_count_at(rcounts, c->rank);
    struct bmpi_datatype *dt;
    CHECK(bmpi_check_type(comm, fn, type, &dt));
    CHECK(bmpi_check_buffer_of(comm, fn, rbuf, sbuf == MPI_IN_PLACE ? total : mine, dt));
    if (sbuf != MPI_IN_PLACE) {
        CHECK(bmpi_check_buffer_of(comm, fn, sbuf, total, dt));
        CHECK(check_alias(c, fn, sbuf, rbuf, total));
    }
    struct bmpi_op *o;
    CHECK(check_op(c, fn, op, dt, &o));
    SCHED_BEGIN(c, request, fn);
    bmpi_sched_set_op(s, o);
    if (block) { /* the block call's one count, as the algorithm reads counts */
        MPI_Count *cnts = bmpi_sched_alloc(s, (size_t)p * sizeof(MPI_Count));
        if (!cnts)
            return launch(s, s->err, request, c, fn);
        for (int i = 0; i < p; i++)
            cnts[i] = rcount;
        rcounts = (struct bmpi_counts){.w = cnts};
    }
    return launch(s, bmpi_coll_reduce_scatter(s, sbuf, rbuf, rcounts, type), request, c, fn);
}

BMPI_API(MPI_Reduce_scatter)
int PMPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    if (!recvcounts)
        return bmpi_err_comm(comm, MPI_ERR_ARG, "MPI_Reduce_scatter", "recvcounts is NULL");
    return reduce_scatter(sendbuf, recvbuf, BMPI_COUNTS(recvcounts), 0, datatype, op, comm, NULL,
                          "MPI_Reduce_scatter");
}

BMPI_API(MPI_Reduce_scatter_c)
int PMPI_Reduce_scatter_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                          MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    if (!recvcounts)
        return bmpi_err_comm(comm, MPI_ERR_ARG, "MPI_Reduce_scatter_c", "recvcounts is NULL");
    return reduce_scatter(sendbuf, recvbuf, BMPI_COUNTS(recvcounts), 0, datatype, op, comm, NULL,
                          "MPI_Reduce_scatter_c");
}

BMPI_API(MPI_Ireduce_scatter)
int PMPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    NB_ENTRY("MPI_Ireduce_scatter");
    if (!recvcounts)
        return bmpi_err_comm(comm, MPI_ERR_ARG, "MPI_Ireduce_scatter", "recvcounts is NULL");
    return reduce_scatter(sendbuf, recvbuf, BMPI_COUNTS(recvcounts), 0, datatype, op, comm, request,
                          "MPI_Ireduce_scatter");
}

BMPI_API(MPI_Ireduce_scatter_c)
int PMPI_Ireduce_scatter_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                           MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    NB_ENTRY("MPI_Ireduce_scatter_c");
    if (!recvcounts)
        return bmpi_err_comm(comm, MPI_ERR_ARG, "MPI_Ireduce_scatter_c", "recvcounts is NULL");
    return reduce_scatter(sendbuf, recvbuf, BMPI_COUNTS(recvcounts), 0, datatype, op, comm, request,
                          "MPI_Ireduce_scatter_c");
}

BMPI_API(MPI_Reduce_scatter_block)
int PMPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return reduce_scatter(sendbuf, recvbuf, (struct bmpi_counts){0}, recvcount, datatype, op, comm,
                          NULL, "MPI_Reduce_scatter_block");
}

BMPI_API(MPI_Reduce_scatter_block_c)
int PMPI_Reduce_scatter_block_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return reduce_scatter(sendbuf, recvbuf, (struct bmpi_counts){0}, recvcount, datatype, op, comm,
                          NULL, "MPI_Reduce_scatter_block_c");
}

BMPI_API(MPI_Ireduce_scatter_block)
int PMPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                               MPI_Request *request)
{
    NB_ENTRY("MPI_Ireduce_scatter_block");
    return reduce_scatter(sendbuf, recvbuf, (struct bmpi_counts){0}, recvcount, datatype, op, comm,
                          request, "MPI_Ireduce_scatter_block");
}

BMPI_API(MPI_Ireduce_scatter_block_c)
int PMPI_Ireduce_scatter_block_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                 MPI_Request *request)
{
    NB_ENTRY("MPI_Ireduce_scatter_block_c");
    return reduce_scatter(sendbuf, recvbuf, (struct bmpi_counts){0}, recvcount, datatype, op, comm,
                          request, "MPI_Ireduce_scatter_block_c");
}

/* --- scan / exscan --------------------------------------------------------- */

static int scan(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype type, MPI_Op op,
                MPI_Comm comm, MPI_Request *request, bool exclusive, const char *fn)
{
    struct bmpi_comm *c;
    CHECK(bmpi_check_comm(comm, fn, &c));
    if (c->remote_group)
        return bmpi_inter_scan(c, fn);
    struct bmpi_datatype *dt;
    struct bmpi_op *o;
    CHECK(check_reduction_to_all(c, fn, sbuf, rbuf, count, type, op, &dt, &o));
    SCHED_BEGIN(c, request, fn);
    bmpi_sched_set_op(s, o);
    return launch(s, bmpi_coll_scan(s, sbuf, rbuf, (size_t)count, type, exclusive), request, c, fn);
}

BMPI_API(MPI_Scan)
int PMPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
              MPI_Comm comm)
{
    return scan(sendbuf, recvbuf, count, datatype, op, comm, NULL, false, "MPI_Scan");
}

BMPI_API(MPI_Scan_c)
int PMPI_Scan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                MPI_Op op, MPI_Comm comm)
{
    return scan(sendbuf, recvbuf, count, datatype, op, comm, NULL, false, "MPI_Scan_c");
}

BMPI_API(MPI_Iscan)
int PMPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               MPI_Comm comm, MPI_Request *request)
{
    NB_ENTRY("MPI_Iscan");
    return scan(sendbuf, recvbuf, count, datatype, op, comm, request, false, "MPI_Iscan");
}

BMPI_API(MPI_Iscan_c)
int PMPI_Iscan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                 MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    NB_ENTRY("MPI_Iscan_c");
    return scan(sendbuf, recvbuf, count, datatype, op, comm, request, false, "MPI_Iscan_c");
}

BMPI_API(MPI_Exscan)
int PMPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                MPI_Comm comm)
{
    return scan(sendbuf, recvbuf, count, datatype, op, comm, NULL, true, "MPI_Exscan");
}

BMPI_API(MPI_Exscan_c)
int PMPI_Exscan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                  MPI_Op op, MPI_Comm comm)
{
    return scan(sendbuf, recvbuf, count, datatype, op, comm, NULL, true, "MPI_Exscan_c");
}

BMPI_API(MPI_Iexscan)
int PMPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 MPI_Comm comm, MPI_Request *request)
{
    NB_ENTRY("MPI_Iexscan");
    return scan(sendbuf, recvbuf, count, datatype, op, comm, request, true, "MPI_Iexscan");
}

BMPI_API(MPI_Iexscan_c)
int PMPI_Iexscan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                   MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    NB_ENTRY("MPI_Iexscan_c");
    return scan(sendbuf, recvbuf, count, datatype, op, comm, request, true, "MPI_Iexscan_c");
}

/* --- lent to the intercommunicator collectives (inter.c) ------------------- */

int bmpi_coll_launch(struct bmpi_sched *s, int err, MPI_Request *request, struct bmpi_comm *c,
                     const char *fn)
{
    return launch(s, err, request, c, fn);
}

int bmpi_coll_check_op(struct bmpi_comm *c, const char *fn, MPI_Op op,
                       const struct bmpi_datatype *dt, struct bmpi_op **o)
{
    return check_op(c, fn, op, dt, o);
}

int bmpi_coll_check_counts(struct bmpi_comm *c, const char *fn, struct bmpi_counts counts,
                           struct bmpi_displs displs, bool want_displs, const char *what)
{
    return check_counts(c, fn, counts, displs, want_displs, what);
}

/* --- persistent collectives (MPI_*_init) ------------------------------------
 * The same checks and schedule as the nonblocking call, built once and kept
 * under a persistent request: every MPI_Start runs it again. The tag is
 * taken here, so MPI_*_init calls follow the ordering rules of collectives
 * and the starts need not. */

static int persistent_args(MPI_Comm comm, MPI_Info info, MPI_Request *request, const char *fn)
{
    if (!request)
        return bmpi_err_comm(comm, MPI_ERR_ARG, fn, "request is NULL");
    if (info != MPI_INFO_NULL && !bmpi_info_lookup(info))
        return bmpi_err_comm(comm, MPI_ERR_INFO, fn, "invalid info 0x%x", (unsigned)info);
    return MPI_SUCCESS;
}

#define PERSISTENT(comm, info, request, fn, build)                                                 \
    do {                                                                                           \
        CHECK(persistent_args(comm, info, request, fn));                                           \
        building_persistent = true;                                                                \
        int err_ = (build);                                                                        \
        building_persistent = false;                                                               \
        return err_;                                                                               \
    } while (0)

BMPI_API(MPI_Barrier_init)
int PMPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    PERSISTENT(comm, info, request, "MPI_Barrier_init", barrier(comm, request, "MPI_Barrier_init"));
}

BMPI_API(MPI_Bcast_init)
int PMPI_Bcast_init(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                    MPI_Info info, MPI_Request *request)
{
    const char *fn = "MPI_Bcast_init";
    PERSISTENT(comm, info, request, fn,
               bcast(buffer, count, datatype, root, comm, request, fn));
}

BMPI_API(MPI_Bcast_init_c)
int PMPI_Bcast_init_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm,
                      MPI_Info info, MPI_Request *request)
{
    const char *fn = "MPI_Bcast_init_c";
    PERSISTENT(comm, info, request, fn,
               bcast(buffer, count, datatype, root, comm, request, fn));
}

BMPI_API(MPI_Reduce_init)
int PMPI_Reduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                     MPI_Op op, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    const char *fn = "MPI_Reduce_init";
    PERSISTENT(comm, info, request, fn,
               reduce(sendbuf, recvbuf, count, datatype, op, root, comm, request, fn));
}

BMPI_API(MPI_Reduce_init_c)
int PMPI_Reduce_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                       MPI_Op op, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    const char *fn = "MPI_Reduce_init_c";
    PERSISTENT(comm, info, request, fn,
               reduce(sendbuf, recvbuf, count, datatype, op, root, comm, request, fn));
}

BMPI_API(MPI_Allreduce_init)
int PMPI_Allreduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                        MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    const char *fn = "MPI_Allreduce_init";
    PERSISTENT(comm, info, request, fn,
               allreduce(sendbuf, recvbuf, count, datatype, op, comm, request, fn));
}

BMPI_API(MPI_Allreduce_init_c)
int PMPI_Allreduce_init_c(const void *sendbuf, void *recvbuf, MPI_Count count,
                          MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                          MPI_Request *request)
{
    const char *fn = "MPI_Allreduce_init_c";
    PERSISTENT(comm, info, request, fn,
               allreduce(sendbuf, recvbuf, count, datatype, op, comm, request, fn));
}

BMPI_API(MPI_Gather_init)
int PMPI_Gather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                     MPI_Request *request)
{
    const char *fn = "MPI_Gather_init";
    PERSISTENT(comm, info, request, fn,
               gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                      request, fn));
}

BMPI_API(MPI_Gather_init_c)
int PMPI_Gather_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                       void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                       MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    const char *fn = "MPI_Gather_init_c";
    PERSISTENT(comm, info, request, fn,
               gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                      request, fn));
}

BMPI_API(MPI_Gatherv_init)
int PMPI_Gatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                      MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    const char *fn = "MPI_Gatherv_init";
    PERSISTENT(comm, info, request, fn,
               gatherv(sendbuf, sendcount, sendtype, recvbuf, BMPI_COUNTS(recvcounts),
                       BMPI_DISPLS(displs), recvtype, root, comm, request, fn));
}

BMPI_API(MPI_Gatherv_init_c)
int PMPI_Gatherv_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                        void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                        MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                        MPI_Request *request)
{
    const char *fn = "MPI_Gatherv_init_c";
    PERSISTENT(comm, info, request, fn,
               gatherv(sendbuf, sendcount, sendtype, recvbuf, BMPI_COUNTS(recvcounts),
                       BMPI_DISPLS(displs), recvtype, root, comm, request, fn));
}

BMPI_API(MPI_Scatter_init)
int PMPI_Scatter_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                      MPI_Request *request)
{
    const char *fn = "MPI_Scatter_init";
    PERSISTENT(comm, info, request, fn,
               scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                       request, fn));
}

BMPI_API(MPI_Scatter_init_c)
int PMPI_Scatter_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                        void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                        MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    const char *fn = "MPI_Scatter_init_c";
    PERSISTENT(comm, info, request, fn,
               scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                       request, fn));
}

BMPI_API(MPI_Scatterv_init)
int PMPI_Scatterv_init(const void *sendbuf, const int sendcounts[], const int displs[],
                       MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                       int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    const char *fn = "MPI_Scatterv_init";
    PERSISTENT(comm, info, request, fn,
               scatterv(sendbuf, BMPI_COUNTS(sendcounts), BMPI_DISPLS(displs), sendtype, recvbuf,
                        recvcount, recvtype, root, comm, request, fn));
}

BMPI_API(MPI_Scatterv_init_c)
int PMPI_Scatterv_init_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                         MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                         MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                         MPI_Request *request)
{
    const char *fn = "MPI_Scatterv_init_c";
    PERSISTENT(comm, info, request, fn,
               scatterv(sendbuf, BMPI_COUNTS(sendcounts), BMPI_DISPLS(displs), sendtype, recvbuf,
                        recvcount, recvtype, root, comm, request, fn));
}

BMPI_API(MPI_Allgather_init)
int PMPI_Allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                        int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                        MPI_Request *request)
{
    const char *fn = "MPI_Allgather_init";
    PERSISTENT(comm, info, request, fn,
               allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request,
                         fn));
}

BMPI_API(MPI_Allgather_init_c)
int PMPI_Allgather_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                          void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                          MPI_Info info, MPI_Request *request)
{
    const char *fn = "MPI_Allgather_init_c";
    PERSISTENT(comm, info, request, fn,
               allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request,
                         fn));
}

BMPI_API(MPI_Allgatherv_init)
int PMPI_Allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                         const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                         MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    const char *fn = "MPI_Allgatherv_init";
    PERSISTENT(comm, info, request, fn,
               allgatherv(sendbuf, sendcount, sendtype, recvbuf, BMPI_COUNTS(recvcounts),
                          BMPI_DISPLS(displs), recvtype, comm, request, fn));
}

BMPI_API(MPI_Allgatherv_init_c)
int PMPI_Allgatherv_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                           void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                           MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                           MPI_Request *request)
{
    const char *fn = "MPI_Allgatherv_init_c";
    PERSISTENT(comm, info, request, fn,
               allgatherv(sendbuf, sendcount, sendtype, recvbuf, BMPI_COUNTS(recvcounts),
                          BMPI_DISPLS(displs), recvtype, comm, request, fn));
}

BMPI_API(MPI_Alltoall_init)
int PMPI_Alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                       int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                       MPI_Request *request)
{
    const char *fn = "MPI_Alltoall_init";
    PERSISTENT(comm, info, request, fn,
               alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request,
                        fn));
}

BMPI_API(MPI_Alltoall_init_c)
int PMPI_Alltoall_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                         void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                         MPI_Info info, MPI_Request *request)
{
    const char *fn = "MPI_Alltoall_init_c";
    PERSISTENT(comm, info, request, fn,
               alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request,
                        fn));
}

BMPI_API(MPI_Alltoallv_init)
int PMPI_Alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                        MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                        const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                        MPI_Request *request)
{
    const char *fn = "MPI_Alltoallv_init";
    PERSISTENT(comm, info, request, fn,
               alltoallvw(sendbuf, BMPI_COUNTS(sendcounts), BMPI_DISPLS(sdispls), NULL, sendtype,
                          recvbuf, BMPI_COUNTS(recvcounts), BMPI_DISPLS(rdispls), NULL, recvtype,
                          comm, request, fn));
}

BMPI_API(MPI_Alltoallv_init_c)
int PMPI_Alltoallv_init_c(const void *sendbuf, const MPI_Count sendcounts[],
                          const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                          const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                          MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    const char *fn = "MPI_Alltoallv_init_c";
    PERSISTENT(comm, info, request, fn,
               alltoallvw(sendbuf, BMPI_COUNTS(sendcounts), BMPI_DISPLS(sdispls), NULL, sendtype,
                          recvbuf, BMPI_COUNTS(recvcounts), BMPI_DISPLS(rdispls), NULL, recvtype,
                          comm, request, fn));
}

BMPI_API(MPI_Alltoallw_init)
int PMPI_Alltoallw_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                        const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                        const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                        MPI_Info info, MPI_Request *request)
{
    const char *fn = "MPI_Alltoallw_init";
    PERSISTENT(comm, info, request, fn,
               alltoallvw(sendbuf, BMPI_COUNTS(sendcounts), BMPI_DISPLS(sdispls), sendtypes,
                          MPI_DATATYPE_NULL, recvbuf, BMPI_COUNTS(recvcounts), BMPI_DISPLS(rdispls),
                          recvtypes, MPI_DATATYPE_NULL, comm, request, fn));
}

BMPI_API(MPI_Alltoallw_init_c)
int PMPI_Alltoallw_init_c(const void *sendbuf, const MPI_Count sendcounts[],
                          const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf,
                          const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                          const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
                          MPI_Request *request)
{
    const char *fn = "MPI_Alltoallw_init_c";
    PERSISTENT(comm, info, request, fn,
               alltoallvw(sendbuf, BMPI_COUNTS(sendcounts), BMPI_DISPLS(sdispls), sendtypes,
                          MPI_DATATYPE_NULL, recvbuf, BMPI_COUNTS(recvcounts), BMPI_DISPLS(rdispls),
                          recvtypes, MPI_DATATYPE_NULL, comm, request, fn));
}

BMPI_API(MPI_Reduce_scatter_init)
int PMPI_Reduce_scatter_init(const void *sendbuf, void *recvbuf, const int recvcounts[],
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                             MPI_Request *request)
{
    const char *fn = "MPI_Reduce_scatter_init";
    if (!recvcounts)
        return bmpi_err_comm(comm, MPI_ERR_ARG, fn, "recvcounts is NULL");
    PERSISTENT(comm, info, request, fn,
               reduce_scatter(sendbuf, recvbuf, BMPI_COUNTS(recvcounts), 0, datatype, op, comm,
                              request, fn));
}

BMPI_API(MPI_Reduce_scatter_init_c)
int PMPI_Reduce_scatter_init_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                               MPI_Request *request)
{
    const char *fn = "MPI_Reduce_scatter_init_c";
    if (!recvcounts)
        return bmpi_err_comm(comm, MPI_ERR_ARG, fn, "recvcounts is NULL");
    PERSISTENT(comm, info, request, fn,
               reduce_scatter(sendbuf, recvbuf, BMPI_COUNTS(recvcounts), 0, datatype, op, comm,
                              request, fn));
}

BMPI_API(MPI_Reduce_scatter_block_init)
int PMPI_Reduce_scatter_block_init(const void *sendbuf, void *recvbuf, int recvcount,
                                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                   MPI_Request *request)
{
    const char *fn = "MPI_Reduce_scatter_block_init";
    PERSISTENT(comm, info, request, fn,
               reduce_scatter(sendbuf, recvbuf, (struct bmpi_counts){0}, recvcount, datatype, op,
                              comm, request, fn));
}

BMPI_API(MPI_Reduce_scatter_block_init_c)
int PMPI_Reduce_scatter_block_init_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                     MPI_Request *request)
{
    const char *fn = "MPI_Reduce_scatter_block_init_c";
    PERSISTENT(comm, info, request, fn,
               reduce_scatter(sendbuf, recvbuf, (struct bmpi_counts){0}, recvcount, datatype, op,
                              comm, request, fn));
}

BMPI_API(MPI_Scan_init)
int PMPI_Scan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    const char *fn = "MPI_Scan_init";
    PERSISTENT(comm, info, request, fn,
               scan(sendbuf, recvbuf, count, datatype, op, comm, request, false, fn));
}

BMPI_API(MPI_Scan_init_c)
int PMPI_Scan_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                     MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    const char *fn = "MPI_Scan_init_c";
    PERSISTENT(comm, info, request, fn,
               scan(sendbuf, recvbuf, count, datatype, op, comm, request, false, fn));
}

BMPI_API(MPI_Exscan_init)
int PMPI_Exscan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                     MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    const char *fn = "MPI_Exscan_init";
    PERSISTENT(comm, info, request, fn,
               scan(sendbuf, recvbuf, count, datatype, op, comm, request, true, fn));
}

BMPI_API(MPI_Exscan_init_c)
int PMPI_Exscan_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                       MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    const char *fn = "MPI_Exscan_init_c";
    PERSISTENT(comm, info, request, fn,
               scan(sendbuf, recvbuf, count, datatype, op, comm, request, true, fn));
}
