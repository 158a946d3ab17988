/*
 * MPI_Win_allocate_shared: the node's ranks (MPI_Comm_split_type
 * SHARED, so this runs on any layout) share one window.
 *
 *  1. Contiguous (the default): rank r asks for 8 * (r % 3 + 1) longs,
 *     rank 1 for none. MPI_Win_shared_query gives each rank's base, size
 *     and disp_unit (here sizeof(long), except 1 on the last rank); rank
 *     r+1's memory starts where rank r's ends; MPI_PROC_NULL names the
 *     first rank with a non-zero size.
 *  2. Plain stores: in a lock_all epoch, each round every rank stores
 *     into its own segment and into its right neighbour's, MPI_Win_sync,
 *     barrier, MPI_Win_sync, then reads what its left neighbour stored
 *     and what its right neighbour stored for itself, through the
 *     pointers of MPI_Win_shared_query.
 *  3. RMA on a shared window: Put and Accumulate to a neighbour, then a
 *     load of the target's memory by a third rank.
 *  4. alloc_shared_noncontig=true: the same checks but for contiguity;
 *     every segment is usable through its pointer.
 */
#include "rma_util.h"

#define ROUNDS 20

struct shared {
    MPI_Win win;
    MPI_Comm node;
    int rank, size;
    long **base;        /* each rank's segment, mapped here */
    MPI_Aint *bytes;
    int *unit;
};

static MPI_Aint my_longs(int r)
{
    return r == 1 ? 0 : 8 * (r % 3 + 1);
}

static void shared_open(struct shared *sh, MPI_Comm node, int noncontig)
{
    MPI_Info info = MPI_INFO_NULL;
    long *mine;
    sh->node = node;
    MPICHK(MPI_Comm_rank(node, &sh->rank));
    MPICHK(MPI_Comm_size(node, &sh->size));
    if (noncontig) {
        MPICHK(MPI_Info_create(&info));
        MPICHK(MPI_Info_set(info, "alloc_shared_noncontig", "true"));
    }
    int unit = sh->rank == sh->size - 1 ? 1 : (int)sizeof(long);
    MPICHK(MPI_Win_allocate_shared(my_longs(sh->rank) * (MPI_Aint)sizeof(long), unit, info, node, &mine, &sh->win));
    if (noncontig)
        MPICHK(MPI_Info_free(&info));
    rt_win_errors_return(sh->win);
    sh->base = calloc((size_t)sh->size, sizeof *sh->base);
    sh->bytes = calloc((size_t)sh->size, sizeof *sh->bytes);
    sh->unit = calloc((size_t)sh->size, sizeof *sh->unit);
    CHECK(sh->base && sh->bytes && sh->unit, "out of memory");
    for (int r = 0; r < sh->size; r++) {
        MPICHK(MPI_Win_shared_query(sh->win, r, &sh->bytes[r], &sh->unit[r], &sh->base[r]));
        CHECK(sh->bytes[r] == my_longs(r) * (MPI_Aint)sizeof(long), "Win_shared_query(%d): size %ld, expected %ld", r,
              (long)sh->bytes[r], (long)(my_longs(r) * (MPI_Aint)sizeof(long)));
        int want_unit = r == sh->size - 1 ? 1 : (int)sizeof(long);
        CHECK(sh->unit[r] == want_unit, "Win_shared_query(%d): disp_unit %d, expected %d", r, sh->unit[r], want_unit);
    }
    if (my_longs(sh->rank) > 0)
        CHECK(sh->base[sh->rank] == mine, "Win_shared_query(myself) gave %p, Win_allocate_shared %p",
              (void *)sh->base[sh->rank], (void *)mine);
}

static void shared_close(struct shared *sh)
{
    MPICHK(MPI_Win_free(&sh->win));
    free(sh->base);
    free(sh->bytes);
    free(sh->unit);
}

static void check_contiguous(const struct shared *sh)
{
    char *prev_end = NULL;
    for (int r = 0; r < sh->size; r++) {
        if (sh->bytes[r] == 0)
            continue;
        if (prev_end)
            CHECK((char *)sh->base[r] == prev_end, "contiguous: rank %d starts at %p, the previous segment ends at %p",
                  r, (void *)sh->base[r], (void *)prev_end);
        prev_end = (char *)sh->base[r] + sh->bytes[r];
    }
    MPI_Aint bytes;
    int unit;
    long *first;
    MPICHK(MPI_Win_shared_query(sh->win, MPI_PROC_NULL, &bytes, &unit, &first));
    int r0 = 0;
    while (r0 < sh->size && sh->bytes[r0] == 0)
        r0++;
    CHECK(r0 < sh->size && first == sh->base[r0] && bytes == sh->bytes[r0],
          "Win_shared_query(MPI_PROC_NULL): %p, %ld bytes; the first non-empty segment (rank %d) is %p", (void *)first,
          (long)bytes, r0, r0 < sh->size ? (void *)sh->base[r0] : NULL);
}

/* The ranks with memory, each storing into the next one with memory. */
static int next_with_memory(const struct shared *sh, int r, int step)
{
    for (int i = 1; i <= sh->size; i++) {
        int n = ((r + step * i) % sh->size + sh->size) % sh->size;
        if (sh->bytes[n] > 0)
            return n;
    }
    return -1;
}

static void plain_stores(const struct shared *sh)
{
    int me = sh->rank, has = sh->bytes[me] > 0;
    int right = next_with_memory(sh, me, 1), left = next_with_memory(sh, me, -1);
    MPICHK(MPI_Win_lock_all(0, sh->win));
    for (int round = 0; round < ROUNDS; round++) {
        /* word 0 of a segment: its owner's; word 1: its left neighbour's */
        if (has) {
            sh->base[me][0] = 1000L * round + me;
            sh->base[right][1] = 1000L * round + 100 + me;
        }
        MPICHK(MPI_Win_sync(sh->win));
        MPICHK(MPI_Barrier(sh->node));
        MPICHK(MPI_Win_sync(sh->win));
        if (has) {
            long lw = sh->base[left][0], own = sh->base[right][0], mine = sh->base[me][1];
            CHECK(lw == 1000L * round + left, "round %d: rank %d's own word read %ld by rank %d", round, left, lw, me);
            CHECK(own == 1000L * round + right, "round %d: rank %d's own word read %ld", round, right, own);
            CHECK(mine == 1000L * round + 100 + left, "round %d: what rank %d stored into my segment reads %ld", round,
                  left, mine);
        }
        MPICHK(MPI_Barrier(sh->node));
    }
    MPICHK(MPI_Win_unlock_all(sh->win));
}

/* Origin puts into its right neighbour's word 2 and accumulates into
 * its word 3; the neighbour's right neighbour loads them. */
static void rma_then_load(const struct shared *sh)
{
    int me = sh->rank, has = sh->bytes[me] > 0;
    int right = next_with_memory(sh, me, 1), left = next_with_memory(sh, me, -1);
    int leftleft = next_with_memory(sh, left, -1);
    long v = 7000 + me;
    MPICHK(MPI_Win_lock_all(0, sh->win));
    if (has)
        sh->base[me][3] = 0;
    MPICHK(MPI_Win_sync(sh->win));
    MPICHK(MPI_Barrier(sh->node));
    if (has) {
        /* displacements in the target's disp_unit */
        MPI_Aint d2 = 2 * (MPI_Aint)sizeof(long) / sh->unit[right], d3 = 3 * (MPI_Aint)sizeof(long) / sh->unit[right];
        MPICHK(MPI_Put(&v, 1, MPI_LONG, right, d2, 1, MPI_LONG, sh->win));
        MPICHK(MPI_Accumulate(&v, 1, MPI_LONG, right, d3, 1, MPI_LONG, MPI_SUM, sh->win));
        MPICHK(MPI_Win_flush(right, sh->win));
    }
    MPICHK(MPI_Barrier(sh->node));
    MPICHK(MPI_Win_sync(sh->win));
    if (has) {
        long p = sh->base[left][2], a = sh->base[left][3];
        CHECK(p == 7000 + leftleft, "Put by rank %d into rank %d, loaded by rank %d: %ld", leftleft, left, me, p);
        CHECK(a == 7000 + leftleft, "Accumulate by rank %d into rank %d, loaded by rank %d: %ld", leftleft, left, me, a);
    }
    MPICHK(MPI_Win_unlock_all(sh->win));
    MPICHK(MPI_Barrier(sh->node));
}

int main(int argc, char **argv)
{
    MPI_Comm node;
    tu_init(&argc, &argv, "rma_shared");
    MPICHK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    for (int noncontig = 0; noncontig < 2; noncontig++) {
        struct shared sh;
        shared_open(&sh, node, noncontig);
        if (!noncontig)
            check_contiguous(&sh);
        plain_stores(&sh);
        rma_then_load(&sh);
        shared_close(&sh);
    }
    MPICHK(MPI_Comm_free(&node));
    tu_finish();
    return 0;
}
