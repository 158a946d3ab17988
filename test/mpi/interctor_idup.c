/*
 * Nonblocking communicator duplication that only a real nonblocking
 * MPI_Comm_idup completes: a rank that waits (in a receive, in a blocking
 * creation, in another idup) for a rank that has started its idup first.
 * A rank waiting in a blocking collective while its idup is in flight.
 * Several idups outstanding on the same and on different communicators,
 * started in different orders by different ranks, overlapped with
 * point-to-point and collectives, completed with Wait, Test and Waitall in
 * various orders, on intra- and intercommunicators; every new
 * communicator is then checked to carry its own traffic only.
 */
#include "coll_util.h"

#define NDUP 5

/* MPI_Waitall that names the error of each failed request. */
static void waitall(int n, MPI_Request *req)
{
    MPI_Status st[16];
    CHECK(n <= 16, "%d requests", n);
    if (MPI_Waitall(n, req, st) == MPI_SUCCESS)
        return;
    for (int i = 0; i < n; i++) {
        char es[MPI_MAX_ERROR_STRING] = "";
        int len = 0;
        if (st[i].MPI_ERROR != MPI_SUCCESS && st[i].MPI_ERROR != MPI_ERR_PENDING)
            MPI_Error_string(st[i].MPI_ERROR, es, &len);
        CHECK(!len, "request %d of %d failed: %s", i, n, es);
    }
    FAIL("MPI_Waitall failed, yet no request says why");
}

/* A message of value v around the ring of comm, on each of n
 * communicators at once: a communicator that shares another's context
 * would receive the wrong value. */
static void check_apart(MPI_Comm *c, int n)
{
    int size, rank;
    MPICHK(MPI_Comm_size(c[0], &size));
    MPICHK(MPI_Comm_rank(c[0], &rank));
    MPI_Request *req = malloc(sizeof(*req) * 2 * (size_t)n);
    int *in = malloc(sizeof(int) * (size_t)n), *out = malloc(sizeof(int) * (size_t)n);
    for (int i = n - 1; i >= 0; i--)
        MPICHK(MPI_Irecv(&in[i], 1, MPI_INT, (rank + size - 1) % size, 0, c[i], &req[i]));
    for (int i = 0; i < n; i++) {
        out[i] = 1000 * i + rank;
        MPICHK(MPI_Isend(&out[i], 1, MPI_INT, (rank + 1) % size, 0, c[i], &req[n + i]));
    }
    MPICHK(MPI_Waitall(2 * n, req, MPI_STATUSES_IGNORE));
    for (int i = 0; i < n; i++)
        CHECK(in[i] == 1000 * i + (rank + size - 1) % size, "communicator %d received %d", i, in[i]);
    free(req);
    free(in);
    free(out);
}

/* MPICH's comm_create_group_idup: half the ranks create, then idup; the
 * other half idup, then create. */
static void create_group_then_idup(void)
{
    MPI_Group world;
    MPI_Comm created, dup;
    MPI_Request req;
    MPICHK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    if (cu_rank % 2 == 0) {
        MPICHK(MPI_Comm_create_group(MPI_COMM_WORLD, world, 0, &created));
        MPICHK(MPI_Comm_idup(MPI_COMM_WORLD, &dup, &req));
    } else {
        MPICHK(MPI_Comm_idup(MPI_COMM_WORLD, &dup, &req));
        MPICHK(MPI_Comm_create_group(MPI_COMM_WORLD, world, 0, &created));
    }
    MPICHK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    MPI_Comm both[2] = {dup, created};
    check_apart(both, 2);
    MPICHK(MPI_Barrier(dup));
    MPICHK(MPI_Barrier(created));
    MPICHK(MPI_Comm_free(&dup));
    MPICHK(MPI_Comm_free(&created));
    MPICHK(MPI_Group_free(&world));
}

/* Even ranks idup, then send to their odd partner; the partner receives
 * first and idups after. partner: the rank across, or MPI_PROC_NULL. */
static void idup_then_send(MPI_Comm comm, int sends_first, int partner, const char *what)
{
    MPI_Comm dup;
    MPI_Request req;
    int v = 77;
    if (sends_first) {
        MPICHK(MPI_Comm_idup(comm, &dup, &req));
        MPICHK(MPI_Send(&v, 1, MPI_INT, partner, 5, comm));
    } else {
        v = -1;
        MPICHK(MPI_Recv(&v, 1, MPI_INT, partner, 5, comm, MPI_STATUS_IGNORE));
        CHECK(partner == MPI_PROC_NULL || v == 77, "%s: received %d", what, v);
        MPICHK(MPI_Comm_idup(comm, &dup, &req));
    }
    MPICHK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    int result = -1;
    MPICHK(MPI_Comm_compare(dup, comm, &result));
    CHECK(result == MPI_CONGRUENT, "%s: the dup compares %d", what, result);
    MPICHK(MPI_Comm_free(&dup));
}

/* Rank 0 waits in a barrier on the world while its idup of comm is in
 * flight; the others complete their idup before that barrier. */
static void idup_across_barrier(MPI_Comm comm)
{
    MPI_Comm dup;
    MPI_Request req;
    MPICHK(MPI_Comm_idup(comm, &dup, &req));
    if (cu_rank == 0)
        MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    MPICHK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    if (cu_rank != 0)
        MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    MPICHK(MPI_Barrier(dup));
    MPICHK(MPI_Comm_free(&dup));
}

/* Two communicators, idup'ed in opposite orders by even and odd ranks. */
static void crossed_orders(MPI_Comm a, MPI_Comm b, int flip)
{
    MPI_Comm d[2];
    MPI_Request req[2];
    if (flip) {
        MPICHK(MPI_Comm_idup(b, &d[1], &req[1]));
        MPICHK(MPI_Comm_idup(a, &d[0], &req[0]));
    } else {
        MPICHK(MPI_Comm_idup(a, &d[0], &req[0]));
        MPICHK(MPI_Comm_idup(b, &d[1], &req[1]));
    }
    waitall(2, req);
    int result = -1;
    MPICHK(MPI_Comm_compare(d[0], a, &result));
    CHECK(result == MPI_CONGRUENT, "crossed: first dup compares %d", result);
    MPICHK(MPI_Comm_compare(d[1], b, &result));
    CHECK(result == MPI_CONGRUENT, "crossed: second dup compares %d", result);
    MPICHK(MPI_Comm_free(&d[0]));
    MPICHK(MPI_Comm_free(&d[1]));
}

/* NDUP idups of the world at once, between an iallreduce and a ring
 * exchange on the world, completed in the order `how` says. */
static void many_outstanding(int how)
{
    MPI_Comm d[NDUP];
    MPI_Request req[NDUP], coll, p2p[2];
    int x = cu_rank + 1, sum = 0, from = -1;
    MPICHK(MPI_Iallreduce(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &coll));
    for (int i = 0; i < NDUP; i++) {
        MPICHK(MPI_Comm_idup(MPI_COMM_WORLD, &d[i], &req[i]));
        if (i == NDUP / 2) {
            MPICHK(MPI_Irecv(&from, 1, MPI_INT, (cu_rank + cu_size - 1) % cu_size, 9, MPI_COMM_WORLD, &p2p[0]));
            MPICHK(MPI_Isend(&cu_rank, 1, MPI_INT, (cu_rank + 1) % cu_size, 9, MPI_COMM_WORLD, &p2p[1]));
        }
    }
    MPICHK(MPI_Waitall(2, p2p, MPI_STATUSES_IGNORE));
    CHECK(from == (cu_rank + cu_size - 1) % cu_size, "ring: received %d", from);
    if (how == 0) {
        waitall(NDUP, req);
    } else if (how == 1) {
        for (int i = NDUP - 1; i >= 0; i--)
            MPICHK(MPI_Wait(&req[i], MPI_STATUS_IGNORE));
    } else {
        for (int left = NDUP; left > 0;) {
            for (int i = 0; i < NDUP; i++) {
                int flag = 0;
                if (req[i] == MPI_REQUEST_NULL)
                    continue;
                MPICHK(MPI_Test(&req[i], &flag, MPI_STATUS_IGNORE));
                left -= flag;
            }
        }
    }
    MPICHK(MPI_Wait(&coll, MPI_STATUS_IGNORE));
    CHECK(sum == cu_size * (cu_size + 1) / 2, "iallreduce: %d", sum);
    check_apart(d, NDUP);
    for (int i = 0; i < NDUP; i++) {
        int r = -1;
        MPICHK(MPI_Allreduce(&x, &r, 1, MPI_INT, MPI_SUM, d[i]));
        CHECK(r == sum, "allreduce on dup %d: %d", i, r);
        MPICHK(MPI_Comm_free(&d[i]));
    }
}

static void on_intercomm(void)
{
    int mine = cu_rank % 2, me = cu_rank / 2, nremote;
    MPI_Comm local, inter;
    MPICHK(MPI_Comm_split(MPI_COMM_WORLD, mine, cu_rank, &local));
    MPICHK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 1 - mine, 5, &inter));
    MPICHK(MPI_Comm_remote_size(inter, &nremote));
    idup_then_send(inter, mine == 0, me < nremote ? me : MPI_PROC_NULL, "intercommunicator");
    crossed_orders(inter, MPI_COMM_WORLD, mine);
    /* two at once on the intercommunicator, then their traffic */
    MPI_Comm d[2];
    MPI_Request req[2];
    MPICHK(MPI_Comm_idup(inter, &d[0], &req[0]));
    MPICHK(MPI_Comm_idup_with_info(inter, MPI_INFO_NULL, &d[1], &req[1]));
    MPICHK(MPI_Wait(&req[1], MPI_STATUS_IGNORE));
    MPICHK(MPI_Wait(&req[0], MPI_STATUS_IGNORE));
    for (int i = 0; i < 2; i++) {
        int flag = 0, n = -1;
        MPICHK(MPI_Comm_test_inter(d[i], &flag));
        MPICHK(MPI_Comm_remote_size(d[i], &n));
        CHECK(flag && n == nremote, "intercommunicator idup %d: inter %d, remote size %d", i, flag, n);
    }
    if (me < nremote) {
        int in[2] = {-1, -1}, out[2] = {10 + cu_rank, 20 + cu_rank};
        MPI_Request r[4];
        MPICHK(MPI_Irecv(&in[1], 1, MPI_INT, me, 0, d[1], &r[0]));
        MPICHK(MPI_Irecv(&in[0], 1, MPI_INT, me, 0, d[0], &r[1]));
        MPICHK(MPI_Isend(&out[0], 1, MPI_INT, me, 0, d[0], &r[2]));
        MPICHK(MPI_Isend(&out[1], 1, MPI_INT, me, 0, d[1], &r[3]));
        MPICHK(MPI_Waitall(4, r, MPI_STATUSES_IGNORE));
        int partner = 2 * me + 1 - mine;
        CHECK(in[0] == 10 + partner && in[1] == 20 + partner, "across the dups: %d %d", in[0], in[1]);
    }
    MPICHK(MPI_Comm_free(&d[0]));
    MPICHK(MPI_Comm_free(&d[1]));
    MPICHK(MPI_Comm_free(&inter));
    MPICHK(MPI_Comm_free(&local));
}

int main(int argc, char **argv)
{
    cu_init(&argc, &argv, "interctor_idup");
    create_group_then_idup();
    int partner = cu_rank % 2 ? cu_rank - 1 : cu_rank + 1 < cu_size ? cu_rank + 1 : MPI_PROC_NULL;
    idup_then_send(MPI_COMM_WORLD, cu_rank % 2 == 0, partner, "world");
    MPI_Comm other;
    MPICHK(MPI_Comm_dup(MPI_COMM_WORLD, &other));
    crossed_orders(MPI_COMM_WORLD, other, cu_rank % 2);
    MPICHK(MPI_Comm_free(&other));
    MPICHK(MPI_Comm_split(MPI_COMM_WORLD, 0, cu_size - cu_rank, &other));
    idup_across_barrier(other);
    MPICHK(MPI_Comm_free(&other));
    for (int how = 0; how < 3; how++)
        many_outstanding(how);
    if (cu_size >= 2)
        on_intercomm();
    cu_finish();
    return 0;
}
