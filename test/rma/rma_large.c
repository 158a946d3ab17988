/*
 * Large and many-piece operations, and wide elements.
 *
 *  1. Windows over memory from mmap (not the heap, so an implementation
 *     cannot reach it through a heap it shares: bmpi takes a transport,
 *     or active messages for the dynamic window) of Win_create and of
 *     Win_create_dynamic: every rank Puts, Gets, Accumulates and
 *     Get_accumulates to its right neighbour 1 MiB contiguous and a vector
 *     of 20000 blocks of 3 ints (stride 4), so that each operation is cut
 *     into many messages or pieces; exact values checked at both ends, in
 *     a lock_all epoch and in a fence epoch.
 *  2. Wide elements (updated under a lock by implementations whose CPU
 *     atomics are narrower): every rank accumulates, K times, MPI_SUM of
 *     long double, MPI_MAXLOC of MPI_DOUBLE_INT and MPI_MINLOC of MPI_2INT
 *     into rank 0; the final values are checked.
 */
#include "rma_util.h"

#include <stddef.h>
#include <sys/mman.h>

#define BIG (1 << 20)      /* bytes of the contiguous part */
#define VBLOCKS 20000      /* the vector: blocks of 3 ints, stride 4 */
#define WIN_BYTES (BIG + VBLOCKS * 4 * (int)sizeof(int))
#define K_WIDE 40

struct big_win {
    MPI_Win win;
    int dynamic;
    unsigned char *mem; /* mmap'd, WIN_BYTES */
    MPI_Aint *base;     /* dynamic: every rank's address */
};

static unsigned char *map_bytes(size_t n)
{
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(p != MAP_FAILED, "mmap of %zu bytes failed", n);
    return p;
}

static void big_open(struct big_win *b, int dynamic)
{
    b->dynamic = dynamic;
    b->mem = map_bytes(WIN_BYTES);
    b->base = NULL;
    if (!dynamic) {
        MPICHK(MPI_Win_create(b->mem, WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &b->win));
    } else {
        MPI_Aint mine;
        MPICHK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &b->win));
        MPICHK(MPI_Win_attach(b->win, b->mem, WIN_BYTES));
        MPICHK(MPI_Get_address(b->mem, &mine));
        b->base = malloc(sizeof(MPI_Aint) * (size_t)tu_size);
        CHECK(b->base != NULL, "out of memory");
        MPICHK(MPI_Allgather(&mine, 1, MPI_AINT, b->base, 1, MPI_AINT, MPI_COMM_WORLD));
    }
    rt_win_errors_return(b->win);
}

static void big_close(struct big_win *b)
{
    if (b->dynamic)
        MPICHK(MPI_Win_detach(b->win, b->mem));
    MPICHK(MPI_Win_free(&b->win));
    munmap(b->mem, WIN_BYTES);
    free(b->base);
}

static MPI_Aint big_disp(const struct big_win *b, int t, size_t off)
{
    return b->dynamic ? MPI_Aint_add(b->base[t], (MPI_Aint)off) : (MPI_Aint)off;
}

/* Element i of rank r's window, as ints, before the epoch. */
static int init_val(int r, size_t i)
{
    return (int)((unsigned)r * 7919u + (unsigned)i * 31u) & 0x3fffffff;
}

static int origin_val(int o, size_t i)
{
    return (int)((unsigned)o * 104729u + (unsigned)i * 17u) & 0x0fffffff;
}

/* The epoch's operations towards my right neighbour. Layout of a window
 * (ints): [0, NC) contiguous, then the vector region. NC/2 ints are Put,
 * the other half Accumulated; the vector region's blocks get
 * Get_accumulate(SUM). A Get reads the whole contiguous part first. */
#define NC (BIG / (int)sizeof(int))
static void issue(const struct big_win *b, int right, int *got, int *put, int *acc, int *vec, int *vres,
                  MPI_Datatype vtype, int passive)
{
    MPICHK(MPI_Get(got, NC, MPI_INT, right, big_disp(b, right, 0), NC, MPI_INT, b->win));
    if (passive)
        MPICHK(MPI_Win_flush(right, b->win));
    else {
        /* A fence epoch cannot flush: the Get and the updates must not
         * overlap, so they go to a second epoch. */
        MPICHK(MPI_Win_fence(0, b->win));
    }
    MPICHK(MPI_Put(put, NC / 2, MPI_INT, right, big_disp(b, right, 0), NC / 2, MPI_INT, b->win));
    MPICHK(MPI_Accumulate(acc, NC / 2, MPI_INT, right, big_disp(b, right, BIG / 2), NC / 2, MPI_INT, MPI_SUM,
                          b->win));
    MPICHK(MPI_Get_accumulate(vec, 3 * VBLOCKS, MPI_INT, vres, 3 * VBLOCKS, MPI_INT, right, big_disp(b, right, BIG),
                              1, vtype, MPI_SUM, b->win));
}

static void check_big(const struct big_win *b, int left, int right, const int *got, const int *vres, const char *mode)
{
    const int *w = (const int *)b->mem;
    for (size_t i = 0; i < (size_t)NC; i++) {
        CHECK(got[i] == init_val(right, i), "%s, %s: Get element %zu from rank %d is %d, expected %d",
              b->dynamic ? "dynamic" : "create", mode, i, right, got[i], init_val(right, i));
        int want = i < (size_t)NC / 2 ? origin_val(left, i) : init_val(tu_rank, i) + origin_val(left, i);
        CHECK(w[i] == want, "%s, %s: element %zu (from rank %d) is %d, expected %d", b->dynamic ? "dynamic" : "create",
              mode, i, left, w[i], want);
    }
    for (size_t k = 0; k < (size_t)VBLOCKS * 4; k++) {
        size_t i = (size_t)NC + k, j = k / 4 * 3 + k % 4; /* j: index in the origin's packed vector */
        int want = k % 4 == 3 ? init_val(tu_rank, i) : init_val(tu_rank, i) + origin_val(left, j);
        CHECK(w[i] == want, "%s, %s: vector element %zu is %d, expected %d", b->dynamic ? "dynamic" : "create", mode, k,
              w[i], want);
        if (k % 4 != 3)
            CHECK(vres[j] == init_val(right, i), "%s, %s: Get_accumulate result %zu is %d, expected %d",
                  b->dynamic ? "dynamic" : "create", mode, j, vres[j], init_val(right, i));
    }
}

static void big_round(struct big_win *b, int passive)
{
    int right = (tu_rank + 1) % tu_size, left = (tu_rank - 1 + tu_size) % tu_size;
    int *got = malloc(BIG), *put = malloc(BIG / 2), *acc = malloc(BIG / 2);
    int *vec = malloc(sizeof(int) * 3 * VBLOCKS), *vres = malloc(sizeof(int) * 3 * VBLOCKS);
    int *w = (int *)b->mem;
    MPI_Datatype vtype;
    CHECK(got && put && acc && vec && vres, "out of memory");
    MPICHK(MPI_Type_vector(VBLOCKS, 3, 4, MPI_INT, &vtype));
    MPICHK(MPI_Type_commit(&vtype));
    MPICHK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, tu_rank, 0, b->win));
    for (size_t i = 0; i < WIN_BYTES / sizeof(int); i++)
        w[i] = init_val(tu_rank, i);
    MPICHK(MPI_Win_unlock(tu_rank, b->win));
    for (size_t i = 0; i < (size_t)NC / 2; i++) {
        put[i] = origin_val(tu_rank, i);
        acc[i] = origin_val(tu_rank, i + NC / 2);
    }
    for (size_t j = 0; j < 3 * (size_t)VBLOCKS; j++)
        vec[j] = origin_val(tu_rank, j);
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    const char *mode = passive ? "lock_all" : "fence";
    if (passive) {
        MPICHK(MPI_Win_lock_all(0, b->win));
        issue(b, right, got, put, acc, vec, vres, vtype, 1);
        MPICHK(MPI_Win_unlock_all(b->win));
        MPICHK(MPI_Barrier(MPI_COMM_WORLD));
        MPICHK(MPI_Win_lock(MPI_LOCK_SHARED, tu_rank, 0, b->win));
        check_big(b, left, right, got, vres, mode);
        MPICHK(MPI_Win_unlock(tu_rank, b->win));
    } else {
        MPICHK(MPI_Win_fence(0, b->win));
        issue(b, right, got, put, acc, vec, vres, vtype, 0);
        MPICHK(MPI_Win_fence(0, b->win));
        check_big(b, left, right, got, vres, mode);
    }
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    MPICHK(MPI_Type_free(&vtype));
    free(got);
    free(put);
    free(acc);
    free(vec);
    free(vres);
}

/* ------------------------------------------------------------- wide */

struct double_int {
    double v;
    int i;
};

struct wide {
    long double sum;
    struct double_int maxloc;
    int minloc[2];
};

static void wide_storm(void)
{
    struct wide *w;
    MPI_Win win;
    MPICHK(MPI_Win_allocate(sizeof *w, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w, &win));
    rt_win_errors_return(win);
    MPICHK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, tu_rank, 0, win));
    w->sum = 0.5L;
    w->maxloc.v = -1.0;
    w->maxloc.i = -1;
    w->minloc[0] = 1 << 30;
    w->minloc[1] = -1;
    MPICHK(MPI_Win_unlock(tu_rank, win));
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));

    MPICHK(MPI_Win_lock_all(0, win));
    for (int k = 0; k < K_WIDE; k++) {
        long double one = 1.0L;
        /* Ties: every rank offers the same maximum value once (k == 0),
         * MAXLOC keeps the lowest index; MINLOC's minimum comes from the
         * last rank at its last round only. */
        struct double_int m = {k == 0 ? 1000.0 : (double)k, tu_rank};
        int n[2] = {tu_rank == tu_size - 1 && k == K_WIDE - 1 ? -5 : k + 1, tu_rank};
        MPICHK(MPI_Accumulate(&one, 1, MPI_LONG_DOUBLE, 0, offsetof(struct wide, sum), 1, MPI_LONG_DOUBLE, MPI_SUM,
                              win));
        MPICHK(MPI_Accumulate(&m, 1, MPI_DOUBLE_INT, 0, offsetof(struct wide, maxloc), 1, MPI_DOUBLE_INT, MPI_MAXLOC,
                              win));
        MPICHK(MPI_Accumulate(n, 1, MPI_2INT, 0, offsetof(struct wide, minloc), 1, MPI_2INT, MPI_MINLOC, win));
        MPICHK(MPI_Win_flush(0, win));
    }
    MPICHK(MPI_Win_unlock_all(win));
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    if (tu_rank == 0) {
        MPICHK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        long double want = 0.5L + (long double)K_WIDE * tu_size;
        CHECK(w->sum == want, "long double SUM storm: %Lg, expected %Lg", w->sum, want);
        CHECK(w->maxloc.v == 1000.0 && w->maxloc.i == 0, "MAXLOC storm: (%g, %d), expected (1000, 0)", w->maxloc.v,
              w->maxloc.i);
        CHECK(w->minloc[0] == -5 && w->minloc[1] == tu_size - 1, "MINLOC storm: (%d, %d), expected (-5, %d)",
              w->minloc[0], w->minloc[1], tu_size - 1);
        MPICHK(MPI_Win_unlock(0, win));
    }
    MPICHK(MPI_Win_free(&win));
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv, "rma_large");
    for (int dynamic = 0; dynamic < 2; dynamic++) {
        struct big_win b;
        big_open(&b, dynamic);
        big_round(&b, 1);
        big_round(&b, 0);
        big_close(&b);
    }
    wide_storm();
    tu_finish();
    return 0;
}
