/*
 * Dynamic windows: memory attached and detached while the peers are idle.
 *
 * Each round, every rank in turn (the others wait in a barrier, doing
 * nothing with the window) detaches the memory of the previous round,
 * frees it, mallocs new memory of another size and attaches it, plus a
 * second region; then all ranks learn the new addresses (MPI_Get_address,
 * Allgather) and access their right neighbour's regions with Put, Get,
 * Accumulate and Get_accumulate in a lock_all epoch, then in a fence
 * epoch. Memory freed and allocated again often lands at the same
 * address: an implementation that keeps a registration or a mapping of
 * the old memory reads or writes stale pages, which the values catch.
 * Also: MPI_WIN_BASE is MPI_BOTTOM and MPI_WIN_SIZE 0 for a dynamic
 * window, and a window with nothing attached can be fenced.
 */
#include "rma_util.h"

#define ROUNDS 5
#define NREG 2

struct region {
    long *mem;
    size_t n;          /* longs */
    MPI_Aint addr[64]; /* every rank's address of this region (size <= 64) */
};

static size_t region_len(int round, int reg, int rank)
{
    return (size_t)(64 + 32 * ((round + reg + rank) % 4)) * (reg + 1);
}

static long value(int round, int reg, int rank, size_t i)
{
    return 1000000L * round + 100000L * reg + 1000L * rank + (long)i;
}

/* My turn: swap my regions for new ones while everybody else waits. */
static void reattach(MPI_Win win, struct region *rg, int round)
{
    for (int turn = 0; turn < tu_size; turn++) {
        if (turn == tu_rank) {
            for (int g = 0; g < NREG; g++) {
                if (rg[g].mem) {
                    MPICHK(MPI_Win_detach(win, rg[g].mem));
                    free(rg[g].mem);
                }
                rg[g].n = region_len(round, g, tu_rank);
                rg[g].mem = malloc(rg[g].n * sizeof(long));
                CHECK(rg[g].mem != NULL, "out of memory");
                for (size_t i = 0; i < rg[g].n; i++)
                    rg[g].mem[i] = value(round, g, tu_rank, i);
                MPICHK(MPI_Win_attach(win, rg[g].mem, (MPI_Aint)(rg[g].n * sizeof(long))));
            }
        }
        MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    }
    for (int g = 0; g < NREG; g++) {
        MPI_Aint mine;
        MPICHK(MPI_Get_address(rg[g].mem, &mine));
        MPICHK(MPI_Allgather(&mine, 1, MPI_AINT, rg[g].addr, 1, MPI_AINT, MPI_COMM_WORLD));
    }
}

/* Access the right neighbour's regions: Get all of it, Put over the
 * first half, Accumulate 1 onto the last element, Get_accumulate the
 * element before. */
static void access_right(MPI_Win win, struct region *rg, int round, const char *mode)
{
    int right = (tu_rank + 1) % tu_size;
    for (int g = 0; g < NREG; g++) {
        size_t n = region_len(round, g, right), half = n / 2;
        long *got = malloc(n * sizeof(long)), *put = malloc(half * sizeof(long)), one = 1, fetched = -1;
        CHECK(got && put, "out of memory");
        for (size_t i = 0; i < half; i++)
            put[i] = -value(round, g, tu_rank, i);
        MPI_Aint base = rg[g].addr[right];
        MPICHK(MPI_Get(got, (int)n, MPI_LONG, right, base, (int)n, MPI_LONG, win));
        MPICHK(MPI_Win_flush(right, win));
        MPICHK(MPI_Put(put, (int)half, MPI_LONG, right, base, (int)half, MPI_LONG, win));
        MPICHK(MPI_Accumulate(&one, 1, MPI_LONG, right, MPI_Aint_add(base, (MPI_Aint)((n - 1) * sizeof(long))), 1,
                              MPI_LONG, MPI_SUM, win));
        MPICHK(MPI_Get_accumulate(&one, 1, MPI_LONG, &fetched, 1, MPI_LONG, right,
                                  MPI_Aint_add(base, (MPI_Aint)((n - 2) * sizeof(long))), 1, MPI_LONG, MPI_SUM, win));
        MPICHK(MPI_Win_flush(right, win));
        for (size_t i = 0; i < n; i++)
            CHECK(got[i] == value(round, g, right, i), "%s round %d: Get of region %d element %zu of rank %d: %ld", mode,
                  round, g, i, right, got[i]);
        CHECK(fetched == value(round, g, right, n - 2), "%s round %d: Get_accumulate fetched %ld", mode, round,
              fetched);
        free(got);
        free(put);
    }
}

/* My regions after my left neighbour's access_right. */
static void check_mine(const struct region *rg, int round, const char *mode)
{
    int left = (tu_rank - 1 + tu_size) % tu_size;
    for (int g = 0; g < NREG; g++) {
        size_t n = rg[g].n, half = n / 2;
        for (size_t i = 0; i < n; i++) {
            long want = i < half ? -value(round, g, left, i) : value(round, g, tu_rank, i);
            if (i >= n - 2)
                want += 1;
            CHECK(rg[g].mem[i] == want, "%s round %d: region %d element %zu is %ld, expected %ld", mode, round, g, i,
                  rg[g].mem[i], want);
            rg[g].mem[i] = value(round, g, tu_rank, i); /* again, for the next epoch */
        }
    }
}

static void check_attrs(MPI_Win win)
{
    void *base;
    MPI_Aint *size;
    int *flavor, flag;
    MPICHK(MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag));
    CHECK(flag && base == MPI_BOTTOM, "MPI_WIN_BASE of a dynamic window: %p (flag %d)", base, flag);
    MPICHK(MPI_Win_get_attr(win, MPI_WIN_SIZE, &size, &flag));
    CHECK(flag && *size == 0, "MPI_WIN_SIZE of a dynamic window: %ld", flag ? (long)*size : -1L);
    MPICHK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag));
    CHECK(flag && *flavor == MPI_WIN_FLAVOR_DYNAMIC, "MPI_WIN_CREATE_FLAVOR: %d", flag ? *flavor : -1);
}

int main(int argc, char **argv)
{
    MPI_Win win;
    struct region rg[NREG] = {{0}};
    tu_init(&argc, &argv, "rma_dynamic");
    CHECK(tu_size <= 64, "at most 64 ranks");
    MPICHK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    rt_win_errors_return(win);
    check_attrs(win);
    MPICHK(MPI_Win_fence(0, win)); /* nothing attached yet */
    MPICHK(MPI_Win_fence(0, win));
    for (int round = 0; round < ROUNDS; round++) {
        reattach(win, rg, round);
        MPICHK(MPI_Win_lock_all(0, win));
        access_right(win, rg, round, "lock_all");
        MPICHK(MPI_Win_unlock_all(win));
        MPICHK(MPI_Barrier(MPI_COMM_WORLD));
        MPICHK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, tu_rank, 0, win));
        check_mine(rg, round, "lock_all");
        MPICHK(MPI_Win_unlock(tu_rank, win));
        MPICHK(MPI_Win_fence(0, win));
        /* fence epochs cannot flush: access_right's flushes are only
         * allowed in passive target epochs, so a separate Get here */
        {
            int right = (tu_rank + 1) % tu_size;
            long first = -1, one = 1;
            MPICHK(MPI_Get(&first, 1, MPI_LONG, right, rg[0].addr[right], 1, MPI_LONG, win));
            MPICHK(MPI_Accumulate(&one, 1, MPI_LONG, right, rg[1].addr[right], 1, MPI_LONG, MPI_SUM, win));
            MPICHK(MPI_Win_fence(0, win));
            CHECK(first == value(round, 0, right, 0), "fence round %d: Get read %ld", round, first);
            CHECK(rg[1].mem[0] == value(round, 1, tu_rank, 0) + 1, "fence round %d: Accumulate left %ld", round,
                  rg[1].mem[0]);
        }
        MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    }
    for (int g = 0; g < NREG; g++) {
        MPICHK(MPI_Win_detach(win, rg[g].mem));
        free(rg[g].mem);
    }
    MPICHK(MPI_Win_free(&win));
    tu_finish();
    return 0;
}
