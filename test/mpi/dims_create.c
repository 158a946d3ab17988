/*
 * MPI_Dims_create on large and awkward inputs: nnodes up to INT_MAX,
 * large primes and products of them, up to 64 dimensions, preset entries
 * that do or do not divide nnodes, negative entries, ndims 0, nnodes 1.
 * The expected splits are what MPICH 4.0 gives (Open MPI agrees where it
 * has the most balanced one; MPICH crashes on INT_MAX and refuses 64
 * dimensions, where the expected ones are the prime factors, as Open MPI
 * gives). Every answer must also multiply to nnodes and be non-increasing.
 */
#include <limits.h>

#include "testutil.h"

#define MAXD 64

struct dims_case {
    int nnodes, ndims;
    int want[20]; /* then 1s */
};

static const struct dims_case cases[] = {
    {1, 3, {1, 1, 1}},
    {6, 2, {3, 2}},
    {12, 3, {3, 2, 2}},
    {16, 3, {4, 2, 2}},
    {30, 2, {6, 5}},
    {48, 5, {3, 2, 2, 2, 2}},
    {90, 3, {6, 5, 3}},
    {168, 4, {7, 4, 3, 2}},
    {360, 3, {10, 6, 6}},
    {720, 6, {5, 4, 3, 3, 2, 2}},
    {2048, 3, {16, 16, 8}},
    {2160, 4, {10, 6, 6, 6}},
    {2520, 4, {10, 7, 6, 6}},
    {4096, 5, {8, 8, 4, 4, 4}},
    {1000000, 7, {10, 10, 10, 8, 5, 5, 5}},
    {9699690, 8, {19, 17, 13, 11, 7, 5, 3, 2}},
    {735134400, 5, {68, 65, 56, 55, 54}},
    {735134400, 17, {17, 13, 11, 7, 5, 5, 3, 3, 3, 2, 2, 2, 2, 2, 2}},
    {735134400, 64, {17, 13, 11, 7, 5, 5, 3, 3, 3, 2, 2, 2, 2, 2, 2}},
    {999999937, 3, {999999937}},       /* a large prime */
    {97 * 89 * 83, 2, {7387, 97}},
    {2147256580, 2, {46340, 46337}},   /* 2*2*5*7*331 * 46337 */
    {2147483646, 3, {1661, 1302, 993}}, /* 2*3*3*7*11*31*151*331 */
    {2147483646, 64, {331, 151, 31, 11, 7, 3, 3, 2}},
    {INT_MAX, 2, {INT_MAX}},           /* the largest int is prime */
    {INT_MAX, 64, {INT_MAX}},
    {1 << 30, 3, {1024, 1024, 1024}},
    {1 << 30, 64, {2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2}}, /* and 10 more 2s */
};

static void check_split(int nnodes, int ndims, const int *preset, const int *dims, const char *what)
{
    long long p = 1;
    int last = INT_MAX;
    for (int i = 0; i < ndims; i++) {
        p *= dims[i];
        CHECK(dims[i] > 0 && p <= nnodes, "%s: dims[%d] = %d", what, i, dims[i]);
        if (preset[i]) {
            CHECK(dims[i] == preset[i], "%s: the set dims[%d] = %d changed to %d", what, i, preset[i], dims[i]);
            continue;
        }
        CHECK(dims[i] <= last, "%s: dims[%d] = %d after %d: not non-increasing", what, i, dims[i], last);
        last = dims[i];
    }
    CHECK(p == nnodes, "%s: the dims multiply to %lld", what, p);
}

static void table(void)
{
    static const int none[MAXD];
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const struct dims_case *k = &cases[c];
        int dims[MAXD] = {0};
        char what[64];
        snprintf(what, sizeof what, "MPI_Dims_create(%d, %d)", k->nnodes, k->ndims);
        MPICHK(MPI_Dims_create(k->nnodes, k->ndims, dims));
        check_split(k->nnodes, k->ndims, none, dims, what);
        for (int i = 0; i < k->ndims; i++) {
            int want = i < 20 && k->want[i] ? k->want[i] : 1;
            if (k->nnodes == 1 << 30 && k->ndims == 64)
                want = i < 30 ? 2 : 1;
            CHECK(dims[i] == want, "%s: dims[%d] = %d, expected %d", what, i, dims[i], want);
        }
    }
}

static void presets(void)
{
    struct {
        int nnodes, ndims, in[4], out[4];
    } ok[] = {
        {12, 3, {0, 2, 0}, {3, 2, 2}},
        {12, 3, {0, 0, 12}, {1, 1, 12}},
        {12, 3, {2, 2, 3}, {2, 2, 3}},
        {24, 4, {0, 3, 0, 0}, {2, 3, 2, 2}},
        {INT_MAX, 3, {0, INT_MAX, 0}, {1, INT_MAX, 1}},
        {2147483646, 3, {0, 0, 2}, {32769, 32767, 2}},
        {1, 0, {0}, {0}},
    };
    for (size_t c = 0; c < sizeof ok / sizeof ok[0]; c++) {
        int dims[4];
        memcpy(dims, ok[c].in, sizeof dims);
        MPICHK(MPI_Dims_create(ok[c].nnodes, ok[c].ndims, dims));
        for (int i = 0; i < ok[c].ndims; i++)
            CHECK(dims[i] == ok[c].out[i], "MPI_Dims_create(%d, %d), preset case %zu: dims[%d] = %d, expected %d",
                  ok[c].nnodes, ok[c].ndims, c, i, dims[i], ok[c].out[i]);
    }
    struct {
        int nnodes, ndims, in[4];
    } bad[] = {
        {12, 3, {5, 0, 0}},              /* 5 does not divide 12 */
        {12, 3, {2, 2, 2}},              /* all set, product 8 */
        {12, 3, {2, 2, 1}},              /* all set, product 4 divides 12 but is not 12 */
        {12, 3, {-1, 0, 0}},             /* negative */
        {4, 2, {8, -1}},                 /* negative after a product past nnodes */
        {12, 3, {65536, 65536, 0}},      /* a product past INT_MAX */
        {INT_MAX, 3, {INT_MAX, INT_MAX, 0}},
        {2, 0, {0}},                     /* no dimension cannot hold 2 */
    };
    for (size_t c = 0; c < sizeof bad / sizeof bad[0]; c++) {
        int dims[4];
        memcpy(dims, bad[c].in, sizeof dims);
        EXPECT_CLASS(MPI_Dims_create(bad[c].nnodes, bad[c].ndims, dims), MPI_ERR_DIMS);
    }
    int dims[2] = {0, 0};
    EXPECT_CLASS(MPI_Dims_create(12, -1, dims), MPI_ERR_DIMS);
    EXPECT_CLASS(MPI_Dims_create(0, 2, dims), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Dims_create(-4, 2, dims), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Dims_create(4, 2, NULL), MPI_ERR_ARG);
}

/* Products of powers of small primes with every number of dimensions:
 * valid, non-increasing splits, with some dimensions preset. */
static void sweep(void)
{
    static const int n[] = {735134400, 2095133040, 1396755360, 1102701600, 1556755200, 1 << 30, 1162261467,
                            1220703125, 1801088541, 2147483646};
    for (size_t c = 0; c < sizeof n / sizeof n[0]; c++)
        for (int nd = 1; nd <= MAXD; nd++) {
            int dims[MAXD] = {0}, preset[MAXD] = {0};
            if (nd > 2 && n[c] % 2 == 0)
                preset[nd / 2] = dims[nd / 2] = 2;
            char what[64];
            snprintf(what, sizeof what, "MPI_Dims_create(%d, %d)", n[c], nd);
            MPICHK(MPI_Dims_create(n[c], nd, dims));
            check_split(n[c], nd, preset, dims, what);
        }
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv, "dims_create");
    table();
    presets();
    sweep();
    tu_finish();
    return 0;
}
