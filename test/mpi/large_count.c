/*
 * More than 2^31 elements of a 1-byte type through the large-count (_c)
 * calls, at 2 ranks: MPI_Send_c/Recv_c and Isend_c/Irecv_c (with
 * MPI_Get_count_c, MPI_Get_elements_c and the int MPI_Get_count, which must
 * say MPI_UNDEFINED), MPI_Bcast_c, MPI_Allreduce_c (MPI_SUM on MPI_UINT8_T,
 * in place), MPI_Gatherv_c, and one element of a type built by MPI_Type_contiguous_c whose
 * size is above 2^31 (MPI_Type_size_c, MPI_Type_get_extent_c, its envelope
 * and contents). Every byte is checked against a pattern.
 *
 * One buffer of N bytes per rank (about 2 GiB), reused from step to step.
 * Other sizes than 2 ranks: a note, success; if the memory is not there,
 * a note and success, as test/mpi/p2p_huge.c does.
 */
#include "testutil.h"

#include <limits.h>

/* Just above 2^31, and not a multiple of 8 (tu_fill's word size). */
#define N ((MPI_Count)INT_MAX + 4099)

static unsigned char *buf;
static int peer;

static void expect_counts(const MPI_Status *st, const char *what)
{
    MPI_Count n = -1, e = -1;
    int small = 0;
    MPICHK(MPI_Get_count_c(st, MPI_CHAR, &n));
    CHECK(n == N, "%s: MPI_Get_count_c %lld, expected %lld", what, n, N);
    MPICHK(MPI_Get_elements_c(st, MPI_CHAR, &e));
    CHECK(e == N, "%s: MPI_Get_elements_c %lld, expected %lld", what, e, N);
    MPICHK(MPI_Get_count(st, MPI_CHAR, &small));
    CHECK(small == MPI_UNDEFINED, "%s: int MPI_Get_count %d, expected MPI_UNDEFINED", what, small);
}

static void expect_pattern(uint64_t seed, const char *what)
{
    long bad = tu_verify(buf, (size_t)N, seed);
    CHECK(bad < 0, "%s: byte %ld of %lld differs from the pattern", what, bad, N);
}

/* (a) rank 0 -> 1 blocking, then 1 -> 0 nonblocking, the data sent back. */
static void p2p(void)
{
    uint64_t seed = tu_seed(300, 0, 1, 0);
    MPI_Status st;
    if (tu_rank == 0) {
        tu_fill(buf, (size_t)N, seed);
        MPICHK(MPI_Send_c(buf, N, MPI_CHAR, peer, 1, MPI_COMM_WORLD));
        memset(buf, 0, (size_t)N);
        MPI_Request r;
        MPICHK(MPI_Irecv_c(buf, N, MPI_CHAR, peer, 2, MPI_COMM_WORLD, &r));
        MPICHK(MPI_Wait(&r, &st));
        expect_counts(&st, "MPI_Irecv_c");
        expect_pattern(seed, "MPI_Isend_c back to rank 0");
    } else {
        memset(buf, 0, (size_t)N);
        MPICHK(MPI_Recv_c(buf, N, MPI_CHAR, peer, 1, MPI_COMM_WORLD, &st));
        expect_counts(&st, "MPI_Recv_c");
        expect_pattern(seed, "MPI_Send_c to rank 1");
        MPI_Request r;
        MPICHK(MPI_Isend_c(buf, N, MPI_CHAR, peer, 2, MPI_COMM_WORLD, &r));
        MPICHK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    }
}

/* Every byte is twice the pattern's, modulo 256. */
static void expect_doubled(uint64_t seed, const char *what)
{
    for (size_t i = 0; i < (size_t)N; i++)
        CHECK(buf[i] == (unsigned char)(2 * tu_pat(seed, i)), "%s: byte %zu is %d, expected %d",
              what, i, buf[i], (unsigned char)(2 * tu_pat(seed, i)));
}

/* (b) the collectives: a broadcast, then an in-place sum of the broadcast
 * data with itself (each byte doubles, modulo 256), then rank 1's result
 * gathered to rank 0 by MPI_Gatherv_c (MPI_Count counts, MPI_Aint
 * displacements). */
static void collectives(void)
{
    uint64_t seed = tu_seed(301, 0, 1, 0);
    if (tu_rank == 0)
        tu_fill(buf, (size_t)N, seed);
    else
        memset(buf, 0, (size_t)N);
    MPICHK(MPI_Bcast_c(buf, N, MPI_CHAR, 0, MPI_COMM_WORLD));
    expect_pattern(seed, "MPI_Bcast_c");
    MPICHK(MPI_Allreduce_c(MPI_IN_PLACE, buf, N, MPI_UINT8_T, MPI_SUM, MPI_COMM_WORLD));
    expect_doubled(seed, "MPI_Allreduce_c");

    /* a v-collective: rank 1's N bytes to the root, which gives none */
    MPI_Count counts[2] = {0, N};
    MPI_Aint displs[2] = {0, 0};
    if (tu_rank == 0) {
        memset(buf, 0, (size_t)N);
        MPICHK(MPI_Gatherv_c(MPI_IN_PLACE, 0, MPI_CHAR, buf, counts, displs, MPI_CHAR, 0,
                             MPI_COMM_WORLD));
        expect_doubled(seed, "MPI_Gatherv_c");
    } else {
        MPICHK(MPI_Gatherv_c(buf, N, MPI_CHAR, NULL, NULL, NULL, MPI_CHAR, 0, MPI_COMM_WORLD));
    }
}

/* (c) one element of a type of N chars, received as N chars. */
static void datatype(void)
{
    MPI_Datatype big;
    MPICHK(MPI_Type_contiguous_c(N, MPI_CHAR, &big));
    MPICHK(MPI_Type_commit(&big));
    MPI_Count size = 0, lb = -1, extent = 0, ni, na, nc, nd;
    int combiner, small = 0;
    MPICHK(MPI_Type_size_c(big, &size));
    CHECK(size == N, "MPI_Type_size_c %lld, expected %lld", size, N);
    MPICHK(MPI_Type_size(big, &small));
    CHECK(small == MPI_UNDEFINED, "int MPI_Type_size %d, expected MPI_UNDEFINED", small);
    MPICHK(MPI_Type_get_extent_c(big, &lb, &extent));
    CHECK(lb == 0 && extent == N, "MPI_Type_get_extent_c (%lld, %lld)", lb, extent);
    MPICHK(MPI_Type_get_envelope_c(big, &ni, &na, &nc, &nd, &combiner));
    CHECK(combiner == MPI_COMBINER_CONTIGUOUS && ni == 0 && na == 0 && nc == 1 && nd == 1,
          "envelope: combiner %d, %lld ints, %lld addresses, %lld large counts, %lld types",
          combiner, ni, na, nc, nd);
    MPI_Count count = 0;
    MPI_Datatype old = MPI_DATATYPE_NULL;
    MPICHK(MPI_Type_get_contents_c(big, 0, 0, 1, 1, NULL, NULL, &count, &old));
    CHECK(count == N && old == MPI_CHAR, "contents: count %lld, type 0x%x", count, (unsigned)old);

    uint64_t seed = tu_seed(302, 0, 1, 0);
    MPI_Status st;
    if (tu_rank == 0) {
        tu_fill(buf, (size_t)N, seed);
        MPICHK(MPI_Send_c(buf, 1, big, peer, 3, MPI_COMM_WORLD));
    } else {
        memset(buf, 0, (size_t)N);
        MPICHK(MPI_Recv_c(buf, N, MPI_CHAR, peer, 3, MPI_COMM_WORLD, &st));
        expect_counts(&st, "a message of the big type");
        MPI_Count one = 0;
        MPICHK(MPI_Get_count_c(&st, big, &one));
        CHECK(one == 1, "MPI_Get_count_c in the big type: %lld, expected 1", one);
        expect_pattern(seed, "one element of the big type");
    }
    MPICHK(MPI_Type_free(&big));
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv, "large_count");
    if (tu_size != 2) {
        if (tu_rank == 0)
            printf("NOTE large_count: runs at 2 ranks only, not %d\n", tu_size);
        tu_finish();
        return 0;
    }
    peer = 1 - tu_rank;
    buf = malloc((size_t)N);
    if (tu_sum(buf != NULL) != 2) {
        if (tu_rank == 0)
            printf("NOTE large_count: could not allocate %lld bytes on every rank; skipped\n", N);
        free(buf);
        tu_finish();
        return 0;
    }
    p2p();
    tu_barrier();
    collectives();
    tu_barrier();
    datatype();
    free(buf);
    tu_finish();
    return 0;
}
