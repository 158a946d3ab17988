/*
 * Communicator creation: MPI_Comm_split with colours, MPI_UNDEFINED and
 * keys (members and their order checked through the groups), split_type
 * shared, MPI_Comm_create and MPI_Comm_create_group, MPI_Comm_compare,
 * idup, names, info hints, and messages on the new communicators.
 */
#include "testutil.h"

/* world rank of rank r of comm */
static int world_of(MPI_Comm comm, int r)
{
    MPI_Group g, wg;
    int w;
    MPICHK(MPI_Comm_group(comm, &g));
    MPICHK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    MPICHK(MPI_Group_translate_ranks(g, 1, &r, wg, &w));
    MPICHK(MPI_Group_free(&g));
    MPICHK(MPI_Group_free(&wg));
    return w;
}

/* A ring exchange on comm: each sends its world rank to the next. */
static void ring(MPI_Comm comm)
{
    int r, n, got = -1;
    MPICHK(MPI_Comm_rank(comm, &r));
    MPICHK(MPI_Comm_size(comm, &n));
    int me = tu_rank;
    MPI_Request rq;
    MPICHK(MPI_Irecv(&got, 1, MPI_INT, (r + n - 1) % n, 5, comm, &rq));
    MPICHK(MPI_Send(&me, 1, MPI_INT, (r + 1) % n, 5, comm));
    MPICHK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    CHECK(got == world_of(comm, (r + n - 1) % n), "ring got %d, expected world rank %d", got,
          world_of(comm, (r + n - 1) % n));
}

static void test_split(void)
{
    /* colour rank % 3, key descending: members of my colour in reverse order */
    MPI_Comm c;
    int color = tu_rank % 3;
    MPICHK(MPI_Comm_split(MPI_COMM_WORLD, color, tu_size - tu_rank, &c));
    int n, r, want_n = 0, want_r = 0;
    for (int w = 0; w < tu_size; w++)
        if (w % 3 == color)
            want_n++;
    for (int w = tu_size - 1; w > tu_rank; w--)
        if (w % 3 == color)
            want_r++;
    MPICHK(MPI_Comm_size(c, &n));
    MPICHK(MPI_Comm_rank(c, &r));
    CHECK(n == want_n && r == want_r, "split: size %d rank %d, expected %d %d", n, r, want_n, want_r);
    for (int i = 0, w = tu_size - 1; i < n; i++, w--) {
        while (w % 3 != color)
            w--;
        CHECK(world_of(c, i) == w, "split: rank %d is world %d, expected %d", i, world_of(c, i), w);
    }
    ring(c);
    MPICHK(MPI_Comm_free(&c));
    CHECK(c == MPI_COMM_NULL, "Comm_free did not set MPI_COMM_NULL");

    /* equal keys keep the parent's order; odd ranks MPI_UNDEFINED */
    MPICHK(MPI_Comm_split(MPI_COMM_WORLD, tu_rank % 2 ? MPI_UNDEFINED : 7, 0, &c));
    if (tu_rank % 2) {
        CHECK(c == MPI_COMM_NULL, "MPI_UNDEFINED gave a communicator");
    } else {
        MPICHK(MPI_Comm_rank(c, &r));
        CHECK(r == tu_rank / 2, "even split: rank %d, expected %d", r, tu_rank / 2);
        ring(c);
        MPICHK(MPI_Comm_free(&c));
    }

    /* a split of a split */
    MPI_Comm a, b;
    MPICHK(MPI_Comm_split(MPI_COMM_WORLD, tu_rank < tu_size / 2, tu_rank, &a));
    MPICHK(MPI_Comm_rank(a, &r));
    MPICHK(MPI_Comm_split(a, r % 2, -r, &b));
    ring(b);
    MPICHK(MPI_Comm_free(&b));
    MPICHK(MPI_Comm_free(&a));
}

static void test_split_type(void)
{
    MPI_Comm c;
    MPICHK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, tu_rank, MPI_INFO_NULL, &c));
    CHECK(c != MPI_COMM_NULL, "split_type shared gave MPI_COMM_NULL");
    int n;
    MPICHK(MPI_Comm_size(c, &n));
    /* the test runs on one node */
    CHECK(n == tu_size, "split_type shared: size %d, expected %d (one node)", n, tu_size);
    ring(c);
    MPICHK(MPI_Comm_free(&c));
    MPICHK(MPI_Comm_split_type(MPI_COMM_WORLD, tu_rank == 0 ? MPI_UNDEFINED : MPI_COMM_TYPE_SHARED, 0,
                               MPI_INFO_NULL, &c));
    CHECK((c == MPI_COMM_NULL) == (tu_rank == 0), "split_type with MPI_UNDEFINED on rank 0");
    if (c != MPI_COMM_NULL) {
        MPICHK(MPI_Comm_size(c, &n));
        CHECK(n == tu_size - 1, "split_type without rank 0: size %d", n);
        MPICHK(MPI_Comm_free(&c));
    }
    /* one node: unguided cannot find a strict subset */
    MPICHK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, 0, MPI_INFO_NULL, &c));
    CHECK(c == MPI_COMM_NULL, "HW_UNGUIDED on one node gave a communicator");
    MPI_Info info;
    MPICHK(MPI_Info_create(&info));
    MPICHK(MPI_Info_set(info, "mpi_hw_resource_type", "mpi_shared_memory"));
    MPICHK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, info, &c));
    CHECK(c != MPI_COMM_NULL, "HW_GUIDED mpi_shared_memory gave MPI_COMM_NULL");
    MPICHK(MPI_Comm_free(&c));
    MPICHK(MPI_Info_free(&info));
    EXPECT_CLASS(MPI_Comm_split_type(MPI_COMM_WORLD, 12345, 0, MPI_INFO_NULL, &c), MPI_ERR_ARG);
}

static void test_create(void)
{
    MPI_Group wg, g;
    MPICHK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    /* the even ranks, in reverse order */
    int n = (tu_size + 1) / 2, ranks[64];
    for (int i = 0; i < n; i++)
        ranks[i] = 2 * (n - 1 - i);
    MPICHK(MPI_Group_incl(wg, n, ranks, &g));
    MPI_Comm c;
    MPICHK(MPI_Comm_create(MPI_COMM_WORLD, g, &c));
    if (tu_rank % 2) {
        CHECK(c == MPI_COMM_NULL, "Comm_create: non-member got a communicator");
    } else {
        int r;
        MPICHK(MPI_Comm_rank(c, &r));
        CHECK(r == n - 1 - tu_rank / 2, "Comm_create: rank %d, expected %d", r, n - 1 - tu_rank / 2);
        ring(c);
        MPICHK(MPI_Comm_free(&c));
    }
    /* create_group: only the members call, two groups concurrently with different tags */
    MPI_Group half;
    int lo = tu_rank < (tu_size + 1) / 2;
    int m = lo ? (tu_size + 1) / 2 : tu_size / 2;
    for (int i = 0; i < m; i++)
        ranks[i] = lo ? i : (tu_size + 1) / 2 + i;
    MPICHK(MPI_Group_incl(wg, m, ranks, &half));
    MPICHK(MPI_Comm_create_group(MPI_COMM_WORLD, half, lo ? 11 : 12, &c));
    int r;
    MPICHK(MPI_Comm_rank(c, &r));
    CHECK(world_of(c, r) == tu_rank, "create_group: wrong member");
    ring(c);
    MPICHK(MPI_Comm_free(&c));
    /* create_from_group, the two halves at once with different string tags */
    MPICHK(MPI_Comm_create_from_group(half, lo ? "bmpi.test.lo" : "bmpi.test.hi", MPI_INFO_NULL,
                                      MPI_ERRORS_RETURN, &c));
    MPICHK(MPI_Comm_rank(c, &r));
    CHECK(world_of(c, r) == tu_rank, "create_from_group: wrong member");
    ring(c);
    MPI_Errhandler eh;
    MPICHK(MPI_Comm_get_errhandler(c, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "create_from_group: errhandler not set");
    MPICHK(MPI_Comm_free(&c));
    MPICHK(MPI_Group_free(&half));
    MPICHK(MPI_Group_free(&g));
    MPICHK(MPI_Group_free(&wg));
}

static void test_compare(void)
{
    MPI_Comm d, s, rev;
    int res;
    MPICHK(MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, &res));
    CHECK(res == MPI_IDENT, "compare world world: %d", res);
    MPICHK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    MPICHK(MPI_Comm_compare(MPI_COMM_WORLD, d, &res));
    CHECK(res == MPI_CONGRUENT, "compare world dup: %d", res);
    MPICHK(MPI_Comm_split(MPI_COMM_WORLD, 0, -tu_rank, &rev));
    MPICHK(MPI_Comm_compare(MPI_COMM_WORLD, rev, &res));
    CHECK(res == (tu_size > 1 ? MPI_SIMILAR : MPI_CONGRUENT), "compare world reversed: %d", res);
    MPICHK(MPI_Comm_split(MPI_COMM_WORLD, tu_rank % 2, 0, &s));
    MPICHK(MPI_Comm_compare(MPI_COMM_WORLD, s, &res));
    CHECK(res == (tu_size > 1 ? MPI_UNEQUAL : MPI_CONGRUENT), "compare world half: %d", res);
    MPICHK(MPI_Comm_compare(MPI_COMM_SELF, MPI_COMM_WORLD, &res));
    CHECK(res == (tu_size > 1 ? MPI_UNEQUAL : MPI_CONGRUENT), "compare self world: %d", res);

    /* names: dup has none; set/get round trip */
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MPICHK(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    CHECK(strcmp(name, "MPI_COMM_WORLD") == 0 && len == 14, "world name \"%s\"", name);
    MPICHK(MPI_Comm_get_name(d, name, &len));
    CHECK(len == 0 && name[0] == '\0', "dup has name \"%s\"", name);
    MPICHK(MPI_Comm_set_name(d, "my dup"));
    MPICHK(MPI_Comm_get_name(d, name, &len));
    CHECK(strcmp(name, "my dup") == 0 && len == 6, "name \"%s\"", name);

    int flag;
    MPICHK(MPI_Comm_test_inter(d, &flag));
    CHECK(!flag, "test_inter says intercommunicator");
    EXPECT_CLASS(MPI_Comm_remote_size(d, &len), MPI_ERR_COMM);

    /* info hints travel with dup */
    MPI_Info info, used;
    MPICHK(MPI_Info_create(&info));
    MPICHK(MPI_Info_set(info, "mpi_assert_no_any_tag", "true"));
    MPICHK(MPI_Comm_set_info(d, info));
    MPI_Comm d2, d3;
    MPICHK(MPI_Comm_dup(d, &d2));
    MPICHK(MPI_Comm_get_info(d2, &used));
    char v[64];
    int vl = sizeof v;
    MPICHK(MPI_Info_get_string(used, "mpi_assert_no_any_tag", &vl, v, &flag));
    CHECK(flag && strcmp(v, "true") == 0, "dup lost the hint");
    MPICHK(MPI_Info_free(&used));
    MPICHK(MPI_Info_set(info, "mpi_assert_no_any_tag", "false"));
    MPICHK(MPI_Comm_dup_with_info(d, info, &d3));
    MPICHK(MPI_Comm_get_info(d3, &used));
    vl = sizeof v;
    MPICHK(MPI_Info_get_string(used, "mpi_assert_no_any_tag", &vl, v, &flag));
    CHECK(flag && strcmp(v, "false") == 0, "dup_with_info: hint \"%s\"", v);
    MPICHK(MPI_Info_free(&used));
    MPICHK(MPI_Info_free(&info));

    /* idup: complete by wait */
    MPI_Comm di;
    MPI_Request rq;
    MPICHK(MPI_Comm_idup(MPI_COMM_WORLD, &di, &rq));
    MPICHK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    ring(di);

    /* the error handler is inherited */
    MPI_Errhandler eh;
    MPICHK(MPI_Comm_get_errhandler(d, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "dup did not inherit MPI_ERRORS_RETURN");
    MPICHK(MPI_Errhandler_free(&eh));

    MPI_Comm *all[] = {&d, &d2, &d3, &di, &s, &rev};
    for (unsigned i = 0; i < sizeof all / sizeof all[0]; i++)
        MPICHK(MPI_Comm_free(all[i]));
}

static void test_bad_args(void)
{
    MPI_Comm c, w = MPI_COMM_WORLD;
    EXPECT_CLASS(MPI_Comm_dup(MPI_COMM_NULL, &c), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Comm_dup((MPI_Comm)0x84000123, &c), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Comm_free(&w), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Comm_split(MPI_COMM_WORLD, -5, 0, &c), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_NULL, &c), MPI_ERR_GROUP);
    EXPECT_CLASS(MPI_Comm_dup(MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    int res;
    EXPECT_CLASS(MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_NULL, &res), MPI_ERR_COMM);
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv, "comm_split");
    test_split();
    tu_barrier();
    test_split_type();
    tu_barrier();
    test_create();
    tu_barrier();
    test_compare();
    tu_barrier();
    test_bad_args();
    tu_finish();
    return 0;
}
