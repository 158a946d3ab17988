/*
 * Element-wise atomic updates of window memory (rma_atomic.h).
 *
 * Window memory is shared between processes, so only lock-free CPU
 * atomics will do: libatomic's fallback locks live in each process's own
 * memory and would make updates from different processes race silently.
 * Two mechanisms, and which one updates an element depends only on its
 * type and on its address modulo the page size, never on the op, so that
 * every process and every op on one element uses the same one:
 *
 *  - CPU: an element of 1, 2, 4 or 8 bytes at its natural alignment (not
 *    a MINLOC/MAXLOC pair) takes one atomic instruction. Integer SUM,
 *    BAND, BOR and BXOR are fetch-ops (one LOCK XADD for an 8-byte
 *    fetch-add on x86), REPLACE an exchange or a store, NO_OP a load; the
 *    other ops compute the new value from a snapshot of the old one and
 *    install it with a compare-and-swap on its bit pattern, retried until
 *    no other update came in between.
 *  - stripe: any other element (long double, complex types of 16 and 32
 *    bytes, the pair types, unaligned data) is updated under one spin lock
 *    of the target's table (struct bmpi_win_ctl's stripes), chosen from
 *    the element's address. Processes map the window at different virtual
 *    addresses, but mappings are made of whole pages and every page size
 *    is a multiple of 4096, so an address modulo 4096 is the same in every
 *    process: the stripe is picked from that. The op itself is op.c's
 *    kernel, on copies of the element, so its semantics are the
 *    reductions' (MINLOC ties go to the lower index, ...).
 *
 * A call picks one kernel (a loop over the elements) from a table per op
 * and type, so nothing is decided per element.
 *
 * A wide update (at least WIDE_MIN bytes of aligned elements in one run)
 * is not atomic element by element but as a whole: it closes the
 * target's gate, waits until every process updating window memory on the
 * node has no element update in flight, applies op.c's reduction loop
 * (as fast as the reductions), and opens the gate. Element updates add
 * themselves to their process's count and look at the gate (both in
 * sequentially consistent order, so that of an element update and a wide
 * one at least one sees the other); finding it held, they step back and
 * wait. A target whose memory a transport's atomics may update keeps its
 * gate at BMPI_RMA_GATE_NEVER: those atomics know no gate, so there every
 * update is element-wise, and element updates skip the count.
 *
 * Element layout: element i of origin, target and result starts at i
 * times the type's extent (an array of the type in C). That is the size
 * for every type but the pairs, whose extent includes the padding of the
 * C struct (MPI_DOUBLE_INT: 12 bytes of data, 16 of extent), as the
 * window holds them.
 */
#include "config.h"

#include <assert.h>
#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "runtime/datatype.h"
#include "runtime/error.h"
#include "runtime/handle.h"
#include "runtime/op.h"
#include "runtime/rma_atomic.h"
#include "transport/copy.h"
#include "transport/shm/cacheline.h"

/* Shared memory needs atomics that are instructions, not libatomic's
 * process-private locks. */
_Static_assert(__atomic_always_lock_free(1, 0) && __atomic_always_lock_free(2, 0) &&
                   __atomic_always_lock_free(4, 0) && __atomic_always_lock_free(8, 0),
               "bmpi's RMA atomics need lock-free 1-, 2-, 4- and 8-byte CPU atomics");

/* A predefined op's index (op->index): MPI_MAX is 1 ... MPI_NO_OP 14. */
#define OPI(h) ((int)((unsigned)(h) & BMPI_HANDLE_INDEX_MASK))
#define NOPS (OPI(MPI_NO_OP) + 1)

/* The granule of the page-invariant address: any page size is a multiple. */
#define PAGE_INVARIANT 4096u
/* Stripes are chosen by 16-byte granule, so neighbouring elements of up to
 * 16 bytes take different locks. */
#define STRIPE_GRANULE 16u
/* Spins on a held stripe or gate before yielding the CPU: the holder may
 * be a process that is not running. */
#define SPINS 128
/* The smallest update that takes the gate, in bytes. Alone, a wide update
 * wins from two elements on; but wide updates to one target take turns
 * at its gate where element updates of different elements run side by
 * side, so a few elements stay element-wise (docs/rma.md). */
#define WIDE_MIN 64u
/* The largest element the stripe path copies (MPI_LONG_DOUBLE_INT's and
 * long double complex's extent). */
#define ELEM_MAX 32

/* A kernel: count elements, result NULL when the caller wants no fetch. */
typedef void (*atomic_fn)(const void *origin, void *target, void *result, size_t n);

/* --- CPU kernels ---------------------------------------------------------------- */

/* A read-modify-write on the element's bits: STORE (with STORE_ORDER) when
 * the caller wants no fetch, FETCH (acquire-release) when it wants the old
 * value. */
#define DEF_RMW(name, U, STORE, STORE_ORDER, FETCH)                                                \
    static void name(const void *vo, void *vt, void *vr, size_t n)                                 \
    {                                                                                              \
        const char *o = vo;                                                                        \
        U *t = vt;                                                                                 \
        char *r = vr;                                                                              \
        U x;                                                                                       \
        if (!r) {                                                                                  \
            for (size_t i = 0; i < n; i++) {                                                       \
                memcpy(&x, o + i * sizeof(U), sizeof(U));                                          \
                STORE(&t[i], x, STORE_ORDER);                                                      \
            }                                                                                      \
            return;                                                                                \
        }                                                                                          \
        for (size_t i = 0; i < n; i++) {                                                           \
            memcpy(&x, o + i * sizeof(U), sizeof(U));                                              \
            U old = FETCH(&t[i], x, __ATOMIC_ACQ_REL);                                             \
            memcpy(r + i * sizeof(U), &old, sizeof(U));                                            \
        }                                                                                          \
    }

/* A fetch-op builtin: integers of either sign add, and, or and xor alike.
 * Without result the compiler emits the plain locked op (LOCK ADD ...). */
#define DEF_FETCH_OP(name, U, BUILTIN) DEF_RMW(name, U, BUILTIN, __ATOMIC_ACQ_REL, BUILTIN)

/* REPLACE: an exchange when the old value is wanted, else a store. */
#define DEF_REPLACE(name, U)                                                                       \
    DEF_RMW(name, U, __atomic_store_n, __ATOMIC_RELEASE, __atomic_exchange_n)

/* NO_OP: the fetch alone (apply never calls it without a result). */
#define DEF_FETCH(name, U)                                                                         \
    static void name(const void *vo, void *vt, void *vr, size_t n)                                 \
    {                                                                                              \
        const U *t = vt;                                                                           \
        char *r = vr;                                                                              \
        for (size_t i = 0; i < n; i++) {                                                           \
            U old = __atomic_load_n(&t[i], __ATOMIC_ACQUIRE);                                      \
            memcpy(r + i * sizeof(U), &old, sizeof(U));                                            \
        }                                                                                          \
    }

DEF_FETCH_OP(add_1, uint8_t, __atomic_fetch_add)
DEF_FETCH_OP(add_2, uint16_t, __atomic_fetch_add)
DEF_FETCH_OP(add_4, uint32_t, __atomic_fetch_add)
DEF_FETCH_OP(add_8, uint64_t, __atomic_fetch_add)
DEF_FETCH_OP(and_1, uint8_t, __atomic_fetch_and)
DEF_FETCH_OP(and_2, uint16_t, __atomic_fetch_and)
DEF_FETCH_OP(and_4, uint32_t, __atomic_fetch_and)
DEF_FETCH_OP(and_8, uint64_t, __atomic_fetch_and)
DEF_FETCH_OP(or_1, uint8_t, __atomic_fetch_or)
DEF_FETCH_OP(or_2, uint16_t, __atomic_fetch_or)
DEF_FETCH_OP(or_4, uint32_t, __atomic_fetch_or)
DEF_FETCH_OP(or_8, uint64_t, __atomic_fetch_or)
DEF_FETCH_OP(xor_1, uint8_t, __atomic_fetch_xor)
DEF_FETCH_OP(xor_2, uint16_t, __atomic_fetch_xor)
DEF_FETCH_OP(xor_4, uint32_t, __atomic_fetch_xor)
DEF_FETCH_OP(xor_8, uint64_t, __atomic_fetch_xor)
DEF_REPLACE(replace_1, uint8_t)
DEF_REPLACE(replace_2, uint16_t)
DEF_REPLACE(replace_4, uint32_t)
DEF_REPLACE(replace_8, uint64_t)
DEF_FETCH(fetch_1, uint8_t)
DEF_FETCH(fetch_2, uint16_t)
DEF_FETCH(fetch_4, uint32_t)
DEF_FETCH(fetch_8, uint64_t)

/* Any other op: new = EXPR(a, b) with a the origin's value and b the
 * target's (inout = in op inout, as op.c), both of type T, installed by a
 * compare-and-swap on the bits U of the target. */
#define DEF_CAS_OP(name, T, U, EXPR)                                                               \
    static void name(const void *vo, void *vt, void *vr, size_t n)                                 \
    {                                                                                              \
        _Static_assert(sizeof(T) == sizeof(U), "CAS on the element's own bits");                   \
        const char *o = vo;                                                                        \
        U *t = vt;                                                                                 \
        char *r = vr;                                                                              \
        for (size_t i = 0; i < n; i++) {                                                           \
            T a, b, v;                                                                             \
            memcpy(&a, o + i * sizeof(T), sizeof(T));                                              \
            U old = __atomic_load_n(&t[i], __ATOMIC_RELAXED), nv;                                  \
            do {                                                                                   \
                memcpy(&b, &old, sizeof(T));                                                       \
                v = (EXPR);                                                                        \
                memcpy(&nv, &v, sizeof(T));                                                        \
            } while (!__atomic_compare_exchange_n(&t[i], &old, nv, true, __ATOMIC_ACQ_REL,         \
                                                  __ATOMIC_RELAXED));                              \
            if (r)                                                                                 \
                memcpy(r + i * sizeof(T), &old, sizeof(T));                                        \
        }                                                                                          \
    }

/* The expressions of op.c's kernels. PROD multiplies in 64 unsigned bits,
 * where wrapping is defined for every width, and keeps the low ones. */
#define E_MAX (a > b ? a : b)
#define E_MIN (a < b ? a : b)
#define E_SUM (a + b)
#define E_PROD (a * b)
#define E_IPROD(T) ((T)((uint64_t)a * (uint64_t)b))
#define E_LAND(T) ((T)(a && b))
#define E_LOR(T) ((T)(a || b))
#define E_LXOR(T) ((T)(!a != !b))

#define DEF_INT_CAS(sfx, T, U)                                                                     \
    DEF_CAS_OP(max_##sfx, T, U, E_MAX)                                                             \
    DEF_CAS_OP(min_##sfx, T, U, E_MIN)                                                             \
    DEF_CAS_OP(prod_##sfx, T, U, E_IPROD(T))                                                       \
    DEF_CAS_OP(land_##sfx, T, U, E_LAND(T))                                                        \
    DEF_CAS_OP(lor_##sfx, T, U, E_LOR(T))                                                          \
    DEF_CAS_OP(lxor_##sfx, T, U, E_LXOR(T))

DEF_INT_CAS(s8, int8_t, uint8_t)
DEF_INT_CAS(u8, uint8_t, uint8_t)
DEF_INT_CAS(s16, int16_t, uint16_t)
DEF_INT_CAS(u16, uint16_t, uint16_t)
DEF_INT_CAS(s32, int32_t, uint32_t)
DEF_INT_CAS(u32, uint32_t, uint32_t)
DEF_INT_CAS(s64, int64_t, uint64_t)
DEF_INT_CAS(u64, uint64_t, uint64_t)

DEF_CAS_OP(max_f, float, uint32_t, E_MAX)
DEF_CAS_OP(min_f, float, uint32_t, E_MIN)
DEF_CAS_OP(sum_f, float, uint32_t, E_SUM)
DEF_CAS_OP(prod_f, float, uint32_t, E_PROD)
DEF_CAS_OP(max_d, double, uint64_t, E_MAX)
DEF_CAS_OP(min_d, double, uint64_t, E_MIN)
DEF_CAS_OP(sum_d, double, uint64_t, E_SUM)
DEF_CAS_OP(prod_d, double, uint64_t, E_PROD)
DEF_CAS_OP(sum_cf, float _Complex, uint64_t, E_SUM)
DEF_CAS_OP(prod_cf, float _Complex, uint64_t, E_PROD)

/* What a type holds, for the CPU kernels: the integers by width and
 * sign (the C, Fortran, multi-language, byte and logical types alike:
 * LAND/LOR/LXOR treat any non-zero as true, as the logical types want),
 * float, double and float complex. */
enum cpu_elem { X_NONE, X_S8, X_U8, X_S16, X_U16, X_S32, X_U32, X_S64, X_U64, X_F, X_D, X_CF,
                X_COUNT };

#define X_SIGNED(T) (sizeof(T) == 8 ? X_S64 : sizeof(T) == 4 ? X_S32 : X_S16)
#define X_UNSIGNED(T) (sizeof(T) == 8 ? X_U64 : sizeof(T) == 4 ? X_U32 : X_U16)

static enum cpu_elem cpu_elem_of(MPI_Datatype t)
{
    switch (t) {
    case MPI_CHAR: return CHAR_MIN < 0 ? X_S8 : X_U8;
    case MPI_SIGNED_CHAR: case MPI_INT8_T: case MPI_INTEGER1: return X_S8;
    case MPI_UNSIGNED_CHAR: case MPI_UINT8_T: case MPI_BYTE: case MPI_C_BOOL: case MPI_CXX_BOOL:
        return X_U8;
    case MPI_SHORT: case MPI_INT16_T: case MPI_INTEGER2: return X_S16;
    case MPI_UNSIGNED_SHORT: case MPI_UINT16_T: return X_U16;
    case MPI_INT: case MPI_INT32_T: case MPI_INTEGER: case MPI_INTEGER4: case MPI_LOGICAL:
        return X_S32;
    case MPI_UNSIGNED: case MPI_UINT32_T: return X_U32;
    case MPI_LONG: return X_SIGNED(long);
    case MPI_UNSIGNED_LONG: return X_UNSIGNED(unsigned long);
    case MPI_LONG_LONG: case MPI_INT64_T: case MPI_INTEGER8: return X_S64;
    case MPI_UNSIGNED_LONG_LONG: case MPI_UINT64_T: return X_U64;
    case MPI_AINT: return X_SIGNED(MPI_Aint);
    case MPI_OFFSET: return X_SIGNED(MPI_Offset);
    case MPI_COUNT: return X_SIGNED(MPI_Count);
    case MPI_FLOAT: case MPI_REAL: case MPI_REAL4: return X_F;
    case MPI_DOUBLE: case MPI_DOUBLE_PRECISION: case MPI_REAL8: return X_D;
    case MPI_C_FLOAT_COMPLEX: case MPI_COMPLEX: case MPI_COMPLEX8: case MPI_CXX_FLOAT_COMPLEX:
        return X_CF;
    default: return X_NONE;
    }
}

#define INT_ROW(op)                                                                                \
    [X_S8] = op##_s8, [X_U8] = op##_u8, [X_S16] = op##_s16, [X_U16] = op##_u16,                    \
    [X_S32] = op##_s32, [X_U32] = op##_u32, [X_S64] = op##_s64, [X_U64] = op##_u64
#define WIDTH_ROW(op)                                                                              \
    [X_S8] = op##_1, [X_U8] = op##_1, [X_S16] = op##_2, [X_U16] = op##_2, [X_S32] = op##_4,        \
    [X_U32] = op##_4, [X_S64] = op##_8, [X_U64] = op##_8

/* Every op rma_atomic_check accepts on a type cpu_elem_of knows has its
 * kernel here (test/unit/check_rma_atomic.c holds all stripes to prove
 * it): an element's updates must never mix the two mechanisms. REPLACE
 * and NO_OP go by width alone (width_kernels). */
static const atomic_fn cpu_kernels[NOPS][X_COUNT] = {
    [OPI(MPI_MAX)] = {INT_ROW(max), [X_F] = max_f, [X_D] = max_d},
    [OPI(MPI_MIN)] = {INT_ROW(min), [X_F] = min_f, [X_D] = min_d},
    [OPI(MPI_SUM)] = {WIDTH_ROW(add), [X_F] = sum_f, [X_D] = sum_d, [X_CF] = sum_cf},
    [OPI(MPI_PROD)] = {INT_ROW(prod), [X_F] = prod_f, [X_D] = prod_d, [X_CF] = prod_cf},
    [OPI(MPI_LAND)] = {INT_ROW(land)},
    [OPI(MPI_LOR)] = {INT_ROW(lor)},
    [OPI(MPI_LXOR)] = {INT_ROW(lxor)},
    [OPI(MPI_BAND)] = {WIDTH_ROW(and)},
    [OPI(MPI_BOR)] = {WIDTH_ROW(or)},
    [OPI(MPI_BXOR)] = {WIDTH_ROW(xor)},
};

/* REPLACE and NO_OP by log2 of the width. */
static const atomic_fn width_kernels[2][4] = {
    {replace_1, replace_2, replace_4, replace_8},
    {fetch_1, fetch_2, fetch_4, fetch_8},
};

/* The width of the CPU atomic that updates an element of dt, 0 for the
 * stripe path. Pairs always take a stripe: MINLOC compares two fields. */
static size_t cpu_width(const struct bmpi_datatype *dt)
{
    if (!dt || (dt->flags & BMPI_DT_PAIR))
        return 0;
    size_t size = bmpi_dt_size(dt);
    if (size != (size_t)bmpi_dt_extent(dt))
        return 0;
    return size == 1 || size == 2 || size == 4 || size == 8 ? size : 0;
}

static int log2_width(size_t w) { return w == 1 ? 0 : w == 2 ? 1 : w == 4 ? 2 : 3; }

/* The CPU kernel for these elements, NULL when they take the stripe path. */
static atomic_fn cpu_kernel(int opi, MPI_Datatype basic, const struct bmpi_datatype *dt,
                            const void *target)
{
    size_t w = cpu_width(dt);
    if (!w || ((uintptr_t)target & (w - 1)))
        return NULL;
    if (opi == OPI(MPI_REPLACE))
        return width_kernels[0][log2_width(w)];
    if (opi == OPI(MPI_NO_OP))
        return width_kernels[1][log2_width(w)];
    if (opi <= 0 || opi >= NOPS)
        return NULL;
    return cpu_kernels[opi][cpu_elem_of(basic)];
}

/* --- stripe path ------------------------------------------------------------------ */

/* The stripe of the element at elem: from its page offset, which every
 * mapping of the page shares. */
static uint32_t *stripe_of(uint32_t *stripes, const void *elem)
{
    uintptr_t off = (uintptr_t)elem & (PAGE_INVARIANT - 1);
    return &stripes[off / STRIPE_GRANULE % BMPI_RMA_LOCK_STRIPES];
}

/* One more round of waiting for another process: spin a while, then
 * yield the CPU. */
static void backoff(int *spins)
{
    if (++*spins < SPINS) {
        bmpi_cpu_relax();
    } else {
        sched_yield();
        *spins = 0;
    }
}

static void stripe_lock(uint32_t *s)
{
    int spins = 0;
    while (__atomic_exchange_n(s, 1, __ATOMIC_ACQUIRE))
        while (__atomic_load_n(s, __ATOMIC_RELAXED))
            backoff(&spins);
}

static void stripe_unlock(uint32_t *s) { __atomic_store_n(s, 0, __ATOMIC_RELEASE); }

/* One element under its stripe: op.c's kernel on aligned copies, so that
 * unaligned elements and private buffers are fine; bytes (the type's
 * true extent) are what is read and written of the element. */
static void apply_striped(const struct bmpi_op *op, const struct bmpi_datatype *dt,
                          const char *origin, char *target, char *result, size_t count,
                          uint32_t *stripes)
{
    size_t stride = (size_t)bmpi_dt_extent(dt);
    size_t bytes = (size_t)bmpi_dt_true_extent(dt);
    bool replace = op->predefined && op->index == OPI(MPI_REPLACE);
    bool no_op = op->predefined && op->index == OPI(MPI_NO_OP);
    union {
        long double _Complex align;
        unsigned char b[ELEM_MAX];
    } in, elem;
    assert(bytes <= ELEM_MAX); /* no predefined type is wider */
    for (size_t i = 0; i < count; i++, target += stride) {
        uint32_t *s = stripe_of(stripes, target);
        if (!no_op)
            memcpy(in.b, origin + i * stride, bytes);
        stripe_lock(s);
        memcpy(elem.b, target, bytes);
        if (result)
            memcpy(result + i * stride, elem.b, bytes);
        if (replace) {
            memcpy(target, in.b, bytes);
        } else if (!no_op) {
            bmpi_op_apply(op, in.b, elem.b, 1, dt);
            memcpy(target, elem.b, bytes);
        }
        stripe_unlock(s);
    }
}

/* --- the gate ---------------------------------------------------------------------- */

/* An element update ends: uncounted. Where one thread alone counts, the
 * count is 0 or 1 and a plain store undoes it; the begin needs its atomic
 * only for the order against the gate's load. */
static void element_end(struct bmpi_rma_guard g, bool counted)
{
    if (!counted)
        return;
    if (g.updaters->threads)
        __atomic_fetch_sub(g.updaters->counts[0], 1, __ATOMIC_RELEASE);
    else
        __atomic_store_n(g.updaters->counts[0], 0, __ATOMIC_RELEASE);
}

/* An element update begins: counted, unless the target's gate never
 * closes; while a wide update holds the gate, wait. Returns whether it
 * counted. */
static bool element_begin(struct bmpi_rma_guard g)
{
    uint32_t *gate = &g.ctl->gate;
    if (__atomic_load_n(gate, __ATOMIC_RELAXED) == BMPI_RMA_GATE_NEVER)
        return false;
    uint64_t *mine = g.updaters->counts[0];
    for (;;) {
        if (g.updaters->threads)
            __atomic_fetch_add(mine, 1, __ATOMIC_SEQ_CST);
        else
            __atomic_exchange_n(mine, 1, __ATOMIC_SEQ_CST);
        if (__atomic_load_n(gate, __ATOMIC_SEQ_CST) != BMPI_RMA_GATE_HELD)
            return true;
        element_end(g, true);
        int spins = 0;
        while (__atomic_load_n(gate, __ATOMIC_RELAXED) == BMPI_RMA_GATE_HELD)
            backoff(&spins);
    }
}

/* Close the gate (false when it never closes), then wait out every
 * element update in flight on the node. */
static bool gate_close(struct bmpi_rma_guard g)
{
    uint32_t *gate = &g.ctl->gate;
    int spins = 0;
    for (;;) {
        uint32_t seen = __atomic_load_n(gate, __ATOMIC_RELAXED);
        if (seen == BMPI_RMA_GATE_NEVER)
            return false;
        if (seen == BMPI_RMA_GATE_OPEN &&
            __atomic_compare_exchange_n(gate, &seen, BMPI_RMA_GATE_HELD, false, __ATOMIC_SEQ_CST,
                                        __ATOMIC_RELAXED))
            break;
        backoff(&spins);
    }
    for (int i = 0; i < g.updaters->n; i++)
        while (__atomic_load_n(g.updaters->counts[i], __ATOMIC_SEQ_CST))
            backoff(&spins);
    return true;
}

static void gate_open(struct bmpi_rma_guard g)
{
    __atomic_store_n(&g.ctl->gate, BMPI_RMA_GATE_OPEN, __ATOMIC_RELEASE);
}

/* The alignment elements of dt need to go in a wide update, 0 when they
 * cannot: no padding inside a run (the pairs), and every element at its
 * natural alignment, as op.c's loops read them. */
static size_t wide_align(const struct bmpi_datatype *dt)
{
    if (!dt || (dt->flags & BMPI_DT_PAIR))
        return 0;
    size_t size = bmpi_dt_size(dt);
    if (size != (size_t)bmpi_dt_extent(dt))
        return 0;
    size_t align = size < 16 ? size : 16;
    return align & (align - 1) ? 0 : align;
}

static bool aligned(const void *p, size_t align) { return !((uintptr_t)p & (align - 1)); }

/* Whether count elements of dt at target (and origin, when read) may go
 * as one wide update: enough bytes, laid out as wide_align() wants. */
static bool wide_fits(const struct bmpi_datatype *dt, const void *origin, const void *target,
                      size_t count)
{
    size_t align = wide_align(dt);
    return align && count * bmpi_dt_size(dt) >= WIDE_MIN && aligned(target, align) && aligned(origin, align);
}

/* The whole run under the gate: the old values copied out, then op.c's
 * reduction (REPLACE a copy, NO_OP nothing). */
static void apply_wide(const struct bmpi_rma_elem *e, const void *origin, void *target, void *result, size_t count)
{
    size_t bytes = count * bmpi_dt_size(e->dt);
    if (result)
        memcpy(result, target, bytes);
    if (e->reduce)
        e->reduce(e->op->index, origin, target, count);
    else if (e->op->index == OPI(MPI_REPLACE))
        memcpy(target, origin, bytes);
    else if (e->op->index != OPI(MPI_NO_OP))
        bmpi_op_apply(e->op, origin, target, count, e->dt);
}

/* --- entry points ----------------------------------------------------------------- */

int bmpi_rma_atomic_check(const struct bmpi_op *op, MPI_Datatype basic)
{
    if (!op->predefined)
        return bmpi_err_set(MPI_ERR_OP, "user-defined ops are not allowed in RMA accumulate (%s)",
                            bmpi_op_name(op));
    const struct bmpi_datatype *dt = bmpi_dt_get(basic);
    if (!dt || bmpi_dt_basic(dt) != basic || !bmpi_dt_is_predefined(dt))
        return bmpi_err_set(MPI_ERR_OP, "%s needs elements of one predefined type; %s is not one",
                            bmpi_op_name(op), bmpi_dt_name(basic));
    return bmpi_op_check(op, dt);
}

bool bmpi_rma_elem_resolve(struct bmpi_rma_elem *e, const struct bmpi_op *op, MPI_Datatype basic)
{
    const struct bmpi_datatype *dt = bmpi_dt_get(basic);
    *e = (struct bmpi_rma_elem){.op = op, .basic = basic, .dt = dt, .reduce = bmpi_op_basic_kernel(op, basic)};
    return dt != NULL;
}

void bmpi_rma_atomic_apply_elem(const struct bmpi_rma_elem *e, const void *origin, void *target, void *result,
                                size_t count, struct bmpi_rma_guard g)
{
    const struct bmpi_op *op = e->op;
    bool no_op = op->predefined && op->index == OPI(MPI_NO_OP);
    if (count == 0 || (no_op && !result))
        return;
    if (op->predefined && wide_fits(e->dt, no_op ? NULL : origin, target, count) && gate_close(g)) {
        apply_wide(e, origin, target, result, count);
        gate_open(g);
        return;
    }
    atomic_fn k = op->predefined ? cpu_kernel(op->index, e->basic, e->dt, target) : NULL;
    bool counted = element_begin(g);
    if (k)
        k(origin, target, result, count);
    else
        apply_striped(op, e->dt, origin, target, result, count, g.ctl->stripes);
    element_end(g, counted);
}

void bmpi_rma_atomic_apply(const struct bmpi_op *op, MPI_Datatype basic, const void *origin,
                           void *target, void *result, size_t count, struct bmpi_rma_guard g)
{
    struct bmpi_rma_elem e;
    bmpi_rma_elem_resolve(&e, op, basic);
    bmpi_rma_atomic_apply_elem(&e, origin, target, result, count, g);
}

/* Whether the runs of target, and origin (when read) one after another,
 * may go as one wide update: enough bytes in all, every run laid out as
 * wide_align() wants. */
static bool wide_runs_fit(const struct bmpi_datatype *dt, const char *origin, const struct iovec *target,
                          size_t n)
{
    size_t align = wide_align(dt), total = 0;
    for (size_t i = 0; i < n && align; i++) {
        if (!aligned(target[i].iov_base, align) || (origin && !aligned(origin + total, align)))
            return false;
        total += target[i].iov_len;
    }
    return align && total >= WIDE_MIN;
}

void bmpi_rma_atomic_apply_runs(const struct bmpi_op *op, MPI_Datatype basic, const void *origin,
                                const struct iovec *target, size_t n, void *result, struct bmpi_rma_guard g)
{
    struct bmpi_rma_elem e;
    size_t size = bmpi_rma_elem_resolve(&e, op, basic) ? bmpi_dt_size(e.dt) : 0;
    bool no_op = op->predefined && op->index == OPI(MPI_NO_OP);
    const char *o = no_op ? NULL : origin;
    char *r = result;
    if (n == 0 || size == 0 || (no_op && !result))
        return;
    bool wide = op->predefined && wide_runs_fit(e.dt, o, target, n) && gate_close(g);
    for (size_t i = 0; i < n; i++) {
        size_t len = target[i].iov_len;
        if (wide)
            apply_wide(&e, o, target[i].iov_base, r, len / size);
        else
            bmpi_rma_atomic_apply_elem(&e, o, target[i].iov_base, r, len / size, g);
        o = o ? o + len : NULL;
        r = r ? r + len : NULL;
    }
    if (wide)
        gate_open(g);
}

/* Bytes of a strided update gathered at once under the gate. */
#define STRIDED_STAGE 4096u

/* Whether count blocks of len bytes, stride apart, may go as one wide
 * update: every block laid out as wide_align() wants, enough bytes. */
static bool wide_strided_fit(const struct bmpi_datatype *dt, const char *origin, const char *target,
                             ptrdiff_t stride, size_t len, size_t count)
{
    size_t align = wide_align(dt);
    return align && aligned(target, align) && (size_t)stride % align == 0 && len % align == 0 &&
           aligned(origin, align) && len * count >= WIDE_MIN;
}

/* The blocks under the closed gate, STRIDED_STAGE bytes at a time:
 * gathered, the old values copied out, reduced by one call, scattered. */
static void apply_wide_strided(const struct bmpi_rma_elem *e, const char *origin, char *target, ptrdiff_t stride,
                               size_t len, size_t count, char *result)
{
    char stage[STRIDED_STAGE] __attribute__((aligned(16)));
    size_t per = STRIDED_STAGE / len;
    bool no_op = e->op->index == OPI(MPI_NO_OP);
    for (size_t i = 0; i < count; i += per) {
        size_t k = count - i < per ? count - i : per, bytes = k * len;
        char *at = target + (ptrdiff_t)i * stride;
        bmpi_copy_blocks(stage, (ptrdiff_t)len, at, stride, len, k);
        if (result)
            memcpy(result + i * len, stage, bytes);
        if (no_op)
            continue;
        apply_wide(e, origin + i * len, stage, NULL, bytes / bmpi_dt_size(e->dt));
        bmpi_copy_blocks(at, stride, stage, (ptrdiff_t)len, len, k);
    }
}

void bmpi_rma_atomic_apply_strided(const struct bmpi_op *op, MPI_Datatype basic, const void *origin, char *target,
                                   ptrdiff_t stride, size_t len, size_t count, void *result,
                                   struct bmpi_rma_guard g)
{
    struct bmpi_rma_elem e;
    size_t size = bmpi_rma_elem_resolve(&e, op, basic) ? bmpi_dt_size(e.dt) : 0;
    bool no_op = op->predefined && op->index == OPI(MPI_NO_OP);
    const char *o = no_op ? NULL : origin;
    char *r = result;
    if (count == 0 || size == 0 || (no_op && !result))
        return;
    if (op->predefined && len <= STRIDED_STAGE && wide_strided_fit(e.dt, o, target, stride, len, count) &&
        gate_close(g)) {
        apply_wide_strided(&e, o, target, stride, len, count, r);
        gate_open(g);
        return;
    }
    for (size_t i = 0; i < count; i++, target += stride) {
        bmpi_rma_atomic_apply_elem(&e, o, target, r, len / size, g);
        o = o ? o + len : NULL;
        r = r ? r + len : NULL;
    }
}

/* Compare-and-swap of one element of 1, 2, 4 or 8 bytes: on failure the
 * builtin leaves the current value in expected, on success it already
 * is the old one. */
#define DEF_CSWAP(name, U)                                                                         \
    static void name(const void *compare, const void *origin, void *target, void *result)          \
    {                                                                                              \
        U expected, desired;                                                                       \
        memcpy(&expected, compare, sizeof(U));                                                     \
        memcpy(&desired, origin, sizeof(U));                                                       \
        __atomic_compare_exchange_n((U *)target, &expected, desired, false, __ATOMIC_ACQ_REL,      \
                                    __ATOMIC_ACQUIRE);                                             \
        memcpy(result, &expected, sizeof(U));                                                      \
    }

DEF_CSWAP(cswap_1, uint8_t)
DEF_CSWAP(cswap_2, uint16_t)
DEF_CSWAP(cswap_4, uint32_t)
DEF_CSWAP(cswap_8, uint64_t)

typedef void (*cswap_fn)(const void *compare, const void *origin, void *target, void *result);
static const cswap_fn cswap_kernels[4] = {cswap_1, cswap_2, cswap_4, cswap_8};

/* Compare-and-swap under the element's stripe (unaligned elements). */
static void cswap_striped(size_t bytes, const void *compare, const void *origin, void *target,
                          void *result, uint32_t *stripes)
{
    unsigned char old[8];
    assert(bytes <= sizeof old); /* bmpi_rma_cswap_check's types */
    uint32_t *s = stripe_of(stripes, target);
    stripe_lock(s);
    memcpy(old, target, bytes);
    if (memcmp(old, compare, bytes) == 0)
        memcpy(target, origin, bytes);
    stripe_unlock(s);
    memcpy(result, old, bytes);
}

void bmpi_rma_atomic_cswap(MPI_Datatype basic, const void *compare, const void *origin,
                           void *target, void *result, struct bmpi_rma_guard g)
{
    const struct bmpi_datatype *dt = bmpi_dt_get(basic);
    size_t w = cpu_width(dt);
    bool counted = element_begin(g);
    if (w && !((uintptr_t)target & (w - 1)))
        cswap_kernels[log2_width(w)](compare, origin, target, result);
    else
        cswap_striped(bmpi_dt_size(dt), compare, origin, target, result, g.ctl->stripes);
    element_end(g, counted);
}

/* MPI 4.1, 12.3.4: C integer, Fortran integer, logical, multi-language
 * types and byte. MPI_CHAR counts as a C integer, as in op.c's reductions. */
int bmpi_rma_cswap_check(MPI_Datatype basic)
{
    switch (basic) {
    case MPI_CHAR: case MPI_SIGNED_CHAR: case MPI_UNSIGNED_CHAR:
    case MPI_SHORT: case MPI_UNSIGNED_SHORT: case MPI_INT: case MPI_UNSIGNED:
    case MPI_LONG: case MPI_UNSIGNED_LONG: case MPI_LONG_LONG: case MPI_UNSIGNED_LONG_LONG:
    case MPI_INT8_T: case MPI_INT16_T: case MPI_INT32_T: case MPI_INT64_T:
    case MPI_UINT8_T: case MPI_UINT16_T: case MPI_UINT32_T: case MPI_UINT64_T:
    case MPI_INTEGER: case MPI_INTEGER1: case MPI_INTEGER2: case MPI_INTEGER4: case MPI_INTEGER8:
    case MPI_LOGICAL: case MPI_C_BOOL: case MPI_CXX_BOOL:
    case MPI_AINT: case MPI_OFFSET: case MPI_COUNT:
    case MPI_BYTE:
        return BMPI_OK;
    default:
        return bmpi_err_set(MPI_ERR_TYPE,
                            "MPI_Compare_and_swap takes integer, logical or byte types, not %s",
                            bmpi_dt_name(basic));
    }
}
