/*
 * Reduce_scatter(_block), Scan, Exscan against a serial reference (SUM,
 * MAX, a non-commutative user op, MPI_IN_PLACE, counts 0..large), and
 * nonblocking collectives in flight together: two Iallreduce on one
 * communicator completed in reverse order, a mix of different collectives
 * under one Waitall, and progress while the caller computes and tests;
 * on MPI_COMM_WORLD and sub-communicators of every size below it
 * (cu_each_subcomm).
 */
#include "coll_util.h"

static int nb;

static void wait_or_test(MPI_Request *rq)
{
    int flag = 0;
    while (!flag)
        MPICHK(MPI_Test(rq, &flag, MPI_STATUS_IGNORE));
}
#define RUN(blocking, nonblocking)                                                                 \
    do {                                                                                           \
        MPI_Request rq_ = MPI_REQUEST_NULL;                                                        \
        if (nb) {                                                                                  \
            MPICHK(nonblocking);                                                                   \
            wait_or_test(&rq_);                                                                    \
        } else {                                                                                   \
            MPICHK(blocking);                                                                      \
        }                                                                                          \
    } while (0)

/* The type of one 2x2 unsigned matrix, for cu_matmul (coll_util.h). */
static MPI_Datatype mat;
/* Does m equal the product of ranks from..to's matrices e, in rank order? */
static int mat_ok(const unsigned *m, int from, int to, size_t e, int salt)
{
    unsigned acc[4], x[4];
    cu_mat_of(acc, to, e, salt);
    for (int r = to - 1; r >= from; r--) {
        int one = 1;
        cu_mat_of(x, r, e, salt);
        cu_matmul(x, acc, &one, &mat);
    }
    return memcmp(acc, m, sizeof(acc)) == 0;
}

static void test_comm(MPI_Comm comm, const char *what)
{
    int p, me;
    MPICHK(MPI_Comm_size(comm, &p));
    MPICHK(MPI_Comm_rank(comm, &me));
    MPI_Op linop;
    MPICHK(MPI_Op_create(cu_matmul, 0, &linop));
    MPICHK(MPI_Type_contiguous(4, MPI_UNSIGNED, &mat));
    MPICHK(MPI_Type_commit(&mat));
    const int counts[] = {0, 1, 7, 1000, 1 << 16};
    int *cnt = malloc(sizeof(int) * (size_t)p);
    for (int ci = 0; ci < 5; ci++) {
        int n = counts[ci];
        nb = ci & 1;
        size_t tot = (size_t)n * (size_t)p;
        int *a = malloc(4 * sizeof(int) * (tot + 1)), *b = malloc(4 * sizeof(int) * (tot + 1));
        /* Reduce_scatter_block with SUM and the non-commutative op, in place too. */
        for (int o = 0; o < 2; o++)
            for (int inpl = 0; inpl < 2; inpl++) {
                MPI_Op op = o ? linop : MPI_SUM;
                MPI_Datatype t = o ? mat : MPI_INT;
                for (size_t i = 0; i < tot; i++) {
                    if (o)
                        cu_mat_of((unsigned *)a + 4 * i, me, i, 51);
                    else
                        a[i] = cu_val(me, i, 50);
                }
                if (inpl)
                    memcpy(b, a, (o ? 16 : 4) * tot);
                RUN(MPI_Reduce_scatter_block(inpl ? MPI_IN_PLACE : a, b, n, t, op, comm),
                    MPI_Ireduce_scatter_block(inpl ? MPI_IN_PLACE : a, b, n, t, op, comm, &rq_));
                for (int k = 0; k < n; k++) {
                    size_t i = (size_t)me * (size_t)n + (size_t)k;
                    unsigned want = 0;
                    if (o) {
                        CHECK(mat_ok((unsigned *)b + 4 * k, 0, p - 1, i, 51), "%s reduce_scatter_block matrices%s n=%d [%d]",
                              what, inpl ? " in place" : "", n, k);
                        continue;
                    }
                    for (int r = 0; r < p; r++)
                        want += (unsigned)cu_val(r, i, 50);
                    CHECK((unsigned)b[k] == want, "%s reduce_scatter_block op %d%s n=%d [%d]", what, o,
                          inpl ? " in place" : "", n, k);
                }
            }
        /* Reduce_scatter with uneven counts (rank i gets (i % 3) * n / 2 + 1). */
        if (n <= 1000) {
            size_t t2 = 0;
            for (int i = 0; i < p; i++)
                cnt[i] = (i % 3) * n / 2 + (n > 0), t2 += (size_t)cnt[i];
            int *c = malloc(16 * (t2 + 1)), *d = malloc(16 * (t2 + 1));
            size_t off = 0;
            for (int i = 0; i < me; i++)
                off += (size_t)cnt[i];
            for (int o = 0; o < 2; o++) {
                for (size_t i = 0; i < t2; i++) {
                    if (o)
                        cu_mat_of((unsigned *)c + 4 * i, me, i, 61);
                    else
                        c[i] = cu_val(me, i, 60);
                }
                MPI_Datatype t = o ? mat : MPI_INT;
                RUN(MPI_Reduce_scatter(c, d, cnt, t, o ? linop : MPI_MAX, comm),
                    MPI_Ireduce_scatter(c, d, cnt, t, o ? linop : MPI_MAX, comm, &rq_));
                for (int k = 0; k < cnt[me]; k++) {
                    size_t i = off + (size_t)k;
                    unsigned want;
                    if (o) {
                        CHECK(mat_ok((unsigned *)d + 4 * k, 0, p - 1, i, 61), "%s reduce_scatter matrices [%d]", what, k);
                        continue;
                    } else {
                        int m = cu_val(0, i, 60);
                        for (int r = 1; r < p; r++)
                            m = cu_val(r, i, 60) > m ? cu_val(r, i, 60) : m;
                        want = (unsigned)m;
                    }
                    CHECK((unsigned)d[k] == want, "%s reduce_scatter op %d [%d]", what, o, k);
                }
            }
            free(c), free(d);
        }
        /* Scan and Exscan, SUM and the non-commutative op, in place too. */
        for (int ex = 0; ex < 2; ex++)
            for (int o = 0; o < 2; o++)
                for (int inpl = 0; inpl < 2; inpl++) {
                    MPI_Op op = o ? linop : MPI_SUM;
                    MPI_Datatype t = o ? mat : MPI_INT;
                    for (int i = 0; i < n; i++) {
                        if (o)
                            cu_mat_of((unsigned *)a + 4 * i, me, (size_t)i, 71);
                        else
                            a[i] = cu_val(me, (size_t)i, 70);
                    }
                    memset(b, 0xee, 16 * (size_t)n);
                    if (inpl)
                        memcpy(b, a, (o ? 16 : 4) * (size_t)n);
                    if (ex)
                        RUN(MPI_Exscan(inpl ? MPI_IN_PLACE : a, b, n, t, op, comm),
                            MPI_Iexscan(inpl ? MPI_IN_PLACE : a, b, n, t, op, comm, &rq_));
                    else
                        RUN(MPI_Scan(inpl ? MPI_IN_PLACE : a, b, n, t, op, comm),
                            MPI_Iscan(inpl ? MPI_IN_PLACE : a, b, n, t, op, comm, &rq_));
                    int last = ex ? me - 1 : me;
                    if (last < 0)
                        continue; /* exscan at rank 0: undefined */
                    for (int i = 0; i < n; i++) {
                        unsigned want = 0;
                        if (o) {
                            CHECK(mat_ok((unsigned *)b + 4 * i, 0, last, (size_t)i, 71), "%s %s matrices%s n=%d [%d]", what,
                                  ex ? "exscan" : "scan", inpl ? " in place" : "", n, i);
                            continue;
                        }
                        for (int r = 0; r <= last; r++)
                                want += (unsigned)cu_val(r, (size_t)i, 70);
                        CHECK((unsigned)b[i] == want, "%s %s op %d%s n=%d [%d]", what, ex ? "exscan" : "scan",
                              o, inpl ? " in place" : "", n, i);
                    }
                }
        free(a), free(b);
    }
    MPICHK(MPI_Op_free(&linop));
    MPICHK(MPI_Type_free(&mat));
    free(cnt);

    /* Two Iallreduce in flight, completed in reverse order. */
    {
        int n = 5000;
        int *x = malloc(sizeof(int) * (size_t)n * 4), *y = x + n, *z = x + 2 * n, *w = x + 3 * n;
        for (int i = 0; i < n; i++)
            x[i] = cu_val(me, (size_t)i, 80), z[i] = cu_val(me, (size_t)i, 81);
        MPI_Request r[2];
        MPICHK(MPI_Iallreduce(x, y, n, MPI_INT, MPI_SUM, comm, &r[0]));
        MPICHK(MPI_Iallreduce(z, w, n, MPI_INT, MPI_MAX, comm, &r[1]));
        MPICHK(MPI_Wait(&r[1], MPI_STATUS_IGNORE));
        MPICHK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
        for (int i = 0; i < n; i++) {
            int s = 0, m = -1000;
            for (int q = 0; q < p; q++) {
                s += cu_val(q, (size_t)i, 80);
                m = cu_val(q, (size_t)i, 81) > m ? cu_val(q, (size_t)i, 81) : m;
            }
            CHECK(y[i] == s && w[i] == m, "%s two Iallreduce in flight [%d]", what, i);
        }
        /* A mix under one Waitall, and compute while testing. */
        int root = p - 1;
        int *bc = malloc(sizeof(int) * 1000), *ag = malloc(sizeof(int) * (size_t)p), *sc = malloc(sizeof(int) * 100);
        for (int i = 0; i < 1000; i++)
            bc[i] = me == root ? cu_val(root, (size_t)i, 82) : 0;
        int one = me + 1, ssum = 0;
        MPI_Request m[5];
        MPICHK(MPI_Ibcast(bc, 1000, MPI_INT, root, comm, &m[0]));
        MPICHK(MPI_Iallgather(&one, 1, MPI_INT, ag, 1, MPI_INT, comm, &m[1]));
        MPICHK(MPI_Iallreduce(x, y, n, MPI_INT, MPI_SUM, comm, &m[2]));
        MPICHK(MPI_Ibarrier(comm, &m[3]));
        MPICHK(MPI_Iscan(&one, &ssum, 1, MPI_INT, MPI_SUM, comm, &m[4]));
        volatile double acc = 0;
        int flag = 0, spins = 0;
        while (!flag) {
            for (int k = 0; k < 1000; k++)
                acc += k * 0.5;
            MPICHK(MPI_Testall(5, m, &flag, MPI_STATUSES_IGNORE));
            spins++;
        }
        for (int i = 0; i < 1000; i++)
            CHECK(bc[i] == cu_val(root, (size_t)i, 82), "%s Ibcast in a mix", what);
        for (int q = 0; q < p; q++)
            CHECK(ag[q] == q + 1, "%s Iallgather in a mix", what);
        CHECK(ssum == (me + 1) * (me + 2) / 2, "%s Iscan in a mix", what);
        for (int i = 0; i < n; i++) {
            int s = 0;
            for (int q = 0; q < p; q++)
                s += cu_val(q, (size_t)i, 80);
            CHECK(y[i] == s, "%s Iallreduce in a mix", what);
        }
        free(x), free(bc), free(ag), free(sc);
    }
    /* A derived type freed right after the nonblocking calls that use it. */
    {
        MPI_Datatype vec;
        MPICHK(MPI_Type_vector(100, 1, 2, MPI_INT, &vec));
        MPICHK(MPI_Type_commit(&vec));
        int *x = malloc(sizeof(int) * 200 * 3), *y = x + 200, *z = x + 400;
        for (int i = 0; i < 200; i++)
            x[i] = cu_val(me, (size_t)i, 83), y[i] = -1, z[i] = me == 0 ? x[i] : -1;
        MPI_Request r[2];
        MPICHK(MPI_Iallreduce(x, y, 1, vec, MPI_SUM, comm, &r[0]));
        MPICHK(MPI_Ibcast(z, 1, vec, 0, comm, &r[1]));
        MPICHK(MPI_Type_free(&vec));
        MPICHK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
        for (int i = 0; i < 200; i++) {
            int s = 0;
            for (int q = 0; q < p; q++)
                s += cu_val(q, (size_t)i, 83);
            CHECK(y[i] == (i % 2 ? -1 : s), "%s Iallreduce on a freed type [%d]", what, i);
            CHECK(z[i] == (i % 2 && me ? -1 : cu_val(0, (size_t)i, 83)), "%s Ibcast on a freed type [%d]", what, i);
        }
        free(x);
    }
}

int main(int argc, char **argv)
{
    cu_init(&argc, &argv, "coll_scan");
    test_comm(MPI_COMM_WORLD, "world");
    cu_each_subcomm(test_comm);
    cu_finish();
    return 0;
}
