/*
 * Communicator construction on intercommunicators (the even and the odd
 * ranks of the world): MPI_Comm_split (keys reversing the order, a colour
 * on one side only, MPI_UNDEFINED), MPI_Comm_create (part of each group,
 * an empty side), MPI_Comm_split_type, dup, dup_with_info, idup,
 * idup_with_info; each result is checked for its shape (test_inter, rank,
 * size, both groups in world ranks, compare) and carries point-to-point
 * across. MPI_Comm_create_group on an intercommunicator is MPI_ERR_COMM.
 * Needs at least 2 ranks.
 */
#include "coll_util.h"

static int mine; /* my group: 0 even ranks, 1 odd ranks */

/* World ranks of the group's members: its ranks in order. */
static void world_ranks(MPI_Group g, int n, int *out)
{
    MPI_Group world;
    MPICHK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    for (int i = 0; i < n; i++)
        MPICHK(MPI_Group_translate_ranks(g, 1, &i, world, &out[i]));
    MPICHK(MPI_Group_free(&world));
}

/* Every rank sends its world rank to every remote rank and receives one
 * from each, checked against the remote group. */
static void check_traffic(MPI_Comm inter, int nremote, const int *remote, int tag)
{
    MPI_Request *reqs = malloc(sizeof(*reqs) * (size_t)(nremote + 1));
    for (int i = 0; i < nremote; i++)
        MPICHK(MPI_Isend(&cu_rank, 1, MPI_INT, i, tag, inter, &reqs[i]));
    for (int i = 0; i < nremote; i++) {
        int v = -1;
        MPI_Status st;
        MPICHK(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, tag, inter, &st));
        CHECK(st.MPI_SOURCE >= 0 && st.MPI_SOURCE < nremote, "source %d", st.MPI_SOURCE);
        CHECK(v == remote[st.MPI_SOURCE], "remote rank %d is world rank %d, sent %d", st.MPI_SOURCE,
              remote[st.MPI_SOURCE], v);
    }
    MPICHK(MPI_Waitall(nremote, reqs, MPI_STATUSES_IGNORE));
    free(reqs);
}

/* inter must join exactly the world ranks local[0 .. nl) (in this order,
 * me among them) with remote[0 .. nr). */
static void check_inter(MPI_Comm inter, const int *local, int nl, const int *remote, int nr, const char *what)
{
    int flag = 0, n = -1, r = -1;
    CHECK(inter != MPI_COMM_NULL, "%s: MPI_COMM_NULL", what);
    MPICHK(MPI_Comm_test_inter(inter, &flag));
    CHECK(flag, "%s: not an intercommunicator", what);
    MPICHK(MPI_Comm_size(inter, &n));
    CHECK(n == nl, "%s: local size %d, want %d", what, n, nl);
    MPICHK(MPI_Comm_remote_size(inter, &n));
    CHECK(n == nr, "%s: remote size %d, want %d", what, n, nr);
    MPICHK(MPI_Comm_rank(inter, &r));
    CHECK(r >= 0 && r < nl && local[r] == cu_rank, "%s: rank %d", what, r);
    int *got = malloc(sizeof(int) * (size_t)(nl + nr));
    MPI_Group g;
    MPICHK(MPI_Comm_group(inter, &g));
    world_ranks(g, nl, got);
    MPICHK(MPI_Group_free(&g));
    for (int i = 0; i < nl; i++)
        CHECK(got[i] == local[i], "%s: local rank %d is world %d, want %d", what, i, got[i], local[i]);
    MPICHK(MPI_Comm_remote_group(inter, &g));
    world_ranks(g, nr, got);
    MPICHK(MPI_Group_free(&g));
    for (int i = 0; i < nr; i++)
        CHECK(got[i] == remote[i], "%s: remote rank %d is world %d, want %d", what, i, got[i], remote[i]);
    free(got);
    check_traffic(inter, nr, remote, 40);
}

/* The world ranks of group `side` with local rank i in order, for the i
 * that pick() accepts, sorted as the split's key orders them. */
static int members(int side, bool (*pick)(int side, int i), bool reverse, int *out)
{
    int n = 0, total = (cu_size - side + 1) / 2;
    for (int k = 0; k < total; k++) {
        int i = reverse ? total - 1 - k : k;
        if (pick(side, i))
            out[n++] = 2 * i + side;
    }
    return n;
}

static bool by_parity_0(int side, int i) { (void)side; return i % 2 == 0; }
static bool by_parity_1(int side, int i) { (void)side; return i % 2 == 1; }
/* colour 7: the whole even group and the odd group's rank 0 */
static bool colour7(int side, int i) { return side == 0 || i == 0; }
static bool everyone(int side, int i) { (void)side, (void)i; return true; }
static bool first_half(int side, int i) { return side == 1 || i < ((cu_size + 1) / 2 + 1) / 2; }

static void test_split(MPI_Comm inter)
{
    int me = cu_rank / 2, l[64], r[64];
    MPI_Comm c;
    /* colours by local rank parity, keys reversing each group */
    MPICHK(MPI_Comm_split(inter, me % 2, -me, &c));
    bool (*same)(int, int) = me % 2 ? by_parity_1 : by_parity_0;
    int nl = members(mine, same, true, l), nr = members(1 - mine, same, true, r);
    if (nr == 0) {
        CHECK(c == MPI_COMM_NULL, "split by parity: no remote member, yet a communicator");
    } else {
        check_inter(c, l, nl, r, nr, "split by parity");
        int result = -1;
        MPICHK(MPI_Comm_compare(c, inter, &result));
        CHECK(result == (nl == (cu_size - mine + 1) / 2 && nr == (cu_size - 1 + mine + 1) / 2 ? MPI_SIMILAR
                                                                                            : MPI_UNEQUAL) ||
                  result == MPI_CONGRUENT,
              "compare with the parent: %d", result);
        MPI_Comm d;
        MPICHK(MPI_Comm_dup(c, &d));
        check_inter(d, l, nl, r, nr, "dup of a split");
        MPICHK(MPI_Comm_free(&d));
        MPICHK(MPI_Comm_free(&c));
    }
    /* colour 7 on the odd side only at its rank 0; the others MPI_UNDEFINED or 9 */
    int colour = mine == 0 || me == 0 ? 7 : me % 2 ? MPI_UNDEFINED : 9;
    MPICHK(MPI_Comm_split(inter, colour, 0, &c));
    if (colour == 7) {
        nl = members(mine, colour7, false, l);
        nr = members(1 - mine, colour7, false, r);
        check_inter(c, l, nl, r, nr, "split with colour 7");
        MPICHK(MPI_Comm_free(&c));
    } else {
        CHECK(c == MPI_COMM_NULL, "colour %d has no member in the even group", colour);
    }
}

static void test_create(MPI_Comm inter)
{
    int l[64], r[64], nlocal;
    MPI_Group g, part;
    MPICHK(MPI_Comm_size(inter, &nlocal));
    MPICHK(MPI_Comm_group(inter, &g));
    /* the even side names the first half of its group in reverse order,
     * the odd side all of its group in order */
    int ranks[64], n = 0;
    for (int k = 0; k < nlocal; k++) {
        int i = mine == 0 ? nlocal - 1 - k : k;
        if (first_half(mine, i))
            ranks[n++] = i;
    }
    MPICHK(MPI_Group_incl(g, n, ranks, &part));
    MPI_Comm c;
    MPICHK(MPI_Comm_create(inter, part, &c));
    if (!first_half(mine, cu_rank / 2)) {
        CHECK(c == MPI_COMM_NULL, "not in the group, yet a communicator");
    } else {
        int nl = members(mine, first_half, mine == 0, l), nr = members(1 - mine, first_half, mine == 1, r);
        check_inter(c, l, nl, r, nr, "create");
        MPICHK(MPI_Comm_free(&c));
    }
    MPICHK(MPI_Group_free(&part));
    /* an empty side: nobody gets a communicator */
    MPICHK(MPI_Comm_create(inter, mine ? MPI_GROUP_EMPTY : g, &c));
    CHECK(c == MPI_COMM_NULL, "create with an empty side gave a communicator");
    MPICHK(MPI_Group_free(&g));
    EXPECT_CLASS(MPI_Comm_create_group(inter, MPI_GROUP_EMPTY, 1, &c), MPI_ERR_COMM);
}

static void test_dups(MPI_Comm inter)
{
    int l[64], r[64];
    int nl = members(mine, everyone, false, l), nr = members(1 - mine, everyone, false, r);
    MPI_Info info;
    MPICHK(MPI_Info_create(&info));
    MPICHK(MPI_Info_set(info, "interctor", "yes"));
    MPI_Comm d[4];
    MPI_Request req[2];
    MPICHK(MPI_Comm_dup(inter, &d[0]));
    MPICHK(MPI_Comm_dup_with_info(inter, info, &d[1]));
    MPICHK(MPI_Comm_idup(inter, &d[2], &req[0]));
    MPICHK(MPI_Comm_idup_with_info(inter, info, &d[3], &req[1]));
    MPICHK(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
    for (int i = 0; i < 4; i++) {
        check_inter(d[i], l, nl, r, nr, "dup");
        int result = -1;
        MPICHK(MPI_Comm_compare(d[i], inter, &result));
        CHECK(result == MPI_CONGRUENT, "dup %d compares %d with its parent", i, result);
    }
    MPICHK(MPI_Info_free(&info));
    for (int i = 0; i < 4; i++)
        MPICHK(MPI_Comm_free(&d[i]));
}

static void test_split_type(MPI_Comm inter)
{
    MPI_Comm c;
    MPICHK(MPI_Comm_split_type(inter, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &c));
    if (c == MPI_COMM_NULL)
        return; /* no rank of the other group on my node */
    int flag = 0, nl, nr;
    MPICHK(MPI_Comm_test_inter(c, &flag));
    CHECK(flag, "split_type of an intercommunicator gave an intracommunicator");
    MPICHK(MPI_Comm_size(c, &nl));
    MPICHK(MPI_Comm_remote_size(c, &nr));
    int *r = malloc(sizeof(int) * (size_t)nr);
    MPI_Group g;
    MPICHK(MPI_Comm_remote_group(c, &g));
    world_ranks(g, nr, r);
    MPICHK(MPI_Group_free(&g));
    for (int i = 0; i < nr; i++)
        CHECK(r[i] % 2 != mine, "remote rank %d is world rank %d of my own group", i, r[i]);
    check_traffic(c, nr, r, 41);
    free(r);
    MPICHK(MPI_Comm_free(&c));
    MPICHK(MPI_Comm_split_type(inter, MPI_UNDEFINED, 0, MPI_INFO_NULL, &c));
    CHECK(c == MPI_COMM_NULL, "split_type MPI_UNDEFINED gave a communicator");
}

int main(int argc, char **argv)
{
    cu_init(&argc, &argv, "interctor_construct");
    CHECK(cu_size <= 128, "at most 128 ranks");
    if (cu_size < 2) {
        cu_finish();
        return 0;
    }
    mine = cu_rank % 2;
    MPI_Comm local, inter;
    MPICHK(MPI_Comm_split(MPI_COMM_WORLD, mine, cu_rank, &local));
    MPICHK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 1 - mine, 5, &inter));
    MPICHK(MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN));
    test_split(inter);
    test_create(inter);
    test_dups(inter);
    test_split_type(inter);
    MPICHK(MPI_Comm_free(&inter));
    MPICHK(MPI_Comm_free(&local));
    cu_finish();
    return 0;
}
