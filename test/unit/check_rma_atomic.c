/*
 * Unit tests of runtime/rma_atomic.c, the element-wise atomics of the
 * accumulate family.
 *
 *  - which op/type pairs are accepted, for accumulates and for
 *    compare-and-swap;
 *  - every accepted op on every predefined type, aligned and not, with and
 *    without a fetch, against op.c's reduction of the same data;
 *  - which mechanism an element takes: with every stripe of the lock
 *    table held, a CPU-atomic element must still be updated (no op on it
 *    may take a stripe, or the two mechanisms would race on one element),
 *    and a striped one must wait for its stripe;
 *  - the gate: a wide update waits for element updates in flight, an
 *    element update waits while a wide one holds the gate, and a target
 *    whose gate never closes takes every update element by element;
 *  - a storm: forked processes, each mapping one shared window page at a
 *    different address, hammer elements of every mechanism; counters,
 *    a MINLOC that may only go down, a swap chain whose tokens must
 *    each come out exactly once, and wide sums racing element ones
 *    prove that no update was lost or torn.
 *
 * No MPI_Init: the predefined types and ops work before it.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>

#include "runtime/datatype.h"
#include "runtime/error.h"
#include "runtime/op.h"
#include "runtime/rma_atomic.h"
#include "runtime/win.h"
#include "test/unit/run_suite.h"

/* --- the predefined types, with how to make valid values of them ---------------- */

typedef void (*fill_fn)(void *p);

static long small(void) { return lrand48() % 5 - 2; }

/* Integers: half small values (ties, zeros for the logical ops), half
 * random bits (wrapping sums and products, signs). */
static uint64_t bits64(void) { return (uint64_t)mrand48() << 32 ^ (uint32_t)mrand48(); }

#define FILL_INT(name, T)                                                                          \
    static void name(void *p)                                                                      \
    {                                                                                              \
        T v = (T)((lrand48() & 1) ? (uint64_t)small() : bits64());                                 \
        memcpy(p, &v, sizeof v);                                                                   \
    }
FILL_INT(fill_i8, int8_t)
FILL_INT(fill_i16, int16_t)
FILL_INT(fill_i32, int32_t)
FILL_INT(fill_i64, int64_t)

/* Floating point: small multiples of 1/2, so no NaN and exact sums. */
#define FILL_REAL(name, T)                                                                         \
    static void name(void *p)                                                                      \
    {                                                                                              \
        T v;                                                                                       \
        memset(&v, 0, sizeof v); /* long double's padding */                                       \
        v = (T)small() / 2;                                                                        \
        memcpy(p, &v, sizeof(T));                                                                  \
    }
FILL_REAL(fill_f, float)
FILL_REAL(fill_d, double)
FILL_REAL(fill_ld, long double)

#define FILL_COMPLEX(name, R)                                                                      \
    static void name(void *p)                                                                      \
    {                                                                                              \
        R v[2];                                                                                    \
        memset(v, 0, sizeof v);                                                                    \
        v[0] = (R)small() / 2;                                                                     \
        v[1] = (R)small() / 2;                                                                     \
        memcpy(p, v, sizeof v);                                                                    \
    }
FILL_COMPLEX(fill_cf, float)
FILL_COMPLEX(fill_cd, double)
FILL_COMPLEX(fill_cld, long double)

static void fill_bool(void *p)
{
    _Bool v = lrand48() & 1;
    memcpy(p, &v, sizeof v);
}

static void fill_long(void *p)
{
    long v = small();
    memcpy(p, &v, sizeof v);
}

static void fill_short(void *p)
{
    short v = (short)small();
    memcpy(p, &v, sizeof v);
}

struct type_case {
    MPI_Datatype t;
    fill_fn fill;       /* the value (the whole element but for pairs) */
    size_t ioff;        /* pairs: where the index is */
    fill_fn ifill;      /* pairs: the index, else NULL */
};

#define B(t, fv) {t, fv, 0, NULL}
#define PAIR(t, V, fv, I, fi)                                                                      \
    {t, fv, offsetof(struct { V v; I i; }, i), fi}

static const struct type_case types[] = {
    B(MPI_CHAR, fill_i8), B(MPI_SIGNED_CHAR, fill_i8), B(MPI_UNSIGNED_CHAR, fill_i8),
    B(MPI_BYTE, fill_i8), B(MPI_WCHAR, fill_i32), B(MPI_SHORT, fill_i16),
    B(MPI_UNSIGNED_SHORT, fill_i16), B(MPI_INT, fill_i32), B(MPI_UNSIGNED, fill_i32),
    B(MPI_LONG, fill_i64), B(MPI_UNSIGNED_LONG, fill_i64), B(MPI_FLOAT, fill_f),
    B(MPI_DOUBLE, fill_d), B(MPI_LONG_DOUBLE, fill_ld), B(MPI_LONG_LONG, fill_i64),
    B(MPI_UNSIGNED_LONG_LONG, fill_i64), B(MPI_PACKED, fill_i8),
    B(MPI_INT8_T, fill_i8), B(MPI_INT16_T, fill_i16), B(MPI_INT32_T, fill_i32),
    B(MPI_INT64_T, fill_i64), B(MPI_UINT8_T, fill_i8), B(MPI_UINT16_T, fill_i16),
    B(MPI_UINT32_T, fill_i32), B(MPI_UINT64_T, fill_i64), B(MPI_C_BOOL, fill_bool),
    B(MPI_C_FLOAT_COMPLEX, fill_cf), B(MPI_C_DOUBLE_COMPLEX, fill_cd),
    B(MPI_C_LONG_DOUBLE_COMPLEX, fill_cld), B(MPI_AINT, fill_i64), B(MPI_OFFSET, fill_i64),
    B(MPI_COUNT, fill_i64), B(MPI_CXX_BOOL, fill_bool), B(MPI_CXX_FLOAT_COMPLEX, fill_cf),
    B(MPI_CXX_DOUBLE_COMPLEX, fill_cd), B(MPI_CXX_LONG_DOUBLE_COMPLEX, fill_cld),
    B(MPI_COMPLEX, fill_cf), B(MPI_DOUBLE_COMPLEX, fill_cd), B(MPI_LOGICAL, fill_i32),
    B(MPI_REAL, fill_f), B(MPI_DOUBLE_PRECISION, fill_d), B(MPI_INTEGER, fill_i32),
    B(MPI_CHARACTER, fill_i8), B(MPI_REAL4, fill_f), B(MPI_REAL8, fill_d),
    B(MPI_REAL16, fill_ld), B(MPI_COMPLEX8, fill_cf), B(MPI_COMPLEX16, fill_cd),
    B(MPI_COMPLEX32, fill_cld), B(MPI_INTEGER1, fill_i8), B(MPI_INTEGER2, fill_i16),
    B(MPI_INTEGER4, fill_i32), B(MPI_INTEGER8, fill_i64),
    PAIR(MPI_2INT, int, fill_i32, int, fill_i32),
    PAIR(MPI_FLOAT_INT, float, fill_f, int, fill_i32),
    PAIR(MPI_DOUBLE_INT, double, fill_d, int, fill_i32),
    PAIR(MPI_LONG_INT, long, fill_long, int, fill_i32),
    PAIR(MPI_SHORT_INT, short, fill_short, int, fill_i32),
    PAIR(MPI_LONG_DOUBLE_INT, long double, fill_ld, int, fill_i32),
    PAIR(MPI_2INTEGER, int, fill_i32, int, fill_i32),
    PAIR(MPI_2REAL, float, fill_f, float, fill_f),
    PAIR(MPI_2DOUBLE_PRECISION, double, fill_d, double, fill_d),
};
#define NTYPES (sizeof types / sizeof types[0])

static const MPI_Op ops[] = {MPI_MAX,  MPI_MIN,  MPI_SUM,    MPI_PROD,   MPI_LAND,
                             MPI_BAND, MPI_LOR,  MPI_BOR,    MPI_LXOR,   MPI_BXOR,
                             MPI_MINLOC, MPI_MAXLOC, MPI_REPLACE, MPI_NO_OP};
#define NOPS (sizeof ops / sizeof ops[0])

static struct bmpi_datatype *dt_of(MPI_Datatype t)
{
    struct bmpi_datatype *dt = bmpi_dt_get(t);
    ck_assert_msg(dt != NULL, "no datatype 0x%x", (unsigned)t);
    return dt;
}

static size_t extent_of(MPI_Datatype t) { return (size_t)bmpi_dt_extent(dt_of(t)); }

/* Whether the type's elements are updated by CPU atomics where aligned. */
static size_t cpu_width(const struct type_case *tc)
{
    size_t size = bmpi_dt_size(dt_of(tc->t));
    if (tc->ifill || size != extent_of(tc->t))
        return 0;
    return size == 1 || size == 2 || size == 4 || size == 8 ? size : 0;
}

static void fill(const struct type_case *tc, char *buf, size_t n)
{
    size_t ext = extent_of(tc->t);
    for (size_t i = 0; i < n * ext; i++)
        buf[i] = (char)lrand48();
    for (size_t i = 0; i < n; i++) {
        tc->fill(buf + i * ext);
        if (tc->ifill)
            tc->ifill(buf + i * ext + tc->ioff);
    }
}

/* Element by element, without the padding of pairs past their index. */
static bool same_elems(MPI_Datatype t, const char *a, const char *b, size_t n)
{
    size_t ext = extent_of(t), bytes = (size_t)bmpi_dt_true_extent(dt_of(t));
    for (size_t i = 0; i < n; i++)
        if (memcmp(a + i * ext, b + i * ext, bytes))
            return false;
    return true;
}

static bool accepted(MPI_Op op, MPI_Datatype t)
{
    return bmpi_rma_atomic_check(bmpi_op_get(op), t) == BMPI_OK;
}

/* A target's control block and the updaters of its memory, in this
 * process: this process alone. */
struct lone_target {
    struct bmpi_win_ctl ctl;
    uint64_t *counts[1];
    struct bmpi_win_updaters updaters;
};

static struct bmpi_rma_guard lone_guard(struct lone_target *lt, uint32_t gate)
{
    memset(lt, 0, sizeof *lt);
    lt->ctl.gate = gate;
    lt->counts[0] = &lt->ctl.updating;
    lt->updaters = (struct bmpi_win_updaters){lt->counts, 1, false};
    return (struct bmpi_rma_guard){&lt->ctl, &lt->updaters};
}

static void assert_stripes_free(const struct bmpi_win_ctl *ctl)
{
    for (int s = 0; s < BMPI_RMA_LOCK_STRIPES; s++)
        ck_assert_msg(ctl->stripes[s] == 0, "stripe %d left held", s);
}

/* --- which pairs are accepted ---------------------------------------------------- */

START_TEST(check_ops)
{
    struct bmpi_op user = {.handle = (MPI_Op)0x98000001, .predefined = false};
    ck_assert_int_eq(bmpi_rma_atomic_check(&user, MPI_INT), MPI_ERR_OP);
    ck_assert_ptr_nonnull(strstr(bmpi_err_reason(), "user-defined ops are not allowed"));

    ck_assert(accepted(MPI_SUM, MPI_INT));
    ck_assert(accepted(MPI_SUM, MPI_C_DOUBLE_COMPLEX));
    ck_assert(accepted(MPI_BAND, MPI_BYTE));
    ck_assert(accepted(MPI_LXOR, MPI_LOGICAL));
    ck_assert(accepted(MPI_LAND, MPI_C_BOOL));
    ck_assert(accepted(MPI_MAX, MPI_AINT));
    ck_assert(accepted(MPI_MINLOC, MPI_DOUBLE_INT));
    ck_assert(accepted(MPI_MAXLOC, MPI_2INT));
    /* REPLACE and NO_OP: any predefined type */
    ck_assert(accepted(MPI_REPLACE, MPI_WCHAR));
    ck_assert(accepted(MPI_REPLACE, MPI_PACKED));
    ck_assert(accepted(MPI_REPLACE, MPI_LONG_DOUBLE_INT));
    ck_assert(accepted(MPI_NO_OP, MPI_CHARACTER));
    ck_assert(accepted(MPI_NO_OP, MPI_C_LONG_DOUBLE_COMPLEX));

    ck_assert(!accepted(MPI_SUM, MPI_2INT));
    ck_assert(!accepted(MPI_MINLOC, MPI_DOUBLE));
    ck_assert(!accepted(MPI_LAND, MPI_DOUBLE));
    ck_assert(!accepted(MPI_BOR, MPI_FLOAT));
    ck_assert(!accepted(MPI_MAX, MPI_C_FLOAT_COMPLEX));
    ck_assert(!accepted(MPI_SUM, MPI_WCHAR));
    ck_assert_int_eq(bmpi_rma_atomic_check(bmpi_op_get(MPI_SUM), MPI_DATATYPE_NULL), MPI_ERR_OP);
    ck_assert_int_eq(bmpi_rma_atomic_check(bmpi_op_get(MPI_REPLACE), MPI_DATATYPE_NULL),
                     MPI_ERR_OP);

    /* a derived type is not a basic element, even for REPLACE */
    MPI_Datatype contig;
    ck_assert_int_eq(MPI_Type_contiguous(2, MPI_INT, &contig), MPI_SUCCESS);
    ck_assert_int_eq(MPI_Type_commit(&contig), MPI_SUCCESS);
    ck_assert_int_eq(bmpi_rma_atomic_check(bmpi_op_get(MPI_REPLACE), contig), MPI_ERR_OP);
    ck_assert_int_eq(bmpi_rma_atomic_check(bmpi_op_get(MPI_SUM), contig), MPI_ERR_OP);
    MPI_Type_free(&contig);
}
END_TEST

START_TEST(check_cswap)
{
    const MPI_Datatype ok[] = {MPI_INT,    MPI_UNSIGNED_LONG, MPI_INT8_T, MPI_UINT64_T,
                               MPI_BYTE,   MPI_LOGICAL,       MPI_C_BOOL, MPI_CXX_BOOL,
                               MPI_AINT,   MPI_OFFSET,        MPI_COUNT,  MPI_INTEGER,
                               MPI_INTEGER2, MPI_INTEGER8,    MPI_CHAR,   MPI_LONG_LONG};
    const MPI_Datatype bad[] = {MPI_DOUBLE,  MPI_FLOAT,    MPI_LONG_DOUBLE, MPI_C_FLOAT_COMPLEX,
                                MPI_2INT,    MPI_DOUBLE_INT, MPI_WCHAR,     MPI_PACKED,
                                MPI_CHARACTER, MPI_REAL8,  MPI_DATATYPE_NULL};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        ck_assert_msg(bmpi_rma_cswap_check(ok[i]) == BMPI_OK, "%s refused",
                      bmpi_dt_name(ok[i]));
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(bmpi_rma_cswap_check(bad[i]) == MPI_ERR_TYPE, "%s accepted",
                      bmpi_dt_name(bad[i]));
    ck_assert_ptr_nonnull(strstr(bmpi_err_reason(), "MPI_Compare_and_swap"));
}
END_TEST

/* --- every op on every type against op.c ------------------------------------------ */

#define NELEM 37

/* One call of apply: target at toff, origin and result at ooff from
 * 64-byte aligned buffers, and the same by reference. */
static void apply_one(const struct type_case *tc, MPI_Op op, size_t toff, size_t ooff, bool fetch,
                      uint32_t gate)
{
    struct bmpi_op *o = bmpi_op_get(op);
    struct bmpi_datatype *dt = dt_of(tc->t);
    size_t bytes = NELEM * extent_of(tc->t);
    _Alignas(64) char origin[NELEM * 32 + 64], target[NELEM * 32 + 64], result[NELEM * 32 + 64];
    _Alignas(64) char ref_target[NELEM * 32 + 64], ref_result[NELEM * 32 + 64];
    _Alignas(64) char ref_origin[NELEM * 32 + 64];
    char *org = origin + ooff, *tgt = target + toff, *res = result + ooff;
    fill(tc, org, NELEM);
    fill(tc, tgt, NELEM);
    memset(res, 0x5a, bytes);
    /* The reference: result gets the old target, then op.c reduces (no
     * reduction of its own for REPLACE and NO_OP). */
    memcpy(ref_result, tgt, bytes);
    memcpy(ref_target, tgt, bytes);
    if (op == MPI_REPLACE) {
        for (size_t i = 0; i < NELEM; i++)
            memcpy(ref_target + i * extent_of(tc->t), org + i * extent_of(tc->t),
                   (size_t)bmpi_dt_true_extent(dt));
    } else if (op != MPI_NO_OP) {
        /* op.c's kernels read elements at their alignment */
        memcpy(ref_origin, org, bytes);
        bmpi_op_apply(o, ref_origin, ref_target, NELEM, dt);
    }

    struct lone_target lt;
    bmpi_rma_atomic_apply(o, tc->t, op == MPI_NO_OP ? NULL : org, tgt, fetch ? res : NULL, NELEM,
                          lone_guard(&lt, gate));
    assert_stripes_free(&lt.ctl);
    ck_assert_msg(lt.ctl.gate == gate && lt.ctl.updating == 0, "%s on %s: gate %u, count %llu left",
                  bmpi_op_name(o), bmpi_dt_name(tc->t), lt.ctl.gate,
                  (unsigned long long)lt.ctl.updating);
    ck_assert_msg(same_elems(tc->t, tgt, ref_target, NELEM),
                  "%s on %s (target +%zu, origin +%zu): target differs",
                  bmpi_op_name(o), bmpi_dt_name(tc->t), toff, ooff);
    if (fetch)
        ck_assert_msg(same_elems(tc->t, res, ref_result, NELEM),
                      "%s on %s (target +%zu): result differs",
                      bmpi_op_name(o), bmpi_dt_name(tc->t), toff);
}

START_TEST(apply_all)
{
    srand48(7);
    int combos = 0;
    for (size_t t = 0; t < NTYPES; t++)
        for (size_t k = 0; k < NOPS; k++) {
            if (!accepted(ops[k], types[t].t))
                continue;
            combos++;
            /* NELEM elements of 8 bytes and more are a wide update
             * where the gate opens and alignment allows */
            for (int fetch = 0; fetch < 2; fetch++)
                for (uint32_t gate = BMPI_RMA_GATE_OPEN; gate <= BMPI_RMA_GATE_NEVER;
                     gate += BMPI_RMA_GATE_NEVER) {
                    apply_one(&types[t], ops[k], 0, 0, fetch, gate); /* all aligned */
                    apply_one(&types[t], ops[k], 1, 0, fetch, gate); /* target unaligned */
                    apply_one(&types[t], ops[k], 0, 3, fetch, gate); /* private buffers unaligned */
                    apply_one(&types[t], ops[k], 5, 3, fetch, gate);
                }
        }
    /* a sanity floor: the loop really ran the table */
    ck_assert_int_gt(combos, 250);
}
END_TEST

static void cswap_one(const struct type_case *tc, size_t toff, bool equal)
{
    size_t size = bmpi_dt_size(dt_of(tc->t));
    _Alignas(64) char target[64], compare[16], origin[16], result[16], old[16];
    char *tgt = target + toff;
    fill(tc, tgt, 1);
    fill(tc, origin, 1);
    memcpy(old, tgt, size);
    if (equal)
        memcpy(compare, tgt, size);
    else
        do
            fill(tc, compare, 1);
        while (memcmp(compare, tgt, size) == 0);
    memset(result, 0x5a, sizeof result);
    struct lone_target lt;
    bmpi_rma_atomic_cswap(tc->t, compare, origin, tgt, result, lone_guard(&lt, BMPI_RMA_GATE_OPEN));
    assert_stripes_free(&lt.ctl);
    ck_assert_int_eq(lt.ctl.updating, 0);
    ck_assert_msg(memcmp(result, old, size) == 0, "cswap %s +%zu: result is not the old value",
                  bmpi_dt_name(tc->t), toff);
    ck_assert_msg(memcmp(tgt, equal ? origin : old, size) == 0, "cswap %s +%zu (%s): target wrong",
                  bmpi_dt_name(tc->t), toff, equal ? "equal" : "different");
}

START_TEST(cswap_all)
{
    srand48(11);
    int n = 0;
    for (size_t t = 0; t < NTYPES; t++) {
        if (bmpi_rma_cswap_check(types[t].t) != BMPI_OK)
            continue;
        n++;
        for (int rep = 0; rep < 5; rep++)
            for (size_t off = 0; off < 8; off++) {
                cswap_one(&types[t], off, true);
                cswap_one(&types[t], off, false);
            }
    }
    ck_assert_int_ge(n, 25);
}
END_TEST

/* --- which mechanism ------------------------------------------------------------ */

/* What a forked child shares with the test. */
struct shared_ctl {
    struct bmpi_win_ctl ctl;   /* the target's */
    struct bmpi_win_ctl other; /* another updater's */
    volatile int started, done;
    _Alignas(64) char data[1024];
};

/* The guard of s's target as the forked child sees it: itself and one
 * other updater. */
struct child_guard {
    uint64_t *counts[2];
    struct bmpi_win_updaters updaters;
};

static struct bmpi_rma_guard shared_guard(struct shared_ctl *s, struct child_guard *cg)
{
    cg->counts[0] = &s->ctl.updating;
    cg->counts[1] = &s->other.updating;
    cg->updaters = (struct bmpi_win_updaters){cg->counts, 2, false};
    return (struct bmpi_rma_guard){&s->ctl, &cg->updaters};
}

static struct shared_ctl *shared_ctl_new(void)
{
    struct shared_ctl *s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                                -1, 0);
    ck_assert_ptr_ne(s, MAP_FAILED);
    memset(s, 0, sizeof *s);
    return s;
}

static void hold_all_stripes(struct bmpi_win_ctl *ctl, uint32_t v)
{
    for (int s = 0; s < BMPI_RMA_LOCK_STRIPES; s++)
        __atomic_store_n(&ctl->stripes[s], v, __ATOMIC_RELEASE);
}

static int wait_child(pid_t pid)
{
    int st;
    while (waitpid(pid, &st, 0) < 0)
        ck_assert_int_eq(errno, EINTR);
    return st;
}

/* One update in a forked child, watched: what the child applies. */
struct watched_update {
    MPI_Op op; /* MPI_OP_NULL: compare-and-swap, compare being the target */
    MPI_Datatype t;
    const void *origin;
    void *target, *result;
    size_t count;
    struct bmpi_rma_guard guard;
};

/* Forks a child that applies u, marking s->started before and s->done
 * after; returns its pid once it has started and had 50 ms to run, with
 * *done_early telling whether it was done by then. Whatever the
 * scheduler does, a child that is waiting cannot be done; one that is
 * done did not wait. */
static pid_t watch_update(struct shared_ctl *s, const struct watched_update *u, bool *done_early)
{
    s->started = s->done = 0;
    fflush(stderr);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        alarm(20);
        s->started = 1;
        if (u->op == MPI_OP_NULL)
            bmpi_rma_atomic_cswap(u->t, u->target, u->origin, u->target, u->result, u->guard);
        else
            bmpi_rma_atomic_apply(bmpi_op_get(u->op), u->t, u->origin, u->target, u->result,
                                  u->count, u->guard);
        s->done = 1;
        _exit(0);
    }
    while (!s->started)
        sched_yield();
    struct timespec ts = {0, 50 * 1000 * 1000};
    nanosleep(&ts, NULL);
    *done_early = s->done;
    return pid;
}

/* With every stripe held, each accepted op on each CPU-width type at
 * natural alignment, and compare-and-swap, still completes: none takes a
 * stripe. A child that took one would spin until the alarm. */
START_TEST(cpu_path_takes_no_stripe)
{
    struct shared_ctl *s = shared_ctl_new();
    hold_all_stripes(&s->ctl, 1);
    s->ctl.gate = BMPI_RMA_GATE_NEVER; /* element by element, however many */
    struct child_guard cg;
    struct bmpi_rma_guard g = shared_guard(s, &cg);
    fflush(stderr);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        alarm(20);
        _Alignas(64) char origin[NELEM * 8], target[NELEM * 8], result[NELEM * 8];
        for (size_t t = 0; t < NTYPES; t++) {
            if (!cpu_width(&types[t]))
                continue;
            for (size_t k = 0; k < NOPS; k++) {
                if (!accepted(ops[k], types[t].t))
                    continue;
                fill(&types[t], origin, NELEM);
                fill(&types[t], target, NELEM);
                bmpi_rma_atomic_apply(bmpi_op_get(ops[k]), types[t].t, origin, target, result,
                                      NELEM, g);
                bmpi_rma_atomic_apply(bmpi_op_get(ops[k]), types[t].t, origin, target, NULL,
                                      NELEM, g);
            }
            if (bmpi_rma_cswap_check(types[t].t) == BMPI_OK)
                bmpi_rma_atomic_cswap(types[t].t, target, origin, target, result, g);
        }
        _exit(0);
    }
    int st = wait_child(pid);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
                  "an op on a CPU-atomic element waited for a stripe (status 0x%x)", st);
    munmap(s, sizeof *s);
}
END_TEST

/* One update that must take a stripe: with all held it must not finish,
 * and once they are released it must finish with the right value. */
struct striped_case {
    const char *what;
    MPI_Op op;     /* MPI_OP_NULL: compare-and-swap */
    MPI_Datatype t;
    size_t off;    /* of the target in data */
};

static void run_striped(const struct striped_case *c)
{
    struct shared_ctl *s = shared_ctl_new();
    const struct type_case *tc = NULL;
    for (size_t t = 0; t < NTYPES; t++)
        if (types[t].t == c->t)
            tc = &types[t];
    ck_assert_ptr_nonnull(tc);
    size_t bytes = (size_t)bmpi_dt_true_extent(dt_of(c->t));
    _Alignas(64) char origin[64], expect[64], result[64];
    fill(tc, origin, 1);
    fill(tc, s->data + c->off, 1);
    memcpy(expect, s->data + c->off, bytes);
    if (c->op == MPI_OP_NULL || c->op == MPI_REPLACE)
        memcpy(expect, origin, bytes);
    else if (c->op != MPI_NO_OP)
        bmpi_op_apply(bmpi_op_get(c->op), origin, expect, 1, dt_of(c->t));
    hold_all_stripes(&s->ctl, 1);
    struct child_guard cg;
    struct watched_update u = {c->op, c->t, origin, s->data + c->off, result, 1,
                               shared_guard(s, &cg)};
    bool done_early;
    pid_t pid = watch_update(s, &u, &done_early);
    hold_all_stripes(&s->ctl, 0);
    int st = wait_child(pid);
    ck_assert_msg(!done_early, "%s did not wait for its stripe", c->what);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: child status 0x%x", c->what, st);
    ck_assert_msg(s->done, "%s never finished", c->what);
    ck_assert_msg(memcmp(s->data + c->off, expect, bytes) == 0, "%s: wrong value", c->what);
    munmap(s, sizeof *s);
}

START_TEST(stripe_path_waits)
{
    srand48(13);
    static const struct striped_case cases[] = {
        {"long double SUM", MPI_SUM, MPI_LONG_DOUBLE, 0},
        {"double complex PROD", MPI_PROD, MPI_C_DOUBLE_COMPLEX, 16},
        {"long double complex SUM", MPI_SUM, MPI_C_LONG_DOUBLE_COMPLEX, 32},
        {"MPI_DOUBLE_INT MINLOC", MPI_MINLOC, MPI_DOUBLE_INT, 64},
        {"MPI_2INT MAXLOC", MPI_MAXLOC, MPI_2INT, 80},
        {"MPI_2INT REPLACE", MPI_REPLACE, MPI_2INT, 88},
        {"MPI_FLOAT_INT NO_OP", MPI_NO_OP, MPI_FLOAT_INT, 96},
        {"unaligned int SUM", MPI_SUM, MPI_INT, 105},
        {"unaligned double MAX", MPI_MAX, MPI_DOUBLE, 113},
        {"unaligned int64 REPLACE", MPI_REPLACE, MPI_INT64_T, 124},
        {"unaligned int64 compare-and-swap", MPI_OP_NULL, MPI_INT64_T, 140},
        {"unaligned short compare-and-swap", MPI_OP_NULL, MPI_SHORT, 151},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_striped(&cases[i]);
}
END_TEST

/* --- the gate -------------------------------------------------------------------- */

#define WIDE_DOUBLES 64 /* 512 bytes: a wide update */

/* What a child does while the test holds something it may need. */
enum gated_op { WIDE_SUM, ELEMENT_SUM };

/* Forks a child doing op on s's data, checks after a while whether it
 * finished (it must not when blocked), lets release() free it, and
 * checks the data. Returns nothing; asserts. */
static void run_gated(const char *what, struct shared_ctl *s, enum gated_op op, bool blocked,
                      void (*release)(struct shared_ctl *))
{
    double *data = (double *)s->data;
    _Alignas(64) double ones[WIDE_DOUBLES], old[WIDE_DOUBLES];
    for (int i = 0; i < WIDE_DOUBLES; i++) {
        ones[i] = 1;
        data[i] = i;
    }
    struct child_guard cg;
    struct watched_update u = {MPI_SUM, MPI_DOUBLE, ones, data, old,
                               op == WIDE_SUM ? WIDE_DOUBLES : 1, shared_guard(s, &cg)};
    bool done_early;
    pid_t pid = watch_update(s, &u, &done_early);
    uint32_t gate = __atomic_load_n(&s->ctl.gate, __ATOMIC_ACQUIRE);
    uint64_t counted = __atomic_load_n(&s->ctl.updating, __ATOMIC_ACQUIRE);
    release(s);
    int st = wait_child(pid);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: child status 0x%x", what, st);
    ck_assert_msg(done_early == !blocked, "%s: %s", what,
                  blocked ? "finished while it should wait" : "waited");
    if (blocked && op == WIDE_SUM)
        ck_assert_msg(gate == BMPI_RMA_GATE_HELD, "%s: the gate was %u while waiting", what, gate);
    if (blocked && op == ELEMENT_SUM)
        ck_assert_msg(counted == 0, "%s: counted itself while waiting", what);
    int n = op == WIDE_SUM ? WIDE_DOUBLES : 1;
    for (int i = 0; i < WIDE_DOUBLES; i++)
        ck_assert_msg(data[i] == i + (i < n), "%s: element %d is %g", what, i, data[i]);
    ck_assert_msg(s->ctl.gate != BMPI_RMA_GATE_HELD && s->ctl.updating == 0,
                  "%s: gate %u, count %llu left", what, s->ctl.gate,
                  (unsigned long long)s->ctl.updating);
}

static void end_other_update(struct shared_ctl *s)
{
    __atomic_store_n(&s->other.updating, 0, __ATOMIC_RELEASE);
}

static void open_gate(struct shared_ctl *s)
{
    __atomic_store_n(&s->ctl.gate, BMPI_RMA_GATE_OPEN, __ATOMIC_RELEASE);
}

START_TEST(gate)
{
    struct shared_ctl *s = shared_ctl_new();
    s->other.updating = 1; /* another process is in an element update */
    run_gated("a wide update while an element update is in flight", s, WIDE_SUM, true,
              end_other_update);
    s->ctl.gate = BMPI_RMA_GATE_HELD; /* another process is in a wide update */
    run_gated("an element update while the gate is held", s, ELEMENT_SUM, true, open_gate);
    s->ctl.gate = BMPI_RMA_GATE_NEVER;
    s->other.updating = 1;
    run_gated("a wide update where the gate never closes", s, WIDE_SUM, false, end_other_update);
    munmap(s, sizeof *s);
}
END_TEST

/* --- runs ------------------------------------------------------------------------- */

#define RUNS 100

/* bmpi_rma_atomic_apply_runs: every other double of a column (one
 * element a run) summed, their old values fetched, with the gate open
 * (under it, at once), never closing (element by element) and for a pair
 * type (never wide); the gate left open and nothing counted. */
START_TEST(apply_runs)
{
    const uint32_t gates[2] = {BMPI_RMA_GATE_OPEN, BMPI_RMA_GATE_NEVER};
    for (int k = 0; k < 2; k++) {
        struct lone_target lt;
        struct bmpi_rma_guard g = lone_guard(&lt, gates[k]);
        _Alignas(16) double col[2 * RUNS], add[RUNS], old[RUNS];
        struct iovec runs[RUNS];
        for (int i = 0; i < 2 * RUNS; i++)
            col[i] = i;
        for (int i = 0; i < RUNS; i++) {
            add[i] = 0.5 * i;
            runs[i] = (struct iovec){&col[2 * i], sizeof(double)};
        }
        bmpi_rma_atomic_apply_runs(bmpi_op_get(MPI_SUM), MPI_DOUBLE, add, runs, RUNS, old, g);
        for (int i = 0; i < 2 * RUNS; i++)
            ck_assert_msg(col[i] == (i % 2 ? i : i + 0.25 * i), "gate %u: element %d is %g", gates[k], i, col[i]);
        for (int i = 0; i < RUNS; i++)
            ck_assert_msg(old[i] == 2 * i, "gate %u: old value %d is %g", gates[k], i, old[i]);
        ck_assert_msg(lt.ctl.gate == gates[k] && lt.ctl.updating == 0, "gate %u: gate %u, count %llu left",
                      gates[k], lt.ctl.gate, (unsigned long long)lt.ctl.updating);
    }
    struct lone_target lt;
    struct bmpi_rma_guard g = lone_guard(&lt, BMPI_RMA_GATE_OPEN);
    struct {
        double v;
        int i;
    } pairs[2 * RUNS], offer[RUNS];
    struct iovec runs[RUNS];
    for (int i = 0; i < RUNS; i++) {
        pairs[2 * i].v = pairs[2 * i + 1].v = 1;
        pairs[2 * i].i = pairs[2 * i + 1].i = -1;
        offer[i].v = i % 2 ? 2 : 0;
        offer[i].i = i;
        runs[i] = (struct iovec){&pairs[2 * i], sizeof pairs[0]};
    }
    bmpi_rma_atomic_apply_runs(bmpi_op_get(MPI_MAXLOC), MPI_DOUBLE_INT, offer, runs, RUNS, NULL, g);
    for (int i = 0; i < RUNS; i++) {
        ck_assert_msg(pairs[2 * i].v == (i % 2 ? 2 : 1) && pairs[2 * i].i == (i % 2 ? i : -1),
                      "MAXLOC run %d: (%g, %d)", i, pairs[2 * i].v, pairs[2 * i].i);
        ck_assert_msg(pairs[2 * i + 1].v == 1 && pairs[2 * i + 1].i == -1, "MAXLOC gap %d changed", i);
    }
    assert_stripes_free(&lt.ctl);
}
END_TEST

/* A column longer than one gathering of the strided apply, forwards and
 * backwards, with the gate open (gathered) and never closing (element by
 * element): SUM with the old values, REPLACE, NO_OP fetching. */
#define COLUMN 700
START_TEST(apply_strided)
{
    const uint32_t gates[2] = {BMPI_RMA_GATE_OPEN, BMPI_RMA_GATE_NEVER};
    for (int k = 0; k < 4; k++) {
        struct lone_target lt;
        struct bmpi_rma_guard g = lone_guard(&lt, gates[k % 2]);
        bool backwards = k >= 2;
        static _Alignas(16) double col[2 * COLUMN], add[COLUMN], old[COLUMN];
        for (int i = 0; i < 2 * COLUMN; i++)
            col[i] = i;
        for (int i = 0; i < COLUMN; i++)
            add[i] = 0.5 * i;
        char *first = (char *)(backwards ? &col[2 * COLUMN - 2] : &col[0]);
        ptrdiff_t stride = (backwards ? -2 : 2) * (ptrdiff_t)sizeof(double);
        /* element i of the column is col[at(i)] */
#define AT(i) (backwards ? 2 * COLUMN - 2 - 2 * (i) : 2 * (i))
        bmpi_rma_atomic_apply_strided(bmpi_op_get(MPI_SUM), MPI_DOUBLE, add, first, stride, sizeof(double), COLUMN,
                                      old, g);
        for (int i = 0; i < COLUMN; i++) {
            ck_assert_msg(old[i] == AT(i), "case %d: old value %d is %g", k, i, old[i]);
            ck_assert_msg(col[AT(i)] == AT(i) + 0.5 * i, "case %d: element %d is %g", k, i, col[AT(i)]);
            ck_assert_msg(col[AT(i) + 1] == AT(i) + 1, "case %d: gap after %d changed", k, i);
        }
        bmpi_rma_atomic_apply_strided(bmpi_op_get(MPI_REPLACE), MPI_DOUBLE, add, first, stride, sizeof(double),
                                      COLUMN, NULL, g);
        bmpi_rma_atomic_apply_strided(bmpi_op_get(MPI_NO_OP), MPI_DOUBLE, NULL, first, stride, sizeof(double),
                                      COLUMN, old, g);
        for (int i = 0; i < COLUMN; i++)
            ck_assert_msg(col[AT(i)] == 0.5 * i && old[i] == 0.5 * i, "case %d: REPLACE or NO_OP at %d: %g, %g", k,
                          i, col[AT(i)], old[i]);
#undef AT
        ck_assert_msg(lt.ctl.gate == gates[k % 2] && lt.ctl.updating == 0, "case %d: gate %u, count %llu left", k,
                      lt.ctl.gate, (unsigned long long)lt.ctl.updating);
    }
}
END_TEST

/* --- the storm ------------------------------------------------------------------- */

#define NRANKS 4
#define PAGE 4096
/* How long the test lets each phase run (CHECK_RMA_ATOMIC_PHASE_MS
 * overrides). On a loaded machine the ranks run side by side only now
 * and then, so a phase must span many scheduler slices to catch a lost
 * update; nothing here is timed. */
#define PHASE_MS 250
/* Updates of one rank in a phase at most: bounds the counters and the
 * swap chain's record. */
#define MAX_OPS (1 << 24)
#define CHAIN_MAX (1 << 18)

/* One element per phase, in the window's data page. */
enum phase {
    PH_SUM64 = 1, /* int64 SUM (fetch-add), every other one fetching */
    PH_SUMD,      /* double SUM (CAS loop) */
    PH_MIXED,     /* int64: fetch-add by even ranks, CAS increments by odd ones */
    PH_CAS,       /* int64: CAS increments by all */
    PH_SUMLD,     /* long double SUM (stripe) */
    PH_UNAL,      /* unaligned int32: SUM by even ranks, CAS increments by odd ones (stripe) */
    PH_MINLOC,    /* MPI_DOUBLE_INT MINLOC with fetch (stripe) */
    PH_CHAIN,     /* MPI_DOUBLE_INT REPLACE with fetch: a swap chain (stripe) */
    PH_WIDE,      /* doubles: wide SUMs by even ranks, element SUMs among them by odd ones */
    PH_END
};
static const int phase_off[PH_END] = {
    [PH_SUM64] = 0, [PH_SUMD] = 8, [PH_MIXED] = 16, [PH_CAS] = 24, [PH_SUMLD] = 32,
    [PH_UNAL] = 49, [PH_MINLOC] = 64, [PH_CHAIN] = 80, [PH_WIDE] = 256,
};

struct pair_di {
    double v;
    int i;
};

struct storm_shared {
    int phase;                    /* set by the test: what the ranks do now */
    int ready;                    /* ranks mapped and waiting */
    uintptr_t base[NRANKS];       /* where each rank mapped the window */
    long count[PH_END][NRANKS];   /* updates each rank made in each phase */
    int chain[NRANKS][CHAIN_MAX]; /* the token each swap fetched */
};

/* What one rank works with. */
struct storm_rank {
    int rank;
    struct storm_shared *sh;
    char *data;                 /* the window's data page */
    struct bmpi_rma_guard guard; /* its control block, on the page before */
    uint64_t *counts[NRANKS];   /* every rank's count of updates in flight, its own first */
    struct bmpi_win_updaters updaters;
    int64_t last_sum;           /* the last SUM int64 this rank fetched */
    _Alignas(64) double ones[WIDE_DOUBLES], old[WIDE_DOUBLES]; /* PH_WIDE's operands */
};

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        fprintf(stderr, "rank %d: ", sr->rank);                                                    \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fprintf(stderr, "\n");                                                                     \
        _exit(1);                                                                                  \
    } while (0)

static void *elem(struct storm_rank *sr, enum phase ph) { return sr->data + phase_off[ph]; }

static void add(struct storm_rank *sr, MPI_Datatype t, enum phase ph, const void *v, void *old)
{
    bmpi_rma_atomic_apply(bmpi_op_get(MPI_SUM), t, v, elem(sr, ph), old, 1, sr->guard);
}

/* Increment by compare-and-swap: read (NO_OP fetch), swap in old + 1,
 * retry while another update came in between. */
static void cas_increment(struct storm_rank *sr, MPI_Datatype t, enum phase ph)
{
    int64_t old = 0, seen = 0, next;
    bmpi_rma_atomic_apply(bmpi_op_get(MPI_NO_OP), t, NULL, elem(sr, ph), &old, 1, sr->guard);
    for (;;) {
        next = old + 1;
        bmpi_rma_atomic_cswap(t, &old, &next, elem(sr, ph), &seen, sr->guard);
        if (seen == old)
            return;
        old = seen;
    }
}

/* Update i of this rank in phase ph. */
static void storm_op(struct storm_rank *sr, enum phase ph, long i)
{
    int64_t v64 = sr->rank + 1, one64 = 1, old64;
    int32_t one32 = 1;
    double half = 0.5;
    long double one = 1;
    int token = (int)i * NRANKS + sr->rank + 1;
    struct pair_di mine, got;
    switch (ph) {
    case PH_SUM64: /* a rank's fetches rise */
        add(sr, MPI_INT64_T, ph, &v64, i & 1 ? &old64 : NULL);
        if (i & 1) {
            if (old64 <= sr->last_sum)
                FAIL("SUM int64 fetched %lld after %lld", (long long)old64,
                     (long long)sr->last_sum);
            sr->last_sum = old64;
        }
        break;
    case PH_SUMD: add(sr, MPI_DOUBLE, ph, &half, NULL); break;
    case PH_SUMLD: add(sr, MPI_LONG_DOUBLE, ph, &one, NULL); break;
    case PH_MIXED:
    case PH_UNAL: {
        MPI_Datatype t = ph == PH_MIXED ? MPI_INT64_T : MPI_INT32_T;
        if (sr->rank % 2)
            cas_increment(sr, t, ph);
        else
            add(sr, t, ph, ph == PH_MIXED ? (void *)&one64 : (void *)&one32, NULL);
        break;
    }
    case PH_CAS: cas_increment(sr, MPI_INT64_T, ph); break;
    case PH_MINLOC: /* the minimum only goes down; its index names its value */
        mine = (struct pair_di){-(double)token, token};
        bmpi_rma_atomic_apply(bmpi_op_get(MPI_MINLOC), MPI_DOUBLE_INT, &mine, elem(sr, ph), &got,
                              1, sr->guard);
        if (got.v != -(double)got.i)
            FAIL("MINLOC fetched a torn pair (%g, %d)", got.v, got.i);
        if (i > 0 && got.v > -(double)(token - NRANKS))
            FAIL("MINLOC went up: fetched %g after sending %d", got.v, token - NRANKS);
        break;
    case PH_CHAIN: /* every token comes out exactly once */
        mine = (struct pair_di){(double)token, token};
        bmpi_rma_atomic_apply(bmpi_op_get(MPI_REPLACE), MPI_DOUBLE_INT, &mine, elem(sr, ph), &got,
                              1, sr->guard);
        if (got.v != (double)got.i)
            FAIL("swap fetched a torn pair (%g, %d)", got.v, got.i);
        sr->sh->chain[sr->rank][i] = got.i;
        break;
    case PH_WIDE:
        if (sr->rank % 2)
            bmpi_rma_atomic_apply(bmpi_op_get(MPI_SUM), MPI_DOUBLE, sr->ones,
                                  (double *)elem(sr, ph) + i % WIDE_DOUBLES, NULL, 1, sr->guard);
        else
            bmpi_rma_atomic_apply(bmpi_op_get(MPI_SUM), MPI_DOUBLE, sr->ones, elem(sr, ph),
                                  i & 1 ? sr->old : NULL, WIDE_DOUBLES, sr->guard);
        break;
    case PH_END: break;
    }
}

static int phase_now(struct storm_shared *sh)
{
    return __atomic_load_n(&sh->phase, __ATOMIC_ACQUIRE);
}

static void storm_rank(int rank, int fd, struct storm_shared *sh)
{
    struct storm_rank rs = {.rank = rank, .sh = sh, .last_sum = -1}, *sr = &rs;
    /* A different address in each rank: the window at rank pages into a
     * reservation, as processes map a shared window wherever they can. */
    char *reserve = mmap(NULL, (NRANKS + 2) * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (reserve == MAP_FAILED)
        FAIL("reserve: %s", strerror(errno));
    char *base = mmap(reserve + rank * PAGE, 2 * PAGE, PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_FIXED, fd, 0);
    if (base == MAP_FAILED)
        FAIL("map: %s", strerror(errno));
    sh->base[rank] = (uintptr_t)base;
    /* the window's first page: the target's control block, then the
     * other ranks' (their counts of updates in flight) */
    struct bmpi_win_ctl *ctls = (struct bmpi_win_ctl *)base;
    sr->counts[0] = &ctls[rank].updating;
    for (int r = 0, n = 1; r < NRANKS; r++)
        if (r != rank)
            sr->counts[n++] = &ctls[r].updating;
    /* ranks 2 and 3 count as processes of several threads do */
    sr->updaters = (struct bmpi_win_updaters){sr->counts, NRANKS, rank >= 2};
    sr->guard = (struct bmpi_rma_guard){&ctls[0], &sr->updaters};
    for (int i = 0; i < WIDE_DOUBLES; i++)
        sr->ones[i] = 1;
    sr->data = base + PAGE;
    __atomic_add_fetch(&sh->ready, 1, __ATOMIC_ACQ_REL);

    for (enum phase ph = PH_SUM64; ph < PH_END; ph++) {
        while (phase_now(sh) < (int)ph)
            sched_yield();
        long max = ph == PH_CHAIN ? CHAIN_MAX : MAX_OPS, i = 0;
        for (; i < max && phase_now(sh) == (int)ph; i++)
            storm_op(sr, ph, i);
        sh->count[ph][rank] = i;
    }
    _exit(0);
}

/* Waits for the ranks; when one fails, the others are killed. Returns
 * how many failed. */
static int wait_ranks(pid_t *pids, int n)
{
    int failed = 0;
    for (int left = n; left > 0; left--) {
        int st;
        pid_t w;
        while ((w = wait(&st)) < 0)
            ck_assert_int_eq(errno, EINTR);
        if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
            continue;
        failed++;
        for (int r = 0; r < n; r++)
            if (pids[r] != w)
                kill(pids[r], SIGKILL);
    }
    return failed;
}

/* Runs the phases one after the other while the ranks live. */
static void drive_phases(struct storm_shared *sh)
{
    while (__atomic_load_n(&sh->ready, __ATOMIC_ACQUIRE) < NRANKS) {
        siginfo_t info = {0};
        if (waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid)
            return; /* a rank died before it was ready: wait_ranks reaps and tells */
        sched_yield();
    }
    const char *env = getenv("CHECK_RMA_ATOMIC_PHASE_MS");
    long ms = env ? atol(env) : PHASE_MS;
    for (int ph = PH_SUM64; ph <= PH_END; ph++) {
        __atomic_store_n(&sh->phase, ph, __ATOMIC_RELEASE);
        struct timespec ts = {ms / 1000, ms % 1000 * 1000L * 1000L};
        if (ph < PH_END)
            nanosleep(&ts, NULL);
    }
}

static long total(const struct storm_shared *sh, enum phase ph, bool weighted)
{
    long n = 0;
    for (int r = 0; r < NRANKS; r++)
        n += sh->count[ph][r] * (weighted ? r + 1 : 1);
    return n;
}

/* Every token sent into the swap chain, and the initial 0, came out once:
 * fetched by a swap or left in the window. Returns the first token that
 * did not, -1 if none. (No ck_assert per token: each costs a write.) */
static int check_chain(const struct storm_shared *sh, int left)
{
    long ntok = CHAIN_MAX * NRANKS + 1;
    unsigned char *seen = calloc((size_t)ntok, 2), *sent = seen + ntok;
    ck_assert_ptr_nonnull(seen);
    sent[0] = 1;
    for (int r = 0; r < NRANKS; r++)
        for (long i = 0; i < sh->count[PH_CHAIN][r]; i++)
            sent[i * NRANKS + r + 1] = 1;
    int bad = -1;
    if (left < 0 || left >= ntok || !sent[left])
        bad = left;
    else
        seen[left] = 1;
    for (int r = 0; r < NRANKS && bad < 0; r++)
        for (long i = 0; i < sh->count[PH_CHAIN][r] && bad < 0; i++) {
            int tok = sh->chain[r][i];
            if (tok < 0 || tok >= ntok || !sent[tok] || seen[tok])
                bad = tok;
            else
                seen[tok] = 1;
        }
    for (long t = 0; t < ntok && bad < 0; t++)
        if (seen[t] != sent[t])
            bad = (int)t;
    free(seen);
    return bad;
}

START_TEST(storm)
{
    int fd = memfd_create("bmpi-rma-atomic", 0);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(ftruncate(fd, 2 * PAGE), 0);
    struct storm_shared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE,
                                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(sh, MAP_FAILED);
    memset(sh, 0, sizeof *sh);
    char *base = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ck_assert_ptr_ne(base, MAP_FAILED);
    char *data = base + PAGE;
    /* token 0: the value and index every pair of the storm carries */
    struct pair_di start = {0, 0};
    memcpy(data + phase_off[PH_MINLOC], &start, sizeof start);
    memcpy(data + phase_off[PH_CHAIN], &start, sizeof start);

    fflush(stderr);
    pid_t pids[NRANKS];
    for (int r = 0; r < NRANKS; r++) {
        pids[r] = fork();
        ck_assert_int_ge(pids[r], 0);
        if (pids[r] == 0)
            storm_rank(r, fd, sh);
    }
    drive_phases(sh);
    ck_assert_msg(wait_ranks(pids, NRANKS) == 0, "a rank failed");
    for (int r = 0; r < NRANKS; r++)
        for (int q = 0; q < r; q++)
            ck_assert_msg(sh->base[r] != sh->base[q], "ranks %d and %d mapped the window alike",
                          q, r);

    int64_t sum64, mixed, cas;
    int32_t unal;
    double sumd;
    long double sumld;
    memcpy(&sum64, data + phase_off[PH_SUM64], sizeof sum64);
    memcpy(&sumd, data + phase_off[PH_SUMD], sizeof sumd);
    memcpy(&mixed, data + phase_off[PH_MIXED], sizeof mixed);
    memcpy(&cas, data + phase_off[PH_CAS], sizeof cas);
    memcpy(&sumld, data + phase_off[PH_SUMLD], sizeof sumld);
    memcpy(&unal, data + phase_off[PH_UNAL], sizeof unal);
    ck_assert_int_eq(sum64, total(sh, PH_SUM64, true));
    ck_assert_msg(sumd == 0.5 * (double)total(sh, PH_SUMD, false), "double SUM: %.17g of %ld",
                  sumd, total(sh, PH_SUMD, false));
    ck_assert_int_eq(mixed, total(sh, PH_MIXED, false));
    ck_assert_int_eq(cas, total(sh, PH_CAS, false));
    ck_assert_msg(sumld == (long double)total(sh, PH_SUMLD, false), "long double SUM: %Lg of %ld",
                  sumld, total(sh, PH_SUMLD, false));
    ck_assert_int_eq(unal, total(sh, PH_UNAL, false));

    /* MINLOC: the least value sent is the greatest token */
    int maxtok = 0;
    for (int r = 0; r < NRANKS; r++)
        if (sh->count[PH_MINLOC][r] > 0 &&
            (sh->count[PH_MINLOC][r] - 1) * NRANKS + r + 1 > maxtok)
            maxtok = (int)(sh->count[PH_MINLOC][r] - 1) * NRANKS + r + 1;
    struct pair_di min, last;
    memcpy(&min, data + phase_off[PH_MINLOC], sizeof min);
    ck_assert_int_eq(min.i, maxtok);
    ck_assert(min.v == -(double)maxtok);

    memcpy(&last, data + phase_off[PH_CHAIN], sizeof last);
    int bad = check_chain(sh, last.i);
    ck_assert_msg(bad < 0, "swap chain: token %d lost, duplicated or never sent", bad);

    /* every wide SUM added 1 to each element; element SUM i of an odd
     * rank added 1 to element i % WIDE_DOUBLES */
    long wide = 0;
    for (int r = 0; r < NRANKS; r += 2)
        wide += sh->count[PH_WIDE][r];
    for (int k = 0; k < WIDE_DOUBLES; k++) {
        long expect = wide;
        for (int r = 1; r < NRANKS; r += 2)
            expect += sh->count[PH_WIDE][r] / WIDE_DOUBLES + (k < sh->count[PH_WIDE][r] % WIDE_DOUBLES);
        double got;
        memcpy(&got, data + phase_off[PH_WIDE] + k * sizeof got, sizeof got);
        ck_assert_msg(got == (double)expect, "wide and element SUMs: element %d is %.17g, not %ld", k,
                      got, expect);
    }
    ck_assert_msg(wide > 0 && sh->count[PH_WIDE][1] > 0, "PH_WIDE: %ld wide, %ld element updates",
                  wide, sh->count[PH_WIDE][1]);
    for (int s = 0; s < BMPI_RMA_LOCK_STRIPES; s++)
        ck_assert_msg(((struct bmpi_win_ctl *)base)->stripes[s] == 0, "stripe %d left held", s);
    munmap(base, 2 * PAGE);
    munmap(sh, sizeof *sh);
    close(fd);
}
END_TEST

int main(void)
{
    const TTest *tests[] = {check_ops, check_cswap, apply_all, cswap_all, cpu_path_takes_no_stripe,
                            stripe_path_waits, gate, apply_runs, apply_strided, storm};
    return run_suite("rma_atomic", NULL, NULL, tests, sizeof tests / sizeof tests[0]);
}
