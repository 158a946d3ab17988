/*
 * Neighbourhood collectives over a communicator's topology, on the
 * internal point-to-point of its collective context: every receive posted,
 * then every send, then wait. MPI_PROC_NULL neighbours (open cartesian
 * borders) move nothing.
 *
 * Tags come from comm->coll_seq like every collective's. On a cartesian
 * topology each of the 2*ndims directions gets its own tag, because with a
 * periodic dimension of size 1 or 2 the -1 and +1 neighbours are the same
 * process and order alone cannot tell which block is which: the block sent
 * to the -1 neighbour lands in that neighbour's "+1" slot and vice versa.
 *
 * The nonblocking variants post the same receives and sends and return a
 * request that completes when the last of them does (a count in
 * pending_ops, decremented by each part's completion hook). The persistent
 * ones (MPI_Neighbor_*_init) are not implemented yet.
 */
#include "config.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

#include "runtime/api.h"
#include "runtime/comm.h"
#include "runtime/counts.h"
#include "runtime/datatype.h"
#include "runtime/p2p.h"
#include "runtime/topo.h"

struct block {
    char *buf;
    size_t count;
    MPI_Datatype type;
};

/* whole == NULL: blocking. Else the parts are adopted by whole, which
 * holds one extra count until everything is posted. */
static int exchange(struct bmpi_comm *c, int nin, const int *in, const struct block *rb, int nout, const int *out,
                    const struct block *sb, struct bmpi_request *whole)
{
    const struct bmpi_topo *t = c->topo;
    int cart = t->kind == MPI_CART;
    uint32_t base = c->coll_seq;
    c->coll_seq += cart ? (uint32_t)(2 * t->ndims) : 1u;
    uint32_t cid = c->context_id + 1;
    struct bmpi_request **reqs = malloc(((size_t)nin + (size_t)nout + 1) * sizeof(*reqs));
    if (!reqs)
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory for %d requests", nin + nout);
    int n = 0, err = BMPI_OK;
    for (int i = 0; i < nin && !err; i++) {
        if (in[i] == MPI_PROC_NULL)
            continue;
        int tag = (int)((base + (cart ? (uint32_t)i : 0u)) & INT_MAX);
        err = bmpi_irecv(rb[i].buf, rb[i].count, rb[i].type, in[i], tag, c, cid, &reqs[n]);
        if (!err && whole)
            bmpi_request_adopt(whole, reqs[n], false);
        else if (!err)
            n++;
    }
    for (int i = 0; i < nout && !err; i++) {
        if (out[i] == MPI_PROC_NULL)
            continue;
        int tag = (int)((base + (cart ? (uint32_t)(i ^ 1) : 0u)) & INT_MAX);
        err = bmpi_isend(sb[i].buf, sb[i].count, sb[i].type, out[i], tag, c, cid, BMPI_SEND_STANDARD, &reqs[n]);
        if (!err && whole)
            bmpi_request_adopt(whole, reqs[n], false);
        else if (!err)
            n++;
    }
    for (int i = 0; i < n; i++) {
        int e = bmpi_request_wait(reqs[i], MPI_STATUS_IGNORE);
        if (!err)
            err = e;
    }
    free(reqs);
    return err;
}

enum nkind { ALLGATHER, ALLGATHERV, ALLTOALL, ALLTOALLV, ALLTOALLW };

struct nargs {
    const char *fn;
    enum nkind kind;
    MPI_Comm comm;
    const void *sendbuf;
    MPI_Count sendcount;
    struct bmpi_counts sendcounts;
    struct bmpi_displs sdispls;
    const MPI_Aint *sdisplsw;
    MPI_Datatype sendtype;
    const MPI_Datatype *sendtypes;
    void *recvbuf;
    MPI_Count recvcount;
    struct bmpi_counts recvcounts;
    struct bmpi_displs rdispls;
    const MPI_Aint *rdisplsw;
    MPI_Datatype recvtype;
    const MPI_Datatype *recvtypes;
};

static MPI_Aint extent_of(MPI_Datatype t)
{
    struct bmpi_datatype *dt = bmpi_dt_get(t);
    return dt ? bmpi_dt_extent(dt) : 0;
}

/* A block's address: buf + off in integers, since buf may be MPI_BOTTOM
 * (NULL) and off an absolute address (MPI_Get_address); the buffer check
 * then sees where the block really is. */
static char *block_at(const void *buf, MPI_Aint off)
{
    return (char *)((uintptr_t)buf + (uintptr_t)off);
}

static int neighbor(const struct nargs *a, MPI_Request *request)
{
    struct bmpi_comm *c;
    int err = bmpi_check_intracomm(a->comm, a->fn, &c);
    if (err)
        return err;
    if (!c->topo)
        return bmpi_err_comm(a->comm, MPI_ERR_TOPOLOGY, a->fn, "communicator 0x%x has no topology",
                             (unsigned)a->comm);
    if (a->sendbuf == MPI_IN_PLACE || a->recvbuf == MPI_IN_PLACE)
        return bmpi_err_comm(a->comm, MPI_ERR_BUFFER, a->fn, "MPI_IN_PLACE is not allowed here");
    int nin, nout, *in, *out;
    if ((err = bmpi_topo_neighbors(c->topo, c->rank, &nin, &in, &nout, &out)))
        return bmpi_err_comm(a->comm, err, a->fn, NULL);
    struct block *rb = malloc(((size_t)nin + 1) * sizeof(*rb));
    struct block *sb = malloc(((size_t)nout + 1) * sizeof(*sb));
    if (!rb || !sb) {
        err = bmpi_err_comm(a->comm, MPI_ERR_NO_MEM, a->fn, "out of memory");
        goto out;
    }
    int vec = a->kind == ALLTOALLV || a->kind == ALLTOALLW;
    if ((a->kind == ALLGATHERV || vec) && nin > 0 &&
        (bmpi_counts_null(a->recvcounts) || !(a->rdispls.i || a->rdispls.w || a->rdisplsw))) {
        err = bmpi_err_comm(a->comm, MPI_ERR_ARG, a->fn, "recvcounts or rdispls is NULL");
        goto out;
    }
    if (vec && nout > 0 &&
        (bmpi_counts_null(a->sendcounts) || !(a->sdispls.i || a->sdispls.w || a->sdisplsw))) {
        err = bmpi_err_comm(a->comm, MPI_ERR_ARG, a->fn, "sendcounts or sdispls is NULL");
        goto out;
    }
    if (a->kind == ALLTOALLW && ((nin > 0 && !a->recvtypes) || (nout > 0 && !a->sendtypes))) {
        err = bmpi_err_comm(a->comm, MPI_ERR_ARG, a->fn, "sendtypes or recvtypes is NULL");
        goto out;
    }
    MPI_Aint rext = a->kind == ALLTOALLW ? 0 : extent_of(a->recvtype);
    MPI_Aint sext = a->kind == ALLTOALLW ? 0 : extent_of(a->sendtype);
    for (int i = 0; i < nin; i++) {
        MPI_Count cnt;
        MPI_Datatype ty = a->recvtype;
        MPI_Aint off;
        switch (a->kind) {
        case ALLGATHER:
        case ALLTOALL: cnt = a->recvcount; off = (MPI_Aint)i * cnt * rext; break;
        case ALLGATHERV:
        case ALLTOALLV:
            cnt = bmpi_count_at(a->recvcounts, i);
            off = bmpi_displ_at(a->rdispls, i) * rext;
            break;
        default:
            cnt = bmpi_count_at(a->recvcounts, i);
            ty = a->recvtypes[i];
            off = a->rdisplsw[i];
            break;
        }
        char *at = block_at(a->recvbuf, off);
        if ((err = bmpi_check_buffer(a->comm, a->fn, at, cnt, ty)))
            goto out;
        rb[i] = (struct block){at, (size_t)cnt, ty};
    }
    for (int i = 0; i < nout; i++) {
        MPI_Count cnt;
        MPI_Datatype ty = a->sendtype;
        MPI_Aint off;
        switch (a->kind) {
        case ALLGATHER:
        case ALLGATHERV: cnt = a->sendcount; off = 0; break;
        case ALLTOALL: cnt = a->sendcount; off = (MPI_Aint)i * cnt * sext; break;
        case ALLTOALLV:
            cnt = bmpi_count_at(a->sendcounts, i);
            off = bmpi_displ_at(a->sdispls, i) * sext;
            break;
        default:
            cnt = bmpi_count_at(a->sendcounts, i);
            ty = a->sendtypes[i];
            off = a->sdisplsw[i];
            break;
        }
        char *at = block_at(a->sendbuf, off);
        if ((err = bmpi_check_buffer(a->comm, a->fn, at, cnt, ty)))
            goto out;
        sb[i] = (struct block){at, (size_t)cnt, ty};
    }
    if (!request) {
        if ((err = exchange(c, nin, in, rb, nout, out, sb, NULL)))
            err = bmpi_err_comm(a->comm, err, a->fn, NULL);
        goto out;
    }
    struct bmpi_request *whole = bmpi_request_new(BMPI_REQ_COMPOSITE);
    if (!whole || bmpi_request_handle(whole) == MPI_REQUEST_NULL) {
        if (whole)
            bmpi_request_free(whole);
        err = bmpi_err_comm(a->comm, MPI_ERR_NO_MEM, a->fn, "out of memory for the request");
        goto out;
    }
    whole->pending_ops = 1; /* held until every part is posted */
    int xerr = exchange(c, nin, in, rb, nout, out, sb, whole);
    if (xerr && !whole->status.MPI_ERROR)
        whole->status.MPI_ERROR = xerr;
    /* parts already posted still complete into whole; it reports the error */
    *request = whole->handle;
    bmpi_request_part_done_all(whole);
    if (xerr)
        err = bmpi_err_comm(a->comm, xerr, a->fn, NULL);
out:
    free(rb);
    free(sb);
    free(in);
    free(out);
    return err;
}

BMPI_API(MPI_Neighbor_allgather)
int PMPI_Neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                            int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return neighbor(&(struct nargs){.fn = "MPI_Neighbor_allgather", .kind = ALLGATHER, .comm = comm,
                                    .sendbuf = sendbuf, .sendcount = sendcount, .sendtype = sendtype,
                                    .recvbuf = recvbuf, .recvcount = recvcount, .recvtype = recvtype}, NULL);
}

BMPI_API(MPI_Neighbor_allgather_c)
int PMPI_Neighbor_allgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                              void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                              MPI_Comm comm)
{
    return neighbor(&(struct nargs){.fn = "MPI_Neighbor_allgather_c", .kind = ALLGATHER, .comm = comm,
                                    .sendbuf = sendbuf, .sendcount = sendcount, .sendtype = sendtype,
                                    .recvbuf = recvbuf, .recvcount = recvcount, .recvtype = recvtype}, NULL);
}

BMPI_API(MPI_Neighbor_allgatherv)
int PMPI_Neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                             const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm)
{
    return neighbor(&(struct nargs){.fn = "MPI_Neighbor_allgatherv", .kind = ALLGATHERV, .comm = comm,
                                    .sendbuf = sendbuf, .sendcount = sendcount, .sendtype = sendtype,
                                    .recvbuf = recvbuf, .recvcounts = BMPI_COUNTS(recvcounts),
                                    .rdispls = BMPI_DISPLS(displs), .recvtype = recvtype}, NULL);
}

BMPI_API(MPI_Neighbor_allgatherv_c)
int PMPI_Neighbor_allgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                               void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                               MPI_Datatype recvtype, MPI_Comm comm)
{
    return neighbor(&(struct nargs){.fn = "MPI_Neighbor_allgatherv_c", .kind = ALLGATHERV, .comm = comm,
                                    .sendbuf = sendbuf, .sendcount = sendcount, .sendtype = sendtype,
                                    .recvbuf = recvbuf, .recvcounts = BMPI_COUNTS(recvcounts),
                                    .rdispls = BMPI_DISPLS(displs), .recvtype = recvtype}, NULL);
}

BMPI_API(MPI_Neighbor_alltoall)
int PMPI_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                           int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return neighbor(&(struct nargs){.fn = "MPI_Neighbor_alltoall", .kind = ALLTOALL, .comm = comm,
                                    .sendbuf = sendbuf, .sendcount = sendcount, .sendtype = sendtype,
                                    .recvbuf = recvbuf, .recvcount = recvcount, .recvtype = recvtype}, NULL);
}

BMPI_API(MPI_Neighbor_alltoall_c)
int PMPI_Neighbor_alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                             void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                             MPI_Comm comm)
{
    return neighbor(&(struct nargs){.fn = "MPI_Neighbor_alltoall_c", .kind = ALLTOALL, .comm = comm,
                                    .sendbuf = sendbuf, .sendcount = sendcount, .sendtype = sendtype,
                                    .recvbuf = recvbuf, .recvcount = recvcount, .recvtype = recvtype}, NULL);
}

BMPI_API(MPI_Neighbor_alltoallv)
int PMPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],
                            MPI_Datatype recvtype, MPI_Comm comm)
{
    return neighbor(&(struct nargs){.fn = "MPI_Neighbor_alltoallv", .kind = ALLTOALLV, .comm = comm,
                                    .sendbuf = sendbuf, .sendcounts = BMPI_COUNTS(sendcounts),
                                    .sdispls = BMPI_DISPLS(sdispls), .sendtype = sendtype,
                                    .recvbuf = recvbuf, .recvcounts = BMPI_COUNTS(recvcounts),
                                    .rdispls = BMPI_DISPLS(rdispls), .recvtype = recvtype}, NULL);
}

BMPI_API(MPI_Neighbor_alltoallv_c)
int PMPI_Neighbor_alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[],
                              const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                              const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                              MPI_Datatype recvtype, MPI_Comm comm)
{
    return neighbor(&(struct nargs){.fn = "MPI_Neighbor_alltoallv_c", .kind = ALLTOALLV, .comm = comm,
                                    .sendbuf = sendbuf, .sendcounts = BMPI_COUNTS(sendcounts),
                                    .sdispls = BMPI_DISPLS(sdispls), .sendtype = sendtype,
                                    .recvbuf = recvbuf, .recvcounts = BMPI_COUNTS(recvcounts),
                                    .rdispls = BMPI_DISPLS(rdispls), .recvtype = recvtype}, NULL);
}

BMPI_API(MPI_Neighbor_alltoallw)
int PMPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                            const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    return neighbor(&(struct nargs){.fn = "MPI_Neighbor_alltoallw", .kind = ALLTOALLW, .comm = comm,
                                    .sendbuf = sendbuf, .sendcounts = BMPI_COUNTS(sendcounts),
                                    .sdisplsw = sdispls, .sendtypes = sendtypes, .recvbuf = recvbuf,
                                    .recvcounts = BMPI_COUNTS(recvcounts), .rdisplsw = rdispls,
                                    .recvtypes = recvtypes}, NULL);
}

BMPI_API(MPI_Neighbor_alltoallw_c)
int PMPI_Neighbor_alltoallw_c(const void *sendbuf, const MPI_Count sendcounts[],
                              const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                              void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                              const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    return neighbor(&(struct nargs){.fn = "MPI_Neighbor_alltoallw_c", .kind = ALLTOALLW, .comm = comm,
                                    .sendbuf = sendbuf, .sendcounts = BMPI_COUNTS(sendcounts),
                                    .sdisplsw = sdispls, .sendtypes = sendtypes, .recvbuf = recvbuf,
                                    .recvcounts = BMPI_COUNTS(recvcounts), .rdisplsw = rdispls,
                                    .recvtypes = recvtypes}, NULL);
}

static int check_request(MPI_Comm comm, const char *fn, MPI_Request *request)
{
    return request ? MPI_SUCCESS : bmpi_err_comm(comm, MPI_ERR_ARG, fn, "request is NULL");
}

BMPI_API(MPI_Ineighbor_allgather)
int PMPI_Ineighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                             int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    int err = check_request(comm, "MPI_Ineighbor_allgather", request);
    return err ? err
               : neighbor(&(struct nargs){.fn = "MPI_Ineighbor_allgather", .kind = ALLGATHER, .comm = comm,
                                          .sendbuf = sendbuf, .sendcount = sendcount, .sendtype = sendtype,
                                          .recvbuf = recvbuf, .recvcount = recvcount, .recvtype = recvtype},
                          request);
}

BMPI_API(MPI_Ineighbor_allgather_c)
int PMPI_Ineighbor_allgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                               void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                               MPI_Comm comm, MPI_Request *request)
{
    int err = check_request(comm, "MPI_Ineighbor_allgather_c", request);
    return err ? err
               : neighbor(&(struct nargs){.fn = "MPI_Ineighbor_allgather_c", .kind = ALLGATHER, .comm = comm,
                                          .sendbuf = sendbuf, .sendcount = sendcount, .sendtype = sendtype,
                                          .recvbuf = recvbuf, .recvcount = recvcount, .recvtype = recvtype},
                          request);
}

BMPI_API(MPI_Ineighbor_allgatherv)
int PMPI_Ineighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                              const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                              MPI_Request *request)
{
    int err = check_request(comm, "MPI_Ineighbor_allgatherv", request);
    return err ? err
               : neighbor(&(struct nargs){.fn = "MPI_Ineighbor_allgatherv", .kind = ALLGATHERV,
                                          .comm = comm, .sendbuf = sendbuf, .sendcount = sendcount,
                                          .sendtype = sendtype, .recvbuf = recvbuf,
                                          .recvcounts = BMPI_COUNTS(recvcounts),
                                          .rdispls = BMPI_DISPLS(displs), .recvtype = recvtype},
                          request);
}

BMPI_API(MPI_Ineighbor_allgatherv_c)
int PMPI_Ineighbor_allgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                void *recvbuf, const MPI_Count recvcounts[],
                                const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm,
                                MPI_Request *request)
{
    int err = check_request(comm, "MPI_Ineighbor_allgatherv_c", request);
    return err ? err
               : neighbor(&(struct nargs){.fn = "MPI_Ineighbor_allgatherv_c", .kind = ALLGATHERV,
                                          .comm = comm, .sendbuf = sendbuf, .sendcount = sendcount,
                                          .sendtype = sendtype, .recvbuf = recvbuf,
                                          .recvcounts = BMPI_COUNTS(recvcounts),
                                          .rdispls = BMPI_DISPLS(displs), .recvtype = recvtype},
                          request);
}

BMPI_API(MPI_Ineighbor_alltoall)
int PMPI_Ineighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                            int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    int err = check_request(comm, "MPI_Ineighbor_alltoall", request);
    return err ? err
               : neighbor(&(struct nargs){.fn = "MPI_Ineighbor_alltoall", .kind = ALLTOALL, .comm = comm,
                                          .sendbuf = sendbuf, .sendcount = sendcount, .sendtype = sendtype,
                                          .recvbuf = recvbuf, .recvcount = recvcount, .recvtype = recvtype},
                          request);
}

BMPI_API(MPI_Ineighbor_alltoall_c)
int PMPI_Ineighbor_alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                              void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                              MPI_Comm comm, MPI_Request *request)
{
    int err = check_request(comm, "MPI_Ineighbor_alltoall_c", request);
    return err ? err
               : neighbor(&(struct nargs){.fn = "MPI_Ineighbor_alltoall_c", .kind = ALLTOALL, .comm = comm,
                                          .sendbuf = sendbuf, .sendcount = sendcount, .sendtype = sendtype,
                                          .recvbuf = recvbuf, .recvcount = recvcount, .recvtype = recvtype},
                          request);
}

BMPI_API(MPI_Ineighbor_alltoallv)
int PMPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                             MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],
                             MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    int err = check_request(comm, "MPI_Ineighbor_alltoallv", request);
    return err ? err
               : neighbor(&(struct nargs){.fn = "MPI_Ineighbor_alltoallv", .kind = ALLTOALLV, .comm = comm,
                                          .sendbuf = sendbuf, .sendcounts = BMPI_COUNTS(sendcounts),
                                          .sdispls = BMPI_DISPLS(sdispls), .sendtype = sendtype,
                                          .recvbuf = recvbuf, .recvcounts = BMPI_COUNTS(recvcounts),
                                          .rdispls = BMPI_DISPLS(rdispls), .recvtype = recvtype},
                          request);
}

BMPI_API(MPI_Ineighbor_alltoallv_c)
int PMPI_Ineighbor_alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[],
                               const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                               const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                               MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    int err = check_request(comm, "MPI_Ineighbor_alltoallv_c", request);
    return err ? err
               : neighbor(&(struct nargs){.fn = "MPI_Ineighbor_alltoallv_c", .kind = ALLTOALLV,
                                          .comm = comm, .sendbuf = sendbuf,
                                          .sendcounts = BMPI_COUNTS(sendcounts),
                                          .sdispls = BMPI_DISPLS(sdispls), .sendtype = sendtype,
                                          .recvbuf = recvbuf, .recvcounts = BMPI_COUNTS(recvcounts),
                                          .rdispls = BMPI_DISPLS(rdispls), .recvtype = recvtype},
                          request);
}

BMPI_API(MPI_Ineighbor_alltoallw)
int PMPI_Ineighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                             const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                             const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                             MPI_Request *request)
{
    int err = check_request(comm, "MPI_Ineighbor_alltoallw", request);
    return err ? err
               : neighbor(&(struct nargs){.fn = "MPI_Ineighbor_alltoallw", .kind = ALLTOALLW, .comm = comm,
                                          .sendbuf = sendbuf, .sendcounts = BMPI_COUNTS(sendcounts),
                                          .sdisplsw = sdispls, .sendtypes = sendtypes, .recvbuf = recvbuf,
                                          .recvcounts = BMPI_COUNTS(recvcounts), .rdisplsw = rdispls,
                                          .recvtypes = recvtypes},
                          request);
}

BMPI_API(MPI_Ineighbor_alltoallw_c)
int PMPI_Ineighbor_alltoallw_c(const void *sendbuf, const MPI_Count sendcounts[],
                               const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                               void *recvbuf, const MPI_Count recvcounts[],
                               const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                               MPI_Comm comm, MPI_Request *request)
{
    int err = check_request(comm, "MPI_Ineighbor_alltoallw_c", request);
    return err ? err
               : neighbor(&(struct nargs){.fn = "MPI_Ineighbor_alltoallw_c", .kind = ALLTOALLW,
                                          .comm = comm, .sendbuf = sendbuf,
                                          .sendcounts = BMPI_COUNTS(sendcounts), .sdisplsw = sdispls,
                                          .sendtypes = sendtypes, .recvbuf = recvbuf,
                                          .recvcounts = BMPI_COUNTS(recvcounts), .rdisplsw = rdispls,
                                          .recvtypes = recvtypes},
                          request);
}
