/*
 * Groups: every set operation, incl/excl, range incl/excl,
 * translate_ranks and compare, against answers computed by hand in the
 * test, for every group size from 1 to the world size (a = the first n
 * world ranks reversed, b = the even ones, c = the odd ones), and the
 * error classes of bad arguments.
 */
#include "testutil.h"

static MPI_Group world;

/* The world ranks of g's members, checked against want[0..n). */
static void expect(MPI_Group g, int n, const int *want, const char *what)
{
    int size;
    MPICHK(MPI_Group_size(g, &size));
    CHECK(size == n, "%s: size %d, expected %d", what, size, n);
    for (int i = 0; i < n; i++) {
        int w;
        MPICHK(MPI_Group_translate_ranks(g, 1, &i, world, &w));
        CHECK(w == want[i], "%s: member %d is world %d, expected %d", what, i, w, want[i]);
    }
}

static MPI_Group make(int n, const int *ranks)
{
    MPI_Group g;
    MPICHK(MPI_Group_incl(world, n, ranks, &g));
    return g;
}

static void release(MPI_Group *g)
{
    MPICHK(MPI_Group_free(g));
    CHECK(*g == MPI_GROUP_NULL, "Group_free did not set MPI_GROUP_NULL");
}

static void test_sets(int n)
{
    /* a = [n-1, ..., 0], b = the even ones ascending, c = the odd ones */
    int a_r[64], b_r[64], c_r[64], na = n, nb = 0, nc = 0;
    for (int i = 0; i < n; i++)
        a_r[i] = n - 1 - i;
    for (int i = 0; i < n; i++)
        if (i % 2 == 0)
            b_r[nb++] = i;
        else
            c_r[nc++] = i;
    MPI_Group a = make(na, a_r), b = make(nb, b_r), c = make(nc, c_r), r;
    int want[64], k;

    MPICHK(MPI_Group_union(b, c, &r)); /* b then c's members not in b */
    k = 0;
    for (int i = 0; i < nb; i++)
        want[k++] = b_r[i];
    for (int i = 0; i < nc; i++)
        want[k++] = c_r[i];
    expect(r, k, want, "union(b, c)");
    int res;
    MPICHK(MPI_Group_compare(r, a, &res));
    CHECK(res == (n > 1 ? MPI_SIMILAR : MPI_IDENT), "compare(union, a) = %d", res);
    release(&r);

    MPICHK(MPI_Group_union(a, b, &r)); /* a already has all */
    expect(r, na, a_r, "union(a, b)");
    MPICHK(MPI_Group_compare(r, a, &res));
    CHECK(res == MPI_IDENT, "compare(union(a,b), a) = %d", res);
    release(&r);

    MPICHK(MPI_Group_intersection(a, b, &r)); /* a's order: evens descending */
    k = 0;
    for (int i = 0; i < na; i++)
        if (a_r[i] % 2 == 0)
            want[k++] = a_r[i];
    expect(r, k, want, "intersection(a, b)");
    release(&r);

    MPICHK(MPI_Group_intersection(b, c, &r));
    CHECK(r == MPI_GROUP_EMPTY, "intersection(b, c) is not MPI_GROUP_EMPTY");
    MPICHK(MPI_Group_size(r, &k));
    CHECK(k == 0, "empty group size %d", k);
    MPICHK(MPI_Group_rank(r, &k));
    CHECK(k == MPI_UNDEFINED, "rank in empty group %d", k);

    MPICHK(MPI_Group_difference(a, b, &r)); /* odds descending */
    k = 0;
    for (int i = 0; i < na; i++)
        if (a_r[i] % 2)
            want[k++] = a_r[i];
    expect(r, k, want, "difference(a, b)");
    release(&r);

    MPICHK(MPI_Group_difference(b, a, &r));
    CHECK(r == MPI_GROUP_EMPTY, "difference(b, a) not empty");

    /* excl: drop a's members 0 and 2 (world n-1 and n-3) */
    if (n >= 3) {
        int ex[2] = {0, 2};
        MPICHK(MPI_Group_excl(a, 2, ex, &r));
        k = 0;
        for (int i = 0; i < na; i++)
            if (i != 0 && i != 2)
                want[k++] = a_r[i];
        expect(r, k, want, "excl(a, {0, 2})");
        release(&r);
    }

    /* range_incl: (0, n-1, 3) and (n-1, 1, -3) of world */
    {
        int ranges[2][3] = {{0, n - 1, 3}, {n - 1, 1, -3}};
        int nr = n >= 2 ? 2 : 1;
        /* the two ranges must not overlap: with n-1 % 3 == 0 they share n-1 */
        if ((n - 1) % 3 == 0)
            ranges[1][0] = n - 2, nr = n >= 3 ? 2 : 1;
        MPICHK(MPI_Group_range_incl(world, nr, ranges, &r));
        k = 0;
        for (int x = 0; x <= n - 1; x += 3)
            want[k++] = x;
        if (nr == 2)
            for (int x = ranges[1][0]; x >= 1; x -= 3)
                want[k++] = x;
        expect(r, k, want, "range_incl");
        /* range_excl of the same ranges: the rest, in world order */
        MPI_Group rest;
        int ranges2[2][3];
        memcpy(ranges2, ranges, sizeof ranges2);
        MPICHK(MPI_Group_range_excl(world, nr, ranges2, &rest));
        int in[64] = {0}, kk = 0;
        for (int i = 0; i < k; i++)
            in[want[i]] = 1;
        int want2[64];
        for (int x = 0; x < tu_size && x < 64; x++)
            if (!in[x])
                want2[kk++] = x;
        expect(rest, kk, want2, "range_excl");
        release(&rest);
        release(&r);
    }

    /* translate_ranks between a and b, MPI_PROC_NULL passes through */
    {
        int from[64], to[64];
        for (int i = 0; i < na; i++)
            from[i] = i;
        from[na] = MPI_PROC_NULL;
        MPICHK(MPI_Group_translate_ranks(a, na + 1, from, b, to));
        for (int i = 0; i < na; i++) {
            int w = a_r[i];
            int expect_r = w % 2 ? MPI_UNDEFINED : w / 2;
            CHECK(to[i] == expect_r, "translate a[%d] (world %d) to b: %d, expected %d", i, w, to[i], expect_r);
        }
        CHECK(to[na] == MPI_PROC_NULL, "PROC_NULL translated to %d", to[na]);
    }

    /* my rank in a */
    int myr;
    MPICHK(MPI_Group_rank(a, &myr));
    CHECK(myr == (tu_rank < n ? n - 1 - tu_rank : MPI_UNDEFINED), "rank in a %d", myr);

    release(&a);
    release(&b);
    release(&c);
}

static void test_errors(void)
{
    MPI_Group r;
    int x[2] = {0, 0};
    EXPECT_CLASS(MPI_Group_incl(world, 1, (int[]){tu_size}, &r), MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Group_incl(world, 1, (int[]){-1}, &r), MPI_ERR_RANK);
    if (tu_size > 1)
        EXPECT_CLASS(MPI_Group_incl(world, 2, x, &r), MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Group_excl(world, -1, x, &r), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Group_size(MPI_GROUP_NULL, &x[0]), MPI_ERR_GROUP);
    EXPECT_CLASS(MPI_Group_union(world, (MPI_Group)0x88001234, &r), MPI_ERR_GROUP);
    int ranges[1][3] = {{0, 0, 0}};
    EXPECT_CLASS(MPI_Group_range_incl(world, 1, ranges, &r), MPI_ERR_ARG);
    int bad[1][3] = {{0, tu_size, 1}};
    EXPECT_CLASS(MPI_Group_range_incl(world, 1, bad, &r), MPI_ERR_RANK);
    MPI_Group freed = MPI_GROUP_NULL;
    EXPECT_CLASS(MPI_Group_free(&freed), MPI_ERR_GROUP);
    EXPECT_CLASS(MPI_Group_translate_ranks(world, 1, (int[]){tu_size}, world, x), MPI_ERR_RANK);
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv, "group_ops");
    MPICHK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    int wr;
    MPICHK(MPI_Group_rank(world, &wr));
    CHECK(wr == tu_rank, "rank in world group %d", wr);
    for (int n = 1; n <= tu_size && n <= 64; n++)
        test_sets(n);
    /* a handle of a communicator's group outlives the communicator */
    MPI_Comm d;
    MPI_Group g;
    MPICHK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    MPICHK(MPI_Comm_group(d, &g));
    MPICHK(MPI_Comm_free(&d));
    int res;
    MPICHK(MPI_Group_compare(g, world, &res));
    CHECK(res == MPI_IDENT, "group of a freed dup: compare %d", res);
    MPICHK(MPI_Group_free(&g));
    test_errors();
    MPICHK(MPI_Group_free(&world));
    tu_finish();
    return 0;
}
