/*
 * Generalized requests, MPI_Request_get_status_{any,all,some}, the status
 * accessors and conversions of MPI 4.1, MPI_Isendrecv(_replace), and
 * MPI_Alloc_mem/MPI_Free_mem.
 */
#include "coll_util.h"

/* --- generalized requests -------------------------------------------------- */

struct greq_state {
    int queries, frees, cancels, last_cancel_complete;
    int query_error;
};

static int greq_query(void *extra, MPI_Status *status)
{
    struct greq_state *g = extra;
    g->queries++;
    MPI_Status_set_source(status, 42);
    MPI_Status_set_tag(status, 7);
    MPI_Status_set_elements(status, MPI_INT, 3);
    MPI_Status_set_cancelled(status, g->cancels > 0);
    return g->query_error;
}

static int greq_free(void *extra)
{
    ((struct greq_state *)extra)->frees++;
    return MPI_SUCCESS;
}

static int greq_cancel(void *extra, int complete)
{
    struct greq_state *g = extra;
    g->cancels++;
    g->last_cancel_complete = complete;
    return MPI_SUCCESS;
}

static void check_grequest(void)
{
    struct greq_state g = {0};
    MPI_Request req;
    int flag = 1, n = 0, cancelled = 0;
    MPI_Status st;

    MPICHK(MPI_Grequest_start(greq_query, greq_free, greq_cancel, &g, &req));
    MPICHK(MPI_Test(&req, &flag, &st));
    CHECK(!flag, "a generalized request completed before MPI_Grequest_complete");
    MPICHK(MPI_Grequest_complete(req));
    EXPECT_CLASS(MPI_Grequest_complete(req), MPI_ERR_REQUEST); /* twice */
    MPICHK(MPI_Request_get_status(req, &flag, &st));
    CHECK(flag && st.MPI_SOURCE == 42 && g.frees == 0, "get_status: flag %d source %d frees %d",
          flag, st.MPI_SOURCE, g.frees);
    MPICHK(MPI_Wait(&req, &st));
    MPI_Get_count(&st, MPI_INT, &n);
    CHECK(req == MPI_REQUEST_NULL && g.frees == 1 && st.MPI_TAG == 7 && n == 3,
          "wait: req 0x%x frees %d tag %d count %d", (unsigned)req, g.frees, st.MPI_TAG, n);

    /* Freed before completion: free_fn runs once, at MPI_Grequest_complete. */
    struct greq_state h = {0};
    MPICHK(MPI_Grequest_start(greq_query, greq_free, greq_cancel, &h, &req));
    MPI_Request copy = req;
    MPICHK(MPI_Request_free(&req));
    CHECK(h.frees == 0, "free_fn ran before the request completed");
    MPICHK(MPI_Grequest_complete(copy));
    CHECK(h.frees == 1, "free_fn ran %d times", h.frees);

    /* Cancel reaches cancel_fn with the completion state; the query then
     * reports the cancellation. */
    struct greq_state c = {0};
    MPICHK(MPI_Grequest_start(greq_query, greq_free, greq_cancel, &c, &req));
    MPICHK(MPI_Cancel(&req));
    CHECK(c.cancels == 1 && !c.last_cancel_complete, "cancel_fn: %d calls, complete %d", c.cancels,
          c.last_cancel_complete);
    MPICHK(MPI_Grequest_complete(req));
    MPICHK(MPI_Wait(&req, &st));
    MPICHK(MPI_Test_cancelled(&st, &cancelled));
    CHECK(cancelled, "status of a cancelled generalized request is not cancelled");

    /* query_fn's error is the operation's error. */
    struct greq_state e = {.query_error = MPI_ERR_OTHER};
    MPICHK(MPI_Grequest_start(greq_query, greq_free, greq_cancel, &e, &req));
    MPICHK(MPI_Grequest_complete(req));
    EXPECT_CLASS(MPI_Wait(&req, &st), MPI_ERR_OTHER);
    CHECK(e.frees == 1, "free_fn after a failed query ran %d times", e.frees);

    EXPECT_CLASS(MPI_Grequest_start(NULL, greq_free, greq_cancel, &g, &req), MPI_ERR_ARG);
}

/* --- MPI_Request_get_status_{any,all,some} ---------------------------------- */

/* A ring exchange whose requests are inspected without being freed. */
static void check_get_status_family(void)
{
    int right = (cu_rank + 1) % cu_size, left = (cu_rank + cu_size - 1) % cu_size;
    int out = cu_rank, in = -1, idx = -2, flag = 0, outcount = -2, indices[2];
    MPI_Request req[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Status st, sts[3];

    MPICHK(MPI_Request_get_status_any(3, req, &idx, &flag, &st));
    CHECK(flag && idx == MPI_UNDEFINED, "all null: flag %d index %d", flag, idx);
    MPICHK(MPI_Request_get_status_some(3, req, &outcount, indices, sts));
    CHECK(outcount == MPI_UNDEFINED, "all null: outcount %d", outcount);

    MPICHK(MPI_Irecv(&in, 1, MPI_INT, left, 5, MPI_COMM_WORLD, &req[0]));
    MPICHK(MPI_Isend(&out, 1, MPI_INT, right, 5, MPI_COMM_WORLD, &req[1]));
    do
        MPICHK(MPI_Request_get_status_all(3, req, &flag, sts));
    while (!flag);
    CHECK(req[0] != MPI_REQUEST_NULL && req[1] != MPI_REQUEST_NULL,
          "MPI_Request_get_status_all freed a request");
    CHECK(sts[0].MPI_SOURCE == left && sts[0].MPI_TAG == 5 && in == left,
          "receive status source %d tag %d value %d", sts[0].MPI_SOURCE, sts[0].MPI_TAG, in);
    MPICHK(MPI_Request_get_status_any(3, req, &idx, &flag, &st));
    CHECK(flag && idx == 0 && st.MPI_SOURCE == left, "any: flag %d index %d", flag, idx);
    MPICHK(MPI_Request_get_status_some(3, req, &outcount, indices, sts));
    CHECK(outcount == 2 && indices[0] == 0 && indices[1] == 1, "some: outcount %d", outcount);
    MPICHK(MPI_Waitall(3, req, MPI_STATUSES_IGNORE));
    CHECK(req[0] == MPI_REQUEST_NULL && req[1] == MPI_REQUEST_NULL, "waitall did not free");
    EXPECT_CLASS(MPI_Request_get_status_any(-1, req, &idx, &flag, &st), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Request_get_status_all(1, req, NULL, sts), MPI_ERR_ARG);
}

/* --- status accessors and conversions --------------------------------------- */

static void check_status(void)
{
    MPI_Status st, back;
    MPI_Fint f[MPI_F_STATUS_SIZE];
    MPI_F08_status f08;
    int v = 0, cancelled = 0;
    MPICHK(MPI_Status_set_source(&st, 3));
    MPICHK(MPI_Status_set_tag(&st, 99));
    MPICHK(MPI_Status_set_error(&st, MPI_ERR_TAG));
    MPICHK(MPI_Status_set_elements(&st, MPI_DOUBLE, 4));
    MPICHK(MPI_Status_set_cancelled(&st, 1));
    MPICHK(MPI_Status_get_source(&st, &v));
    CHECK(v == 3, "source %d", v);
    MPICHK(MPI_Status_get_tag(&st, &v));
    CHECK(v == 99, "tag %d", v);
    MPICHK(MPI_Status_get_error(&st, &v));
    CHECK(v == MPI_ERR_TAG, "error %d", v);
    MPICHK(MPI_Test_cancelled(&st, &cancelled));
    MPICHK(MPI_Get_count(&st, MPI_DOUBLE, &v));
    CHECK(cancelled && v == 4, "cancelled %d count %d", cancelled, v);
    MPICHK(MPI_Status_c2f(&st, f));
    CHECK(f[MPI_F_SOURCE] == 3 && f[MPI_F_TAG] == 99 && f[MPI_F_ERROR] == MPI_ERR_TAG,
          "c2f: %d %d %d", f[MPI_F_SOURCE], f[MPI_F_TAG], f[MPI_F_ERROR]);
    MPICHK(MPI_Status_f2f08(f, &f08));
    MPICHK(MPI_Status_f082c(&f08, &back));
    CHECK(!memcmp(&back, &st, sizeof(st)), "a status changed on its way through f and f08");
    EXPECT_CLASS(MPI_Status_get_tag(MPI_STATUS_IGNORE, &v), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Status_c2f(&st, NULL), MPI_ERR_ARG);
}

/* --- MPI_Isendrecv, MPI_Isendrecv_replace ----------------------------------- */

/* Around the ring at eager and rendezvous sizes, the two calls overlapped
 * and completed out of order; the status is the receive's. */
static void check_isendrecv(void)
{
    int right = (cu_rank + 1) % cu_size, left = (cu_rank + cu_size - 1) % cu_size;
    int sizes[] = {0, 1, 1000, 300000};
    for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        int n = sizes[k];
        int *out = malloc(sizeof(int) * (size_t)n + 1), *in = malloc(sizeof(int) * (size_t)n + 8);
        int *rep = malloc(sizeof(int) * (size_t)n + 1);
        for (int i = 0; i < n; i++) {
            out[i] = cu_val(cu_rank, (size_t)i, 50);
            rep[i] = cu_val(cu_rank, (size_t)i, 51);
        }
        in[n] = 777; /* guard */
        MPI_Request req[2];
        MPI_Status st[2];
        MPICHK(MPI_Isendrecv(out, n, MPI_INT, right, 20, in, n, MPI_INT, left, 20, MPI_COMM_WORLD,
                             &req[0]));
        MPICHK(MPI_Isendrecv_replace(rep, n, MPI_INT, left, 21, right, 21, MPI_COMM_WORLD,
                                     &req[1]));
        MPICHK(MPI_Wait(&req[1], &st[1]));
        MPICHK(MPI_Wait(&req[0], &st[0]));
        int got = -1;
        MPICHK(MPI_Get_count(&st[0], MPI_INT, &got));
        CHECK(st[0].MPI_SOURCE == left && st[0].MPI_TAG == 20 && got == n,
              "isendrecv status: source %d tag %d count %d (n %d)", st[0].MPI_SOURCE,
              st[0].MPI_TAG, got, n);
        CHECK(st[1].MPI_SOURCE == right && st[1].MPI_TAG == 21, "replace status: source %d tag %d",
              st[1].MPI_SOURCE, st[1].MPI_TAG);
        for (int i = 0; i < n; i++) {
            CHECK(in[i] == cu_val(left, (size_t)i, 50), "isendrecv [%d] = %d", i, in[i]);
            CHECK(rep[i] == cu_val(right, (size_t)i, 51), "replace [%d] = %d", i, rep[i]);
        }
        CHECK(in[n] == 777, "isendrecv wrote past the receive buffer");
        free(out);
        free(in);
        free(rep);
    }
    int x = 0;
    MPI_Request req;
    EXPECT_CLASS(MPI_Isendrecv(&x, 1, MPI_INT, cu_size, 0, &x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD,
                               &req),
                 MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Isendrecv_replace(&x, 1, MPI_INT, 0, 0, 0, 0, MPI_COMM_WORLD, NULL),
                 MPI_ERR_ARG);
    /* to and from MPI_PROC_NULL: completes with the empty receive status */
    MPICHK(MPI_Isendrecv(&x, 1, MPI_INT, MPI_PROC_NULL, 0, &x, 1, MPI_INT, MPI_PROC_NULL, 0,
                         MPI_COMM_WORLD, &req));
    MPI_Status st;
    MPICHK(MPI_Wait(&req, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "PROC_NULL receive status source %d", st.MPI_SOURCE);
}

/* --- MPI_Alloc_mem / MPI_Free_mem ------------------------------------------- */

static void check_alloc_mem(void)
{
    enum { N = 1 << 18 };
    int *buf = NULL, *empty = NULL;
    MPICHK(MPI_Alloc_mem(N * (MPI_Aint)sizeof(int), MPI_INFO_NULL, &buf));
    CHECK(buf && ((uintptr_t)buf & 63) == 0, "MPI_Alloc_mem gave %p", (void *)buf);
    for (int i = 0; i < N; i++)
        buf[i] = cu_rank + i;
    /* the memory works as a message buffer, sent around the ring */
    int right = (cu_rank + 1) % cu_size, left = (cu_rank + cu_size - 1) % cu_size;
    MPICHK(MPI_Sendrecv_replace(buf, N, MPI_INT, right, 1, left, 1, MPI_COMM_WORLD,
                                MPI_STATUS_IGNORE));
    for (int i = 0; i < N; i++)
        CHECK(buf[i] == left + i, "buf[%d] = %d after the ring", i, buf[i]);
    MPICHK(MPI_Free_mem(buf));
    MPICHK(MPI_Alloc_mem(0, MPI_INFO_NULL, &empty));
    MPICHK(MPI_Free_mem(empty));
    EXPECT_CLASS(MPI_Alloc_mem(-1, MPI_INFO_NULL, &buf), MPI_ERR_SIZE);
    EXPECT_CLASS(MPI_Alloc_mem(64, (MPI_Info)0x1234, &buf), MPI_ERR_INFO);
}

int main(int argc, char **argv)
{
    cu_init(&argc, &argv, "req_misc");
    check_grequest();
    check_get_status_family();
    check_status();
    check_isendrecv();
    check_alloc_mem();
    cu_finish();
    return 0;
}
