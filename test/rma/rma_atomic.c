/*
 * Atomicity and ordering of the accumulate family.
 *
 *  1. Fetch_and_op storm: every rank adds rank+1 to one long at rank 0,
 *     K times, in a lock_all epoch with a flush after each. The final
 *     value is K * sum(rank+1); every value fetched is distinct across
 *     all ranks (each is a different prefix of the one sequence of
 *     updates) and each rank's own are increasing.
 *  2. A spin lock built on Compare_and_swap at rank 0 protects a
 *     non-atomic read-modify-write (Get, flush, Put, flush) of a second
 *     word; released with Accumulate(MPI_REPLACE). The final value is
 *     size * K: any lost update means two ranks held the lock at once.
 *  3. Accumulate(MPI_SUM) storm of int and double arrays from every rank
 *     into every rank (whole arrays: the wide updates of docs/rma.md),
 *     racing Fetch_and_op(MPI_SUM)s of one double into the same arrays
 *     (element updates), and Get_accumulate(MPI_SUM) into rank 0 whose
 *     fetched values must all be distinct.
 *  4. Ordering (default accumulate_ordering rar,raw,war,waw): one origin
 *     sends a mixed sequence of Accumulate(REPLACE) and Accumulate(SUM)
 *     to one location without a flush in between, then a Get_accumulate
 *     (NO_OP) must see the value of the whole sequence in issue order;
 *     a chain of Fetch_and_op(SUM) with no flush in between must fetch
 *     0, 1, 2, ... in order. Both in lock and in fence epochs.
 */
#include "rma_util.h"

#define K_FOP 100
#define K_CAS 20
#define K_ACC 50
#define ACC_LEN 16
#define ORDER_LEN 64

/* Words of the window at every rank; then two per rank for the ordering
 * tests (rank r's sequence and its Fetch_and_op chain at r's partner). */
enum word { W_COUNTER, W_LOCK, W_DATA, W_NWORDS };

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* All ranks' fetched values, gathered at rank 0: sorted, no two equal. */
static void check_distinct(const long *mine, int n, const char *what)
{
    long *all = tu_rank == 0 ? malloc(sizeof(long) * (size_t)n * (size_t)tu_size) : NULL;
    CHECK(tu_rank != 0 || all != NULL, "out of memory");
    MPICHK(MPI_Gather(mine, n, MPI_LONG, all, n, MPI_LONG, 0, MPI_COMM_WORLD));
    if (tu_rank == 0) {
        qsort(all, (size_t)n * (size_t)tu_size, sizeof(long), cmp_long);
        for (long i = 1; i < (long)n * tu_size; i++)
            CHECK(all[i] != all[i - 1], "%s: value %ld fetched twice: two updates saw the same state", what,
                  all[i]);
    }
    free(all);
}

static void fop_storm(MPI_Win win, long *words)
{
    long fetched[K_FOP], add = tu_rank + 1;
    MPICHK(MPI_Win_lock_all(0, win));
    for (int i = 0; i < K_FOP; i++) {
        MPICHK(MPI_Fetch_and_op(&add, &fetched[i], MPI_LONG, 0, W_COUNTER, MPI_SUM, win));
        MPICHK(MPI_Win_flush(0, win));
        CHECK(i == 0 || fetched[i] > fetched[i - 1], "Fetch_and_op storm: fetched %ld after %ld", fetched[i],
              fetched[i - 1]);
    }
    MPICHK(MPI_Win_unlock_all(win));
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    if (tu_rank == 0) {
        long want = (long)K_FOP * tu_size * (tu_size + 1) / 2;
        MPICHK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        CHECK(words[W_COUNTER] == want, "Fetch_and_op storm: counter %ld, expected %ld", words[W_COUNTER], want);
        MPICHK(MPI_Win_unlock(0, win));
    }
    check_distinct(fetched, K_FOP, "Fetch_and_op storm");
}

static void cas_lock_acquire(MPI_Win win)
{
    long mine = tu_rank + 1, free_ = 0, old;
    do {
        MPICHK(MPI_Compare_and_swap(&mine, &free_, &old, MPI_LONG, 0, W_LOCK, win));
        MPICHK(MPI_Win_flush(0, win));
        CHECK(old == 0 || (old >= 1 && old <= tu_size && old != mine), "CAS lock: word holds %ld", old);
    } while (old != 0);
}

static void cas_lock_release(MPI_Win win)
{
    long zero = 0, old;
    /* Atomic with respect to the CAS of the others (a Put would not be). */
    MPICHK(MPI_Fetch_and_op(&zero, &old, MPI_LONG, 0, W_LOCK, MPI_REPLACE, win));
    MPICHK(MPI_Win_flush(0, win));
    CHECK(old == tu_rank + 1, "CAS lock: released a lock held by %ld", old);
}

static void cas_spinlock(MPI_Win win, long *words)
{
    MPICHK(MPI_Win_lock_all(0, win));
    for (int i = 0; i < K_CAS; i++) {
        long v;
        cas_lock_acquire(win);
        MPICHK(MPI_Get(&v, 1, MPI_LONG, 0, W_DATA, 1, MPI_LONG, win));
        MPICHK(MPI_Win_flush(0, win));
        v++;
        MPICHK(MPI_Put(&v, 1, MPI_LONG, 0, W_DATA, 1, MPI_LONG, win));
        MPICHK(MPI_Win_flush(0, win));
        cas_lock_release(win);
    }
    MPICHK(MPI_Win_unlock_all(win));
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    if (tu_rank == 0) {
        MPICHK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        CHECK(words[W_DATA] == (long)K_CAS * tu_size, "CAS spin lock: data %ld, expected %ld (lost updates)",
              words[W_DATA], (long)K_CAS * tu_size);
        CHECK(words[W_LOCK] == 0, "CAS spin lock: lock word %ld after all released", words[W_LOCK]);
        MPICHK(MPI_Win_unlock(0, win));
    }
}

/* Every rank adds (rank+1)*(j+1) to element j of every rank's arrays,
 * K_ACC times, and Get_accumulates 1 into rank 0's counter. (Three
 * windows: MPICH 4.0.2 over ch4:ucx applies the double storm twice at
 * rank 1 when the double window is 136 bytes, the long counter after the
 * doubles; with 128 bytes it does not. See test/rma/README.) */
struct storm {
    int *ia;
    double *da;
    long *counter;
    MPI_Win iwin, dwin, cwin;
};

static void storm_open(struct storm *st)
{
    MPICHK(MPI_Win_allocate(ACC_LEN * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &st->ia, &st->iwin));
    MPICHK(MPI_Win_allocate(ACC_LEN * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &st->da,
                            &st->dwin));
    MPICHK(MPI_Win_allocate(sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &st->counter, &st->cwin));
    rt_win_errors_return(st->iwin);
    rt_win_errors_return(st->dwin);
    rt_win_errors_return(st->cwin);
    MPICHK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, tu_rank, 0, st->iwin));
    MPICHK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, tu_rank, 0, st->dwin));
    MPICHK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, tu_rank, 0, st->cwin));
    for (int j = 0; j < ACC_LEN; j++) {
        st->ia[j] = j;
        st->da[j] = 0.5 * j;
    }
    *st->counter = 0;
    MPICHK(MPI_Win_unlock(tu_rank, st->cwin));
    MPICHK(MPI_Win_unlock(tu_rank, st->dwin));
    MPICHK(MPI_Win_unlock(tu_rank, st->iwin));
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
}

static void storm_check(struct storm *st, const long *got)
{
    long ranks = (long)tu_size * (tu_size + 1) / 2; /* sum of rank+1 */
    MPICHK(MPI_Win_lock(MPI_LOCK_SHARED, tu_rank, 0, st->iwin));
    MPICHK(MPI_Win_lock(MPI_LOCK_SHARED, tu_rank, 0, st->dwin));
    MPICHK(MPI_Win_lock(MPI_LOCK_SHARED, tu_rank, 0, st->cwin));
    for (int j = 0; j < ACC_LEN; j++) {
        long wi = j + (long)K_ACC * ranks * (j + 1);
        long fops = (long)tu_size * (K_ACC / ACC_LEN + (j < K_ACC % ACC_LEN)); /* hit element j */
        double wd = 0.5 * j + 0.25 * K_ACC * (double)ranks * (j + 1) + (double)fops;
        CHECK(st->ia[j] == wi, "Accumulate storm (MPI_INT): element %d is %d, expected %ld", j, st->ia[j], wi);
        CHECK(st->da[j] == wd, "Accumulate storm (MPI_DOUBLE): element %d is %g, expected %g", j, st->da[j], wd);
    }
    if (tu_rank == 0)
        CHECK(*st->counter == (long)K_ACC * tu_size, "Get_accumulate storm: %ld, expected %ld", *st->counter,
              (long)K_ACC * tu_size);
    MPICHK(MPI_Win_unlock(tu_rank, st->cwin));
    MPICHK(MPI_Win_unlock(tu_rank, st->dwin));
    MPICHK(MPI_Win_unlock(tu_rank, st->iwin));
    check_distinct(got, K_ACC, "Get_accumulate storm");
}

static void acc_storm(void)
{
    struct storm st;
    int iv[ACC_LEN];
    double dv[ACC_LEN];
    long got[K_ACC];
    static const long one = 1;
    static const double one_d = 1;
    double fetched;
    for (int j = 0; j < ACC_LEN; j++) {
        iv[j] = (tu_rank + 1) * (j + 1);
        dv[j] = 0.25 * (tu_rank + 1) * (j + 1);
    }
    storm_open(&st);
    MPICHK(MPI_Win_lock_all(0, st.iwin));
    MPICHK(MPI_Win_lock_all(0, st.dwin));
    MPICHK(MPI_Win_lock_all(0, st.cwin));
    for (int k = 0; k < K_ACC; k++) {
        for (int t = 0; t < tu_size; t++) {
            int to = (tu_rank + t) % tu_size;
            MPICHK(MPI_Accumulate(iv, ACC_LEN, MPI_INT, to, 0, ACC_LEN, MPI_INT, MPI_SUM, st.iwin));
            MPICHK(MPI_Accumulate(dv, ACC_LEN, MPI_DOUBLE, to, 0, ACC_LEN, MPI_DOUBLE, MPI_SUM, st.dwin));
            MPICHK(MPI_Fetch_and_op(&one_d, &fetched, MPI_DOUBLE, to, k % ACC_LEN, MPI_SUM, st.dwin));
        }
        MPICHK(MPI_Get_accumulate(&one, 1, MPI_LONG, &got[k], 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_SUM, st.cwin));
        if (k % 8 == 7)
            MPICHK(MPI_Win_flush_all(st.iwin));
    }
    MPICHK(MPI_Win_unlock_all(st.cwin));
    MPICHK(MPI_Win_unlock_all(st.dwin));
    MPICHK(MPI_Win_unlock_all(st.iwin));
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    storm_check(&st, got);
    MPICHK(MPI_Win_free(&st.iwin));
    MPICHK(MPI_Win_free(&st.dwin));
    MPICHK(MPI_Win_free(&st.cwin));
}

/* The value after step i of the ordering sequence, from v. */
static long order_step(int i, long v)
{
    return i % 3 == 0 ? 1000L * (i + 1) + tu_rank : v + i;
}

/* Issue the sequence to my partner's word and fetch the result. */
static void order_sequence(MPI_Win win, int target, MPI_Aint disp, long *vals, long *fetched, long *out)
{
    for (int i = 0; i < ORDER_LEN; i++) {
        vals[i] = i % 3 == 0 ? 1000L * (i + 1) + tu_rank : i;
        MPICHK(MPI_Accumulate(&vals[i], 1, MPI_LONG, target, disp, 1, MPI_LONG, i % 3 == 0 ? MPI_REPLACE : MPI_SUM,
                              win));
    }
    /* Origin buffers must live until the epoch ends: static. MPI_NO_OP
     * ignores its origin buffer (NULL, count 0 is allowed too). */
    static const long one = 1;
    MPICHK(MPI_Get_accumulate(NULL, 0, MPI_LONG, out, 1, MPI_LONG, target, disp, 1, MPI_LONG, MPI_NO_OP, win));
    for (int i = 0; i < ORDER_LEN; i++)
        MPICHK(MPI_Fetch_and_op(&one, &fetched[i], MPI_LONG, target, disp + 1, MPI_SUM, win));
}

static void check_order(const long *fetched, long out, long chain_base, const char *mode)
{
    long want = 0;
    for (int i = 0; i < ORDER_LEN; i++)
        want = order_step(i, want);
    CHECK(out == want, "accumulate ordering (%s): Get_accumulate after the sequence read %ld, expected %ld", mode,
          out, want);
    for (int i = 0; i < ORDER_LEN; i++)
        CHECK(fetched[i] == chain_base + i, "accumulate ordering (%s): Fetch_and_op %d fetched %ld, expected %ld",
              mode, i, fetched[i], chain_base + i);
}

static void ordering(MPI_Win win)
{
    long vals[ORDER_LEN], fetched[ORDER_LEN], out = -1;
    int to = (tu_rank + 1) % tu_size;
    /* My two words at my partner. */
    MPI_Aint disp = W_NWORDS + 2 * tu_rank;

    MPICHK(MPI_Win_lock(MPI_LOCK_SHARED, to, 0, win));
    order_sequence(win, to, disp, vals, fetched, &out);
    MPICHK(MPI_Win_unlock(to, win));
    check_order(fetched, out, 0, "lock");

    MPICHK(MPI_Win_fence(0, win));
    order_sequence(win, to, disp, vals, fetched, &out);
    MPICHK(MPI_Win_fence(0, win));
    check_order(fetched, out, ORDER_LEN, "fence");
}

int main(int argc, char **argv)
{
    long *words;
    MPI_Win win;
    tu_init(&argc, &argv, "rma_atomic");
    MPI_Aint bytes = (MPI_Aint)sizeof(long) * (W_NWORDS + 2 * tu_size);
    MPICHK(MPI_Win_allocate(bytes, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &words, &win));
    rt_win_errors_return(win);
    MPICHK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, tu_rank, 0, win));
    memset(words, 0, (size_t)bytes);
    MPICHK(MPI_Win_unlock(tu_rank, win));
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));

    fop_storm(win, words);
    cas_spinlock(win, words);
    ordering(win);
    MPICHK(MPI_Win_free(&win));
    acc_storm();
    tu_finish();
    return 0;
}
