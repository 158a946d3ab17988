/*
 * Context ids: 100,000 MPI_Comm_dup/MPI_Comm_free cycles (ids come back,
 * never run out, and it is fast: no PMIx per dup), many live communicators
 * at once, and concurrent splits of different communicators whose traffic
 * must not cross: messages with the same (source, tag) on communicators
 * built at the same time arrive on the right one.
 */
#include "testutil.h"

static void cycles(int n)
{
    double t0 = tu_now();
    for (int i = 0; i < n; i++) {
        MPI_Comm c;
        MPICHK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        MPICHK(MPI_Comm_free(&c));
    }
    double dt = tu_now() - t0;
    if (tu_rank == 0)
        printf("comm_ctx: %d dup/free cycles in %.2f s (%.1f us each)\n", n, dt, dt / n * 1e6);
}

/* Many live communicators, each used once, freed in a scrambled order. */
static void many_live(int n)
{
    MPI_Comm *c = malloc((size_t)n * sizeof(*c));
    CHECK(c, "malloc");
    for (int i = 0; i < n; i++)
        MPICHK(MPI_Comm_dup(i ? c[i - 1] : MPI_COMM_WORLD, &c[i]));
    /* send on all, then receive on all in reverse: any crossing shows */
    int next = (tu_rank + 1) % tu_size, prev = (tu_rank + tu_size - 1) % tu_size;
    MPI_Request *rq = malloc((size_t)n * sizeof(*rq));
    int *got = malloc((size_t)n * sizeof(int));
    CHECK(rq && got, "malloc");
    for (int i = n - 1; i >= 0; i--)
        MPICHK(MPI_Irecv(&got[i], 1, MPI_INT, prev, 0, c[i], &rq[i]));
    for (int i = 0; i < n; i++)
        MPICHK(MPI_Send(&i, 1, MPI_INT, next, 0, c[i]));
    MPICHK(MPI_Waitall(n, rq, MPI_STATUSES_IGNORE));
    for (int i = 0; i < n; i++)
        CHECK(got[i] == i, "communicator %d got the message of communicator %d", i, got[i]);
    for (int i = 0; i < n; i += 2)
        MPICHK(MPI_Comm_free(&c[i]));
    for (int i = 1; i < n; i += 2)
        MPICHK(MPI_Comm_free(&c[i]));
    free(got);
    free(rq);
    free(c);
}

/*
 * Two halves of the world split their own half-communicators at the same
 * time; then every pair of new communicators that share processes must have
 * different ids: a message sent on A must never match a receive on B.
 * Rank 0 of each half also belongs to a "bridge" communicator of the two
 * half leaders, created before; traffic on bridge and halves interleaves.
 */
static void concurrent_splits(void)
{
    if (tu_size < 2)
        return;
    MPI_Comm half, bridge, q1, q2;
    int lo = tu_rank < tu_size / 2;
    MPICHK(MPI_Comm_split(MPI_COMM_WORLD, lo, 0, &half));
    int hr, hn;
    MPICHK(MPI_Comm_rank(half, &hr));
    MPICHK(MPI_Comm_size(half, &hn));
    MPICHK(MPI_Comm_split(MPI_COMM_WORLD, hr == 0 ? 0 : MPI_UNDEFINED, lo, &bridge));
    /* concurrently: each half splits itself twice (different parents at once) */
    MPICHK(MPI_Comm_split(half, hr % 2, hr, &q1));
    MPICHK(MPI_Comm_split(half, 0, -hr, &q2));
    /* same (source, tag) on q1, q2, half, world and bridge: each receive must get its own */
    int q1r, q1n, q2r, q2n;
    MPICHK(MPI_Comm_rank(q1, &q1r));
    MPICHK(MPI_Comm_size(q1, &q1n));
    MPICHK(MPI_Comm_rank(q2, &q2r));
    MPICHK(MPI_Comm_size(q2, &q2n));
    MPI_Request rq[5];
    int got[5] = {-1, -1, -1, -1, -1}, nrq = 0;
    /* post receives in an order unlike the sends */
    MPICHK(MPI_Irecv(&got[0], 1, MPI_INT, MPI_ANY_SOURCE, 3, q2, &rq[nrq++]));
    MPICHK(MPI_Irecv(&got[1], 1, MPI_INT, MPI_ANY_SOURCE, 3, q1, &rq[nrq++]));
    MPICHK(MPI_Irecv(&got[2], 1, MPI_INT, MPI_ANY_SOURCE, 3, half, &rq[nrq++]));
    MPICHK(MPI_Irecv(&got[3], 1, MPI_INT, MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, &rq[nrq++]));
    if (bridge != MPI_COMM_NULL)
        MPICHK(MPI_Irecv(&got[4], 1, MPI_INT, MPI_ANY_SOURCE, 3, bridge, &rq[nrq++]));
    int v;
    if (bridge != MPI_COMM_NULL) {
        int br, bn;
        MPICHK(MPI_Comm_rank(bridge, &br));
        MPICHK(MPI_Comm_size(bridge, &bn));
        v = 400;
        MPICHK(MPI_Send(&v, 1, MPI_INT, (br + 1) % bn, 3, bridge));
    }
    v = 300;
    MPICHK(MPI_Send(&v, 1, MPI_INT, (tu_rank + 1) % tu_size, 3, MPI_COMM_WORLD));
    v = 200;
    MPICHK(MPI_Send(&v, 1, MPI_INT, (hr + 1) % hn, 3, half));
    v = 100;
    MPICHK(MPI_Send(&v, 1, MPI_INT, (q1r + 1) % q1n, 3, q1));
    v = 0;
    MPICHK(MPI_Send(&v, 1, MPI_INT, (q2r + 1) % q2n, 3, q2));
    MPICHK(MPI_Waitall(nrq, rq, MPI_STATUSES_IGNORE));
    CHECK(got[0] == 0 && got[1] == 100 && got[2] == 200 && got[3] == 300, "crossed: %d %d %d %d", got[0], got[1],
          got[2], got[3]);
    CHECK(bridge == MPI_COMM_NULL || got[4] == 400, "bridge got %d", got[4]);
    MPICHK(MPI_Comm_free(&q1));
    MPICHK(MPI_Comm_free(&q2));
    if (bridge != MPI_COMM_NULL)
        MPICHK(MPI_Comm_free(&bridge));
    MPICHK(MPI_Comm_free(&half));
}

/* Run out of ids on purpose: every rank must fail at the same dup, with
 * MPI_ERR_OTHER, and everything works again after freeing. */
static void exhaust(void)
{
    enum { MAX = 5000 };
    MPI_Comm *c = malloc(MAX * sizeof(*c));
    CHECK(c, "malloc");
    int n = 0, rc = MPI_SUCCESS;
    while (n < MAX && (rc = MPI_Comm_dup(MPI_COMM_WORLD, &c[n])) == MPI_SUCCESS)
        n++;
    int cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(n < MAX && cls == MPI_ERR_OTHER, "after %d dups: class %d", n, cls);
    CHECK(n >= 4000, "only %d live communicators", n);
    CHECK(tu_sum(n) == (long)n * tu_size, "ranks ran out at different dups (%d here)", n);
    if (tu_rank == 0)
        printf("comm_ctx: ran out of context ids after %d live communicators, as designed\n", n);
    /* the ids work: a message on the last one */
    int v = -1, next = (tu_rank + 1) % tu_size, prev = (tu_rank + tu_size - 1) % tu_size;
    MPI_Request rq;
    MPICHK(MPI_Irecv(&v, 1, MPI_INT, prev, 1, c[n - 1], &rq));
    MPICHK(MPI_Send(&tu_rank, 1, MPI_INT, next, 1, c[n - 1]));
    MPICHK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    CHECK(v == prev, "message on the last communicator from %d", v);
    for (int i = 0; i < n; i++)
        MPICHK(MPI_Comm_free(&c[i]));
    free(c);
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv, "comm_ctx");
    int n = argc > 1 ? atoi(argv[1]) : 100000;
    cycles(n);
    tu_barrier();
    many_live(1000);
    tu_barrier();
    for (int i = 0; i < 20; i++)
        concurrent_splits();
    tu_barrier();
    exhaust();
    tu_barrier();
    cycles(1000); /* ids still come back after all that */
    tu_finish();
    return 0;
}
