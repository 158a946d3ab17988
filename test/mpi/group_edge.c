/*
 * Group calls on MPI_GROUP_EMPTY, MPI_GROUP_NULL, n = 0 with NULL rank
 * arrays, and bad ranks: empty results are MPI_GROUP_EMPTY, MPI_GROUP_NULL
 * is MPI_ERR_GROUP, a bad or repeated rank MPI_ERR_RANK (also on the empty
 * group, as MPICH), a bad n or range MPI_ERR_ARG; freeing MPI_GROUP_EMPTY
 * is allowed (MPICH allows it: set operations may return it).
 */
#include "testutil.h"

static void expect_empty(MPI_Group g, const char *what)
{
    int size = -1, rank = 0, cmp = -1;
    MPICHK(MPI_Group_size(g, &size));
    MPICHK(MPI_Group_rank(g, &rank));
    MPICHK(MPI_Group_compare(g, MPI_GROUP_EMPTY, &cmp));
    CHECK(size == 0 && rank == MPI_UNDEFINED && cmp == MPI_IDENT, "%s: size %d rank %d compare %d", what, size,
          rank, cmp);
    MPICHK(MPI_Group_free(&g));
    CHECK(g == MPI_GROUP_NULL, "freeing %s left 0x%x", what, (unsigned)g);
}

/* call must give the empty group in g */
#define EXPECT_EMPTY(call)              \
    do {                                \
        MPI_Group g = MPI_GROUP_NULL;   \
        MPICHK(call);                   \
        expect_empty(g, #call);         \
    } while (0)

static void empty_results(MPI_Group world)
{
    int ranges[1][3] = {{0, tu_size - 1, 1}};
    EXPECT_EMPTY(MPI_Group_incl(MPI_GROUP_EMPTY, 0, NULL, &g));
    EXPECT_EMPTY(MPI_Group_excl(MPI_GROUP_EMPTY, 0, NULL, &g));
    EXPECT_EMPTY(MPI_Group_incl(world, 0, NULL, &g));
    EXPECT_EMPTY(MPI_Group_range_incl(world, 0, NULL, &g));
    EXPECT_EMPTY(MPI_Group_range_incl(MPI_GROUP_EMPTY, 0, NULL, &g));
    EXPECT_EMPTY(MPI_Group_range_excl(world, 1, ranges, &g));
    EXPECT_EMPTY(MPI_Group_range_excl(MPI_GROUP_EMPTY, 0, NULL, &g));
    EXPECT_EMPTY(MPI_Group_union(MPI_GROUP_EMPTY, MPI_GROUP_EMPTY, &g));
    EXPECT_EMPTY(MPI_Group_intersection(world, MPI_GROUP_EMPTY, &g));
    EXPECT_EMPTY(MPI_Group_difference(world, world, &g));
    EXPECT_EMPTY(MPI_Group_difference(MPI_GROUP_EMPTY, world, &g));
    expect_empty(MPI_GROUP_EMPTY, "MPI_GROUP_EMPTY itself");

    /* union with EMPTY is the group itself */
    int cmp = -1;
    MPI_Group u;
    MPICHK(MPI_Group_union(MPI_GROUP_EMPTY, world, &u));
    MPICHK(MPI_Group_compare(u, world, &cmp));
    CHECK(cmp == MPI_IDENT, "union(EMPTY, world) compares %d to world", cmp);
    MPICHK(MPI_Group_free(&u));
    MPICHK(MPI_Group_compare(world, MPI_GROUP_EMPTY, &cmp));
    CHECK(cmp == MPI_UNEQUAL, "world and EMPTY compare %d", cmp);

    /* translate: n = 0 with NULL arrays; MPI_PROC_NULL; into EMPTY */
    MPICHK(MPI_Group_translate_ranks(MPI_GROUP_EMPTY, 0, NULL, world, NULL));
    int r1[2] = {MPI_PROC_NULL, 0}, r2[2] = {7, 7};
    MPICHK(MPI_Group_translate_ranks(MPI_GROUP_EMPTY, 1, r1, world, r2));
    CHECK(r2[0] == MPI_PROC_NULL, "translate of MPI_PROC_NULL: %d", r2[0]);
    MPICHK(MPI_Group_translate_ranks(world, 2, r1, MPI_GROUP_EMPTY, r2));
    CHECK(r2[0] == MPI_PROC_NULL && r2[1] == MPI_UNDEFINED, "translate into EMPTY: %d %d", r2[0], r2[1]);
}

static void errors(MPI_Group world)
{
    MPI_Group g = MPI_GROUP_NULL;
    int size, rank, cmp, r[2] = {0, 0}, out[2];
    int bad_range[1][3] = {{0, tu_size, 1}}, zero_stride[1][3] = {{0, 0, 0}};
    EXPECT_CLASS(MPI_Group_size(MPI_GROUP_NULL, &size), MPI_ERR_GROUP);
    EXPECT_CLASS(MPI_Group_rank(MPI_GROUP_NULL, &rank), MPI_ERR_GROUP);
    EXPECT_CLASS(MPI_Group_free(&g), MPI_ERR_GROUP);
    EXPECT_CLASS(MPI_Group_free(NULL), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Group_incl(MPI_GROUP_NULL, 0, NULL, &g), MPI_ERR_GROUP);
    EXPECT_CLASS(MPI_Group_excl(MPI_GROUP_NULL, 0, NULL, &g), MPI_ERR_GROUP);
    EXPECT_CLASS(MPI_Group_range_incl(MPI_GROUP_NULL, 0, NULL, &g), MPI_ERR_GROUP);
    EXPECT_CLASS(MPI_Group_range_excl(MPI_GROUP_NULL, 0, NULL, &g), MPI_ERR_GROUP);
    EXPECT_CLASS(MPI_Group_union(world, MPI_GROUP_NULL, &g), MPI_ERR_GROUP);
    EXPECT_CLASS(MPI_Group_intersection(MPI_GROUP_NULL, world, &g), MPI_ERR_GROUP);
    EXPECT_CLASS(MPI_Group_difference(MPI_GROUP_NULL, MPI_GROUP_EMPTY, &g), MPI_ERR_GROUP);
    EXPECT_CLASS(MPI_Group_translate_ranks(world, 0, NULL, MPI_GROUP_NULL, NULL), MPI_ERR_GROUP);
    EXPECT_CLASS(MPI_Group_compare(MPI_GROUP_NULL, world, &cmp), MPI_ERR_GROUP);
    EXPECT_CLASS(MPI_Group_size((MPI_Group)0x12345678, &size), MPI_ERR_GROUP);

    EXPECT_CLASS(MPI_Group_incl(MPI_GROUP_EMPTY, 1, r, &g), MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Group_excl(MPI_GROUP_EMPTY, 1, r, &g), MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Group_incl(world, 2, r, &g), MPI_ERR_RANK); /* rank 0 twice */
    r[0] = tu_size;
    EXPECT_CLASS(MPI_Group_incl(world, 1, r, &g), MPI_ERR_RANK);
    r[0] = -5; /* MPI_PROC_NULL is -1 */
    EXPECT_CLASS(MPI_Group_excl(world, 1, r, &g), MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Group_translate_ranks(world, 1, r, world, out), MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Group_incl(world, -1, r, &g), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Group_incl(world, 1, NULL, &g), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Group_incl(world, 0, NULL, NULL), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Group_translate_ranks(world, -1, r, world, out), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Group_translate_ranks(world, 1, r, world, NULL), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Group_range_incl(world, 1, zero_stride, &g), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Group_range_incl(world, -1, NULL, &g), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Group_range_incl(world, 1, bad_range, &g), MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Group_range_excl(MPI_GROUP_EMPTY, 1, zero_stride, &g), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Group_size(world, NULL), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Group_compare(world, world, NULL), MPI_ERR_ARG);
    CHECK(g == MPI_GROUP_NULL, "a failed call wrote a group 0x%x", (unsigned)g);
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv, "group_edge");
    MPI_Group world;
    MPICHK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    empty_results(world);
    errors(world);
    MPICHK(MPI_Group_free(&world));
    tu_finish();
    return 0;
}
