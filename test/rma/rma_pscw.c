/*
 * Generalized active target synchronization (post/start/complete/wait)
 * with subsets of the ranks.
 *
 *  1. Ring: every rank exposes its window to its left neighbour and
 *     accesses its right one, in the same round (an exposure and an access
 *     epoch open at once on one window); Put and Get.
 *  2. Even ranks access the odd ranks (all of them at once: a start group
 *     of several targets); the odd ranks post to the even ones and poll
 *     MPI_Win_test until the epoch is complete. Then the roles swap, with
 *     MPI_MODE_NOCHECK on post and start (a barrier makes sure every post
 *     has happened before any start). Ranks that are in no group of a
 *     round sit out.
 *  3. Rounds with changing subsets: in round r the origins are the ranks
 *     with rank % 3 == r % 3, the targets all the others; every origin
 *     accumulates into every target, which checks the sum.
 */
#include "rma_util.h"

#define ROUNDS 6

static MPI_Group group_of(const int *ranks, int n)
{
    MPI_Group world, g;
    MPICHK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    MPICHK(MPI_Group_incl(world, n, ranks, &g));
    MPICHK(MPI_Group_free(&world));
    return g;
}

/* The ranks r with pick(r, arg), in order; their count. */
static int ranks_where(int (*pick)(int, int), int arg, int *out)
{
    int n = 0;
    for (int r = 0; r < tu_size; r++)
        if (pick(r, arg))
            out[n++] = r;
    return n;
}

static int is_parity(int r, int parity)
{
    return r % 2 == parity;
}

static int is_third(int r, int round)
{
    return r % 3 == round % 3;
}

static int not_third(int r, int round)
{
    return r % 3 != round % 3;
}

static void ring(MPI_Win win, int *mem)
{
    int left = (tu_rank - 1 + tu_size) % tu_size, right = (tu_rank + 1) % tu_size;
    MPI_Group lg = group_of(&left, 1), rg = group_of(&right, 1);
    for (int round = 0; round < ROUNDS; round++) {
        int v[4], got[4];
        for (int i = 0; i < 4; i++) {
            v[i] = 1000 * round + 10 * tu_rank + i;
            got[i] = -1;
        }
        MPICHK(MPI_Win_post(lg, 0, win));
        MPICHK(MPI_Win_start(rg, 0, win));
        MPICHK(MPI_Put(v, 4, MPI_INT, right, 0, 4, MPI_INT, win));
        /* slot 4.. of my right neighbour holds its own rank and round */
        MPICHK(MPI_Get(got, 4, MPI_INT, right, 4, 4, MPI_INT, win));
        MPICHK(MPI_Win_complete(win));
        MPICHK(MPI_Win_wait(win));
        for (int i = 0; i < 4; i++) {
            CHECK(mem[i] == 1000 * round + 10 * left + i, "ring round %d: element %d from rank %d is %d", round, i,
                  left, mem[i]);
            CHECK(got[i] == 1000 * round + right + i, "ring round %d: Get of element %d from rank %d is %d", round,
                  4 + i, right, got[i]);
        }
        /* The next round's values for my left neighbour's Get. Outside
         * any exposure epoch now; the barrier orders it before the post. */
        for (int i = 0; i < 4; i++)
            mem[4 + i] = 1000 * (round + 1) + tu_rank + i;
        MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    }
    MPICHK(MPI_Group_free(&lg));
    MPICHK(MPI_Group_free(&rg));
}

/* Origins (rank % 2 == from) put their rank+1 into slot [origin] of every
 * target (rank % 2 != from). */
static void parity_round(MPI_Win win, int *mem, int from, int nocheck)
{
    int origins[tu_size], targets[tu_size];
    int no = ranks_where(is_parity, from, origins), nt = ranks_where(is_parity, 1 - from, targets);
    int assert_ = nocheck ? MPI_MODE_NOCHECK : 0;
    if (nt == 0) /* one rank: nobody to access */
        return;
    for (int i = 0; i < tu_size; i++)
        mem[i] = -1;
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    if (tu_rank % 2 != from) {
        MPI_Group g = group_of(origins, no);
        int flag = 0;
        long polls = 0;
        MPICHK(MPI_Win_post(g, assert_, win));
        if (nocheck)
            MPICHK(MPI_Barrier(MPI_COMM_WORLD));
        while (!flag) {
            MPICHK(MPI_Win_test(win, &flag));
            polls++;
        }
        MPICHK(MPI_Group_free(&g));
        for (int i = 0; i < tu_size; i++) {
            int want = i % 2 == from ? i + 1 : -1;
            CHECK(mem[i] == want, "origins %s, %s: slot %d is %d, expected %d (after %ld MPI_Win_test)",
                  from ? "odd" : "even", nocheck ? "MPI_MODE_NOCHECK" : "checked", i, mem[i], want, polls);
        }
    } else {
        MPI_Group g = group_of(targets, nt);
        int v = tu_rank + 1;
        if (nocheck)
            MPICHK(MPI_Barrier(MPI_COMM_WORLD));
        MPICHK(MPI_Win_start(g, assert_, win));
        for (int i = 0; i < nt; i++)
            MPICHK(MPI_Put(&v, 1, MPI_INT, targets[i], tu_rank, 1, MPI_INT, win));
        MPICHK(MPI_Win_complete(win));
        MPICHK(MPI_Group_free(&g));
    }
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Round r: origins accumulate (rank+1)*(r+1) into element 0 of every
 * target and Get_accumulate nothing (MPI_NO_OP) from element 1. */
static void third_rounds(MPI_Win win, int *mem)
{
    for (int round = 0; round < ROUNDS; round++) {
        int origins[tu_size], targets[tu_size];
        int no = ranks_where(is_third, round, origins), nt = ranks_where(not_third, round, targets);
        if (no == 0 || nt == 0)
            continue;
        mem[0] = 0;
        mem[1] = 7 * tu_rank;
        MPICHK(MPI_Barrier(MPI_COMM_WORLD));
        if (is_third(tu_rank, round)) {
            MPI_Group g = group_of(targets, nt);
            int v = (tu_rank + 1) * (round + 1), got[tu_size];
            MPICHK(MPI_Win_start(g, 0, win));
            for (int i = 0; i < nt; i++) {
                MPICHK(MPI_Accumulate(&v, 1, MPI_INT, targets[i], 0, 1, MPI_INT, MPI_SUM, win));
                MPICHK(MPI_Get_accumulate(&v, 1, MPI_INT, &got[i], 1, MPI_INT, targets[i], 1, 1, MPI_INT, MPI_NO_OP,
                                          win));
            }
            MPICHK(MPI_Win_complete(win));
            for (int i = 0; i < nt; i++)
                CHECK(got[i] == 7 * targets[i], "round %d: Get_accumulate(MPI_NO_OP) from rank %d read %d", round,
                      targets[i], got[i]);
            MPICHK(MPI_Group_free(&g));
        } else {
            MPI_Group g = group_of(origins, no);
            int want = 0;
            for (int i = 0; i < no; i++)
                want += (origins[i] + 1) * (round + 1);
            MPICHK(MPI_Win_post(g, 0, win));
            MPICHK(MPI_Win_wait(win));
            CHECK(mem[0] == want, "round %d: %d origins accumulated %d, expected %d", round, no, mem[0], want);
            CHECK(mem[1] == 7 * tu_rank, "round %d: MPI_NO_OP changed element 1 to %d", round, mem[1]);
            MPICHK(MPI_Group_free(&g));
        }
        MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    }
}

int main(int argc, char **argv)
{
    int *mem;
    MPI_Win win;
    tu_init(&argc, &argv, "rma_pscw");
    int n = tu_size > 8 ? tu_size : 8;
    MPICHK(MPI_Win_allocate((MPI_Aint)(n * sizeof(int)), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    rt_win_errors_return(win);
    for (int i = 0; i < 8; i++)
        mem[i] = i < 4 ? -1 : 1000 * 0 + tu_rank + (i - 4);
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    ring(win, mem);
    parity_round(win, mem, 0, 0);
    parity_round(win, mem, 1, 0);
    parity_round(win, mem, 1, 1);
    parity_round(win, mem, 0, 1);
    third_rounds(win, mem);
    MPICHK(MPI_Win_free(&win));
    tu_finish();
    return 0;
}
