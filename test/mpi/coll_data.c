/*
 * The data-movement collectives against a serial reference: Gather(v),
 * Scatter(v), Allgather(v), Alltoall(v,w), blocking and nonblocking
 * (alternating), every root, counts 0, 1, odd, large, MPI_IN_PLACE,
 * different send and receive types (a strided vector against contiguous
 * ints), on MPI_COMM_WORLD and sub-communicators of every size below it
 * (cu_each_subcomm). Algorithms are
 * forced by BMPI_COLL_* from coll_data.sh.
 */
#include "coll_util.h"

static int nb;

static void done(int rc, MPI_Request *rq)
{
    MPICHK(rc);
    if (nb) {
        int flag = 0;
        while (!flag)
            MPICHK(MPI_Test(rq, &flag, MPI_STATUS_IGNORE));
    }
}
#define RUN(blocking, nonblocking)                                                                 \
    do {                                                                                           \
        MPI_Request rq_ = MPI_REQUEST_NULL;                                                        \
        (void)rq_;                                                                                 \
        done(nb ? nonblocking : blocking, &rq_);                                                   \
    } while (0)

/* Element k of the block that rank `from` sends to rank `to`. */
static int V(int from, int to, size_t k) { return cu_val(from, (size_t)to * 1000003u + k, 5); }

static void test_comm(MPI_Comm comm, const char *what)
{
    int p, me;
    MPICHK(MPI_Comm_size(comm, &p));
    MPICHK(MPI_Comm_rank(comm, &me));
    const int counts[] = {0, 1, 5, 1000, 1 << 16};
    size_t maxn = 1 << 16;
    int *sb = malloc(sizeof(int) * maxn * (size_t)p * 2), *rb = malloc(sizeof(int) * maxn * (size_t)p * 2);
    int *cnt = malloc(sizeof(int) * (size_t)p * 4), *dsp = cnt + p, *cnt2 = cnt + 2 * p, *dsp2 = cnt + 3 * p;
    CHECK(sb && rb && cnt, "malloc");
    for (int ci = 0; ci < 5; ci++) {
        int n = counts[ci];
        bool big = n == 1 << 16;
        nb = ci & 1;
        for (int root = 0; root < p; root++) {
            if (big && root != p - 1)
                continue;
            /* Gather: everyone's block for `root`. */
            for (int inpl = 0; inpl < 2; inpl++) {
                for (int k = 0; k < n; k++)
                    sb[k] = V(me, root, (size_t)k);
                memset(rb, 0xff, sizeof(int) * (size_t)n * (size_t)p);
                bool ip = inpl && me == root;
                if (ip)
                    memcpy(rb + (size_t)me * (size_t)n, sb, sizeof(int) * (size_t)n);
                RUN(MPI_Gather(ip ? MPI_IN_PLACE : sb, n, MPI_INT, rb, n, MPI_INT, root, comm),
                    MPI_Igather(ip ? MPI_IN_PLACE : sb, n, MPI_INT, rb, n, MPI_INT, root, comm, &rq_));
                if (me == root)
                    for (int i = 0; i < p; i++)
                        for (int k = 0; k < n; k++)
                            CHECK(rb[(size_t)i * (size_t)n + (size_t)k] == V(i, root, (size_t)k),
                                  "%s gather root %d n=%d from %d [%d]", what, root, n, i, k);
            }
            /* Scatter: root's block i to rank i. */
            for (int inpl = 0; inpl < 2; inpl++) {
                if (me == root)
                    for (int i = 0; i < p; i++)
                        for (int k = 0; k < n; k++)
                            sb[(size_t)i * (size_t)n + (size_t)k] = V(root, i, (size_t)k);
                memset(rb, 0xff, sizeof(int) * (size_t)n);
                bool ip = inpl && me == root;
                RUN(MPI_Scatter(sb, n, MPI_INT, ip ? MPI_IN_PLACE : rb, n, MPI_INT, root, comm),
                    MPI_Iscatter(sb, n, MPI_INT, ip ? MPI_IN_PLACE : rb, n, MPI_INT, root, comm, &rq_));
                if (!ip)
                    for (int k = 0; k < n; k++)
                        CHECK(rb[k] == V(root, me, (size_t)k), "%s scatter root %d n=%d [%d]", what, root, n, k);
            }
            /* Gatherv/Scatterv: rank i's block has (i % 3) * n elements, blocks in reverse order. */
            {
                size_t tot = 0;
                for (int i = p - 1; i >= 0; i--)
                    cnt[i] = (i % 3) * n, dsp[i] = (int)tot, tot += (size_t)cnt[i];
                if (tot > maxn * (size_t)p * 2)
                    continue;
                int mine = cnt[me];
                for (int k = 0; k < mine; k++)
                    sb[k] = V(me, root, (size_t)k);
                memset(rb, 0xff, sizeof(int) * tot);
                RUN(MPI_Gatherv(sb, mine, MPI_INT, rb, cnt, dsp, MPI_INT, root, comm),
                    MPI_Igatherv(sb, mine, MPI_INT, rb, cnt, dsp, MPI_INT, root, comm, &rq_));
                if (me == root)
                    for (int i = 0; i < p; i++)
                        for (int k = 0; k < cnt[i]; k++)
                            CHECK(rb[dsp[i] + k] == V(i, root, (size_t)k), "%s gatherv root %d", what, root);
                if (me == root)
                    for (int i = 0; i < p; i++)
                        for (int k = 0; k < cnt[i]; k++)
                            sb[dsp[i] + k] = V(root, i, (size_t)k);
                memset(rb, 0xff, sizeof(int) * (size_t)(mine + 1));
                RUN(MPI_Scatterv(sb, cnt, dsp, MPI_INT, rb, mine, MPI_INT, root, comm),
                    MPI_Iscatterv(sb, cnt, dsp, MPI_INT, rb, mine, MPI_INT, root, comm, &rq_));
                for (int k = 0; k < mine; k++)
                    CHECK(rb[k] == V(root, me, (size_t)k), "%s scatterv root %d [%d]", what, root, k);
                CHECK(rb[mine] == -1, "%s scatterv wrote past its block", what);
            }
        }
        /* Allgather (+ in place), then with a strided send type. */
        for (int inpl = 0; inpl < 2; inpl++) {
            for (int k = 0; k < n; k++)
                sb[k] = V(me, 0, (size_t)k);
            memset(rb, 0xff, sizeof(int) * (size_t)n * (size_t)p);
            if (inpl)
                memcpy(rb + (size_t)me * (size_t)n, sb, sizeof(int) * (size_t)n);
            RUN(MPI_Allgather(inpl ? MPI_IN_PLACE : sb, n, MPI_INT, rb, n, MPI_INT, comm),
                MPI_Iallgather(inpl ? MPI_IN_PLACE : sb, n, MPI_INT, rb, n, MPI_INT, comm, &rq_));
            for (int i = 0; i < p; i++)
                for (int k = 0; k < n; k++)
                    CHECK(rb[(size_t)i * (size_t)n + (size_t)k] == V(i, 0, (size_t)k),
                          "%s allgather%s n=%d from %d [%d] = %d", what, inpl ? " in place" : "", n, i, k,
                          rb[(size_t)i * (size_t)n + (size_t)k]);
        }
        if (!big) {
            MPI_Datatype vec;
            MPICHK(MPI_Type_vector(n > 0 ? n : 1, 1, 2, MPI_INT, &vec));
            MPICHK(MPI_Type_commit(&vec));
            for (int k = 0; k < 2 * n; k++)
                sb[k] = k % 2 ? -5 : V(me, 1, (size_t)k / 2);
            memset(rb, 0xff, sizeof(int) * (size_t)n * (size_t)p);
            RUN(MPI_Allgather(sb, n > 0, vec, rb, n, MPI_INT, comm),
                MPI_Iallgather(sb, n > 0, vec, rb, n, MPI_INT, comm, &rq_));
            for (int i = 0; i < p; i++)
                for (int k = 0; k < n; k++)
                    CHECK(rb[(size_t)i * (size_t)n + (size_t)k] == V(i, 1, (size_t)k), "%s allgather vector", what);
            MPICHK(MPI_Type_free(&vec));
            /* Allgatherv, blocks of (i % 3) * n in reverse order, and in place. */
            size_t tot = 0;
            for (int i = p - 1; i >= 0; i--)
                cnt[i] = (i % 3) * n, dsp[i] = (int)tot, tot += (size_t)cnt[i];
            for (int inpl = 0; inpl < 2; inpl++) {
                memset(rb, 0xff, sizeof(int) * tot);
                for (int k = 0; k < cnt[me]; k++)
                    sb[k] = V(me, 2, (size_t)k);
                if (inpl)
                    memcpy(rb + dsp[me], sb, sizeof(int) * (size_t)cnt[me]);
                RUN(MPI_Allgatherv(inpl ? MPI_IN_PLACE : sb, cnt[me], MPI_INT, rb, cnt, dsp, MPI_INT, comm),
                    MPI_Iallgatherv(inpl ? MPI_IN_PLACE : sb, cnt[me], MPI_INT, rb, cnt, dsp, MPI_INT, comm, &rq_));
                for (int i = 0; i < p; i++)
                    for (int k = 0; k < cnt[i]; k++)
                        CHECK(rb[dsp[i] + k] == V(i, 2, (size_t)k), "%s allgatherv", what);
            }
        }
        /* Alltoall (+ in place). */
        for (int inpl = 0; inpl < 2; inpl++) {
            for (int i = 0; i < p; i++)
                for (int k = 0; k < n; k++)
                    sb[(size_t)i * (size_t)n + (size_t)k] = V(me, i, (size_t)k);
            if (inpl)
                memcpy(rb, sb, sizeof(int) * (size_t)n * (size_t)p);
            else
                memset(rb, 0xff, sizeof(int) * (size_t)n * (size_t)p);
            RUN(MPI_Alltoall(inpl ? MPI_IN_PLACE : sb, n, MPI_INT, rb, n, MPI_INT, comm),
                MPI_Ialltoall(inpl ? MPI_IN_PLACE : sb, n, MPI_INT, rb, n, MPI_INT, comm, &rq_));
            for (int i = 0; i < p; i++)
                for (int k = 0; k < n; k++)
                    CHECK(rb[(size_t)i * (size_t)n + (size_t)k] == V(i, me, (size_t)k),
                          "%s alltoall%s n=%d from %d [%d]", what, inpl ? " in place" : "", n, i, k);
        }
        if (big)
            continue;
        /* Alltoallv: to rank j, (me + j) % 3 * n elements; blocks laid out in reverse. */
        {
            size_t st = 0, rt = 0;
            for (int j = p - 1; j >= 0; j--) {
                cnt[j] = (me + j) % 3 * n, dsp[j] = (int)st, st += (size_t)cnt[j];
                cnt2[j] = (j + me) % 3 * n, dsp2[j] = (int)rt, rt += (size_t)cnt2[j];
            }
            for (int j = 0; j < p; j++)
                for (int k = 0; k < cnt[j]; k++)
                    sb[dsp[j] + k] = V(me, j, (size_t)k);
            memset(rb, 0xff, sizeof(int) * rt);
            RUN(MPI_Alltoallv(sb, cnt, dsp, MPI_INT, rb, cnt2, dsp2, MPI_INT, comm),
                MPI_Ialltoallv(sb, cnt, dsp, MPI_INT, rb, cnt2, dsp2, MPI_INT, comm, &rq_));
            for (int j = 0; j < p; j++)
                for (int k = 0; k < cnt2[j]; k++)
                    CHECK(rb[dsp2[j] + k] == V(j, me, (size_t)k), "%s alltoallv from %d [%d]", what, j, k);
            /* Alltoallw: ints sent, received as MPI_FLOAT-sized... as MPI_BYTE x 4; byte displacements. */
            MPI_Datatype *ts = malloc(sizeof(MPI_Datatype) * 2 * (size_t)p);
            int *bc = malloc(sizeof(int) * 4 * (size_t)p), *bd = bc + p, *bc2 = bc + 2 * p, *bd2 = bc + 3 * p;
            for (int j = 0; j < p; j++) {
                ts[j] = MPI_INT, ts[p + j] = MPI_BYTE;
                bc[j] = cnt[j], bd[j] = dsp[j] * 4;
                bc2[j] = cnt2[j] * 4, bd2[j] = dsp2[j] * 4;
            }
            memset(rb, 0xff, sizeof(int) * rt);
            RUN(MPI_Alltoallw(sb, bc, bd, ts, rb, bc2, bd2, ts + p, comm),
                MPI_Ialltoallw(sb, bc, bd, ts, rb, bc2, bd2, ts + p, comm, &rq_));
            for (int j = 0; j < p; j++)
                for (int k = 0; k < cnt2[j]; k++)
                    CHECK(rb[dsp2[j] + k] == V(j, me, (size_t)k), "%s alltoallw from %d [%d]", what, j, k);
            /* Alltoallv in place: symmetric counts. */
            size_t tt = 0;
            for (int j = 0; j < p; j++)
                cnt[j] = (me + j) % 3 * n, dsp[j] = (int)tt, tt += (size_t)cnt[j];
            for (int j = 0; j < p; j++)
                for (int k = 0; k < cnt[j]; k++)
                    rb[dsp[j] + k] = V(me, j, (size_t)k);
            RUN(MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, rb, cnt, dsp, MPI_INT, comm),
                MPI_Ialltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, rb, cnt, dsp, MPI_INT, comm, &rq_));
            for (int j = 0; j < p; j++)
                for (int k = 0; k < cnt[j]; k++)
                    CHECK(rb[dsp[j] + k] == V(j, me, (size_t)k), "%s alltoallv in place from %d", what, j);
            free(ts), free(bc);
        }
    }
    free(sb), free(rb), free(cnt);
}

static void test_errors(void)
{
    int x[64] = {0}, y[64], c[64], d[64];
    int p = cu_size;
    if (p > 64)
        return;
    for (int i = 0; i < p; i++)
        c[i] = 1, d[i] = i;
    EXPECT_CLASS(MPI_Gather(x, 1, MPI_INT, y, 1, MPI_INT, p, MPI_COMM_WORLD), MPI_ERR_ROOT);
    EXPECT_CLASS(MPI_Scatter(x, 1, MPI_INT, y, 1, MPI_INT, -2, MPI_COMM_WORLD), MPI_ERR_ROOT);
    EXPECT_CLASS(MPI_Allgather(x, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    EXPECT_CLASS(MPI_Alltoall(x, -1, MPI_INT, y, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Allgather(x, 1, MPI_INT, y, 1, MPI_DATATYPE_NULL, MPI_COMM_WORLD), MPI_ERR_TYPE);
    c[p - 1] = -1;
    EXPECT_CLASS(MPI_Allgatherv(x, 1, MPI_INT, y, c, d, MPI_INT, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Gatherv(x, 1, MPI_INT, y, c, d, MPI_INT, cu_rank, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Alltoallv(x, c, d, MPI_INT, y, c, d, MPI_INT, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Reduce_scatter_block(x, y, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Reduce_scatter(x, y, c, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Reduce_scatter_block(x, y, 1, MPI_FLOAT, MPI_BXOR, MPI_COMM_WORLD), MPI_ERR_OP);
    EXPECT_CLASS(MPI_Scan(x, y, 1, MPI_INT, MPI_MAXLOC, MPI_COMM_WORLD), MPI_ERR_OP);
    EXPECT_CLASS(MPI_Exscan(x, y, 1, MPI_INT, MPI_SUM, MPI_COMM_NULL), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Gather(x, 1, MPI_INT, y, 1, MPI_INT, 0, MPI_COMM_NULL), MPI_ERR_COMM);
    if (p > 1)
        EXPECT_CLASS(MPI_Scatter(x, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, (cu_rank + 1) % p, MPI_COMM_WORLD),
                     MPI_ERR_BUFFER);
    MPI_Request rq;
    EXPECT_CLASS(MPI_Ialltoall(x, 1, MPI_INT, y, 1, MPI_INT, MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Igather(x, 1, MPI_INT, y, 1, MPI_INT, p + 1, MPI_COMM_WORLD, &rq), MPI_ERR_ROOT);
}

int main(int argc, char **argv)
{
    cu_init(&argc, &argv, "coll_data");
    test_errors();
    test_comm(MPI_COMM_WORLD, "world");
    cu_each_subcomm(test_comm);
    cu_finish();
    return 0;
}
