/*
 * Accumulate ordering across paths: from one origin to one target,
 * accumulate-family calls on the same element take effect in issue order
 * (accumulate_ordering's default, rar,raw,war,waw), also when bmpi sends
 * some through the transport's atomics (contiguous, basic type) and others
 * as active messages (a non-contiguous target type) to a target on
 * another node or reached over ofi (runtime/rma_amo.c). Without the wait
 * at a switch of path, a Fetch_and_op could overtake the Accumulate
 * before it and fetch a stale value.
 *
 * Each rank owns a slot of SLOT longs in every rank's window and, in one
 * lock_all epoch, runs ROUNDS rounds on each target:
 *   Accumulate(REPLACE, v) on elements 0 and 2 (a strided target type),
 *   Fetch_and_op(SUM, 1) on element 0 (contiguous),
 *   Get_accumulate(NO_OP) of elements 0 and 2 (strided),
 *   Compare_and_swap(v + 1 -> v + 7) on element 0,
 *   flush;
 * the fetched values must be v, {v + 1, v} and v + 1, and element 0 ends
 * at v + 7. Plain MPI only.
 */
#include "../mpi/testutil.h"

#define SLOT 4
#define ROUNDS 100

static void round_on(MPI_Win win, MPI_Datatype strided, int target, long v)
{
    MPI_Aint disp = (MPI_Aint)tu_rank * SLOT;
    long pair[2] = {v, v}, one = 1, fetched = -1, both[2] = {-1, -1};
    long expect = v + 1, swap = v + 7, old = -1;
    MPICHK(MPI_Accumulate(pair, 2, MPI_LONG, target, disp, 1, strided, MPI_REPLACE, win));
    MPICHK(MPI_Fetch_and_op(&one, &fetched, MPI_LONG, target, disp, MPI_SUM, win));
    MPICHK(MPI_Get_accumulate(NULL, 0, MPI_LONG, both, 2, MPI_LONG, target, disp, 1, strided, MPI_NO_OP, win));
    MPICHK(MPI_Compare_and_swap(&swap, &expect, &old, MPI_LONG, target, disp, win));
    MPICHK(MPI_Win_flush(target, win));
    CHECK(fetched == v, "target %d value %ld: Fetch_and_op fetched %ld, not the %ld replaced before it", target, v,
          fetched, v);
    CHECK(both[0] == v + 1 && both[1] == v, "target %d value %ld: Get_accumulate fetched {%ld, %ld}, not {%ld, %ld}",
          target, v, both[0], both[1], v + 1, v);
    CHECK(old == v + 1, "target %d value %ld: Compare_and_swap found %ld, not %ld", target, v, old, v + 1);
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv, "rma_acc_order");
    long *base;
    MPI_Win win;
    MPI_Aint bytes = (MPI_Aint)tu_size * SLOT * (MPI_Aint)sizeof(long);
    MPICHK(MPI_Alloc_mem(bytes, MPI_INFO_NULL, &base));
    memset(base, 0, (size_t)bytes);
    MPICHK(MPI_Win_create(base, bytes, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPICHK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MPI_Datatype strided;
    MPICHK(MPI_Type_vector(2, 1, 2, MPI_LONG, &strided));
    MPICHK(MPI_Type_commit(&strided));

    MPICHK(MPI_Win_lock_all(0, win));
    for (int k = 1; k <= tu_size; k++) {
        int target = (tu_rank + k) % tu_size; /* self last */
        for (long v = 1; v <= ROUNDS; v++)
            round_on(win, strided, target, v * 1000 + target);
    }
    MPICHK(MPI_Win_unlock_all(win));
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));

    for (int origin = 0; origin < tu_size; origin++) {
        long want = ROUNDS * 1000L + tu_rank;
        CHECK(base[origin * SLOT] == want + 7 && base[origin * SLOT + 2] == want,
              "slot of rank %d holds {%ld, %ld}, not {%ld, %ld}", origin, base[origin * SLOT],
              base[origin * SLOT + 2], want + 7, want);
    }
    MPICHK(MPI_Type_free(&strided));
    MPICHK(MPI_Win_free(&win));
    MPICHK(MPI_Free_mem(base));
    tu_finish();
    return 0;
}
