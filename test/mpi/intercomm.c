/*
 * Intercommunicators: the world split into even and odd ranks joined by
 * MPI_Intercomm_create; remote size and group; point-to-point across
 * (specific and any source, eager and rendezvous sizes, Ssend, Sendrecv);
 * a dup whose traffic never matches the original's; MPI_Intercomm_merge
 * with and without high; the calls that refuse intercommunicators.
 */
#include "coll_util.h"

#define BIG (1 << 18) /* ints: 1 MiB, a rendezvous on every transport */

static int world_of(int group, int local_rank) { return 2 * local_rank + group; }

static void check_shape(MPI_Comm inter, int mine, int nmine, int ntheirs)
{
    int flag = 0, n = -1, r = -1, result = -1;
    MPICHK(MPI_Comm_test_inter(inter, &flag));
    CHECK(flag, "MPI_Comm_test_inter says intra");
    MPICHK(MPI_Comm_size(inter, &n));
    CHECK(n == nmine, "local size %d, want %d", n, nmine);
    MPICHK(MPI_Comm_rank(inter, &r));
    CHECK(r == cu_rank / 2, "local rank %d, want %d", r, cu_rank / 2);
    MPICHK(MPI_Comm_remote_size(inter, &n));
    CHECK(n == ntheirs, "remote size %d, want %d", n, ntheirs);
    MPI_Group remote, world;
    MPICHK(MPI_Comm_remote_group(inter, &remote));
    MPICHK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    for (int i = 0; i < ntheirs; i++) {
        int w = -1;
        MPICHK(MPI_Group_translate_ranks(remote, 1, &i, world, &w));
        CHECK(w == world_of(1 - mine, i), "remote rank %d is world rank %d", i, w);
    }
    MPICHK(MPI_Group_free(&remote));
    MPICHK(MPI_Group_free(&world));
    MPICHK(MPI_Comm_compare(inter, MPI_COMM_WORLD, &result));
    CHECK(result == MPI_UNEQUAL, "compare with the world: %d", result);
}

/* Every rank sends its world rank to every remote rank, then receives one
 * message from each remote rank with MPI_ANY_SOURCE. */
static void check_all_to_remote(MPI_Comm inter, int ntheirs, int tag)
{
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * (size_t)ntheirs);
    for (int i = 0; i < ntheirs; i++)
        MPICHK(MPI_Isend(&cu_rank, 1, MPI_INT, i, tag, inter, &reqs[i]));
    char *seen = calloc((size_t)ntheirs, 1);
    for (int i = 0; i < ntheirs; i++) {
        int v = -1;
        MPI_Status st;
        MPICHK(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, tag, inter, &st));
        CHECK(st.MPI_SOURCE >= 0 && st.MPI_SOURCE < ntheirs && !seen[st.MPI_SOURCE],
              "source %d", st.MPI_SOURCE);
        seen[st.MPI_SOURCE] = 1;
        CHECK(v == world_of(1 - cu_rank % 2, st.MPI_SOURCE), "from remote %d: %d",
              st.MPI_SOURCE, v);
    }
    MPICHK(MPI_Waitall(ntheirs, reqs, MPI_STATUSES_IGNORE));
    free(seen);
    free(reqs);
}

/* Partners (local rank i of both groups) swap a large buffer. */
static void check_partner(MPI_Comm inter, int ntheirs)
{
    int me = cu_rank / 2;
    if (me >= ntheirs)
        return;
    int *out = malloc(BIG * sizeof(int)), *in = malloc((BIG + 1) * sizeof(int));
    for (int i = 0; i < BIG; i++)
        out[i] = cu_val(cu_rank, (size_t)i, 3);
    in[BIG] = 12345; /* guard */
    MPICHK(MPI_Sendrecv(out, BIG, MPI_INT, me, 9, in, BIG, MPI_INT, me, 9, inter,
                        MPI_STATUS_IGNORE));
    int partner = world_of(1 - cu_rank % 2, me);
    for (int i = 0; i < BIG; i++)
        CHECK(in[i] == cu_val(partner, (size_t)i, 3), "big [%d] = %d", i, in[i]);
    CHECK(in[BIG] == 12345, "written past the receive buffer");
    /* synchronous mode: the even side sends, the odd side receives */
    if (cu_rank % 2 == 0)
        MPICHK(MPI_Ssend(out, 10, MPI_INT, me, 10, inter));
    else
        MPICHK(MPI_Recv(in, 10, MPI_INT, me, 10, inter, MPI_STATUS_IGNORE));
    free(out);
    free(in);
}

/* Messages on the dup never match receives on the original. */
static void check_dup(MPI_Comm inter, int ntheirs)
{
    MPI_Comm dup;
    int result = -1;
    MPICHK(MPI_Comm_dup(inter, &dup));
    MPICHK(MPI_Comm_compare(inter, dup, &result));
    CHECK(result == MPI_CONGRUENT, "compare with its dup: %d", result);
    int me = cu_rank / 2, a = -1, b = -1;
    if (me < ntheirs) {
        MPI_Request r[2];
        MPICHK(MPI_Irecv(&a, 1, MPI_INT, me, 4, inter, &r[0]));
        MPICHK(MPI_Irecv(&b, 1, MPI_INT, me, 4, dup, &r[1]));
        int on_dup = 200 + cu_rank, on_inter = 100 + cu_rank;
        MPICHK(MPI_Send(&on_dup, 1, MPI_INT, me, 4, dup));
        MPICHK(MPI_Send(&on_inter, 1, MPI_INT, me, 4, inter));
        MPICHK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
        int partner = world_of(1 - cu_rank % 2, me);
        CHECK(a == 100 + partner && b == 200 + partner, "inter got %d, dup got %d", a, b);
    }
    check_all_to_remote(dup, ntheirs, 5);
    MPICHK(MPI_Comm_free(&dup));
}

static void check_merge(MPI_Comm inter, int mine, int neven, bool high_odd)
{
    MPI_Comm merged;
    int high = high_odd ? mine == 1 : 0, r = -1, n = -1, sum = 0;
    MPICHK(MPI_Intercomm_merge(inter, high, &merged));
    MPICHK(MPI_Comm_size(merged, &n));
    MPICHK(MPI_Comm_rank(merged, &r));
    /* evens first: either high is set on the odd side, or neither is and
     * the even leader (world 0) has the lower world rank */
    int want = mine == 0 ? cu_rank / 2 : neven + cu_rank / 2;
    CHECK(n == cu_size && r == want, "merged rank %d of %d, want %d of %d", r, n, want, cu_size);
    int flag = 1;
    MPICHK(MPI_Comm_test_inter(merged, &flag));
    CHECK(!flag, "a merged communicator is an intercommunicator");
    MPICHK(MPI_Allreduce(&cu_rank, &sum, 1, MPI_INT, MPI_SUM, merged));
    CHECK(sum == cu_size * (cu_size - 1) / 2, "allreduce on the merged communicator: %d", sum);
    MPICHK(MPI_Comm_free(&merged));
}

static void check_refusals(MPI_Comm inter)
{
    int x = 1, y;
    MPI_Comm out;
    EXPECT_CLASS(MPI_Scan(&x, &y, 1, MPI_INT, MPI_SUM, inter), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Comm_create_group(inter, MPI_GROUP_EMPTY, 0, &out), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Intercomm_merge(MPI_COMM_WORLD, 0, &out), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Comm_remote_size(MPI_COMM_WORLD, &x), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Send(&x, 1, MPI_INT, 1 << 20, 0, inter), MPI_ERR_RANK);
}

int main(int argc, char **argv)
{
    cu_init(&argc, &argv, "intercomm");
    if (cu_size >= 2) {
        int mine = cu_rank % 2, neven = (cu_size + 1) / 2, nodd = cu_size / 2;
        int nmine = mine ? nodd : neven, ntheirs = mine ? neven : nodd;
        MPI_Comm local, inter;
        MPICHK(MPI_Comm_split(MPI_COMM_WORLD, mine, cu_rank, &local));
        MPI_Comm out;
        EXPECT_CLASS(MPI_Intercomm_create(local, nmine, MPI_COMM_WORLD, 1 - mine, 7, &out),
                     MPI_ERR_RANK);
        /* the leaders are world ranks 0 (evens) and 1 (odds) */
        MPICHK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 1 - mine, 7, &inter));
        check_shape(inter, mine, nmine, ntheirs);
        check_all_to_remote(inter, ntheirs, 3);
        check_partner(inter, ntheirs);
        check_dup(inter, ntheirs);
        check_merge(inter, mine, neven, true);
        check_merge(inter, mine, neven, false);
        check_refusals(inter);
        MPICHK(MPI_Comm_free(&inter));
        MPICHK(MPI_Comm_free(&local));
    }
    cu_finish();
    return 0;
}
