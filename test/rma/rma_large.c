/*
 * Large and many-piece operations, and wide elements.
 *
 *  1. Windows over memory from mmap (not the heap, so an implementation
 *     cannot reach it through a heap it shares: bmpi takes a transport,
 *     or active messages for the dynamic window) of Win_create and of
 *     Win_create_dynamic: every rank Puts, Gets, Accumulates and
 *     Get_accumulates to its right neighbour 1 MiB contiguous and a vector
 *     of 20000 blocks of 3 ints (stride 4), so that each operation is cut
 *     into many messages or pieces; it also Gets and then Puts such a
 *     vector (across nodes: many small pieces, sent as active messages),
 *     Gets it once more backwards (a negative stride)
 *     and Accumulates a vector of 600 blocks of 30 ints (stride 32), whose
 *     messages run out of room for data before segments; exact values
 *     checked at both ends, in a lock_all epoch and in a fence epoch.
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
#define VBYTES (VBLOCKS * 4 * (int)sizeof(int))
#define WBLOCKS 600        /* the wide vector: blocks of 30 ints, stride 32 */
#define WBYTES (WBLOCKS * 32 * (int)sizeof(int))
/* [0, BIG) contiguous, then the Get_accumulate vector, the Get and Put
 * vector and the wide vector */
#define VGA_OFF BIG
#define VPUT_OFF (VGA_OFF + VBYTES)
#define WIDE_OFF (VPUT_OFF + VBYTES)
#define WIN_BYTES (WIDE_OFF + WBYTES)
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

/* What an epoch sends my right neighbour and gets back. */
struct big_bufs {
    int *got, *put, *acc;  /* contiguous Get, Put, Accumulate */
    int *vec, *vres;       /* Get_accumulate of the vector and its result */
    int *vget, *vput;      /* Get, then Put, of the second vector */
    int *vback;            /* Get of the second vector, last block first */
    int *wacc;             /* Accumulate of the wide vector */
    MPI_Datatype vtype, wtype, backtype;
};

/* The epoch's operations towards my right neighbour, by the layout of a
 * window above. NC/2 ints of the contiguous part are Put, the other half
 * Accumulated; the vector regions' blocks get Get_accumulate(SUM), a Get
 * and then a Put, an Accumulate(SUM). The Gets read first. */
#define NC (BIG / (int)sizeof(int))
static void issue(const struct big_win *b, int right, const struct big_bufs *u, int passive)
{
    MPICHK(MPI_Get(u->got, NC, MPI_INT, right, big_disp(b, right, 0), NC, MPI_INT, b->win));
    MPICHK(MPI_Get(u->vget, 3 * VBLOCKS, MPI_INT, right, big_disp(b, right, VPUT_OFF), 1, u->vtype, b->win));
    MPICHK(MPI_Get(u->vback, 3 * VBLOCKS, MPI_INT, right, big_disp(b, right, VPUT_OFF + (VBLOCKS - 1) * 16), 1,
                   u->backtype, b->win));
    if (passive)
        MPICHK(MPI_Win_flush(right, b->win));
    else {
        /* A fence epoch cannot flush: the Gets and the updates must not
         * overlap, so they go to a second epoch. */
        MPICHK(MPI_Win_fence(0, b->win));
    }
    MPICHK(MPI_Put(u->put, NC / 2, MPI_INT, right, big_disp(b, right, 0), NC / 2, MPI_INT, b->win));
    MPICHK(MPI_Accumulate(u->acc, NC / 2, MPI_INT, right, big_disp(b, right, BIG / 2), NC / 2, MPI_INT, MPI_SUM,
                          b->win));
    MPICHK(MPI_Get_accumulate(u->vec, 3 * VBLOCKS, MPI_INT, u->vres, 3 * VBLOCKS, MPI_INT, right,
                              big_disp(b, right, VGA_OFF), 1, u->vtype, MPI_SUM, b->win));
    MPICHK(MPI_Put(u->vput, 3 * VBLOCKS, MPI_INT, right, big_disp(b, right, VPUT_OFF), 1, u->vtype, b->win));
    MPICHK(MPI_Accumulate(u->wacc, 30 * WBLOCKS, MPI_INT, right, big_disp(b, right, WIDE_OFF), 1, u->wtype,
                          MPI_SUM, b->win));
}

static void check_contig(const struct big_win *b, int left, int right, const struct big_bufs *u, const char *mode)
{
    const int *w = (const int *)b->mem;
    for (size_t i = 0; i < (size_t)NC; i++) {
        CHECK(u->got[i] == init_val(right, i), "%s, %s: Get element %zu from rank %d is %d, expected %d",
              b->dynamic ? "dynamic" : "create", mode, i, right, u->got[i], init_val(right, i));
        int want = i < (size_t)NC / 2 ? origin_val(left, i) : init_val(tu_rank, i) + origin_val(left, i);
        CHECK(w[i] == want, "%s, %s: element %zu (from rank %d) is %d, expected %d", b->dynamic ? "dynamic" : "create",
              mode, i, left, w[i], want);
    }
}

/* The vector regions, element k of each against element j of the
 * origin's packed buffer; the gaps between blocks keep their values. */
static void check_vectors(const struct big_win *b, int left, int right, const struct big_bufs *u, const char *mode)
{
    const int *w = (const int *)b->mem;
    const char *flavor = b->dynamic ? "dynamic" : "create";
    for (size_t k = 0; k < (size_t)VBLOCKS * 4; k++) {
        size_t j = k / 4 * 3 + k % 4; /* index in the origin's packed vector */
        size_t i = VGA_OFF / sizeof(int) + k, p = VPUT_OFF / sizeof(int) + k;
        int gap = k % 4 == 3;
        int want = gap ? init_val(tu_rank, i) : init_val(tu_rank, i) + origin_val(left, j);
        CHECK(w[i] == want, "%s, %s: vector element %zu is %d, expected %d", flavor, mode, k, w[i], want);
        want = gap ? init_val(tu_rank, p) : origin_val(left, j + 1);
        CHECK(w[p] == want, "%s, %s: Put vector element %zu is %d, expected %d", flavor, mode, k, w[p], want);
        if (gap)
            continue;
        CHECK(u->vres[j] == init_val(right, i), "%s, %s: Get_accumulate result %zu is %d, expected %d", flavor, mode,
              j, u->vres[j], init_val(right, i));
        CHECK(u->vget[j] == init_val(right, p), "%s, %s: vector Get result %zu is %d, expected %d", flavor, mode, j,
              u->vget[j], init_val(right, p));
        size_t back = (VBLOCKS - 1 - k / 4) * 3 + k % 4; /* where block k / 4 lands in the backwards Get */
        CHECK(u->vback[back] == init_val(right, p), "%s, %s: backwards Get result %zu is %d, expected %d", flavor,
              mode, back, u->vback[back], init_val(right, p));
    }
    for (size_t k = 0; k < (size_t)WBLOCKS * 32; k++) {
        size_t i = WIDE_OFF / sizeof(int) + k, j = k / 32 * 30 + k % 32;
        int want = k % 32 >= 30 ? init_val(tu_rank, i) : init_val(tu_rank, i) + origin_val(left, j + 2);
        CHECK(w[i] == want, "%s, %s: wide vector element %zu is %d, expected %d", flavor, mode, k, w[i], want);
    }
}

static void bufs_open(struct big_bufs *u)
{
    u->got = malloc(BIG);
    u->put = malloc(BIG / 2);
    u->acc = malloc(BIG / 2);
    u->vec = malloc(sizeof(int) * 3 * VBLOCKS);
    u->vres = malloc(sizeof(int) * 3 * VBLOCKS);
    u->vget = malloc(sizeof(int) * 3 * VBLOCKS);
    u->vput = malloc(sizeof(int) * 3 * VBLOCKS);
    u->vback = malloc(sizeof(int) * 3 * VBLOCKS);
    u->wacc = malloc(sizeof(int) * 30 * WBLOCKS);
    CHECK(u->got && u->put && u->acc && u->vec && u->vres && u->vget && u->vput && u->vback && u->wacc,
          "out of memory");
    for (size_t i = 0; i < (size_t)NC / 2; i++) {
        u->put[i] = origin_val(tu_rank, i);
        u->acc[i] = origin_val(tu_rank, i + NC / 2);
    }
    for (size_t j = 0; j < 3 * (size_t)VBLOCKS; j++) {
        u->vec[j] = origin_val(tu_rank, j);
        u->vput[j] = origin_val(tu_rank, j + 1);
    }
    for (size_t j = 0; j < 30 * (size_t)WBLOCKS; j++)
        u->wacc[j] = origin_val(tu_rank, j + 2);
    MPICHK(MPI_Type_vector(VBLOCKS, 3, 4, MPI_INT, &u->vtype));
    MPICHK(MPI_Type_commit(&u->vtype));
    MPICHK(MPI_Type_vector(WBLOCKS, 30, 32, MPI_INT, &u->wtype));
    MPICHK(MPI_Type_commit(&u->wtype));
    MPICHK(MPI_Type_vector(VBLOCKS, 3, -4, MPI_INT, &u->backtype));
    MPICHK(MPI_Type_commit(&u->backtype));
}

static void bufs_close(struct big_bufs *u)
{
    MPICHK(MPI_Type_free(&u->vtype));
    MPICHK(MPI_Type_free(&u->wtype));
    MPICHK(MPI_Type_free(&u->backtype));
    free(u->got);
    free(u->put);
    free(u->acc);
    free(u->vec);
    free(u->vres);
    free(u->vget);
    free(u->vput);
    free(u->vback);
    free(u->wacc);
}

static void big_round(struct big_win *b, int passive)
{
    int right = (tu_rank + 1) % tu_size, left = (tu_rank - 1 + tu_size) % tu_size;
    int *w = (int *)b->mem;
    struct big_bufs u;
    bufs_open(&u);
    MPICHK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, tu_rank, 0, b->win));
    for (size_t i = 0; i < WIN_BYTES / sizeof(int); i++)
        w[i] = init_val(tu_rank, i);
    MPICHK(MPI_Win_unlock(tu_rank, b->win));
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    const char *mode = passive ? "lock_all" : "fence";
    if (passive) {
        MPICHK(MPI_Win_lock_all(0, b->win));
        issue(b, right, &u, 1);
        MPICHK(MPI_Win_unlock_all(b->win));
        MPICHK(MPI_Barrier(MPI_COMM_WORLD));
        MPICHK(MPI_Win_lock(MPI_LOCK_SHARED, tu_rank, 0, b->win));
    } else {
        MPICHK(MPI_Win_fence(0, b->win));
        issue(b, right, &u, 0);
        MPICHK(MPI_Win_fence(0, b->win));
    }
    check_contig(b, left, right, &u, mode);
    check_vectors(b, left, right, &u, mode);
    if (passive)
        MPICHK(MPI_Win_unlock(tu_rank, b->win));
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    bufs_close(&u);
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
