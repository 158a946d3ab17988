/*
 * Barrier, Bcast, Reduce, Allreduce (blocking and nonblocking) against a
 * serial reference: every root, counts 0, 1, odd, large (1 MiB), several
 * types and ops, a derived type, MPI_IN_PLACE, a non-commutative user op
 * (2x2 matrix product: rank order must be kept), identical bits on every
 * rank for a floating-point allreduce; on MPI_COMM_WORLD and on
 * sub-communicators of every size below it (cu_each_subcomm). The algorithm is whatever BMPI_COLL_* forces
 * (coll_reduce.sh loops over them).
 */
#include "coll_util.h"

#define BIG (1 << 18) /* ints: 1 MiB */

static int nb; /* use the nonblocking variant (odd iterations) */

static void bcast(void *buf, int n, MPI_Datatype t, int root, MPI_Comm comm)
{
    if (!nb) {
        MPICHK(MPI_Bcast(buf, n, t, root, comm));
    } else {
        MPI_Request rq;
        MPICHK(MPI_Ibcast(buf, n, t, root, comm, &rq));
        MPICHK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    }
}

static void allreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm comm)
{
    if (!nb) {
        MPICHK(MPI_Allreduce(s, r, n, t, op, comm));
    } else {
        MPI_Request rq;
        int flag = 0;
        MPICHK(MPI_Iallreduce(s, r, n, t, op, comm, &rq));
        while (!flag)
            MPICHK(MPI_Test(&rq, &flag, MPI_STATUS_IGNORE));
    }
}

static void reduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, int root,
                   MPI_Comm comm)
{
    if (!nb) {
        MPICHK(MPI_Reduce(s, r, n, t, op, root, comm));
    } else {
        MPI_Request rq;
        MPICHK(MPI_Ireduce(s, r, n, t, op, root, comm, &rq));
        MPICHK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    }
}

/* --- references --- */

enum { SUM, MAX, MIN, PROD, BXOR };
static int ref_int(int op, int p, size_t i, int salt)
{
    unsigned acc = (unsigned)cu_val(0, i, salt);
    for (int r = 1; r < p; r++) {
        int v = cu_val(r, i, salt);
        switch (op) {
        case SUM: acc += (unsigned)v; break;
        case MAX: acc = (unsigned)((int)acc > v ? (int)acc : v); break;
        case MIN: acc = (unsigned)((int)acc < v ? (int)acc : v); break;
        case PROD: acc *= (unsigned)(v % 3); break;
        case BXOR: acc ^= (unsigned)v; break;
        }
    }
    return (int)acc;
}
static int in_val(int op, int r, size_t i, int salt)
{
    int v = cu_val(r, i, salt);
    return op == PROD && r > 0 ? v % 3 : v;
}

static const MPI_Op iops[] = {MPI_SUM, MPI_MAX, MPI_MIN, MPI_PROD, MPI_BXOR};

static void test_comm(MPI_Comm comm, const char *what)
{
    int p, me;
    MPICHK(MPI_Comm_size(comm, &p));
    MPICHK(MPI_Comm_rank(comm, &me));
    int counts[] = {0, 1, 7, 1000, BIG};
    int *a = malloc(sizeof(int) * BIG), *b = malloc(sizeof(int) * BIG);
    double *da = malloc(sizeof(double) * BIG), *db = malloc(sizeof(double) * BIG);
    CHECK(a && b && da && db, "malloc");

    for (int k = 0; k < 3; k++)
        MPICHK(MPI_Barrier(comm));
    {
        MPI_Request rq[2];
        MPICHK(MPI_Ibarrier(comm, &rq[0]));
        MPICHK(MPI_Ibarrier(comm, &rq[1]));
        MPICHK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    }

    for (int ci = 0; ci < 5; ci++) {
        int n = counts[ci];
        nb = ci & 1;
        /* Bcast, every root for small counts. */
        for (int root = 0; root < p; root++) {
            if (n == BIG && root != p - 1)
                continue;
            for (int i = 0; i < n; i++)
                a[i] = me == root ? cu_val(root, (size_t)i, 1) : -1;
            bcast(a, n, MPI_INT, root, comm);
            for (int i = 0; i < n; i++)
                CHECK(a[i] == cu_val(root, (size_t)i, 1), "%s bcast n=%d root=%d a[%d]=%d", what, n,
                      root, i, a[i]);
        }
        /* Allreduce, int ops. */
        for (int o = 0; o < 5; o++) {
            if (n == BIG && o != SUM)
                continue;
            for (int i = 0; i < n; i++)
                a[i] = in_val(o, me, (size_t)i, 2 + o), b[i] = -1;
            bool inplace = (o + ci) % 2;
            if (inplace)
                memcpy(b, a, sizeof(int) * (size_t)n);
            allreduce(inplace ? MPI_IN_PLACE : a, b, n, MPI_INT, iops[o], comm);
            for (int i = 0; i < n; i++)
                CHECK(b[i] == ref_int(o, p, (size_t)i, 2 + o), "%s allreduce op %d n=%d%s b[%d]=%d want %d",
                      what, o, n, inplace ? " in place" : "", i, b[i], ref_int(o, p, (size_t)i, 2 + o));
        }
        /* Allreduce of doubles: exact sums of integers; identical bits for fractions. */
        for (int i = 0; i < n; i++)
            da[i] = cu_val(me, (size_t)i, 9);
        allreduce(da, db, n, MPI_DOUBLE, MPI_SUM, comm);
        for (int i = 0; i < n; i++) {
            double want = 0;
            for (int r = 0; r < p; r++)
                want += cu_val(r, (size_t)i, 9);
            CHECK(db[i] == want, "%s allreduce double n=%d db[%d]=%g want %g", what, n, i, db[i], want);
        }
        for (int i = 0; i < n; i++)
            da[i] = cu_val(me, (size_t)i, 10) / 7.0 + 1e-9 * me;
        allreduce(da, db, n, MPI_DOUBLE, MPI_SUM, comm);
        memcpy(da, db, sizeof(double) * (size_t)n);
        bcast(da, n, MPI_DOUBLE, 0, comm);
        CHECK(memcmp(da, db, sizeof(double) * (size_t)n) == 0, "%s allreduce n=%d: bits differ from rank 0's", what, n);
        /* Reduce at every root (small counts), SUM and MAX; in place at the root. */
        for (int root = 0; root < p; root++) {
            if (n == BIG && root != p / 2)
                continue;
            for (int o = 0; o < 2; o++) {
                for (int i = 0; i < n; i++)
                    a[i] = in_val(o, me, (size_t)i, 20 + o), b[i] = -1;
                bool inplace = me == root && (root + o) % 2;
                if (inplace)
                    memcpy(b, a, sizeof(int) * (size_t)n);
                reduce(inplace ? MPI_IN_PLACE : a, b, n, MPI_INT, iops[o], root, comm);
                if (me == root)
                    for (int i = 0; i < n; i++)
                        CHECK(b[i] == ref_int(o, p, (size_t)i, 20 + o), "%s reduce root %d op %d n=%d b[%d]=%d want %d",
                              what, root, o, n, i, b[i], ref_int(o, p, (size_t)i, 20 + o));
                else if (n > 0)
                    CHECK(b[0] == -1, "%s reduce wrote recvbuf at a non-root", what);
            }
        }
        if (n == BIG)
            continue;
        /* MAXLOC on MPI_2INT and MINLOC on MPI_DOUBLE_INT. */
        {
            int *pa = malloc(sizeof(int) * 2 * (size_t)(n + 1)), *pb = malloc(sizeof(int) * 2 * (size_t)(n + 1));
            for (int i = 0; i < n; i++)
                pa[2 * i] = cu_val(me, (size_t)i, 30) % 5, pa[2 * i + 1] = me;
            allreduce(pa, pb, n, MPI_2INT, MPI_MAXLOC, comm);
            for (int i = 0; i < n; i++) {
                int bv = -1000, bi = -1;
                for (int r = 0; r < p; r++)
                    if (cu_val(r, (size_t)i, 30) % 5 > bv)
                        bv = cu_val(r, (size_t)i, 30) % 5, bi = r;
                CHECK(pb[2 * i] == bv && pb[2 * i + 1] == bi, "%s maxloc n=%d [%d]=(%d,%d) want (%d,%d)", what,
                      n, i, pb[2 * i], pb[2 * i + 1], bv, bi);
            }
            struct di { double v; int i; } *xa = malloc(sizeof(struct di) * (size_t)(n + 1)),
                                          *xb = malloc(sizeof(struct di) * (size_t)(n + 1));
            for (int i = 0; i < n; i++)
                xa[i].v = cu_val(me, (size_t)i, 31) % 4, xa[i].i = me;
            for (int root = 0; root < p; root += 2) {
                reduce(xa, xb, n, MPI_DOUBLE_INT, MPI_MINLOC, root, comm);
                if (me == root)
                    for (int i = 0; i < n; i++) {
                        double bv = 1e9;
                        int bi = -1;
                        for (int r = 0; r < p; r++)
                            if (cu_val(r, (size_t)i, 31) % 4 < bv)
                                bv = cu_val(r, (size_t)i, 31) % 4, bi = r;
                        CHECK(xb[i].v == bv && xb[i].i == bi, "%s minloc [%d]", what, i);
                    }
            }
            free(pa), free(pb), free(xa), free(xb);
        }
        /* Non-commutative user op on a contiguous type: every root, allreduce too. */
        {
            MPI_Datatype mat;
            MPI_Op op;
            MPICHK(MPI_Type_contiguous(4, MPI_UNSIGNED, &mat));
            MPICHK(MPI_Type_commit(&mat));
            MPICHK(MPI_Op_create(cu_matmul, 0, &op));
            int commute = 1;
            MPICHK(MPI_Op_commutative(op, &commute));
            CHECK(commute == 0, "MPI_Op_commutative");
            unsigned *ma = malloc(16 * (size_t)(n + 1)), *mb = malloc(16 * (size_t)(n + 1)),
                     *ref = malloc(16 * (size_t)(n + 1));
            for (int i = 0; i < n; i++) {
                cu_mat_of(ma + 4 * i, me, (size_t)i, 77);
                unsigned acc[4], m[4];
                cu_mat_of(acc, p - 1, (size_t)i, 77);
                for (int r = p - 2; r >= 0; r--) {
                    cu_mat_of(m, r, (size_t)i, 77);
                    int one = 1;
                    cu_matmul(m, acc, &one, &mat);
                }
                memcpy(ref + 4 * i, acc, 16);
            }
            for (int root = 0; root < p; root++) {
                memset(mb, 0, 16 * (size_t)(n + 1));
                reduce(ma, mb, n, mat, op, root, comm);
                if (me == root)
                    CHECK(memcmp(mb, ref, 16 * (size_t)n) == 0, "%s non-commutative reduce root %d n=%d", what, root, n);
            }
            memset(mb, 0, 16 * (size_t)(n + 1));
            allreduce(ma, mb, n, mat, op, comm);
            CHECK(memcmp(mb, ref, 16 * (size_t)n) == 0, "%s non-commutative allreduce n=%d", what, n);
            MPICHK(MPI_Op_free(&op));
            CHECK(op == MPI_OP_NULL, "MPI_Op_free");
            MPICHK(MPI_Type_free(&mat));
            free(ma), free(mb), free(ref);
        }
        /* A strided derived type: every other double, SUM and bcast. */
        {
            MPI_Datatype vec;
            MPICHK(MPI_Type_vector(3, 1, 2, MPI_DOUBLE, &vec));
            MPICHK(MPI_Type_commit(&vec));
            size_t len = 6 * (size_t)n + 1; /* extent 5 doubles per element */
            double *va = malloc(sizeof(double) * len), *vb = malloc(sizeof(double) * len);
            for (size_t i = 0; i < len; i++)
                va[i] = cu_val(me, i, 40), vb[i] = -7;
            allreduce(va, vb, n, vec, MPI_SUM, comm);
            for (int e = 0; e < n; e++)
                for (int j = 0; j < 5; j++) {
                    size_t i = (size_t)e * 5 + (size_t)j;
                    double want = -7;
                    if (j % 2 == 0) {
                        want = 0;
                        for (int r = 0; r < p; r++)
                            want += cu_val(r, i, 40);
                    }
                    CHECK(vb[i] == want, "%s vector allreduce n=%d [%zu]=%g want %g", what, n, i, vb[i], want);
                }
            bcast(va, n, vec, p - 1, comm);
            for (int e = 0; e < n; e++)
                for (int j = 0; j < 5; j += 2) {
                    size_t i = (size_t)e * 5 + (size_t)j;
                    CHECK(va[i] == cu_val(p - 1, i, 40), "%s vector bcast", what);
                }
            MPICHK(MPI_Type_free(&vec));
            free(va), free(vb);
        }
    }
    free(a), free(b), free(da), free(db);
}

/* Types whose lower bound is not their first byte: temporary buffers must
 * be laid out by true extent. t1: ints at bytes 0 and 8 of a 16-byte
 * element whose lb is -4; t2: one int at byte 8 (lb = true_lb = 8). */
static void test_lb(MPI_Comm comm, const char *what)
{
    int p, me;
    MPICHK(MPI_Comm_size(comm, &p));
    MPICHK(MPI_Comm_rank(comm, &me));
    MPI_Datatype v, t1, t2;
    MPICHK(MPI_Type_vector(2, 1, 2, MPI_INT, &v));
    MPICHK(MPI_Type_create_resized(v, -4, 16, &t1));
    MPICHK(MPI_Type_commit(&t1));
    int bl = 1;
    MPI_Aint disp = 8;
    MPI_Datatype it = MPI_INT;
    MPICHK(MPI_Type_create_struct(1, &bl, &disp, &it, &t2));
    MPICHK(MPI_Type_commit(&t2));
    const int counts[] = {1, 3, 4000};
    for (int ci = 0; ci < 3; ci++) {
        int n = counts[ci];
        nb = ci & 1;
        size_t ints = 4 * (size_t)n + 8;
        int *a = calloc(ints, sizeof(int)), *b = calloc(ints, sizeof(int));
        /* t1: element e's ints are at int index 4e and 4e + 2 (buffer origin at int 1). */
        for (int e = 0; e < n; e++)
            a[1 + 4 * e] = cu_val(me, (size_t)(2 * e), 90), a[1 + 4 * e + 2] = cu_val(me, (size_t)(2 * e + 1), 90);
        allreduce(a + 1, b + 1, n, t1, MPI_SUM, comm);
        for (int e = 0; e < n; e++)
            for (int j = 0; j < 2; j++) {
                int want = 0;
                for (int r = 0; r < p; r++)
                    want += cu_val(r, (size_t)(2 * e + j), 90);
                CHECK(b[1 + 4 * e + 2 * j] == want, "%s lb type allreduce n=%d [%d.%d]", what, n, e, j);
                CHECK(b[1 + 4 * e + 1] == 0 && b[1 + 4 * e + 3] == 0, "%s lb type allreduce wrote a gap", what);
            }
        CHECK(b[0] == 0, "%s lb type allreduce wrote before the buffer", what);
        /* t2: n ints starting at byte 8 of the buffer. */
        memset(b, 0, ints * sizeof(int));
        for (int i = 0; i < n; i++)
            a[2 + i] = cu_val(me, (size_t)i, 91);
        for (int root = 0; root < p; root += 3) {
            reduce(a, b, n, t2, MPI_MAX, root, comm);
            if (me == root)
                for (int i = 0; i < n; i++) {
                    int want = cu_val(0, (size_t)i, 91);
                    for (int r = 1; r < p; r++)
                        want = cu_val(r, (size_t)i, 91) > want ? cu_val(r, (size_t)i, 91) : want;
                    CHECK(b[2 + i] == want, "%s true_lb type reduce root %d n=%d [%d]", what, root, n, i);
                }
        }
        memset(b, 0, ints * sizeof(int));
        if (me == p - 1)
            memcpy(b, a, ints * sizeof(int));
        bcast(b, n, t2, p - 1, comm);
        for (int i = 0; i < n; i++)
            CHECK(b[2 + i] == cu_val(p - 1, (size_t)i, 91), "%s true_lb type bcast [%d]", what, i);
        CHECK(me == p - 1 || (b[0] == 0 && b[1] == 0), "%s true_lb bcast wrote before the data", what);
        free(a), free(b);
    }
    MPICHK(MPI_Type_free(&t1));
    MPICHK(MPI_Type_free(&t2));
    MPICHK(MPI_Type_free(&v));
}

/* A strided type in many pieces: pipelined and segmented algorithms cut
 * it into segments of whole elements (the last one short), so Reduce (to
 * every root, in place at odd roots) and Bcast must land every element and
 * leave the gaps alone, blocking and nonblocking. */
static void test_strided_big(MPI_Comm comm, const char *what)
{
    int p, me;
    MPICHK(MPI_Comm_size(comm, &p));
    MPICHK(MPI_Comm_rank(comm, &me));
    MPI_Datatype vec;
    MPICHK(MPI_Type_vector(3, 1, 2, MPI_DOUBLE, &vec));
    MPICHK(MPI_Type_commit(&vec));
    const int n = 40001; /* 960 KB of data, not a multiple of any segment */
    size_t len = 5 * (size_t)n + 1;
    double *va = malloc(sizeof(double) * len), *vb = malloc(sizeof(double) * len);
    CHECK(va && vb, "malloc");
    for (int root = 0; root < p; root++) {
        nb = root & 1;
        bool inplace = me == root && root % 2;
        for (size_t i = 0; i < len; i++)
            va[i] = cu_val(me, i, 41), vb[i] = inplace ? va[i] : -7;
        reduce(inplace ? MPI_IN_PLACE : va, vb, n, vec, MPI_SUM, root, comm);
        for (size_t i = 0; me == root && i < 5 * (size_t)n; i++) {
            double want = inplace ? va[i] : -7; /* the gaps */
            if (i % 5 % 2 == 0) {
                want = 0;
                for (int r = 0; r < p; r++)
                    want += cu_val(r, i, 41);
            }
            CHECK(vb[i] == want, "%s strided reduce root %d [%zu]=%g want %g", what, root, i, vb[i], want);
        }
        for (size_t i = 0; i < len; i++)
            vb[i] = me == root ? cu_val(root, i, 42) : -7;
        bcast(vb, n, vec, root, comm);
        for (size_t i = 0; i < 5 * (size_t)n; i++) {
            double want = i % 5 % 2 == 0 || me == root ? cu_val(root, i, 42) : -7;
            CHECK(vb[i] == want, "%s strided bcast root %d [%zu]=%g want %g", what, root, i, vb[i], want);
        }
    }
    MPICHK(MPI_Type_free(&vec));
    free(va), free(vb);
}

static void test_errors(void)
{
    int x[4] = {0}, y[4];
    int p = cu_size;
    EXPECT_CLASS(MPI_Bcast(x, 1, MPI_INT, p, MPI_COMM_WORLD), MPI_ERR_ROOT);
    EXPECT_CLASS(MPI_Bcast(x, 1, MPI_INT, -1, MPI_COMM_WORLD), MPI_ERR_ROOT);
    EXPECT_CLASS(MPI_Reduce(x, y, 1, MPI_INT, MPI_SUM, p + 3, MPI_COMM_WORLD), MPI_ERR_ROOT);
    EXPECT_CLASS(MPI_Allreduce(x, y, 1, MPI_2INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_OP);
    EXPECT_CLASS(MPI_Allreduce(x, y, 1, MPI_INT, MPI_MINLOC, MPI_COMM_WORLD), MPI_ERR_OP);
    EXPECT_CLASS(MPI_Allreduce(x, y, 1, MPI_FLOAT, MPI_BAND, MPI_COMM_WORLD), MPI_ERR_OP);
    EXPECT_CLASS(MPI_Allreduce(x, y, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD), MPI_ERR_OP);
    EXPECT_CLASS(MPI_Allreduce(x, y, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Allreduce(x, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    EXPECT_CLASS(MPI_Allreduce(x, y, 1, MPI_DATATYPE_NULL, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_TYPE);
    EXPECT_CLASS(MPI_Bcast(MPI_IN_PLACE, 1, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    EXPECT_CLASS(MPI_Barrier(MPI_COMM_NULL), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Ibarrier(MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Allreduce(x, y, 1, MPI_INT, MPI_SUM, MPI_COMM_NULL), MPI_ERR_COMM);
    if (p > 1)
        EXPECT_CLASS(MPI_Reduce(MPI_IN_PLACE, y, 1, MPI_INT, MPI_SUM, (cu_rank + 1) % p, MPI_COMM_WORLD),
                     MPI_ERR_BUFFER);
    EXPECT_CLASS(MPI_Reduce_local(x, y, 1, MPI_DOUBLE_INT, MPI_BOR), MPI_ERR_OP);
    MPI_Op bad = MPI_SUM;
    EXPECT_CLASS(MPI_Op_free(&bad), MPI_ERR_OP);
    /* Reduce_local works on its own. */
    int u[3] = {1, 2, 3}, v[3] = {10, 20, 30};
    MPICHK(MPI_Reduce_local(u, v, 3, MPI_INT, MPI_SUM));
    CHECK(v[0] == 11 && v[1] == 22 && v[2] == 33, "reduce_local");
    MPICHK(MPI_Reduce_local(u, v, 3, MPI_INT, MPI_MAX));
    CHECK(v[0] == 11, "reduce_local max");
}

int main(int argc, char **argv)
{
    cu_init(&argc, &argv, "coll_reduce");
    test_errors();
    test_comm(MPI_COMM_WORLD, "world");
    test_lb(MPI_COMM_WORLD, "world");
    test_strided_big(MPI_COMM_WORLD, "world");
    cu_each_subcomm(test_comm);
    cu_finish();
    return 0;
}
