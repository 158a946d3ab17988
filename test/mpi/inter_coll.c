/*
 * Collectives on intercommunicators: two intercommunicators made with
 * MPI_Intercomm_create from splits of the world (the first third against
 * the rest, ranks in reverse order; the even against the odd ranks), so the
 * groups have unequal sizes and a local rank is not the world rank. Every
 * collective, blocking, nonblocking and persistent, with each group as the
 * root's group; the data checked on both sides, buffers of ranks that take
 * no part untouched; a non-commutative op shows the order of a reduction.
 * Errors: roots out of range, MPI_IN_PLACE, Scan and Exscan.
 */
#include "coll_util.h"

enum mode { BLOCKING, NONBLOCKING, PERSISTENT };
static const char *mode_name[] = {"blocking", "nonblocking", "persistent"};

/* The blocking call, the nonblocking one and a wait, or the persistent
 * one started once, of one collective. */
#define COLL(mode, Name, name, ...)                                                                \
    do {                                                                                           \
        MPI_Request r_;                                                                            \
        if ((mode) == BLOCKING) {                                                                  \
            MPICHK(MPI_##Name(__VA_ARGS__));                                                       \
        } else if ((mode) == NONBLOCKING) {                                                        \
            MPICHK(MPI_I##name(__VA_ARGS__, &r_));                                                 \
            MPICHK(MPI_Wait(&r_, MPI_STATUS_IGNORE));                                              \
        } else {                                                                                   \
            MPICHK(MPI_##Name##_init(__VA_ARGS__, MPI_INFO_NULL, &r_));                            \
            MPICHK(MPI_Start(&r_));                                                                \
            MPICHK(MPI_Wait(&r_, MPI_STATUS_IGNORE));                                              \
            MPICHK(MPI_Request_free(&r_));                                                         \
        }                                                                                          \
    } while (0)

#define SENTINEL (-77777)

/* This process in one intercommunicator. */
struct ic {
    MPI_Comm comm;
    const char *what;
    int group;        /* 0 or 1 */
    int rank, lsize;  /* in the local group */
    int rsize;        /* remote group's size */
};

/* The value of element i sent by local rank r of group g. */
static int val(int g, int r, size_t i, int salt) { return cu_val(1000 * g + r, i, salt); }

static int *ints(size_t n, int fill)
{
    int *p = malloc((n ? n : 1) * sizeof(int));
    for (size_t i = 0; i < n; i++)
        p[i] = fill;
    return p;
}

static void check_untouched(const int *b, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++)
        CHECK(b[i] == SENTINEL, "%s: [%zu] written (%d) at a rank that takes no part", what, i,
              b[i]);
}

/* Root arguments for a call whose root is local rank root_rank of group
 * root_group. */
static int root_arg(const struct ic *x, int root_group, int root_rank)
{
    if (x->group != root_group)
        return root_rank;
    return x->rank == root_rank ? MPI_ROOT : MPI_PROC_NULL;
}

/* --- barrier ----------------------------------------------------------------- */

/* Group early's nonblocking or persistent barrier must not complete before
 * the other group enters, which it does only after an allreduce over the
 * world that every process of group early joins once it has tested its
 * request. (The other group makes the same kind of call: a nonblocking
 * collective never matches a blocking one.) */
static void check_barrier(const struct ic *x, int early, enum mode mode)
{
    if (mode == BLOCKING) {
        MPICHK(MPI_Barrier(x->comm));
        return;
    }
    MPI_Request r;
    int go = 1, all;
    if (x->group != early)
        MPICHK(MPI_Allreduce(&go, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    if (mode == NONBLOCKING)
        MPICHK(MPI_Ibarrier(x->comm, &r));
    else
        MPICHK(MPI_Barrier_init(x->comm, MPI_INFO_NULL, &r));
    if (mode == PERSISTENT)
        MPICHK(MPI_Start(&r));
    if (x->group == early) {
        for (int k = 0; k < 50; k++) {
            int flag = 1;
            MPICHK(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
            CHECK(!flag, "%s: %s barrier done before the other group entered", x->what,
                  mode_name[mode]);
        }
        MPICHK(MPI_Allreduce(&go, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    }
    MPICHK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    if (mode == PERSISTENT)
        MPICHK(MPI_Request_free(&r));
}

/* --- rooted ------------------------------------------------------------------- */

static void check_bcast(const struct ic *x, int rg, int rr, enum mode mode)
{
    const size_t n = 37;
    int root = root_arg(x, rg, rr);
    int *b = ints(n, SENTINEL);
    if (root == MPI_ROOT)
        for (size_t i = 0; i < n; i++)
            b[i] = val(rg, rr, i, 1);
    COLL(mode, Bcast, bcast, b, (int)n, MPI_INT, root, x->comm);
    if (root == MPI_PROC_NULL)
        check_untouched(b, n, "bcast");
    else
        for (size_t i = 0; i < n; i++)
            CHECK(b[i] == val(rg, rr, i, 1), "%s: bcast [%zu] = %d", x->what, i, b[i]);
    free(b);
}

static MPI_Op matmul_op;
static MPI_Datatype mat_type;

/* The other group's (size m) matrices multiplied in rank order. */
static void mat_product(int g, int m, size_t i, unsigned *out)
{
    cu_mat_of(out, 1000 * g + m - 1, i, 4);
    for (int r = m - 2; r >= 0; r--) {
        unsigned a[4];
        int len = 1;
        cu_mat_of(a, 1000 * g + r, i, 4);
        cu_matmul(a, out, &len, NULL);
    }
}

static void fill_mats(unsigned *m, int g, int r, size_t n)
{
    for (size_t i = 0; i < n; i++)
        cu_mat_of(m + 4 * i, 1000 * g + r, i, 4);
}

static void check_reduce(const struct ic *x, int rg, int rr, enum mode mode)
{
    const size_t n = 21;
    int root = root_arg(x, rg, rr);
    int *s = ints(n, 0), *r = ints(n, SENTINEL);
    unsigned *ms = calloc(4 * n, sizeof(unsigned)), *mr = calloc(4 * n, sizeof(unsigned));
    for (size_t i = 0; i < n; i++)
        s[i] = val(x->group, x->rank, i, 2);
    fill_mats(ms, x->group, x->rank, n);
    COLL(mode, Reduce, reduce, s, r, (int)n, MPI_INT, MPI_SUM, root, x->comm);
    COLL(mode, Reduce, reduce, ms, mr, (int)n, mat_type, matmul_op, root, x->comm);
    if (root == MPI_PROC_NULL) {
        check_untouched(r, n, "reduce");
    } else if (root == MPI_ROOT) {
        for (size_t i = 0; i < n; i++) {
            int want = 0;
            for (int j = 0; j < x->rsize; j++)
                want += val(1 - x->group, j, i, 2);
            CHECK(r[i] == want, "%s: reduce [%zu] = %d, want %d", x->what, i, r[i], want);
            unsigned m[4];
            mat_product(1 - x->group, x->rsize, i, m);
            CHECK(!memcmp(m, mr + 4 * i, sizeof(m)),
                  "%s: reduce of matrices [%zu] in the wrong order", x->what, i);
        }
    }
    free(s), free(r), free(ms), free(mr);
}

static void check_gather(const struct ic *x, int rg, int rr, enum mode mode)
{
    const int n = 6;
    int root = root_arg(x, rg, rr);
    size_t all = (size_t)x->rsize * n;
    int *s = ints(n, 0), *r = ints(all, SENTINEL);
    for (int i = 0; i < n; i++)
        s[i] = val(x->group, x->rank, (size_t)i, 3);
    COLL(mode, Gather, gather, s, n, MPI_INT, r, n, MPI_INT, root, x->comm);
    if (root == MPI_PROC_NULL)
        check_untouched(r, all, "gather");
    if (root == MPI_ROOT)
        for (int j = 0; j < x->rsize; j++)
            for (int i = 0; i < n; i++)
                CHECK(r[j * n + i] == val(1 - x->group, j, (size_t)i, 3),
                      "%s: gather block %d [%d] = %d", x->what, j, i, r[j * n + i]);
    free(s), free(r);
}

/* Counts and displacements (with gaps) of the v calls: block j has
 * j % 3 + 1 + extra elements. */
static int v_layout(int p, int extra, int *counts, int *displs)
{
    int at = 0;
    for (int j = 0; j < p; j++) {
        counts[j] = j % 3 + 1 + extra;
        displs[j] = at + 1;
        at += counts[j] + 2;
    }
    return at;
}

static void check_gatherv(const struct ic *x, int rg, int rr, enum mode mode)
{
    int root = root_arg(x, rg, rr);
    int *counts = ints((size_t)x->rsize, 0), *displs = ints((size_t)x->rsize, 0);
    int all = v_layout(x->rsize, 0, counts, displs);
    int mine = x->rank % 3 + 1;
    int *s = ints((size_t)mine, 0), *r = ints((size_t)all, SENTINEL);
    for (int i = 0; i < mine; i++)
        s[i] = val(x->group, x->rank, (size_t)i, 5);
    COLL(mode, Gatherv, gatherv, s, mine, MPI_INT, r, counts, displs, MPI_INT, root, x->comm);
    if (root == MPI_PROC_NULL)
        check_untouched(r, (size_t)all, "gatherv");
    if (root == MPI_ROOT) {
        for (int j = 0; j < x->rsize; j++) {
            for (int i = 0; i < counts[j]; i++)
                CHECK(r[displs[j] + i] == val(1 - x->group, j, (size_t)i, 5),
                      "%s: gatherv block %d [%d] = %d", x->what, j, i, r[displs[j] + i]);
            CHECK(r[displs[j] - 1] == SENTINEL, "%s: gatherv wrote a gap", x->what);
        }
    }
    free(counts), free(displs), free(s), free(r);
}

static void check_scatter(const struct ic *x, int rg, int rr, enum mode mode)
{
    const int n = 5;
    int root = root_arg(x, rg, rr);
    size_t all = (size_t)x->rsize * n;
    int *s = ints(all, 0), *r = ints(n, SENTINEL);
    for (int j = 0; j < x->rsize; j++)
        for (int i = 0; i < n; i++)
            s[j * n + i] = val(x->group, j, (size_t)i, 6);
    COLL(mode, Scatter, scatter, s, n, MPI_INT, r, n, MPI_INT, root, x->comm);
    if (root != MPI_ROOT && root != MPI_PROC_NULL)
        for (int i = 0; i < n; i++)
            CHECK(r[i] == val(rg, x->rank, (size_t)i, 6), "%s: scatter [%d] = %d", x->what, i,
                  r[i]);
    else
        check_untouched(r, n, "scatter");
    free(s), free(r);
}

static void check_scatterv(const struct ic *x, int rg, int rr, enum mode mode)
{
    int root = root_arg(x, rg, rr);
    int *counts = ints((size_t)x->rsize, 0), *displs = ints((size_t)x->rsize, 0);
    int all = v_layout(x->rsize, 1, counts, displs);
    int mine = x->rank % 3 + 2;
    int *s = ints((size_t)all, 0), *r = ints((size_t)mine, SENTINEL);
    for (int j = 0; j < x->rsize; j++)
        for (int i = 0; i < counts[j]; i++)
            s[displs[j] + i] = val(x->group, j, (size_t)i, 7);
    COLL(mode, Scatterv, scatterv, s, counts, displs, MPI_INT, r, mine, MPI_INT, root, x->comm);
    if (root != MPI_ROOT && root != MPI_PROC_NULL)
        for (int i = 0; i < mine; i++)
            CHECK(r[i] == val(rg, x->rank, (size_t)i, 7), "%s: scatterv [%d] = %d", x->what, i,
                  r[i]);
    else
        check_untouched(r, (size_t)mine, "scatterv");
    free(counts), free(displs), free(s), free(r);
}

/* --- no root -------------------------------------------------------------------- */

static void check_allreduce(const struct ic *x, enum mode mode)
{
    const size_t n = 300; /* more elements than ranks: another algorithm locally */
    int *s = ints(n, 0), *r = ints(n, SENTINEL);
    unsigned *ms = calloc(4 * 3, sizeof(unsigned)), *mr = calloc(4 * 3, sizeof(unsigned));
    for (size_t i = 0; i < n; i++)
        s[i] = val(x->group, x->rank, i, 8);
    fill_mats(ms, x->group, x->rank, 3);
    COLL(mode, Allreduce, allreduce, s, r, (int)n, MPI_INT, MPI_SUM, x->comm);
    COLL(mode, Allreduce, allreduce, ms, mr, 3, mat_type, matmul_op, x->comm);
    for (size_t i = 0; i < n; i++) {
        int want = 0;
        for (int j = 0; j < x->rsize; j++)
            want += val(1 - x->group, j, i, 8);
        CHECK(r[i] == want, "%s: allreduce [%zu] = %d, want %d", x->what, i, r[i], want);
    }
    for (size_t i = 0; i < 3; i++) {
        unsigned m[4];
        mat_product(1 - x->group, x->rsize, i, m);
        CHECK(!memcmp(m, mr + 4 * i, sizeof(m)),
              "%s: allreduce of matrices [%zu] in the wrong order", x->what, i);
    }
    free(s), free(r), free(ms), free(mr);
}

static void check_allgather(const struct ic *x, enum mode mode)
{
    /* each group sends its own count: 2 from group 0, 3 from group 1 */
    int sn = 2 + x->group, rn = 3 - x->group;
    size_t all = (size_t)x->rsize * (size_t)rn;
    int *s = ints((size_t)sn, 0), *r = ints(all, SENTINEL);
    for (int i = 0; i < sn; i++)
        s[i] = val(x->group, x->rank, (size_t)i, 9);
    COLL(mode, Allgather, allgather, s, sn, MPI_INT, r, rn, MPI_INT, x->comm);
    for (int j = 0; j < x->rsize; j++)
        for (int i = 0; i < rn; i++)
            CHECK(r[j * rn + i] == val(1 - x->group, j, (size_t)i, 9),
                  "%s: allgather block %d [%d] = %d", x->what, j, i, r[j * rn + i]);
    free(s), free(r);
}

static void check_allgatherv(const struct ic *x, enum mode mode)
{
    int *counts = ints((size_t)x->rsize, 0), *displs = ints((size_t)x->rsize, 0);
    int all = v_layout(x->rsize, 1 - x->group, counts, displs);
    int mine = x->rank % 3 + 1 + x->group;
    int *s = ints((size_t)mine, 0), *r = ints((size_t)all, SENTINEL);
    for (int i = 0; i < mine; i++)
        s[i] = val(x->group, x->rank, (size_t)i, 10);
    COLL(mode, Allgatherv, allgatherv, s, mine, MPI_INT, r, counts, displs, MPI_INT, x->comm);
    for (int j = 0; j < x->rsize; j++) {
        for (int i = 0; i < counts[j]; i++)
            CHECK(r[displs[j] + i] == val(1 - x->group, j, (size_t)i, 10),
                  "%s: allgatherv block %d [%d] = %d", x->what, j, i, r[displs[j] + i]);
        CHECK(r[displs[j] - 1] == SENTINEL, "%s: allgatherv wrote a gap", x->what);
    }
    free(counts), free(displs), free(s), free(r);
}

/* Element i of the block local rank `from` of group g sends to rank `to`. */
static int a2a_val(int g, int from, int to, int i)
{
    return val(g, from, (size_t)(100 * to + i), 11);
}

static void check_alltoall(const struct ic *x, enum mode mode)
{
    const int n = 4;
    size_t all = (size_t)x->rsize * n;
    int *s = ints(all, 0), *r = ints(all, SENTINEL);
    for (int j = 0; j < x->rsize; j++)
        for (int i = 0; i < n; i++)
            s[j * n + i] = a2a_val(x->group, x->rank, j, i);
    COLL(mode, Alltoall, alltoall, s, n, MPI_INT, r, n, MPI_INT, x->comm);
    for (int j = 0; j < x->rsize; j++)
        for (int i = 0; i < n; i++)
            CHECK(r[j * n + i] == a2a_val(1 - x->group, j, x->rank, i),
                  "%s: alltoall block %d [%d] = %d", x->what, j, i, r[j * n + i]);
    free(s), free(r);
}

/* Alltoallv and alltoallw: from local rank a to local rank b go
 * (a + 2b) % 3 + 1 elements. */
static int vcount(int from, int to) { return (from + 2 * to) % 3 + 1; }

static void check_alltoallvw(const struct ic *x, enum mode mode, bool w)
{
    int p = x->rsize;
    int *sc = ints((size_t)p, 0), *sd = ints((size_t)p, 0), *rc = ints((size_t)p, 0),
        *rd = ints((size_t)p, 0);
    MPI_Datatype *types = malloc((size_t)p * sizeof(MPI_Datatype));
    int sall = 0, rall = 0;
    for (int j = 0; j < p; j++) {
        sc[j] = vcount(x->rank, j), rc[j] = vcount(j, x->rank);
        sd[j] = sall, rd[j] = rall + 1;
        sall += sc[j], rall += rc[j] + 1;
        types[j] = MPI_INT;
    }
    int *s = ints((size_t)sall, 0), *r = ints((size_t)rall + 1, SENTINEL);
    for (int j = 0; j < p; j++)
        for (int i = 0; i < sc[j]; i++)
            s[sd[j] + i] = a2a_val(x->group, x->rank, j, i);
    if (w) {
        for (int j = 0; j < p; j++)
            sd[j] *= (int)sizeof(int), rd[j] *= (int)sizeof(int);
        COLL(mode, Alltoallw, alltoallw, s, sc, sd, types, r, rc, rd, types, x->comm);
        for (int j = 0; j < p; j++)
            sd[j] /= (int)sizeof(int), rd[j] /= (int)sizeof(int);
    } else {
        COLL(mode, Alltoallv, alltoallv, s, sc, sd, MPI_INT, r, rc, rd, MPI_INT, x->comm);
    }
    for (int j = 0; j < p; j++) {
        for (int i = 0; i < rc[j]; i++)
            CHECK(r[rd[j] + i] == a2a_val(1 - x->group, j, x->rank, i),
                  "%s: alltoall%c block %d [%d] = %d", x->what, w ? 'w' : 'v', j, i, r[rd[j] + i]);
        CHECK(r[rd[j] - 1] == SENTINEL, "%s: alltoall%c wrote a gap", x->what, w ? 'w' : 'v');
    }
    free(sc), free(sd), free(rc), free(rd), free(types), free(s), free(r);
}

/* Reduce_scatter: both groups reduce vectors of TOTAL elements; local rank
 * i of a group of n gets TOTAL / n elements, one more for i < TOTAL % n. */
#define TOTAL 13

static void check_reduce_scatter(const struct ic *x, enum mode mode)
{
    int *counts = ints((size_t)x->lsize, 0), at = 0, mine_at = 0;
    for (int i = 0; i < x->lsize; i++) {
        counts[i] = TOTAL / x->lsize + (i < TOTAL % x->lsize);
        if (i == x->rank)
            mine_at = at;
        at += counts[i];
    }
    int *s = ints(TOTAL, 0), *r = ints((size_t)counts[x->rank], SENTINEL);
    for (size_t i = 0; i < TOTAL; i++)
        s[i] = val(x->group, x->rank, i, 12);
    COLL(mode, Reduce_scatter, reduce_scatter, s, r, counts, MPI_INT, MPI_SUM, x->comm);
    for (int i = 0; i < counts[x->rank]; i++) {
        int want = 0;
        for (int j = 0; j < x->rsize; j++)
            want += val(1 - x->group, j, (size_t)(mine_at + i), 12);
        CHECK(r[i] == want, "%s: reduce_scatter [%d] = %d, want %d", x->what, i, r[i], want);
    }
    free(counts), free(s), free(r);
}

/* Reduce_scatter_block: each rank of a group gets the other group's size
 * of elements, so both groups reduce lsize * rsize. */
static void check_reduce_scatter_block(const struct ic *x, enum mode mode)
{
    int n = x->rsize;
    size_t total = (size_t)x->lsize * (size_t)n;
    int *s = ints(total, 0), *r = ints((size_t)n, SENTINEL);
    for (size_t i = 0; i < total; i++)
        s[i] = val(x->group, x->rank, i, 13);
    COLL(mode, Reduce_scatter_block, reduce_scatter_block, s, r, n, MPI_INT, MPI_SUM, x->comm);
    for (int i = 0; i < n; i++) {
        int want = 0;
        for (int j = 0; j < x->rsize; j++)
            want += val(1 - x->group, j, (size_t)(x->rank * n + i), 13);
        CHECK(r[i] == want, "%s: reduce_scatter_block [%d] = %d, want %d", x->what, i, r[i], want);
    }
    free(s), free(r);
}

/* --- errors ------------------------------------------------------------------------ */

/* Every process makes the same mistake, so none goes on into a call the
 * others never make. */
static void check_errors(const struct ic *x)
{
    int a[4] = {1, 2, 3, 4}, b[64];
    MPI_Request req;
    EXPECT_CLASS(MPI_Bcast(a, 1, MPI_INT, x->rsize, x->comm), MPI_ERR_ROOT);
    EXPECT_CLASS(MPI_Ibcast(a, 1, MPI_INT, -7, x->comm, &req), MPI_ERR_ROOT);
    EXPECT_CLASS(MPI_Reduce(a, b, 1, MPI_INT, MPI_SUM, x->rsize + 3, x->comm), MPI_ERR_ROOT);
    EXPECT_CLASS(MPI_Gather(a, 1, MPI_INT, b, 1, MPI_INT, MPI_ANY_SOURCE, x->comm),
                 MPI_ERR_ROOT);
    EXPECT_CLASS(MPI_Scatter_init(a, 1, MPI_INT, b, 1, MPI_INT, x->rsize, x->comm, MPI_INFO_NULL,
                                  &req),
                 MPI_ERR_ROOT);
    EXPECT_CLASS(MPI_Allreduce(MPI_IN_PLACE, b, 1, MPI_INT, MPI_SUM, x->comm), MPI_ERR_BUFFER);
    EXPECT_CLASS(MPI_Iallgather(MPI_IN_PLACE, 1, MPI_INT, b, 1, MPI_INT, x->comm, &req),
                 MPI_ERR_BUFFER);
    EXPECT_CLASS(MPI_Alltoall(MPI_IN_PLACE, 1, MPI_INT, b, 1, MPI_INT, x->comm), MPI_ERR_BUFFER);
    int counts[64], displs[64];
    for (int i = 0; i < 64; i++)
        counts[i] = 1, displs[i] = i;
    EXPECT_CLASS(MPI_Alltoallv(MPI_IN_PLACE, counts, displs, MPI_INT, b, counts, displs, MPI_INT,
                               x->comm),
                 MPI_ERR_BUFFER);
    EXPECT_CLASS(MPI_Reduce_scatter_block(MPI_IN_PLACE, b, 1, MPI_INT, MPI_SUM, x->comm),
                 MPI_ERR_BUFFER);
    /* the root's own group: MPI_IN_PLACE is not a receive buffer here */
    int root = root_arg(x, 0, 0);
    if (x->group == 0)
        EXPECT_CLASS(MPI_Reduce(a, root == MPI_ROOT ? MPI_IN_PLACE : b, 1, MPI_INT, MPI_SUM,
                                root == MPI_ROOT ? MPI_ROOT : x->rsize, x->comm),
                     root == MPI_ROOT ? MPI_ERR_BUFFER : MPI_ERR_ROOT);
    else
        EXPECT_CLASS(MPI_Reduce(MPI_IN_PLACE, b, 1, MPI_INT, MPI_SUM, 0, x->comm),
                     MPI_ERR_BUFFER);
    EXPECT_CLASS(MPI_Scan(a, b, 1, MPI_INT, MPI_SUM, x->comm), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Iexscan(a, b, 1, MPI_INT, MPI_SUM, x->comm, &req), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Exscan_init(a, b, 1, MPI_INT, MPI_SUM, x->comm, MPI_INFO_NULL, &req),
                 MPI_ERR_COMM);
}

/* --- driver ------------------------------------------------------------------------ */

static void check_all(const struct ic *x)
{
    for (int m = BLOCKING; m <= PERSISTENT; m++) {
        enum mode mode = (enum mode)m;
        for (int rg = 0; rg < 2; rg++) {
            /* the last rank of the root's group: not the leader where it has several */
            int rr = (rg == x->group ? x->lsize : x->rsize) - 1;
            check_barrier(x, rg, mode);
            check_bcast(x, rg, rr, mode);
            check_reduce(x, rg, rr, mode);
            check_gather(x, rg, rr, mode);
            check_gatherv(x, rg, rr, mode);
            check_scatter(x, rg, rr, mode);
            check_scatterv(x, rg, rr, mode);
        }
        check_allreduce(x, mode);
        check_allgather(x, mode);
        check_allgatherv(x, mode);
        check_alltoall(x, mode);
        check_alltoallvw(x, mode, false);
        check_alltoallvw(x, mode, true);
        check_reduce_scatter(x, mode);
        check_reduce_scatter_block(x, mode);
    }
    check_errors(x);
}

/* Nonblocking collectives of both kinds in flight at once, completed in
 * reverse order, while a dup of the intercommunicator (an agreement over
 * each local group) and an allreduce on it run; a strided type freed
 * right after the call that uses it. */
static void check_in_flight(const struct ic *x)
{
    int v = val(x->group, x->rank, 0, 14), sum = SENTINEL, dsum = SENTINEL, got[64], strided[9];
    for (int i = 0; i < 64; i++)
        got[i] = SENTINEL;
    for (int i = 0; i < 9; i++)
        strided[i] = x->group == 0 && x->rank == 0 ? val(0, 0, (size_t)i, 15) : SENTINEL;
    MPI_Datatype every_other;
    MPICHK(MPI_Type_vector(5, 1, 2, MPI_INT, &every_other));
    MPICHK(MPI_Type_commit(&every_other));
    MPI_Request r[4];
    MPICHK(MPI_Iallreduce(&v, &sum, 1, MPI_INT, MPI_SUM, x->comm, &r[0]));
    MPICHK(MPI_Ibarrier(x->comm, &r[1]));
    MPICHK(MPI_Iallgather(&v, 1, MPI_INT, got, 1, MPI_INT, x->comm, &r[2]));
    int root = x->group == 0 ? (x->rank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    MPICHK(MPI_Ibcast(strided, 1, every_other, root, x->comm, &r[3]));
    MPICHK(MPI_Type_free(&every_other));
    MPI_Comm dup;
    MPICHK(MPI_Comm_dup(x->comm, &dup));
    MPICHK(MPI_Allreduce(&v, &dsum, 1, MPI_INT, MPI_SUM, dup));
    MPICHK(MPI_Comm_free(&dup));
    for (int i = 3; i >= 0; i--)
        MPICHK(MPI_Wait(&r[i], MPI_STATUS_IGNORE));
    int want = 0;
    for (int j = 0; j < x->rsize; j++) {
        want += val(1 - x->group, j, 0, 14);
        CHECK(got[j] == val(1 - x->group, j, 0, 14), "%s: iallgather [%d] = %d", x->what, j,
              got[j]);
    }
    CHECK(sum == want && dsum == want, "%s: iallreduce %d, on the dup %d, want %d", x->what, sum,
          dsum, want);
    for (int i = 0; i < 9 && x->group == 1; i++) {
        int w = i % 2 ? SENTINEL : val(0, 0, (size_t)i, 15);
        CHECK(strided[i] == w, "%s: ibcast of a strided type [%d] = %d", x->what, i, strided[i]);
    }
}

/* The intercommunicator of the groups that in_first splits the world
 * into (key orders each group); group 0 holds world rank 0. */
static void run(int in_first, int key, const char *what)
{
    struct ic x = {.what = what, .group = !in_first};
    MPI_Comm local;
    MPICHK(MPI_Comm_split(MPI_COMM_WORLD, x.group, key, &local));
    MPICHK(MPI_Comm_rank(local, &x.rank));
    MPICHK(MPI_Comm_size(local, &x.lsize));
    /* the remote leader: the world rank of the other group's local rank 0 */
    int leader_world[2] = {-1, -1}, mine = x.rank == 0 ? cu_rank : -1;
    int both[2] = {x.group == 0 ? mine : -1, x.group == 1 ? mine : -1};
    MPICHK(MPI_Allreduce(both, leader_world, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    MPICHK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, leader_world[1 - x.group], 42,
                                &x.comm));
    MPICHK(MPI_Comm_set_errhandler(x.comm, MPI_ERRORS_RETURN));
    MPICHK(MPI_Comm_remote_size(x.comm, &x.rsize));
    /* first, while the tags of both communicators are still low */
    check_in_flight(&x);
    check_all(&x);
    MPICHK(MPI_Comm_free(&x.comm));
    MPICHK(MPI_Comm_free(&local));
}

int main(int argc, char **argv)
{
    cu_init(&argc, &argv, "inter_coll");
    CHECK(cu_size <= 64, "at most 64 ranks (%d)", cu_size);
    MPICHK(MPI_Type_contiguous(4, MPI_UNSIGNED, &mat_type));
    MPICHK(MPI_Type_commit(&mat_type));
    MPICHK(MPI_Op_create(cu_matmul, 0, &matmul_op));
    if (cu_size >= 2) {
        int third = cu_size / 3 ? cu_size / 3 : 1;
        run(cu_rank < third, -cu_rank, "first third, reversed");
        run(cu_rank % 2 == 0, cu_rank, "even and odd");
    }
    MPICHK(MPI_Op_free(&matmul_op));
    MPICHK(MPI_Type_free(&mat_type));
    cu_finish();
    return 0;
}
