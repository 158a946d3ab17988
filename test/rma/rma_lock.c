/*
 * Passive target: lock contention and lock_all with flushes.
 *
 *  1. Exclusive lock contention: every rank, k times, locks rank 0
 *     exclusively, reads the counter with Get, flushes, writes it back
 *     plus one with Put, unlocks. The final value is size * k: a lost
 *     update means two ranks held the exclusive lock at once.
 *  2. Readers and writers: odd ranks write a pair of words at rank 0
 *     under an exclusive lock (first word, flush, second word); even
 *     ranks read the pair under a shared lock and must never see the
 *     two words differ.
 *  3. lock_all + flush: every rank puts into its slot at every rank,
 *     flush_all, barrier; each rank then checks its window after
 *     MPI_Win_sync, and Gets every rank's slot back under the same epoch.
 *  4. Lock on oneself: local loads and stores inside the epoch.
 *  5. MPI_MODE_NOCHECK: each rank takes its own turn (a token passed
 *     with point-to-point messages guarantees nobody else holds a lock),
 *     locks rank 0 exclusively with NOCHECK and adds its rank.
 */
#include "rma_util.h"

/* Lock handoffs in all, shared out among the ranks (each one waits for
 * the target's progress in implementations without a shared lock word,
 * which is slow with many ranks on few cores). */
#define HANDOFFS 48

static int per_rank(void)
{
    return HANDOFFS / tu_size > 4 ? HANDOFFS / tu_size : 4;
}

static void exclusive_counter(MPI_Win win, long *mem)
{
    const int k = per_rank();
    for (int i = 0; i < k; i++) {
        long v = -1;
        MPICHK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        MPICHK(MPI_Get(&v, 1, MPI_LONG, 0, 0, 1, MPI_LONG, win));
        MPICHK(MPI_Win_flush(0, win));
        CHECK(v >= 0 && v < (long)k * tu_size, "exclusive counter read %ld", v);
        v++;
        MPICHK(MPI_Put(&v, 1, MPI_LONG, 0, 0, 1, MPI_LONG, win));
        MPICHK(MPI_Win_unlock(0, win));
    }
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    if (tu_rank == 0) {
        MPICHK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        CHECK(mem[0] == (long)k * tu_size, "exclusive counter: %ld, expected %ld (lost updates)", mem[0],
              (long)k * tu_size);
        MPICHK(MPI_Win_unlock(0, win));
    }
}

static void readers_writers(MPI_Win win)
{
    for (int i = 0; i < per_rank(); i++) {
        if (tu_rank % 2) {
            long v = 1000L * tu_rank + i;
            MPICHK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
            MPICHK(MPI_Put(&v, 1, MPI_LONG, 0, 1, 1, MPI_LONG, win));
            MPICHK(MPI_Win_flush(0, win));
            MPICHK(MPI_Put(&v, 1, MPI_LONG, 0, 2, 1, MPI_LONG, win));
            MPICHK(MPI_Win_unlock(0, win));
        } else {
            long pair[2] = {-1, -1};
            MPICHK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
            MPICHK(MPI_Get(pair, 2, MPI_LONG, 0, 1, 2, MPI_LONG, win));
            MPICHK(MPI_Win_unlock(0, win));
            CHECK(pair[0] == pair[1], "a shared lock saw half of an exclusive writer's pair: %ld, %ld", pair[0],
                  pair[1]);
        }
    }
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
}

static void nocheck_turns(MPI_Win win, long *mem)
{
    int token = 0;
    if (tu_rank > 0)
        MPICHK(MPI_Recv(&token, 1, MPI_INT, tu_rank - 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    long v = tu_rank;
    MPICHK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, MPI_MODE_NOCHECK, win));
    MPICHK(MPI_Accumulate(&v, 1, MPI_LONG, 0, 3, 1, MPI_LONG, MPI_SUM, win));
    MPICHK(MPI_Win_unlock(0, win));
    if (tu_rank + 1 < tu_size)
        MPICHK(MPI_Send(&token, 1, MPI_INT, tu_rank + 1, 7, MPI_COMM_WORLD));
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    if (tu_rank == 0) {
        long want = (long)tu_size * (tu_size - 1) / 2;
        MPICHK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        CHECK(mem[3] == want, "MPI_MODE_NOCHECK turns: %ld, expected %ld", mem[3], want);
        MPICHK(MPI_Win_unlock(0, win));
    }
}

/* Slot of origin o at any rank: words 8 + 2*o and 9 + 2*o. */
static void lock_all_flush(MPI_Win win, long *mem)
{
    long v[2] = {100L * tu_rank, 100L * tu_rank + 1}, back[2];
    MPICHK(MPI_Win_lock_all(0, win));
    for (int t = 0; t < tu_size; t++)
        MPICHK(MPI_Put(v, 2, MPI_LONG, t, 8 + 2 * tu_rank, 2, MPI_LONG, win));
    MPICHK(MPI_Win_flush_all(win));
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    MPICHK(MPI_Win_sync(win));
    for (int o = 0; o < tu_size; o++)
        CHECK(mem[8 + 2 * o] == 100L * o && mem[9 + 2 * o] == 100L * o + 1,
              "lock_all: after flush_all of rank %d and a barrier, its slot holds %ld %ld", o, mem[8 + 2 * o],
              mem[9 + 2 * o]);
    for (int t = 0; t < tu_size; t++) {
        int o = (tu_rank + t) % tu_size;
        back[0] = back[1] = -1;
        MPICHK(MPI_Get(back, 2, MPI_LONG, t, 8 + 2 * o, 2, MPI_LONG, win));
        MPICHK(MPI_Win_flush_local(t, win));
        CHECK(back[0] == 100L * o && back[1] == 100L * o + 1, "lock_all: rank %d's slot of rank %d read %ld %ld", t,
              o, back[0], back[1]);
    }
    MPICHK(MPI_Win_unlock_all(win));
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
}

static void lock_self(MPI_Win win, long *mem)
{
    MPICHK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, tu_rank, 0, win));
    mem[4] = 42 + tu_rank;
    long got = -1;
    MPICHK(MPI_Get(&got, 1, MPI_LONG, tu_rank, 4, 1, MPI_LONG, win));
    MPICHK(MPI_Win_unlock(tu_rank, win));
    CHECK(got == 42 + tu_rank, "Get from myself after a local store in a lock epoch: %ld", got);
}

int main(int argc, char **argv)
{
    long *mem;
    MPI_Win win;
    tu_init(&argc, &argv, "rma_lock");
    MPI_Aint words = 8 + 2 * (MPI_Aint)tu_size;
    MPICHK(MPI_Win_allocate(words * (MPI_Aint)sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    rt_win_errors_return(win);
    MPICHK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, tu_rank, 0, win));
    for (MPI_Aint i = 0; i < words; i++)
        mem[i] = 0;
    MPICHK(MPI_Win_unlock(tu_rank, win));
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));

    exclusive_counter(win, mem);
    readers_writers(win);
    lock_all_flush(win, mem);
    lock_self(win, mem);
    /* Last: MPICH 4.0.2 (ch4:ucx) hangs in a later MPI_Win_lock on a
     * window once an exclusive MPI_MODE_NOCHECK epoch was unlocked. */
    nocheck_turns(win, mem);
    MPICHK(MPI_Win_free(&win));
    tu_finish();
    return 0;
}
