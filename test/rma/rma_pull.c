/*
 * Large Accumulates whose data the target pulls (runtime/rma_pull.c,
 * docs/rma.md "Large accumulates pulled"): to a target reached by a
 * transport with get() (ofi, the verbs emulation, shm's single copy for
 * dynamic windows), an MPI_Accumulate of 64 KiB or more goes as a small
 * message naming the origin's registered data; the target reads it,
 * applies it in arrival order and answers. Plain MPI only (test/rma/README).
 *
 * Windows of Win_create over mmap'd memory (never in bmpi's shared heap,
 * so a peer on the node is reached by the transport, not a mapping), and
 * of Win_create_dynamic. Every rank works on its right neighbour, in a
 * region of its own there, under fence, lock + flush, lock_all +
 * flush_all and PSCW, ROUNDS epochs each:
 *  1. ordering: SIX Accumulates (MPI_REPLACE) of CONTIG longs to part A,
 *     each with its own value (more than the target runs at once, so
 *     some wait their turn), then in passive epochs a one-long
 *     MPI_SUM to A's first element (gathered: another path, which must
 *     not overtake them): A holds the last value everywhere, plus one
 *     at its start;
 *  2. derived types: MPI_SUM of VB blocks of VL longs, from a vector
 *     origin type (packed at the origin) to a vector target type (cut
 *     into several pull messages), added each round, exact values;
 *  3. in passive epochs, MPI_Raccumulate (MPI_REPLACE) of CONTIG longs
 *     to part C, its buffer overwritten as soon as MPI_Wait returns: C
 *     holds the values from before (the request completes only once the
 *     target has the data).
 * Then on the dynamic window, with MPI_ERRORS_RETURN: an Accumulate of
 * CONTIG longs to memory the neighbour never attached: the flush answers
 * MPI_ERR_RMA_RANGE and the window is freed as usual (erroneous by the
 * standard: left out with RMA_ERRORS_SURVEY=1).
 */
#include "rma_util.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define CONTIG 16384 /* longs: 128 KiB */
#define SIX 6
#define VB 40        /* vector: blocks ... */
#define VL 1024      /* ... of longs ... */
#define VS 1100      /* ... this far apart at the target */
#define VO 1030      /* ... and at the origin */
#define ROUNDS 3
/* an origin's region at its target, in longs: A, B (the vector's span), C */
#define AT_A 0
#define AT_B CONTIG
#define AT_C (AT_B + VB * VS)
#define REGION (AT_C + CONTIG)

enum sync { SY_FENCE, SY_LOCK, SY_LOCK_ALL, SY_PSCW, SY_COUNT };
static const char *const sync_name[SY_COUNT] = {"fence", "lock + flush", "lock_all + flush_all", "PSCW"};

struct ctx {
    MPI_Win win;
    int dynamic;
    long *mem;        /* this rank's window memory: REGION longs */
    MPI_Aint at;      /* dynamic: the right neighbour's region's address; else 0 */
    int right, left;
    MPI_Group right_g, left_g;
    MPI_Datatype vt, vo;
    long *six[SIX], *vec, *rbuf;
};

static long *map_longs(size_t n)
{
    void *p = mmap(NULL, n * sizeof(long), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(p != MAP_FAILED, "mmap of %zu longs failed", n);
    return p;
}

/* The displacement of the long at index i of this rank's region at its target. */
static MPI_Aint disp(const struct ctx *x, size_t i)
{
    return x->dynamic ? x->at + (MPI_Aint)(i * sizeof(long)) : (MPI_Aint)i;
}

static long a_value(int round, int i) { return 1000L * (round + 1) + i; }
static long v_value(int origin, size_t k) { return (long)origin * 7 + (long)(k % 97); }
static long c_value(int round, size_t k) { return (long)round * 100000 + (long)k; }

static void open_epoch(struct ctx *x, enum sync s)
{
    switch (s) {
    case SY_FENCE: MPICHK(MPI_Win_fence(0, x->win)); break;
    case SY_LOCK: MPICHK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, x->right, 0, x->win)); break;
    case SY_LOCK_ALL: MPICHK(MPI_Win_lock_all(0, x->win)); break;
    default:
        MPICHK(MPI_Win_post(x->left_g, 0, x->win));
        MPICHK(MPI_Win_start(x->right_g, 0, x->win));
    }
}

static void close_epoch(struct ctx *x, enum sync s)
{
    switch (s) {
    case SY_FENCE: MPICHK(MPI_Win_fence(0, x->win)); break;
    case SY_LOCK: MPICHK(MPI_Win_flush(x->right, x->win)); MPICHK(MPI_Win_unlock(x->right, x->win)); break;
    case SY_LOCK_ALL: MPICHK(MPI_Win_flush_all(x->win)); MPICHK(MPI_Win_unlock_all(x->win)); break;
    default:
        MPICHK(MPI_Win_complete(x->win));
        MPICHK(MPI_Win_wait(x->win));
    }
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
}

static void issue(struct ctx *x, enum sync s, int round)
{
    for (int i = 0; i < SIX; i++) {
        for (size_t k = 0; k < CONTIG; k++)
            x->six[i][k] = a_value(round, i);
        MPICHK(MPI_Accumulate(x->six[i], CONTIG, MPI_LONG, x->right, disp(x, AT_A), CONTIG, MPI_LONG, MPI_REPLACE,
                              x->win));
    }
    long one = 1;
    if (s == SY_LOCK || s == SY_LOCK_ALL)
        MPICHK(MPI_Accumulate(&one, 1, MPI_LONG, x->right, disp(x, AT_A), 1, MPI_LONG, MPI_SUM, x->win));
    MPICHK(MPI_Accumulate(x->vec, 1, x->vo, x->right, disp(x, AT_B), 1, x->vt, MPI_SUM, x->win));
    if (s == SY_LOCK || s == SY_LOCK_ALL) {
        MPI_Request r;
        for (size_t k = 0; k < CONTIG; k++)
            x->rbuf[k] = c_value(round, k);
        MPICHK(MPI_Raccumulate(x->rbuf, CONTIG, MPI_LONG, x->right, disp(x, AT_C), CONTIG, MPI_LONG, MPI_REPLACE,
                               x->win, &r));
        MPICHK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        memset(x->rbuf, 0xee, CONTIG * sizeof(long));
    }
}

/* What the left neighbour's operations left in this rank's memory. */
static void check(const struct ctx *x, enum sync s, int round)
{
    const long *m = x->mem;
    bool passive = s == SY_LOCK || s == SY_LOCK_ALL;
    long last = a_value(round, SIX - 1);
    for (size_t k = 0; k < CONTIG; k++) {
        long want = last + (k == 0 && passive);
        CHECK(m[AT_A + k] == want, "%s round %d: A[%zu] from rank %d is %ld, not %ld (the accumulates' order)",
              sync_name[s], round, k, x->left, m[AT_A + k], want);
    }
    for (size_t b = 0; b < VB; b++)
        for (size_t j = 0; j < VL; j++) {
            size_t k = b * VL + j;
            long want = v_value(x->left, k) * (round + 1);
            CHECK(m[AT_B + b * VS + j] == want, "%s round %d: vector element %zu from rank %d is %ld, not %ld",
                  sync_name[s], round, k, x->left, m[AT_B + b * VS + j], want);
        }
    for (size_t k = 0; passive && k < CONTIG; k++)
        CHECK(m[AT_C + k] == c_value(round, k),
              "%s round %d: C[%zu] from rank %d is %ld, not %ld: MPI_Raccumulate's buffer was read after MPI_Wait",
              sync_name[s], round, k, x->left, m[AT_C + k], c_value(round, k));
}

static void run_sync(struct ctx *x, enum sync s)
{
    memset(x->mem, 0, REGION * sizeof(long));
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    for (int round = 0; round < ROUNDS; round++) {
        open_epoch(x, s);
        issue(x, s, round);
        close_epoch(x, s);
        check(x, s, round);
        MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    }
}

/* An accumulate to memory the right neighbour never attached. Erroneous
 * by the standard: MPICH and Open MPI crash on it, so in survey mode
 * (test/rma/validate-with-mpich.sh) it is left out. */
static void stray_accumulate(struct ctx *x, MPI_Aint stray)
{
    const char *survey = getenv("RMA_ERRORS_SURVEY");
    if (survey && *survey == '1')
        return;
    MPICHK(MPI_Win_lock(MPI_LOCK_SHARED, x->right, 0, x->win));
    MPICHK(MPI_Accumulate(x->six[0], CONTIG, MPI_LONG, x->right, stray, CONTIG, MPI_LONG, MPI_SUM, x->win));
    int rc = MPI_Win_flush(x->right, x->win);
    int rc2 = MPI_Win_unlock(x->right, x->win);
    int cls = MPI_SUCCESS;
    MPI_Error_class(rc ? rc : rc2, &cls);
    CHECK(cls == MPI_ERR_RMA_RANGE, "an accumulate to unattached memory answered class %d, not MPI_ERR_RMA_RANGE",
          cls);
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
}

static void make_window(struct ctx *x, int dynamic)
{
    x->dynamic = dynamic;
    if (dynamic) {
        MPICHK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &x->win));
        MPICHK(MPI_Win_attach(x->win, x->mem, REGION * sizeof(long)));
        MPI_Aint mine, theirs;
        MPICHK(MPI_Get_address(x->mem, &mine));
        MPICHK(MPI_Sendrecv(&mine, 1, MPI_AINT, x->left, 0, &theirs, 1, MPI_AINT, x->right, 0, MPI_COMM_WORLD,
                            MPI_STATUS_IGNORE));
        x->at = theirs;
    } else {
        MPICHK(MPI_Win_create(x->mem, REGION * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &x->win));
        x->at = 0;
    }
    rt_win_errors_return(x->win);
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv, "rma_pull");
    struct ctx x = {.right = (tu_rank + 1) % tu_size, .left = (tu_rank + tu_size - 1) % tu_size};
    MPI_Group world;
    MPICHK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    MPICHK(MPI_Group_incl(world, 1, &x.right, &x.right_g));
    MPICHK(MPI_Group_incl(world, 1, &x.left, &x.left_g));
    MPICHK(MPI_Type_vector(VB, VL, VS, MPI_LONG, &x.vt));
    MPICHK(MPI_Type_vector(VB, VL, VO, MPI_LONG, &x.vo));
    MPICHK(MPI_Type_commit(&x.vt));
    MPICHK(MPI_Type_commit(&x.vo));
    x.mem = map_longs(REGION);
    for (int i = 0; i < SIX; i++)
        x.six[i] = map_longs(CONTIG);
    x.rbuf = map_longs(CONTIG);
    x.vec = map_longs((size_t)VB * VO);
    for (size_t b = 0; b < VB; b++)
        for (size_t j = 0; j < VL; j++)
            x.vec[b * VO + j] = v_value(tu_rank, b * VL + j);

    for (int dynamic = 0; dynamic < 2; dynamic++) {
        make_window(&x, dynamic);
        for (int s = 0; s < SY_COUNT; s++)
            run_sync(&x, (enum sync)s);
        if (dynamic && tu_size > 1)
            stray_accumulate(&x, disp(&x, REGION + 4096));
        MPICHK(MPI_Win_free(&x.win));
        if (dynamic)
            MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    }
    MPICHK(MPI_Type_free(&x.vt));
    MPICHK(MPI_Type_free(&x.vo));
    MPICHK(MPI_Group_free(&x.right_g));
    MPICHK(MPI_Group_free(&x.left_g));
    MPICHK(MPI_Group_free(&world));
    tu_finish();
    return 0;
}
