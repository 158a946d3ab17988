/*
 * MPI_BOTTOM with datatypes built on absolute addresses (MPI_Get_address),
 * in every collective (blocking, nonblocking, persistent), every
 * neighbourhood collective and the point-to-point calls: each call moves
 * the data its types describe, whatever the buffer arguments compare
 * equal to. bottom.sh runs it on the shared-memory path of the blocking
 * collectives and on the point-to-point schedules.
 *
 * Two type shapes: spread(x, n), a struct of n ints at x[0], x[2], ...
 * x[2n-2] (not contiguous), and at(x), one int at x[0] (hindexed, which
 * predefined ops accept), so that count n of it is x[0 .. n-1]
 * (contiguous with an absolute lower bound, the shape the shared-memory
 * reductions take). A call with one type for two buffers
 * gives MPI_BOTTOM for one and, for the other, the distance between the
 * two arrays (MPI_Aint_diff), so the same absolute displacements land in
 * the second array.
 */
#include <mpi.h>
#include <stdint.h>

#include "coll_util.h"

enum mode { BLOCKING, NONBLOCKING, PERSISTENT };
static const char *mode_name[] = {"blocking", "nonblocking", "persistent"};

/* A collective in one of its three forms, completed. */
#define COLL(mode, Name, IName, ...)                                                               \
    do {                                                                                           \
        MPI_Request rq_;                                                                           \
        if ((mode) == BLOCKING) {                                                                  \
            MPICHK(MPI_##Name(__VA_ARGS__));                                                       \
        } else if ((mode) == NONBLOCKING) {                                                        \
            MPICHK(MPI_##IName(__VA_ARGS__, &rq_));                                                \
            MPICHK(MPI_Wait(&rq_, MPI_STATUS_IGNORE));                                             \
        } else {                                                                                   \
            MPICHK(MPI_##Name##_init(__VA_ARGS__, MPI_INFO_NULL, &rq_));                           \
            MPICHK(MPI_Start(&rq_));                                                               \
            MPICHK(MPI_Wait(&rq_, MPI_STATUS_IGNORE));                                             \
            MPICHK(MPI_Request_free(&rq_));                                                        \
        }                                                                                          \
    } while (0)

#define UNSET (-77777)

static int val(int r, int i) { return r * 100000 + i + 1; }

static MPI_Aint addr(const void *p)
{
    MPI_Aint a;
    MPICHK(MPI_Get_address(p, &a));
    return a;
}

static MPI_Datatype spread(const int *x, int n)
{
    int *len = malloc((size_t)n * sizeof(int));
    MPI_Aint *disp = malloc((size_t)n * sizeof(MPI_Aint));
    MPI_Datatype *types = malloc((size_t)n * sizeof(MPI_Datatype)), t;
    for (int j = 0; j < n; j++) {
        len[j] = 1;
        disp[j] = addr(&x[2 * j]);
        types[j] = MPI_INT;
    }
    MPICHK(MPI_Type_create_struct(n, len, disp, types, &t));
    MPICHK(MPI_Type_commit(&t));
    free(len);
    free(disp);
    free(types);
    return t;
}

static MPI_Datatype at(const int *x)
{
    int one = 1;
    MPI_Aint disp = addr(x);
    MPI_Datatype t;
    MPICHK(MPI_Type_create_hindexed(1, &one, &disp, MPI_INT, &t));
    MPICHK(MPI_Type_commit(&t));
    return t;
}

/* The buffer argument that puts x's absolute displacements into y. */
static void *shifted(const int *y, const int *x)
{
    return (void *)(intptr_t)MPI_Aint_diff(addr(y), addr(x));
}

static int *ints(size_t n, int v)
{
    int *x = malloc((n ? n : 1) * sizeof(int));
    if (!x)
        FAIL("out of memory");
    for (size_t i = 0; i < n; i++)
        x[i] = v;
    return x;
}

static void expect(const int *x, int i, int want, const char *what, const char *mode, int n)
{
    if (x[i] != want)
        FAIL("%s (%s, n %d): element %d is %d, expected %d", what, mode, n, i, x[i], want);
}

/* --- rooted and all-to-all data movement ---------------------------------- */

static void release(MPI_Datatype *ts, MPI_Datatype *tr, int *s, int *r, int *counts, int *displs)
{
    MPICHK(MPI_Type_free(ts));
    MPICHK(MPI_Type_free(tr));
    free(s);
    free(r);
    free(counts);
    free(displs);
}

static void bcast(enum mode m, int n, MPI_Comm comm, int me, int p)
{
    int root = p - 1, *a = ints(2 * (size_t)n, UNSET);
    for (int j = 0; j < n && me == root; j++)
        a[2 * j] = val(root, j);
    MPI_Datatype t = spread(a, n), c = at(a + 1);
    COLL(m, Bcast, Ibcast, MPI_BOTTOM, 1, t, root, comm);
    for (int j = 0; j < n; j++) {
        expect(a, 2 * j, val(root, j), "bcast spread", mode_name[m], n);
        expect(a, 2 * j + 1, UNSET, "bcast spread gap", mode_name[m], n);
    }
    /* contiguous from an absolute address: a[1 .. 2n-1] */
    for (int j = 0; j < 2 * n - 1 && me == root; j++)
        a[1 + j] = val(root, j);
    COLL(m, Bcast, Ibcast, MPI_BOTTOM, 2 * n - 1, c, root, comm);
    for (int j = 0; j < 2 * n - 1; j++)
        expect(a, 1 + j, val(root, j), "bcast contiguous", mode_name[m], n);
    MPI_Type_free(&t);
    MPI_Type_free(&c);
    free(a);
}

static void gather_scatter(enum mode m, int n, MPI_Comm comm, int me, int p)
{
    int root = p / 2, *s = ints(2 * (size_t)n * p, UNSET), *r = ints((size_t)(n + 1) * p, UNSET);
    int *counts = ints((size_t)p, n), *displs = ints((size_t)p, 0);
    for (int i = 0; i < p; i++)
        displs[i] = i * (n + 1);
    for (int j = 0; j < n; j++)
        s[2 * j] = val(me, j);
    MPI_Datatype ts = spread(s, n), tr = at(r);
    COLL(m, Gather, Igather, MPI_BOTTOM, 1, ts, MPI_BOTTOM, n, tr, root, comm);
    for (int i = 0; i < p * n && me == root; i++)
        expect(r, i, val(i / n, i % n), "gather", mode_name[m], n);
    for (int i = 0; i < (n + 1) * p; i++)
        r[i] = UNSET;
    COLL(m, Gatherv, Igatherv, MPI_BOTTOM, 1, ts, MPI_BOTTOM, counts, displs, tr, root, comm);
    for (int i = 0; i < p && me == root; i++)
        for (int j = 0; j < n; j++)
            expect(r, displs[i] + j, val(i, j), "gatherv", mode_name[m], n);
    /* back: the root's r holds rank i's block at displs[i] */
    for (int i = 0; i < p; i++)
        for (int j = 0; j < n; j++)
            r[displs[i] + j] = val(i + 7, j);
    for (int j = 0; j < n; j++)
        s[2 * j] = UNSET;
    COLL(m, Scatterv, Iscatterv, MPI_BOTTOM, counts, displs, tr, MPI_BOTTOM, 1, ts, root, comm);
    for (int j = 0; j < n; j++)
        expect(s, 2 * j, val(me + 7, j), "scatterv", mode_name[m], n);
    for (int i = 0; i < p * n; i++)
        r[i] = val(i / n + 3, i % n);
    COLL(m, Scatter, Iscatter, MPI_BOTTOM, n, tr, MPI_BOTTOM, 1, ts, root, comm);
    for (int j = 0; j < n; j++)
        expect(s, 2 * j, val(me + 3, j), "scatter", mode_name[m], n);
    release(&ts, &tr, s, r, counts, displs);
}

static void allgather(enum mode m, int n, MPI_Comm comm, int me, int p)
{
    int *s = ints(2 * (size_t)n, UNSET), *r = ints((size_t)(n + 1) * p, UNSET);
    int *counts = ints((size_t)p, n), *displs = ints((size_t)p, 0);
    for (int i = 0; i < p; i++)
        displs[i] = (p - 1 - i) * (n + 1);
    for (int j = 0; j < n; j++)
        s[2 * j] = val(me, j);
    MPI_Datatype ts = spread(s, n), tr = at(r);
    COLL(m, Allgather, Iallgather, MPI_BOTTOM, 1, ts, MPI_BOTTOM, n, tr, comm);
    for (int i = 0; i < p * n; i++)
        expect(r, i, val(i / n, i % n), "allgather", mode_name[m], n);
    for (int i = 0; i < (n + 1) * p; i++)
        r[i] = UNSET;
    COLL(m, Allgatherv, Iallgatherv, MPI_BOTTOM, 1, ts, MPI_BOTTOM, counts, displs, tr, comm);
    for (int i = 0; i < p; i++)
        for (int j = 0; j < n; j++)
            expect(r, displs[i] + j, val(i, j), "allgatherv", mode_name[m], n);
    release(&ts, &tr, s, r, counts, displs);
}

static void alltoall(enum mode m, int n, MPI_Comm comm, int me, int p)
{
    size_t all = (size_t)(n + 1) * p;
    int *s = ints(2 * all, UNSET), *r = ints(all, UNSET);
    int *counts = ints((size_t)p, n), *sd = ints((size_t)p, 0), *rd = ints((size_t)p, 0);
    int *zero = ints((size_t)p, 0), *ones = ints((size_t)p, 1);
    for (int i = 0; i < p * n; i++)
        s[i] = val(me, i);
    MPI_Datatype ts = at(s), tr = at(r);
    COLL(m, Alltoall, Ialltoall, MPI_BOTTOM, n, ts, MPI_BOTTOM, n, tr, comm);
    for (int i = 0; i < p * n; i++)
        expect(r, i, val(i / n, me * n + i % n), "alltoall", mode_name[m], n);
    for (int i = 0; i < p; i++) {
        sd[i] = i * n;
        rd[i] = (p - 1 - i) * (n + 1);
    }
    for (size_t i = 0; i < all; i++)
        r[i] = UNSET;
    COLL(m, Alltoallv, Ialltoallv, MPI_BOTTOM, counts, sd, ts, MPI_BOTTOM, counts, rd, tr, comm);
    for (int i = 0; i < p; i++)
        for (int j = 0; j < n; j++)
            expect(r, rd[i] + j, val(i, me * n + j), "alltoallv", mode_name[m], n);
    /* w: one absolute type per peer, displacements 0; the block for peer
     * i is spread over s[2ni ...] */
    MPI_Datatype *st = malloc((size_t)p * sizeof(MPI_Datatype)), *rt = malloc((size_t)p * sizeof(MPI_Datatype));
    for (int i = 0; i < p; i++) {
        for (int j = 0; j < n; j++)
            s[2 * n * i + 2 * j] = val(me, n * i + j) + 5;
        st[i] = spread(s + 2 * n * i, n);
        rt[i] = at(r + rd[i]);
    }
    for (size_t i = 0; i < all; i++)
        r[i] = UNSET;
    COLL(m, Alltoallw, Ialltoallw, MPI_BOTTOM, ones, zero, st, MPI_BOTTOM, counts, zero, rt, comm);
    for (int i = 0; i < p; i++) {
        for (int j = 0; j < n; j++)
            expect(r, rd[i] + j, val(i, me * n + j) + 5, "alltoallw", mode_name[m], n);
        MPI_Type_free(&st[i]);
        MPI_Type_free(&rt[i]);
    }
    MPI_Type_free(&ts);
    MPI_Type_free(&tr);
    free(st);
    free(rt);
    free(s);
    free(r);
    free(counts);
    free(sd);
    free(rd);
    free(zero);
    free(ones);
}

/* --- reductions ------------------------------------------------------------- */

static int sum_upto(int ranks, int i)
{
    int t = 0;
    for (int k = 0; k < ranks; k++)
        t += val(k, i);
    return t;
}

/* MPI_SUM for ints laid out by an absolute type (predefined ops take
 * predefined types only, in MPICH): the vectors are the buffers' origins,
 * the ints start at the type's true lower bound. */
static void sum_at(void *in, void *inout, int *len, MPI_Datatype *type)
{
    MPI_Aint lb, extent;
    MPI_Type_get_true_extent(*type, &lb, &extent);
    const int *a = (const int *)(uintptr_t)((uintptr_t)in + (uintptr_t)lb);
    int *b = (int *)(uintptr_t)((uintptr_t)inout + (uintptr_t)lb);
    for (int i = 0; i < *len; i++)
        b[i] += a[i];
}

static void reductions(enum mode m, int n, MPI_Comm comm, int me, int p)
{
    MPI_Op sum;
    MPICHK(MPI_Op_create(sum_at, 1, &sum));
    int root = p - 1, *s = ints((size_t)n * p, UNSET), *r = ints((size_t)n * p, UNSET);
    for (int i = 0; i < n * p; i++)
        s[i] = val(me, i);
    MPI_Datatype ts = at(s), tr = at(r);
    void *into_r = shifted(r, s);
    COLL(m, Reduce, Ireduce, MPI_BOTTOM, into_r, n, ts, sum, root, comm);
    for (int i = 0; i < n && me == root; i++)
        expect(r, i, sum_upto(p, i), "reduce", mode_name[m], n);
    for (int i = 0; i < n; i++)
        r[i] = val(me, i);
    COLL(m, Reduce, Ireduce, me == root ? MPI_IN_PLACE : MPI_BOTTOM, MPI_BOTTOM, n,
         me == root ? tr : ts, sum, root, comm);
    for (int i = 0; i < n && me == root; i++)
        expect(r, i, sum_upto(p, i), "reduce in place", mode_name[m], n);
    COLL(m, Allreduce, Iallreduce, MPI_BOTTOM, into_r, n, ts, sum, comm);
    for (int i = 0; i < n; i++)
        expect(r, i, sum_upto(p, i), "allreduce", mode_name[m], n);
    for (int i = 0; i < n; i++)
        r[i] = val(me, i);
    COLL(m, Allreduce, Iallreduce, MPI_IN_PLACE, MPI_BOTTOM, n, tr, sum, comm);
    for (int i = 0; i < n; i++)
        expect(r, i, sum_upto(p, i), "allreduce in place", mode_name[m], n);
    COLL(m, Scan, Iscan, MPI_BOTTOM, into_r, n, ts, sum, comm);
    for (int i = 0; i < n; i++)
        expect(r, i, sum_upto(me + 1, i), "scan", mode_name[m], n);
    COLL(m, Exscan, Iexscan, MPI_BOTTOM, into_r, n, ts, sum, comm);
    for (int i = 0; i < n && me > 0; i++)
        expect(r, i, sum_upto(me, i), "exscan", mode_name[m], n);
    COLL(m, Reduce_scatter_block, Ireduce_scatter_block, MPI_BOTTOM, into_r, n, ts, sum, comm);
    for (int i = 0; i < n; i++)
        expect(r, i, sum_upto(p, me * n + i), "reduce_scatter_block", mode_name[m], n);
    int *counts = ints((size_t)p, n);
    COLL(m, Reduce_scatter, Ireduce_scatter, MPI_BOTTOM, into_r, counts, ts, sum, comm);
    for (int i = 0; i < n; i++)
        expect(r, i, sum_upto(p, me * n + i), "reduce_scatter", mode_name[m], n);
    MPICHK(MPI_Op_free(&sum));
    MPI_Type_free(&ts);
    MPI_Type_free(&tr);
    free(counts);
    free(s);
    free(r);
}

/* --- neighbourhood collectives on a periodic ring --------------------------- */

#define NCOLL(m, Name, IName, ...)                                                                 \
    do {                                                                                           \
        MPI_Request rq_;                                                                           \
        if ((m) == BLOCKING) {                                                                     \
            MPICHK(MPI_##Name(__VA_ARGS__));                                                       \
        } else {                                                                                   \
            MPICHK(MPI_##IName(__VA_ARGS__, &rq_));                                                \
            MPICHK(MPI_Wait(&rq_, MPI_STATUS_IGNORE));                                             \
        }                                                                                          \
    } while (0)

static void neighbors(enum mode m, int n, MPI_Comm comm, int me, int p)
{
    int dims[1] = {p}, periods[1] = {1};
    MPI_Comm ring;
    MPICHK(MPI_Cart_create(comm, 1, dims, periods, 0, &ring));
    MPICHK(MPI_Comm_set_errhandler(ring, MPI_ERRORS_RETURN));
    int left = (me - 1 + p) % p, right = (me + 1) % p;
    int *s = ints(4 * (size_t)n, UNSET), *r = ints(2 * (size_t)n + 1, UNSET);
    for (int j = 0; j < 2 * n; j++)
        s[j] = val(me, j);
    MPI_Datatype ts = at(s), tr = at(r), tsp = spread(s, n);
    const char *mn = mode_name[m];
    NCOLL(m, Neighbor_allgather, Ineighbor_allgather, MPI_BOTTOM, 1, tsp, MPI_BOTTOM, n, tr, ring);
    for (int j = 0; j < n; j++) {
        expect(r, j, val(left, 2 * j), "neighbor_allgather from the left", mn, n);
        expect(r, n + j, val(right, 2 * j), "neighbor_allgather from the right", mn, n);
    }
    int counts[2] = {n, n}, displs[2] = {n + 1, 0};
    NCOLL(m, Neighbor_allgatherv, Ineighbor_allgatherv, MPI_BOTTOM, 1, tsp, MPI_BOTTOM, counts,
          displs, tr, ring);
    for (int j = 0; j < n; j++) {
        expect(r, n + 1 + j, val(left, 2 * j), "neighbor_allgatherv from the left", mn, n);
        expect(r, j, val(right, 2 * j), "neighbor_allgatherv from the right", mn, n);
    }
    /* block 0 goes left, block 1 right: the left neighbour's block 1
     * arrives as block 0 */
    NCOLL(m, Neighbor_alltoall, Ineighbor_alltoall, MPI_BOTTOM, n, ts, MPI_BOTTOM, n, tr, ring);
    for (int j = 0; j < n; j++) {
        expect(r, j, val(left, n + j), "neighbor_alltoall from the left", mn, n);
        expect(r, n + j, val(right, j), "neighbor_alltoall from the right", mn, n);
    }
    int sd[2] = {0, n};
    NCOLL(m, Neighbor_alltoallv, Ineighbor_alltoallv, MPI_BOTTOM, counts, sd, ts, MPI_BOTTOM,
          counts, displs, tr, ring);
    for (int j = 0; j < n; j++) {
        expect(r, n + 1 + j, val(left, n + j), "neighbor_alltoallv from the left", mn, n);
        expect(r, j, val(right, j), "neighbor_alltoallv from the right", mn, n);
    }
    /* w with a predefined type and absolute displacements, as in C and
     * Fortran codes that address each block with MPI_Get_address */
    MPI_Aint sdw[2] = {addr(s), addr(s + n)}, rdw[2] = {addr(r + n + 1), addr(r)};
    MPI_Datatype ints2[2] = {MPI_INT, MPI_INT};
    for (int j = 0; j < 2 * n + 1; j++)
        r[j] = UNSET;
    NCOLL(m, Neighbor_alltoallw, Ineighbor_alltoallw, MPI_BOTTOM, counts, sdw, ints2, MPI_BOTTOM,
          counts, rdw, ints2, ring);
    for (int j = 0; j < n; j++) {
        expect(r, n + 1 + j, val(left, n + j), "neighbor_alltoallw from the left", mn, n);
        expect(r, j, val(right, j), "neighbor_alltoallw from the right", mn, n);
    }
    /* and with absolute types, displacements 0 */
    MPI_Aint zero[2] = {0, 0};
    int ones[2] = {1, 1};
    MPI_Datatype stw[2] = {spread(s, n), spread(s + 2 * n, n)}, rtw[2] = {at(r + n + 1), tr};
    for (int j = 0; j < 4 * n; j++)
        s[j] = val(me, j) + 9;
    NCOLL(m, Neighbor_alltoallw, Ineighbor_alltoallw, MPI_BOTTOM, ones, zero, stw, MPI_BOTTOM,
          counts, zero, rtw, ring);
    for (int j = 0; j < n; j++) {
        expect(r, n + 1 + j, val(left, 2 * n + 2 * j) + 9, "neighbor_alltoallw types, left", mn, n);
        expect(r, j, val(right, 2 * j) + 9, "neighbor_alltoallw types, right", mn, n);
    }
    MPI_Type_free(&stw[0]);
    MPI_Type_free(&stw[1]);
    MPI_Type_free(&rtw[0]);
    MPI_Type_free(&ts);
    MPI_Type_free(&tr);
    MPI_Type_free(&tsp);
    MPICHK(MPI_Comm_free(&ring));
    free(s);
    free(r);
}

/* --- point-to-point around the ring ----------------------------------------- */

static void p2p(int n, MPI_Comm comm, int me, int p)
{
    int to = (me + 1) % p, from = (me - 1 + p) % p;
    int *s = ints(2 * (size_t)n, UNSET), *r = ints((size_t)n, UNSET);
    for (int j = 0; j < n; j++)
        s[2 * j] = val(me, j);
    MPI_Datatype ts = spread(s, n), tr = at(r);
    MPI_Request rq[2];
    MPI_Status st[2];
    const char *mn = "p2p";
#define RECEIVED(what)                                                                             \
    for (int j = 0; j < n; j++) {                                                                  \
        expect(r, j, val(from, j), what, mn, n);                                                   \
        r[j] = UNSET;                                                                              \
    }
    MPICHK(MPI_Irecv(MPI_BOTTOM, n, tr, from, 1, comm, &rq[0]));
    MPICHK(MPI_Send(MPI_BOTTOM, 1, ts, to, 1, comm));
    MPICHK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    RECEIVED("send, irecv");
    MPICHK(MPI_Isend(MPI_BOTTOM, 1, ts, to, 2, comm, &rq[0]));
    MPICHK(MPI_Recv(MPI_BOTTOM, n, tr, from, 2, comm, MPI_STATUS_IGNORE));
    MPICHK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    RECEIVED("isend, recv");
    MPICHK(MPI_Irecv(MPI_BOTTOM, n, tr, from, 3, comm, &rq[0]));
    MPICHK(MPI_Ssend(MPI_BOTTOM, 1, ts, to, 3, comm));
    MPICHK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    RECEIVED("ssend");
    MPICHK(MPI_Sendrecv(MPI_BOTTOM, 1, ts, to, 4, MPI_BOTTOM, n, tr, from, 4, comm,
                        MPI_STATUS_IGNORE));
    RECEIVED("sendrecv");
    MPICHK(MPI_Send_init(MPI_BOTTOM, 1, ts, to, 5, comm, &rq[0]));
    MPICHK(MPI_Recv_init(MPI_BOTTOM, n, tr, from, 5, comm, &rq[1]));
    for (int round = 0; round < 2; round++) {
        MPICHK(MPI_Startall(2, rq));
        MPICHK(MPI_Waitall(2, rq, st));
        RECEIVED("send_init, recv_init");
    }
    MPICHK(MPI_Request_free(&rq[0]));
    MPICHK(MPI_Request_free(&rq[1]));
    int size;
    MPICHK(MPI_Pack_size(1, ts, comm, &size));
    size += MPI_BSEND_OVERHEAD;
    void *attached = malloc((size_t)size);
    MPICHK(MPI_Buffer_attach(attached, size));
    MPICHK(MPI_Irecv(MPI_BOTTOM, n, tr, from, 6, comm, &rq[0]));
    MPICHK(MPI_Bsend(MPI_BOTTOM, 1, ts, to, 6, comm));
    MPICHK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    RECEIVED("bsend");
    void *detached;
    MPICHK(MPI_Buffer_detach(&detached, &size));
    free(detached);
    /* the spread ints replaced by the left neighbour's */
    MPICHK(MPI_Sendrecv_replace(MPI_BOTTOM, 1, ts, to, 7, from, 7, comm, MPI_STATUS_IGNORE));
    for (int j = 0; j < n; j++) {
        expect(s, 2 * j, val(from, j), "sendrecv_replace", mn, n);
        expect(s, 2 * j + 1, UNSET, "sendrecv_replace gap", mn, n);
    }
    MPICHK(MPI_Pack_size(1, ts, comm, &size));
    char *packed = malloc((size_t)size);
    int pos = 0;
    MPICHK(MPI_Pack(MPI_BOTTOM, 1, ts, packed, size, &pos, comm));
    CHECK(pos == n * (int)sizeof(int), "MPI_Pack of %d ints: position %d", n, pos);
    pos = 0;
    MPICHK(MPI_Unpack(packed, size, &pos, MPI_BOTTOM, n, tr, comm));
    for (int j = 0; j < n; j++)
        expect(r, j, val(from, j), "pack, unpack", mn, n);
    free(packed);
#undef RECEIVED
    MPI_Type_free(&ts);
    MPI_Type_free(&tr);
    free(s);
    free(r);
}

/* MPI_BOTTOM without an absolute type is a NULL buffer, as in MPICH:
 * refused for a predefined type and for a derived one whose data starts
 * at its origin. */
static void null_buffers(MPI_Comm comm)
{
    MPI_Datatype pair;
    MPICHK(MPI_Type_contiguous(2, MPI_INT, &pair));
    MPICHK(MPI_Type_commit(&pair));
    char packed[64];
    int pos = 0;
    EXPECT_CLASS(MPI_Send(MPI_BOTTOM, 1, MPI_INT, MPI_PROC_NULL, 0, comm), MPI_ERR_BUFFER);
    EXPECT_CLASS(MPI_Send(MPI_BOTTOM, 1, pair, MPI_PROC_NULL, 0, comm), MPI_ERR_BUFFER);
    EXPECT_CLASS(MPI_Bcast(MPI_BOTTOM, 1, pair, 0, comm), MPI_ERR_BUFFER);
    EXPECT_CLASS(MPI_Pack(MPI_BOTTOM, 1, pair, packed, sizeof packed, &pos, comm), MPI_ERR_BUFFER);
    MPICHK(MPI_Send(MPI_BOTTOM, 0, pair, MPI_PROC_NULL, 0, comm));
    int dims[1] = {cu_size}, periods[1] = {1}, counts[2] = {1, 1};
    MPI_Aint zero[2] = {0, 0};
    MPI_Datatype ints2[2] = {MPI_INT, MPI_INT};
    MPI_Comm ring;
    MPICHK(MPI_Cart_create(comm, 1, dims, periods, 0, &ring));
    MPICHK(MPI_Comm_set_errhandler(ring, MPI_ERRORS_RETURN));
    EXPECT_CLASS(MPI_Neighbor_alltoallw(MPI_BOTTOM, counts, zero, ints2, MPI_BOTTOM, counts, zero,
                                        ints2, ring),
                 MPI_ERR_BUFFER);
    MPICHK(MPI_Comm_free(&ring));
    MPICHK(MPI_Type_free(&pair));
}

int main(int argc, char **argv)
{
    cu_init(&argc, &argv, "bottom");
    MPI_Comm comm = MPI_COMM_WORLD;
    null_buffers(comm);
    /* a few elements, then enough for the two-phase reductions, the
     * rendezvous protocol and the direct copies of the shared-memory path */
    static const int sizes[] = {3, 6000};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        int n = sizes[k];
        for (enum mode m = BLOCKING; m <= PERSISTENT; m++) {
            bcast(m, n, comm, cu_rank, cu_size);
            gather_scatter(m, n, comm, cu_rank, cu_size);
            allgather(m, n, comm, cu_rank, cu_size);
            alltoall(m, n, comm, cu_rank, cu_size);
            reductions(m, n, comm, cu_rank, cu_size);
            if (m != PERSISTENT) /* the persistent ones are not implemented */
                neighbors(m, n, comm, cu_rank, cu_size);
        }
        p2p(n, comm, cu_rank, cu_size);
    }
    cu_finish();
    return 0;
}
