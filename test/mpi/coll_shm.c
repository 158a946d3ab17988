/*
 * The shared-memory path of the blocking collectives (collectives/shm_*.c)
 * against a serial reference, on MPI_COMM_WORLD, a split into two halves
 * with the rank order reversed, and a dup:
 *  - Barrier, Bcast, Reduce, Allreduce, Allgather, Alltoall (also in
 *    rounds, when a rank's p blocks do not fit one slot); every root;
 *    counts 0, 1, odd, exactly at a small, a medium and a big slot's
 *    capacity and one element above each (the next ring takes over, then
 *    point-to-point);
 *  - SUM/MAX on int, SUM on double (identical bits on every rank), a
 *    non-commutative user op (2x2 matrix product), each small and big
 *    enough for the two-phase reductions, a strided receive type,
 *    MPI_IN_PLACE;
 *  - hundreds of calls back to back, small and medium (ring wrap-around
 *    and flow control: a bcast root and the reduce leaves run ahead of
 *    the others);
 *  - blocking calls interleaved with nonblocking collectives and with
 *    point-to-point messages in flight on the same communicator;
 *  - allgather, alltoall, scatter and gather whose blocks are longer than
 *    the receive counts: MPI_ERR_TRUNCATE and nothing written past the
 *    buffer;
 *  - dup/use/free cycles, after which no region is left mapped and no
 *    /dev/shm file of the job exists.
 * The slot capacity is BMPI_COLL_SHM_SLOT (default 256 KiB - 64; coll_shm.sh runs
 * with a small one too). With BMPI_COLL_SHM=0 the same checks run on the
 * point-to-point schedules.
 */
#include <dirent.h>
#include <unistd.h>

#include "coll_util.h"

static size_t slot_bytes; /* capacity of a big slot, as the library computes it for p <= 8 */
/* capacity of a small slot: SMALL_STRIDE less the slot's header
 * (collectives/shm_region.c) */
#define SMALL_SLOT 288
#define MEDIUM_SLOT 16416 /* ... of a medium one */

/* Element counts of unit-byte units worth testing for big slots of cap
 * bytes, ascending. */
static int counts_for(size_t unit, size_t cap, int *out)
{
    int n = 0;
    out[n++] = 0;
    out[n++] = 1;
    out[n++] = 7;
    if (SMALL_SLOT / unit > 7) {
        out[n++] = (int)(SMALL_SLOT / unit);     /* a full small slot */
        out[n++] = (int)(SMALL_SLOT / unit) + 1; /* the medium ring, or the big one */
    }
    if (MEDIUM_SLOT < cap) {
        out[n++] = (int)(MEDIUM_SLOT / unit);     /* a full medium slot */
        out[n++] = (int)(MEDIUM_SLOT / unit) + 1; /* the big ring */
    }
    out[n++] = (int)(cap / unit);     /* a full slot */
    out[n++] = (int)(cap / unit) + 1; /* one more: point-to-point */
    return n;
}

static void test_bcast(MPI_Comm comm, int p, int me, int salt)
{
    int cnt[10], nc = counts_for(sizeof(int), slot_bytes, cnt);
    int *buf = malloc(sizeof(int) * ((size_t)cnt[nc - 1] + 1));
    CHECK(buf, "malloc");
    for (int c = 0; c < nc; c++)
        for (int root = 0; root < p; root++) {
            int n = cnt[c];
            for (int i = 0; i < n; i++)
                buf[i] = me == root ? cu_val(root, (size_t)i, salt + c) : -1;
            buf[n] = 12345; /* guard: never written */
            MPICHK(MPI_Bcast(buf, n, MPI_INT, root, comm));
            for (int i = 0; i < n; i++)
                CHECK(buf[i] == cu_val(root, (size_t)i, salt + c), "bcast n %d root %d [%d] = %d", n,
                      root, i, buf[i]);
            CHECK(buf[n] == 12345, "bcast n %d wrote past the buffer", n);
        }
    free(buf);

    /* a full big slot into a strided type on the receivers (read in chunks
     * through a datatype cursor) */
    int n = (int)(slot_bytes / sizeof(int)), root = p - 1;
    MPI_Datatype every2;
    MPICHK(MPI_Type_vector(1, 1, 2, MPI_INT, &every2));
    MPICHK(MPI_Type_create_resized(every2, 0, 2 * sizeof(int), &every2));
    MPICHK(MPI_Type_commit(&every2));
    buf = malloc(2 * sizeof(int) * (size_t)n);
    CHECK(buf, "malloc");
    for (int i = 0; i < 2 * n; i++)
        buf[i] = me == root ? cu_val(root, (size_t)i, salt) : -1;
    MPICHK(MPI_Bcast(buf, n, me == root ? MPI_INT : every2, root, comm));
    for (int i = 0; i < n && me != root; i++)
        CHECK(buf[2 * i] == cu_val(root, (size_t)i, salt) && buf[2 * i + 1] == -1,
              "strided bcast [%d] = %d", i, buf[2 * i]);
    MPICHK(MPI_Type_free(&every2));
    free(buf);
}

static void test_reduce(MPI_Comm comm, int p, int me, int salt)
{
    int cnt[10], nc = counts_for(sizeof(int), slot_bytes, cnt);
    size_t max = (size_t)cnt[nc - 1];
    int *s = malloc(sizeof(int) * max), *r = malloc(sizeof(int) * (max + 1));
    CHECK(s && r, "malloc");
    for (int c = 0; c < nc; c++) {
        int n = cnt[c];
        for (int i = 0; i < n; i++)
            s[i] = cu_val(me, (size_t)i, salt + c);
        for (int root = 0; root < p; root++) {
            bool in_place = me == root && (root + c) % 2;
            if (in_place)
                memcpy(r, s, sizeof(int) * (size_t)n);
            r[n] = 777;
            MPICHK(MPI_Reduce(in_place ? MPI_IN_PLACE : s, r, n, MPI_INT, MPI_SUM, root, comm));
            if (me != root)
                continue;
            for (int i = 0; i < n; i++) {
                unsigned want = 0;
                for (int q = 0; q < p; q++)
                    want += (unsigned)cu_val(q, (size_t)i, salt + c);
                CHECK(r[i] == (int)want, "reduce sum n %d root %d [%d] = %d, want %d", n, root, i,
                      r[i], (int)want);
            }
            CHECK(r[n] == 777, "reduce wrote past the buffer");
        }
        MPICHK(MPI_Allreduce(s, r, n, MPI_INT, MPI_MAX, comm));
        for (int i = 0; i < n; i++) {
            int want = cu_val(0, (size_t)i, salt + c);
            for (int q = 1; q < p; q++)
                want = cu_val(q, (size_t)i, salt + c) > want ? cu_val(q, (size_t)i, salt + c) : want;
            CHECK(r[i] == want, "allreduce max n %d [%d] = %d, want %d", n, i, r[i], want);
        }
    }
    free(s);
    free(r);
}

/* A floating-point allreduce gives the same bits on every rank. */
static void test_double_bits(MPI_Comm comm, int me, int salt, int n)
{
    double *s = malloc(3 * sizeof(double) * (size_t)n), *r = s + n, *r0 = r + n;
    CHECK(s, "malloc");
    for (int i = 0; i < n; i++)
        s[i] = cu_val(me, (size_t)i, salt) / 7.0 + 1e-3 * me;
    MPICHK(MPI_Allreduce(s, r, n, MPI_DOUBLE, MPI_SUM, comm));
    memcpy(r0, r, sizeof(double) * (size_t)n);
    MPICHK(MPI_Bcast(r0, n, MPI_DOUBLE, 0, comm));
    CHECK(!memcmp(r, r0, sizeof(double) * (size_t)n), "allreduce of %d doubles differs between ranks", n);
    free(s);
}

/* The product of the ranks' matrices in rank order, element i. */
static void mat_ref(unsigned *acc, int p, size_t i, int salt)
{
    cu_mat_of(acc, 0, i, salt);
    for (int q = 1; q < p; q++) {
        unsigned m[4];
        cu_mat_of(m, q, i, salt);
        int len = 1;
        cu_matmul(acc, m, &len, NULL);
        memcpy(acc, m, sizeof m);
    }
}

/* N matrices: 50 take one phase, 1100 (17 KiB) two. */
static void test_matmul(MPI_Comm comm, int p, int me, int salt, int N)
{
    MPI_Datatype mat;
    MPI_Op op;
    MPICHK(MPI_Type_contiguous(4, MPI_UNSIGNED, &mat));
    MPICHK(MPI_Type_commit(&mat));
    MPICHK(MPI_Op_create(cu_matmul, 0, &op));
    unsigned *s = malloc(3 * 4 * sizeof(unsigned) * (size_t)N), *r = s + 4 * N, *all = r + 4 * N;
    unsigned want[4];
    CHECK(s, "malloc");
    for (int root = 0; root < p; root++) {
        for (int i = 0; i < N; i++)
            cu_mat_of(s + 4 * i, me, (size_t)i, salt + root);
        bool in_place = me == root && root % 2;
        if (in_place)
            memcpy(r, s, 4 * sizeof(unsigned) * (size_t)N);
        MPICHK(MPI_Reduce(in_place ? MPI_IN_PLACE : s, r, N, mat, op, root, comm));
        MPICHK(MPI_Allreduce(s, all, 0, mat, op, comm));
        if (me == root) /* in place on one rank, not on the others */
            MPICHK(MPI_Allreduce(MPI_IN_PLACE, s, N, mat, op, comm));
        else
            MPICHK(MPI_Allreduce(s, all, N, mat, op, comm));
        const unsigned *res = me == root ? s : all;
        for (int i = 0; i < N; i++) {
            mat_ref(want, p, (size_t)i, salt + root);
            CHECK(!memcmp(res + 4 * i, want, sizeof want), "allreduce matrix product [%d]", i);
            if (me == root)
                CHECK(!memcmp(r + 4 * i, want, sizeof want), "reduce matrix product [%d], root %d",
                      i, root);
        }
    }
    free(s);
    MPICHK(MPI_Op_free(&op));
    MPICHK(MPI_Type_free(&mat));
}

/* Allgather into a strided receive type and in place; alltoall plain and
 * in place; counts around the slot's capacity (alltoall: p blocks). */
static void test_data(MPI_Comm comm, int p, int me, int salt)
{
    int cnt[10], nc = counts_for(sizeof(int), slot_bytes, cnt);
    size_t max = (slot_bytes / sizeof(int) + 1) * (size_t)p;
    int *s = malloc(sizeof(int) * max), *r = malloc(sizeof(int) * 2 * max);
    CHECK(s && r, "malloc");
    MPI_Datatype every2;
    MPICHK(MPI_Type_vector(1, 1, 2, MPI_INT, &every2));
    MPICHK(MPI_Type_create_resized(every2, 0, 2 * sizeof(int), &every2));
    MPICHK(MPI_Type_commit(&every2));
    for (int c = 0; c < nc; c++) {
        int n = cnt[c];
        for (int i = 0; i < n; i++)
            s[i] = cu_val(me, (size_t)i, salt + c);
        for (size_t i = 0; i < 2 * (size_t)n * (size_t)p; i++)
            r[i] = -7;
        MPICHK(MPI_Allgather(s, n, MPI_INT, r, n, every2, comm));
        for (int q = 0; q < p; q++)
            for (int i = 0; i < n; i++) {
                size_t at = 2 * ((size_t)q * (size_t)n + (size_t)i);
                CHECK(r[at] == cu_val(q, (size_t)i, salt + c) && r[at + 1] == -7,
                      "allgather strided n %d from %d [%d]", n, q, i);
            }
        for (int i = 0; i < n; i++)
            r[(size_t)me * (size_t)n + (size_t)i] = s[i];
        MPICHK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, n, MPI_INT, comm));
        for (int q = 0; q < p; q++)
            for (int i = 0; i < n; i++)
                CHECK(r[(size_t)q * (size_t)n + (size_t)i] == cu_val(q, (size_t)i, salt + c),
                      "allgather in place n %d from %d [%d]", n, q, i);
    }
    /* all p blocks filling a slot and one element more (in rounds, or on
     * point-to-point in place), one block filling a slot and one more */
    int pblocks = (int)(slot_bytes / sizeof(int) / (size_t)p), block = (int)(slot_bytes / sizeof(int));
    int acnt[] = {0, 1, 7, pblocks, pblocks + 1, block, block + 1}, nac = 7;
    for (int c = 0; c < nac; c++) {
        int n = acnt[c];
        /* block for rank q: element i of (me -> q) */
        for (int q = 0; q < p; q++)
            for (int i = 0; i < n; i++)
                s[(size_t)q * (size_t)n + (size_t)i] = cu_val(me * 64 + q, (size_t)i, salt + c);
        bool in_place = c % 2;
        if (in_place)
            memcpy(r, s, sizeof(int) * (size_t)n * (size_t)p);
        MPICHK(MPI_Alltoall(in_place ? MPI_IN_PLACE : s, n, MPI_INT, r, n, MPI_INT, comm));
        for (int q = 0; q < p; q++)
            for (int i = 0; i < n; i++)
                CHECK(r[(size_t)q * (size_t)n + (size_t)i] == cu_val(q * 64 + me, (size_t)i, salt + c),
                      "alltoall%s n %d from %d [%d]", in_place ? " in place" : "", n, q, i);
    }
    MPICHK(MPI_Type_free(&every2));
    free(s);
    free(r);
}

/* The root of reduce k in a stream: the last rank throughout (its leaves,
 * rank 0 among them, run ahead), or moving. */
static int reduce_root(int k, int p, bool fixed_root)
{
    return fixed_root ? p - 1 : (k / 3) % p;
}

/* CALLS bcasts and reduces of n ints each, back to back: n = 5 streams
 * through the small ring (the stream ring, 2048 slots deep, on a node with
 * more ranks than cores), n = 1000 through the medium one, both wrapping
 * around. With moving roots there is a barrier now and then; with root 0
 * throughout, the others start late, so rank 0 runs a whole ring ahead
 * and must wait for its slots to be read before it reuses them. */
static void test_stream_of(MPI_Comm comm, int p, int me, int n, bool fixed_root)
{
    enum { CALLS = 1100 };
    int *got = malloc(sizeof(int) * CALLS * (size_t)n);
    int *own = malloc(sizeof(int) * (size_t)n);
    int *red = malloc(sizeof(int) * CALLS * (size_t)n);
    CHECK(got && own && red, "no memory for the stream test");
    if (fixed_root && me != 0)
        usleep(20000);
    for (int k = 0; k < CALLS; k++) {
        int root = fixed_root ? 0 : k % p, *g = got + (size_t)k * n;
        for (int i = 0; i < n; i++) {
            g[i] = me == root ? k * 1000 + i : -1;
            own[i] = k + me + i;
        }
        MPICHK(MPI_Bcast(g, n, MPI_INT, root, comm));
        MPICHK(MPI_Reduce(own, red + (size_t)k * n, n, MPI_INT, MPI_SUM, reduce_root(k, p, fixed_root),
                          comm));
        if (!fixed_root && k % 50 == 0)
            MPICHK(MPI_Barrier(comm));
    }
    for (int k = 0; k < CALLS; k++) {
        const int *g = got + (size_t)k * n, *r = red + (size_t)k * n;
        for (int i = 0; i < n; i++) {
            CHECK(g[i] == k * 1000 + i, "stream of %d: bcast %d [%d] = %d", n, k, i, g[i]);
            if (me == reduce_root(k, p, fixed_root))
                CHECK(r[i] == (k + i) * p + p * (p - 1) / 2, "stream of %d: reduce %d [%d] = %d",
                      n, k, i, r[i]);
        }
    }
    free(got), free(own), free(red);
}

static void test_stream(MPI_Comm comm, int p, int me)
{
    for (int fixed = 0; fixed < 2; fixed++) {
        test_stream_of(comm, p, me, 5, fixed);
        test_stream_of(comm, p, me, 1000, fixed);
    }
}

/* Blocking collectives while a nonblocking one and point-to-point messages
 * are in flight on the same communicator. */
static void test_mixed(MPI_Comm comm, int p, int me)
{
    for (int round = 0; round < 20; round++) {
        int ib[3] = {-1, -1, -1}, ir = 0, one = 1;
        if (me == round % p)
            ib[0] = ib[1] = ib[2] = round;
        MPI_Request rq[4];
        MPICHK(MPI_Ibcast(ib, 3, MPI_INT, round % p, comm, &rq[0]));
        MPICHK(MPI_Iallreduce(&one, &ir, 1, MPI_INT, MPI_SUM, comm, &rq[1]));
        int to = (me + 1) % p, from = (me + p - 1) % p, out = me * 100 + round, in = -1;
        MPICHK(MPI_Irecv(&in, 1, MPI_INT, from, round, comm, &rq[2]));
        MPICHK(MPI_Isend(&out, 1, MPI_INT, to, round, comm, &rq[3]));
        int v = me, sum = 0;
        MPICHK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, comm));
        CHECK(sum == p * (p - 1) / 2, "mixed allreduce %d", sum);
        MPICHK(MPI_Barrier(comm));
        MPICHK(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE));
        CHECK(ib[0] == round && ib[2] == round, "mixed ibcast round %d: %d", round, ib[0]);
        CHECK(ir == p, "mixed iallreduce %d", ir);
        CHECK(in == from * 100 + round, "mixed p2p from %d: %d", from, in);
    }
}

#define GUARD 16 /* elements after a receive buffer that nothing may write */

enum truncation { NOT_TRUNCATED, TRUNCATED, MAYBE_TRUNCATED };

/* total elements of a receive buffer and the guard after them, marked. */
static int *guarded(int *r, size_t total)
{
    for (size_t i = 0; i < total + GUARD; i++)
        r[i] = -7;
    return r;
}

/* A call that may have received blocks one element longer than its
 * receive count into r (guarded, total elements) returned rc, with
 * MPI_ERR_TRUNCATE as expected says, and wrote nothing past the buffer. */
static void check_truncated(const char *what, int n, int rc, const int *r, size_t total,
                            enum truncation expected)
{
    int cls = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    bool ok = cls == MPI_ERR_TRUNCATE ? expected != NOT_TRUNCATED
                                      : cls == MPI_SUCCESS && expected != TRUNCATED;
    CHECK(ok, "%s of %d into %d: error class %d", what, n + 1, n, cls);
    for (size_t i = total; i < total + GUARD; i++)
        CHECK(r[i] == -7, "%s of %d into %d wrote past the buffer at %zu", what, n + 1, n, i);
}

/* Collectives whose blocks are one element longer than the receive
 * counts, own block included: every rank of an allgather and an alltoall
 * reports MPI_ERR_TRUNCATE, and so do the root of a gather and of a
 * scatter (its own block; a scatter's other ranks can tell only when
 * they receive straight from the root, not through a binomial tree);
 * nothing is written past a receive buffer, and the communicator stays
 * usable. */
static void test_truncation(MPI_Comm comm, int p, int me)
{
    int cnt[] = {1, 50, 1000, 5000, 70000};
    for (size_t c = 0; c < sizeof cnt / sizeof cnt[0]; c++) {
        int n = cnt[c], rc;
        size_t total = (size_t)n * (size_t)p, sent = (size_t)(n + 1) * (size_t)p;
        int *s = malloc(sizeof(int) * sent), *r = malloc(sizeof(int) * (total + GUARD));
        CHECK(s && r, "malloc");
        for (size_t i = 0; i < sent; i++)
            s[i] = (int)i;
        rc = MPI_Allgather(s, n + 1, MPI_INT, guarded(r, total), n, MPI_INT, comm);
        check_truncated("allgather", n, rc, r, total, TRUNCATED);
        rc = MPI_Alltoall(s, n + 1, MPI_INT, guarded(r, total), n, MPI_INT, comm);
        check_truncated("alltoall", n, rc, r, total, TRUNCATED);
        rc = MPI_Scatter(s, n + 1, MPI_INT, guarded(r, (size_t)n), n, MPI_INT, 0, comm);
        check_truncated("scatter", n, rc, r, (size_t)n, me == 0 ? TRUNCATED : MAYBE_TRUNCATED);
        /* only the root receives: the others' r stays as marked */
        rc = MPI_Gather(s, n + 1, MPI_INT, guarded(r, total), n, MPI_INT, 0, comm);
        check_truncated("gather", n, rc, r, me == 0 ? total : 0,
                        me == 0 ? TRUNCATED : NOT_TRUNCATED);
        int one = 1, sum = 0;
        MPICHK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comm));
        CHECK(sum == p, "allreduce after truncated collectives: %d", sum);
        free(s);
        free(r);
    }
}

static void test_comm(MPI_Comm comm, int salt)
{
    int p, me;
    MPICHK(MPI_Comm_size(comm, &p));
    MPICHK(MPI_Comm_rank(comm, &me));
    MPICHK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
    for (int k = 0; k < 5; k++)
        MPICHK(MPI_Barrier(comm));
    test_bcast(comm, p, me, salt);
    test_reduce(comm, p, me, salt + 10);
    test_double_bits(comm, me, salt + 20, 333);
    test_double_bits(comm, me, salt + 21, 4000);
    test_matmul(comm, p, me, salt + 30, 50);
    test_matmul(comm, p, me, salt + 31, 1100);
    test_data(comm, p, me, salt + 40);
    test_stream(comm, p, me);
    test_mixed(comm, p, me);
    test_truncation(comm, p, me);
}

/* Regions of communicators still mapped by this process. */
static int mapped_regions(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    CHECK(f, "open /proc/self/maps");
    char line[1024];
    int n = 0;
    while (fgets(line, sizeof line, f))
        n += strstr(line, "/bmpi.") && strstr(line, ".coll") ? 1 : 0;
    fclose(f);
    return n;
}

/* Files under /dev/shm left by collective regions of this job. */
static int region_files(void)
{
    const char *ns = getenv("PMIX_NAMESPACE");
    if (cu_size == 1)
        return 0;
    CHECK(ns, "PMIX_NAMESPACE is not set: cannot tell this job's /dev/shm files");
    DIR *d = opendir("/dev/shm");
    CHECK(d, "opendir /dev/shm");
    char prefix[300];
    snprintf(prefix, sizeof prefix, "bmpi.%s.", ns);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += !strncmp(e->d_name, prefix, strlen(prefix)) && strstr(e->d_name, ".coll") ? 1 : 0;
    closedir(d);
    return n;
}

static void test_dup_cycles(void)
{
    int before = mapped_regions();
    for (int k = 0; k < 40; k++) {
        MPI_Comm d;
        MPICHK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
        int v = 1, sum = 0;
        MPICHK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, d));
        CHECK(sum == cu_size, "dup %d allreduce %d", k, sum);
        MPICHK(MPI_Bcast(&v, 1, MPI_INT, k % cu_size, d));
        MPICHK(MPI_Comm_free(&d));
    }
    CHECK(mapped_regions() == before, "%d regions mapped after dup/free cycles, %d before",
          mapped_regions(), before);
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(region_files() == 0, "%d /dev/shm files of collective regions remain", region_files());
}

int main(int argc, char **argv)
{
    cu_init(&argc, &argv, "coll_shm");
    const char *v = getenv("BMPI_COLL_SHM_SLOT");
    slot_bytes = v && *v ? (size_t)strtoul(v, NULL, 0) : (256u << 10) - 64;

    test_comm(MPI_COMM_WORLD, 100);

    MPI_Comm half, dup;
    MPICHK(MPI_Comm_split(MPI_COMM_WORLD, cu_rank % 2, cu_size - cu_rank, &half));
    test_comm(half, 200);
    MPICHK(MPI_Comm_dup(half, &dup));
    test_comm(dup, 300);
    MPICHK(MPI_Comm_free(&dup));
    MPICHK(MPI_Comm_free(&half));

    test_dup_cycles();
    cu_finish();
    return 0;
}
