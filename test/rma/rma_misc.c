/*
 * Corners of the window calls:
 *
 *  1. Many windows at once (Win_allocate and Win_create, 24 of them),
 *     each used in a fence epoch, freed in an order other than creation.
 *  2. Windows over split communicators (even and odd ranks), used at the
 *     same time; a window over MPI_COMM_SELF.
 *  3. Windows where some ranks give no memory (size 0): the others still
 *     reach each other; a lock on a rank without memory works.
 *  4. Operations that move nothing: count 0, MPI_PROC_NULL (also for
 *     request forms, which must still give a completed request).
 *  5. Request forms completed by MPI_Test polling and by MPI_Wait after
 *     the epoch closed; Rput waited after a flush.
 *  6. Atomics on more types: Fetch_and_op on int8, uint16, uint64 with
 *     MPI_SUM, MPI_BXOR, MPI_MAX; MPI_LOR on MPI_C_BOOL; Compare_and_swap on
 *     MPI_BYTE and MPI_UINT64_T; Accumulate MPI_PROD on MPI_FLOAT.
 *  7. Fence assertions MPI_MODE_NOSTORE and MPI_MODE_NOPUT where they
 *     hold.
 */
#include "rma_util.h"

#include <stdbool.h>
#include <stddef.h>

#define NWIN 24
/* Window sizes of Win_allocate rounded up to 64 bytes: MPICH 4.0.2
 * (ch4:ucx) misplaces accumulates into Win_allocate windows whose size is
 * not such a multiple (README), which would hide the rest of this test
 * from the validation. */
#define PAD64(n) ((MPI_Aint)(((n) + 63) / 64 * 64))

static void many_windows(void)
{
    MPI_Win win[NWIN];
    int *mem[NWIN];
    int right = (tu_rank + 1) % tu_size, left = (tu_rank - 1 + tu_size) % tu_size;
    for (int i = 0; i < NWIN; i++) {
        if (i % 2) {
            MPICHK(MPI_Win_allocate(PAD64(4 * sizeof(int)), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem[i], &win[i]));
        } else {
            mem[i] = malloc(4 * sizeof(int));
            CHECK(mem[i] != NULL, "out of memory");
            MPICHK(MPI_Win_create(mem[i], 4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win[i]));
        }
        rt_win_errors_return(win[i]);
        mem[i][0] = -1;
    }
    for (int i = 0; i < NWIN; i++) {
        int v = 1000 * i + tu_rank;
        MPICHK(MPI_Win_fence(0, win[i]));
        MPICHK(MPI_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win[i]));
        MPICHK(MPI_Win_fence(0, win[i]));
        CHECK(mem[i][0] == 1000 * i + left, "window %d of %d: %d, expected %d", i, NWIN, mem[i][0], 1000 * i + left);
    }
    /* odd ones first, then the even ones backwards */
    for (int pass = 0; pass < 2; pass++)
        for (int k = 0; k < NWIN; k++) {
            int i = pass == 0 ? k : NWIN - 1 - k;
            if (i % 2 != 1 - pass)
                continue;
            MPICHK(MPI_Win_free(&win[i]));
            if (i % 2 == 0)
                free(mem[i]);
        }
}

static void split_windows(void)
{
    MPI_Comm half;
    MPI_Win hw, sw;
    long *hm, *sm;
    MPICHK(MPI_Comm_split(MPI_COMM_WORLD, tu_rank % 2, 0, &half));
    int hr, hs;
    MPICHK(MPI_Comm_rank(half, &hr));
    MPICHK(MPI_Comm_size(half, &hs));
    MPICHK(MPI_Win_allocate(PAD64(sizeof(long)), sizeof(long), MPI_INFO_NULL, half, &hm, &hw));
    MPICHK(MPI_Win_allocate(PAD64(sizeof(long)), sizeof(long), MPI_INFO_NULL, MPI_COMM_SELF, &sm, &sw));
    rt_win_errors_return(hw);
    rt_win_errors_return(sw);
    *hm = 0;
    *sm = 5;
    MPICHK(MPI_Win_fence(0, hw));
    long v = tu_rank + 1;
    for (int t = 0; t < hs; t++)
        MPICHK(MPI_Accumulate(&v, 1, MPI_LONG, t, 0, 1, MPI_LONG, MPI_SUM, hw));
    MPICHK(MPI_Win_fence(0, hw));
    long want = 0;
    for (int r = tu_rank % 2; r < tu_size; r += 2)
        want += r + 1;
    CHECK(*hm == want, "window over the %s ranks: %ld, expected %ld", tu_rank % 2 ? "odd" : "even", *hm, want);
    long got = -1;
    MPICHK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, sw));
    MPICHK(MPI_Fetch_and_op(&v, &got, MPI_LONG, 0, 0, MPI_SUM, sw));
    MPICHK(MPI_Win_unlock(0, sw));
    CHECK(got == 5 && *sm == 5 + v, "window over MPI_COMM_SELF: fetched %ld, now %ld", got, *sm);
    MPICHK(MPI_Win_free(&sw));
    MPICHK(MPI_Win_free(&hw));
    MPICHK(MPI_Comm_free(&half));
}

/* Odd ranks give no memory; even ranks exchange through theirs. */
static void empty_members(void)
{
    MPI_Win win;
    int *mem;
    int has = tu_rank % 2 == 0;
    MPICHK(MPI_Win_allocate(has ? PAD64(2 * sizeof(int)) : 0, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    rt_win_errors_return(win);
    if (has)
        mem[0] = mem[1] = 0;
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    MPICHK(MPI_Win_lock_all(0, win));
    for (int t = 0; t < tu_size; t += 2) {
        int v = tu_rank + 1;
        MPICHK(MPI_Accumulate(&v, 1, MPI_INT, t, 0, 1, MPI_INT, MPI_SUM, win));
    }
    MPICHK(MPI_Win_unlock_all(win));
    /* a lock on a rank without memory, with nothing done under it */
    if (tu_size > 1) {
        MPICHK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win));
        MPICHK(MPI_Win_unlock(1, win));
    }
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    if (has) {
        MPICHK(MPI_Win_lock(MPI_LOCK_SHARED, tu_rank, 0, win));
        int want = tu_size * (tu_size + 1) / 2;
        CHECK(mem[0] == want && mem[1] == 0, "size-0 members: %d %d, expected %d 0", mem[0], mem[1], want);
        MPICHK(MPI_Win_unlock(tu_rank, win));
    }
    MPICHK(MPI_Win_free(&win));
}

static void nothing_moves(MPI_Win win, int *mem)
{
    int v = 77, got = -3, flag = 0;
    MPI_Request req[3];
    MPICHK(MPI_Win_lock_all(0, win));
    MPICHK(MPI_Put(&v, 0, MPI_INT, 0, 0, 0, MPI_INT, win));
    MPICHK(MPI_Get(&got, 0, MPI_INT, 0, 0, 0, MPI_INT, win));
    MPICHK(MPI_Accumulate(&v, 0, MPI_INT, 0, 0, 0, MPI_INT, MPI_SUM, win));
    MPICHK(MPI_Put(&v, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win));
    MPICHK(MPI_Fetch_and_op(&v, &got, MPI_INT, MPI_PROC_NULL, 0, MPI_SUM, win));
    MPICHK(MPI_Rput(&v, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win, &req[0]));
    MPICHK(MPI_Rget(&got, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win, &req[1]));
    MPICHK(MPI_Raccumulate(&v, 0, MPI_INT, 0, 0, 0, MPI_INT, MPI_SUM, win, &req[2]));
    for (int i = 0; i < 3; i++) {
        flag = 0;
        for (int spin = 0; !flag && spin < 1000000; spin++)
            MPICHK(MPI_Test(&req[i], &flag, MPI_STATUS_IGNORE));
        CHECK(flag, "a request form that moves nothing (%d) does not complete", i);
    }
    MPICHK(MPI_Win_unlock_all(win));
    CHECK(got == -3, "a Get of nothing or from MPI_PROC_NULL wrote %d", got);
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    MPICHK(MPI_Win_lock(MPI_LOCK_SHARED, tu_rank, 0, win));
    CHECK(mem[0] == 10 * tu_rank, "an operation moving nothing changed my window: %d", mem[0]);
    MPICHK(MPI_Win_unlock(tu_rank, win));
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
}

static void requests(MPI_Win win, int *mem)
{
    int right = (tu_rank + 1) % tu_size, left = (tu_rank - 1 + tu_size) % tu_size;
    int v = 500 + tu_rank, got = -1, got2 = -1, flag = 0;
    MPI_Request rg, rp, rg2;
    MPICHK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    MPICHK(MPI_Rget(&got, 1, MPI_INT, right, 0, 1, MPI_INT, win, &rg));
    while (!flag)
        MPICHK(MPI_Test(&rg, &flag, MPI_STATUS_IGNORE));
    CHECK(got == 10 * right, "Rget completed by MPI_Test: %d, expected %d", got, 10 * right);
    MPICHK(MPI_Rput(&v, 1, MPI_INT, right, 1, 1, MPI_INT, win, &rp));
    MPICHK(MPI_Win_flush(right, win));
    MPICHK(MPI_Wait(&rp, MPI_STATUS_IGNORE)); /* complete already: the flush completed it */
    MPICHK(MPI_Rget(&got2, 1, MPI_INT, right, 1, 1, MPI_INT, win, &rg2));
    MPICHK(MPI_Win_unlock(right, win));
    MPICHK(MPI_Wait(&rg2, MPI_STATUS_IGNORE)); /* after the epoch: done */
    CHECK(got2 == v, "Rget after an Rput and a flush: %d, expected %d", got2, v);
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    MPICHK(MPI_Win_lock(MPI_LOCK_SHARED, tu_rank, 0, win));
    CHECK(mem[1] == 500 + left, "Rput from rank %d: %d", left, mem[1]);
    MPICHK(MPI_Win_unlock(tu_rank, win));
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
}

struct typed {
    int8_t i8;
    uint8_t byte;
    uint16_t u16;
    bool flag;
    float f;
    uint64_t u64;
    uint64_t c64;
};

static void more_types(void)
{
    MPI_Win win;
    struct typed *t;
    MPICHK(MPI_Win_allocate(PAD64(sizeof *t), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &t, &win));
    rt_win_errors_return(win);
    MPICHK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, tu_rank, 0, win));
    t->i8 = 0;
    t->byte = 0;
    t->u16 = 0;
    t->flag = false;
    t->f = 1.0f;
    t->u64 = 0;
    t->c64 = 0;
    MPICHK(MPI_Win_unlock(tu_rank, win));
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    MPICHK(MPI_Win_lock_all(0, win));
    int8_t one8 = 1, f8;
    uint16_t bit = (uint16_t)(1u << (tu_rank % 16)), f16;
    uint64_t big = (uint64_t)1 << (40 + tu_rank % 20), f64;
    bool yes = tu_rank == tu_size - 1, fb;
    float two = 2.0f;
    MPICHK(MPI_Fetch_and_op(&one8, &f8, MPI_INT8_T, 0, offsetof(struct typed, i8), MPI_SUM, win));
    MPICHK(MPI_Fetch_and_op(&bit, &f16, MPI_UINT16_T, 0, offsetof(struct typed, u16), MPI_BXOR, win));
    MPICHK(MPI_Fetch_and_op(&big, &f64, MPI_UINT64_T, 0, offsetof(struct typed, u64), MPI_MAX, win));
    MPICHK(MPI_Fetch_and_op(&yes, &fb, MPI_C_BOOL, 0, offsetof(struct typed, flag), MPI_LOR, win));
    MPICHK(MPI_Accumulate(&two, 1, MPI_FLOAT, 0, offsetof(struct typed, f), 1, MPI_FLOAT, MPI_PROD, win));
    MPICHK(MPI_Win_flush(0, win));
    /* CAS tickets: each rank takes the byte from its rank to rank+1 in turn. */
    unsigned char want = (unsigned char)tu_rank, next = (unsigned char)(tu_rank + 1), old;
    do {
        MPICHK(MPI_Compare_and_swap(&next, &want, &old, MPI_BYTE, 0, offsetof(struct typed, byte), win));
        MPICHK(MPI_Win_flush(0, win));
    } while (old != want);
    uint64_t zero = 0, mine = (uint64_t)tu_rank + 1, o64;
    MPICHK(MPI_Compare_and_swap(&mine, &zero, &o64, MPI_UINT64_T, 0, offsetof(struct typed, c64), win));
    MPICHK(MPI_Win_unlock_all(win));
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    int won = o64 == 0, winners = 0;
    MPICHK(MPI_Allreduce(&won, &winners, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(winners == 1, "Compare_and_swap on MPI_UINT64_T: %d ranks swapped from 0", winners);
    if (tu_rank == 0) {
        MPICHK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        uint16_t x = 0;
        uint64_t mx = 0;
        for (int r = 0; r < tu_size; r++) {
            x ^= (uint16_t)(1u << (r % 16));
            uint64_t b = (uint64_t)1 << (40 + r % 20);
            mx = b > mx ? b : mx;
        }
        float fw = 1.0f;
        for (int r = 0; r < tu_size; r++)
            fw *= 2.0f;
        CHECK(t->i8 == tu_size, "MPI_INT8_T SUM: %d", t->i8);
        CHECK(t->u16 == x, "MPI_UINT16_T BXOR: %#x, expected %#x", t->u16, x);
        CHECK(t->u64 == mx, "MPI_UINT64_T MAX: %#llx", (unsigned long long)t->u64);
        CHECK(t->flag, "MPI_C_BOOL LOR: false");
        CHECK(t->f == fw, "MPI_FLOAT PROD: %g, expected %g", t->f, fw);
        CHECK(t->byte == tu_size, "MPI_BYTE Compare_and_swap tickets: %d, expected %d", t->byte, tu_size);
        CHECK(t->c64 >= 1 && t->c64 <= (uint64_t)tu_size, "MPI_UINT64_T Compare_and_swap: %llu",
              (unsigned long long)t->c64);
        MPICHK(MPI_Win_unlock(0, win));
    }
    MPICHK(MPI_Win_free(&win));
}

static void fence_assertions(MPI_Win win, int *mem)
{
    int right = (tu_rank + 1) % tu_size, left = (tu_rank - 1 + tu_size) % tu_size, got = -1;
    /* No local stores since the last synchronization, nobody puts: */
    MPICHK(MPI_Win_fence(MPI_MODE_NOPRECEDE | MPI_MODE_NOSTORE | MPI_MODE_NOPUT, win));
    MPICHK(MPI_Get(&got, 1, MPI_INT, right, 1, 1, MPI_INT, win));
    MPICHK(MPI_Win_fence(MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOSUCCEED, win));
    CHECK(got == 500 + tu_rank, "Get under MPI_MODE_NOSTORE|NOPUT: %d, expected %d", got, 500 + tu_rank);
    (void)mem, (void)left;
}

int main(int argc, char **argv)
{
    MPI_Win win;
    int *mem;
    tu_init(&argc, &argv, "rma_misc");
    many_windows();
    split_windows();
    empty_members();
    MPICHK(MPI_Win_allocate(PAD64(4 * sizeof(int)), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    rt_win_errors_return(win);
    MPICHK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, tu_rank, 0, win));
    mem[0] = 10 * tu_rank;
    mem[1] = -1;
    MPICHK(MPI_Win_unlock(tu_rank, win));
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    nothing_moves(win, mem);
    requests(win, mem);
    fence_assertions(win, mem);
    MPICHK(MPI_Win_free(&win));
    more_types();
    tu_finish();
    return 0;
}
