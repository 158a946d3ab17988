/*
 * Persistent collectives (MPI_*_init + MPI_Start): each request is started
 * many times with new data in the same buffers, checked against a serial
 * reference every time; several requests in flight together, started in
 * different orders on different ranks (the tag is fixed at init);
 * MPI_IN_PLACE re-copied at every start; MPI_Request_free of a request
 * never started, after completion and while active; bad arguments.
 */
#include "coll_util.h"

#define ROUNDS 25

static int val(int r, size_t i, int round) { return cu_val(r, i, 1000 + round); }

static void fill(int *buf, size_t n, int r, int round)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = val(r, i, round);
}

static void check_allreduce_bcast(MPI_Comm comm, int count)
{
    int r, p;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &p);
    int *s = malloc(sizeof(int) * (size_t)count + 1), *d = malloc(sizeof(int) * (size_t)count + 1);
    int *b = malloc(sizeof(int) * (size_t)count + 1);
    int root = p - 1;
    MPI_Request req[2];
    MPICHK(MPI_Allreduce_init(s, d, count, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, &req[0]));
    MPICHK(MPI_Bcast_init(b, count, MPI_INT, root, comm, MPI_INFO_NULL, &req[1]));
    for (int round = 0; round < ROUNDS; round++) {
        fill(s, (size_t)count, r, round);
        if (r == root)
            fill(b, (size_t)count, -1, round);
        /* The order of starts differs across ranks: the standard allows it. */
        if ((r + round) % 2) {
            MPICHK(MPI_Start(&req[1]));
            MPICHK(MPI_Start(&req[0]));
        } else {
            MPICHK(MPI_Startall(2, req));
        }
        MPICHK(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
        CHECK(req[0] != MPI_REQUEST_NULL, "a persistent request was freed by MPI_Waitall");
        for (int i = 0; i < count; i++) {
            int want = 0;
            for (int q = 0; q < p; q++)
                want += val(q, (size_t)i, round);
            CHECK(d[i] == want, "allreduce round %d [%d] = %d, want %d", round, i, d[i], want);
            CHECK(b[i] == val(-1, (size_t)i, round), "bcast round %d [%d] = %d", round, i, b[i]);
        }
    }
    MPICHK(MPI_Request_free(&req[0]));
    MPICHK(MPI_Request_free(&req[1]));
    CHECK(req[0] == MPI_REQUEST_NULL && req[1] == MPI_REQUEST_NULL, "freed handles not nulled");
    free(s);
    free(d);
    free(b);
}

/* Alltoall with MPI_IN_PLACE: the receive buffer is copied aside again at
 * every start, so new contents each round must come through. */
static void check_alltoall_in_place(MPI_Comm comm, int block)
{
    int r, p;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &p);
    size_t n = (size_t)block * (size_t)p;
    int *buf = malloc(sizeof(int) * n + 1);
    MPI_Request req;
    MPICHK(MPI_Alltoall_init(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, block, MPI_INT, comm,
                             MPI_INFO_NULL, &req));
    for (int round = 0; round < ROUNDS; round++) {
        fill(buf, n, r, round);
        MPICHK(MPI_Start(&req));
        MPI_Status st;
        MPICHK(MPI_Wait(&req, &st));
        for (int q = 0; q < p; q++)
            for (int k = 0; k < block; k++) {
                int got = buf[(size_t)q * (size_t)block + (size_t)k];
                int want = val(q, (size_t)r * (size_t)block + (size_t)k, round);
                CHECK(got == want, "alltoall round %d from %d [%d] = %d, want %d", round, q, k,
                      got, want);
            }
    }
    MPICHK(MPI_Request_free(&req));
    free(buf);
}

/* Gather, scan, reduce_scatter_block and barrier started together, tested
 * to completion while polling with MPI_Testall. */
static void check_mixed(MPI_Comm comm)
{
    int r, p;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &p);
    enum { N = 3 };
    int gs[N], *gr = malloc(sizeof(int) * N * (size_t)p), ss[N], sr[N];
    int *rs = malloc(sizeof(int) * N * (size_t)p), rr[N];
    MPI_Request req[4];
    MPICHK(MPI_Gather_init(gs, N, MPI_INT, gr, N, MPI_INT, 0, comm, MPI_INFO_NULL, &req[0]));
    MPICHK(MPI_Scan_init(ss, sr, N, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, &req[1]));
    MPICHK(MPI_Reduce_scatter_block_init(rs, rr, N, MPI_INT, MPI_MAX, comm, MPI_INFO_NULL,
                                         &req[2]));
    MPICHK(MPI_Barrier_init(comm, MPI_INFO_NULL, &req[3]));
    for (int round = 0; round < ROUNDS; round++) {
        fill(gs, N, r, round);
        fill(ss, N, r, round + 100);
        fill(rs, N * (size_t)p, r, round + 200);
        MPICHK(MPI_Startall(4, req));
        int done = 0;
        while (!done)
            MPICHK(MPI_Testall(4, req, &done, MPI_STATUSES_IGNORE));
        for (int i = 0; i < N; i++) {
            int scan = 0, mx = -1000;
            for (int q = 0; q <= r; q++)
                scan += val(q, (size_t)i, round + 100);
            for (int q = 0; q < p; q++)
                if (val(q, (size_t)r * N + (size_t)i, round + 200) > mx)
                    mx = val(q, (size_t)r * N + (size_t)i, round + 200);
            CHECK(sr[i] == scan, "scan round %d [%d] = %d, want %d", round, i, sr[i], scan);
            CHECK(rr[i] == mx, "reduce_scatter_block round %d [%d] = %d, want %d", round, i,
                  rr[i], mx);
            for (int q = 0; r == 0 && q < p; q++)
                CHECK(gr[(size_t)q * N + (size_t)i] == val(q, (size_t)i, round),
                      "gather round %d from %d [%d]", round, q, i);
        }
    }
    for (int i = 0; i < 4; i++)
        MPICHK(MPI_Request_free(&req[i]));
    free(gr);
    free(rs);
}

/* Freeing: never started, and while active (it completes, then goes). */
static void check_free(MPI_Comm comm)
{
    int x = 1, y = 0;
    MPI_Request req;
    MPICHK(MPI_Allreduce_init(&x, &y, 1, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, &req));
    MPICHK(MPI_Request_free(&req));
    MPICHK(MPI_Allreduce_init(&x, &y, 1, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, &req));
    MPICHK(MPI_Start(&req));
    MPICHK(MPI_Request_free(&req));
    /* The freed request still completes: progress until it has (a hang is
     * caught by the test's timeout). */
    int p, flag;
    MPI_Comm_size(comm, &p);
    while (*(volatile int *)&y != p)
        MPICHK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, MPI_STATUS_IGNORE));
    MPICHK(MPI_Barrier(comm));
}

static void check_errors(void)
{
    int x = 0;
    MPI_Request req;
    EXPECT_CLASS(MPI_Bcast_init(&x, 1, MPI_INT, cu_size, MPI_COMM_WORLD, MPI_INFO_NULL, &req),
                 MPI_ERR_ROOT);
    EXPECT_CLASS(MPI_Allreduce_init(&x, &x, 1, MPI_INT, MPI_SUM, MPI_COMM_NULL, MPI_INFO_NULL,
                                    &req),
                 MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, NULL), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Barrier_init(MPI_COMM_WORLD, (MPI_Info)0x1234, &req), MPI_ERR_INFO);
    EXPECT_CLASS(MPI_Reduce_init(&x, NULL, -1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD, MPI_INFO_NULL,
                                 &req),
                 MPI_ERR_COUNT);
    /* Starting an active request is an error. */
    MPICHK(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &req));
    MPICHK(MPI_Start(&req));
    EXPECT_CLASS(MPI_Start(&req), MPI_ERR_REQUEST);
    MPICHK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    MPICHK(MPI_Request_free(&req));
}

int main(int argc, char **argv)
{
    cu_init(&argc, &argv, "coll_persist");
    int counts[] = {0, 1, 7, 40000};
    for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
        check_allreduce_bcast(MPI_COMM_WORLD, counts[i]);
    check_alltoall_in_place(MPI_COMM_WORLD, 1);
    check_alltoall_in_place(MPI_COMM_WORLD, 300);
    check_mixed(MPI_COMM_WORLD);
    MPI_Comm half;
    MPICHK(MPI_Comm_split(MPI_COMM_WORLD, cu_rank % 2, -cu_rank, &half));
    check_allreduce_bcast(half, 5);
    check_mixed(half);
    MPICHK(MPI_Comm_free(&half));
    check_free(MPI_COMM_WORLD);
    check_errors();
    cu_finish();
    return 0;
}
