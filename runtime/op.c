/*
 * Reduction operations: predefined ops on every type class the standard
 * allows them on (MPI 4.1, 6.9.2), MINLOC/MAXLOC on the pair types, user
 * ops, and MPI_Op_create / MPI_Op_free / MPI_Op_commutative /
 * MPI_Reduce_local.
 *
 * Kernels are generated per C type with macros: one tight loop per
 * (op, type), so the compiler vectorizes SUM on doubles and friends.
 */
#include "config.h"

#include <complex.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/api.h"
#include "runtime/handle.h"
#include "runtime/op.h"
#include "runtime/world.h"

enum { OP_MAX = 1, OP_MIN, OP_SUM, OP_PROD, OP_LAND, OP_BAND, OP_LOR, OP_BOR, OP_LXOR, OP_BXOR,
       OP_MINLOC, OP_MAXLOC, OP_REPLACE, OP_NO_OP, OP_COUNT };

static const char *const op_names[OP_COUNT] = {
    "MPI_OP_NULL", "MPI_MAX", "MPI_MIN",  "MPI_SUM",    "MPI_PROD",   "MPI_LAND",    "MPI_BAND",
    "MPI_LOR",     "MPI_BOR", "MPI_LXOR", "MPI_BXOR",   "MPI_MINLOC", "MPI_MAXLOC",  "MPI_REPLACE",
    "MPI_NO_OP"};

/* The C type behind a predefined basic type, and the class that decides
 * which ops apply (6.9.2: C integer, Fortran integer, floating point,
 * logical, complex, byte). */
enum elem {
    E_NONE, E_I8, E_U8, E_I16, E_U16, E_I32, E_U32, E_I64, E_U64, E_F, E_D, E_LD,
    E_CF, E_CD, E_CLD, E_BOOL, E_FLOGICAL,
    /* pairs: value type, index type */
    E_P_FLOAT_INT, E_P_DOUBLE_INT, E_P_LONG_INT, E_P_SHORT_INT, E_P_2INT, E_P_LONG_DOUBLE_INT,
    E_P_2FLOAT, E_P_2DOUBLE,
};
enum cls { C_NONE = 0, C_INT = 1, C_FINT = 2, C_FLOAT = 4, C_LOGICAL = 8, C_COMPLEX = 16,
           C_BYTE = 32, C_PAIR = 64, C_MULTI = 128 /* MPI_AINT, MPI_OFFSET, MPI_COUNT */ };

struct elem_info {
    enum elem e;
    enum cls c;
};

static struct elem_info classify(MPI_Datatype t)
{
    switch (t) {
    /* 6.9.2 defines no op on character data, but Open MPI and MPICH
     * reduce MPI_CHAR as the C integer char is, and programs rely on it.
     * MPI_WCHAR, MPI_CHARACTER and MPI_PACKED take no op. */
    case MPI_CHAR: return (struct elem_info){CHAR_MIN < 0 ? E_I8 : E_U8, C_INT};
    case MPI_SIGNED_CHAR: case MPI_INT8_T: return (struct elem_info){E_I8, C_INT};
    case MPI_INTEGER1: return (struct elem_info){E_I8, C_FINT};
    case MPI_UNSIGNED_CHAR: case MPI_UINT8_T: return (struct elem_info){E_U8, C_INT};
    case MPI_BYTE: return (struct elem_info){E_U8, C_BYTE};
    case MPI_SHORT: case MPI_INT16_T: return (struct elem_info){E_I16, C_INT};
    case MPI_INTEGER2: return (struct elem_info){E_I16, C_FINT};
    case MPI_UNSIGNED_SHORT: case MPI_UINT16_T: return (struct elem_info){E_U16, C_INT};
    case MPI_INT: case MPI_INT32_T: return (struct elem_info){E_I32, C_INT};
    case MPI_INTEGER: case MPI_INTEGER4: return (struct elem_info){E_I32, C_FINT};
    case MPI_UNSIGNED: case MPI_UINT32_T: return (struct elem_info){E_U32, C_INT};
    case MPI_LONG: case MPI_LONG_LONG: case MPI_INT64_T: return (struct elem_info){E_I64, C_INT};
    case MPI_AINT: case MPI_OFFSET: case MPI_COUNT: return (struct elem_info){E_I64, C_MULTI};
    case MPI_INTEGER8: return (struct elem_info){E_I64, C_FINT};
    case MPI_UNSIGNED_LONG: case MPI_UNSIGNED_LONG_LONG: case MPI_UINT64_T:
        return (struct elem_info){E_U64, C_INT};
    case MPI_FLOAT: case MPI_REAL: case MPI_REAL4: return (struct elem_info){E_F, C_FLOAT};
    case MPI_DOUBLE: case MPI_DOUBLE_PRECISION: case MPI_REAL8:
        return (struct elem_info){E_D, C_FLOAT};
    case MPI_LONG_DOUBLE: case MPI_REAL16: return (struct elem_info){E_LD, C_FLOAT};
    case MPI_C_FLOAT_COMPLEX: case MPI_COMPLEX: case MPI_COMPLEX8: case MPI_CXX_FLOAT_COMPLEX:
        return (struct elem_info){E_CF, C_COMPLEX};
    case MPI_C_DOUBLE_COMPLEX: case MPI_DOUBLE_COMPLEX: case MPI_COMPLEX16:
    case MPI_CXX_DOUBLE_COMPLEX:
        return (struct elem_info){E_CD, C_COMPLEX};
    case MPI_C_LONG_DOUBLE_COMPLEX: case MPI_COMPLEX32: case MPI_CXX_LONG_DOUBLE_COMPLEX:
        return (struct elem_info){E_CLD, C_COMPLEX};
    case MPI_C_BOOL: case MPI_CXX_BOOL: return (struct elem_info){E_BOOL, C_LOGICAL};
    case MPI_LOGICAL: return (struct elem_info){E_FLOGICAL, C_LOGICAL};
    case MPI_FLOAT_INT: return (struct elem_info){E_P_FLOAT_INT, C_PAIR};
    case MPI_DOUBLE_INT: return (struct elem_info){E_P_DOUBLE_INT, C_PAIR};
    case MPI_LONG_INT: return (struct elem_info){E_P_LONG_INT, C_PAIR};
    case MPI_SHORT_INT: return (struct elem_info){E_P_SHORT_INT, C_PAIR};
    case MPI_2INT: case MPI_2INTEGER: return (struct elem_info){E_P_2INT, C_PAIR};
    case MPI_LONG_DOUBLE_INT: return (struct elem_info){E_P_LONG_DOUBLE_INT, C_PAIR};
    case MPI_2REAL: return (struct elem_info){E_P_2FLOAT, C_PAIR};
    case MPI_2DOUBLE_PRECISION: return (struct elem_info){E_P_2DOUBLE, C_PAIR};
    default: return (struct elem_info){E_NONE, C_NONE};
    }
}

/* classify() remembered per type: small reductions ask twice a call (the
 * check and the kernel), and the switch cost 34 instructions each time.
 * Keyed by the handle's index byte, unique among mpi.h's basic types, with
 * the pair types (bit 31 set) in the upper half; the whole handle is kept,
 * so a collision only costs a classify(). */
#define ELEM_MEMO 256

static struct elem_info elem_of(MPI_Datatype t)
{
    static struct {
        MPI_Datatype handle;
        struct elem_info ei;
    } memo[ELEM_MEMO];
    uint32_t h = (uint32_t)t;
    unsigned i = (h & 0x7f) | (h >> 31 << 7);
    if (memo[i].handle != t) {
        memo[i].ei = classify(t);
        memo[i].handle = t;
    }
    return memo[i].ei;
}

/* Which classes each predefined op accepts. */
static const unsigned op_classes[OP_COUNT] = {
    [OP_MAX] = C_INT | C_FINT | C_FLOAT | C_MULTI,
    [OP_MIN] = C_INT | C_FINT | C_FLOAT | C_MULTI,
    [OP_SUM] = C_INT | C_FINT | C_FLOAT | C_COMPLEX | C_MULTI,
    [OP_PROD] = C_INT | C_FINT | C_FLOAT | C_COMPLEX | C_MULTI,
    [OP_LAND] = C_INT | C_LOGICAL,
    [OP_LOR] = C_INT | C_LOGICAL,
    [OP_LXOR] = C_INT | C_LOGICAL,
    [OP_BAND] = C_INT | C_FINT | C_BYTE | C_MULTI,
    [OP_BOR] = C_INT | C_FINT | C_BYTE | C_MULTI,
    [OP_BXOR] = C_INT | C_FINT | C_BYTE | C_MULTI,
    [OP_MINLOC] = C_PAIR,
    [OP_MAXLOC] = C_PAIR,
};

/* --- kernels ---------------------------------------------------------------- */

/* The build's -O2 vectorizes only loops whose trip count is a known
 * multiple of the vector width (gcc's "very cheap" cost model), which
 * leaves every kernel below scalar; a large reduction runs much faster
 * vectorized (docs/collectives.md, "Reduction operations"). Element-wise
 * ops give the same bits either way. Loops start on 32 bytes: a kernel's
 * vector loop is under 32 bytes of code, so it then never straddles a
 * 64-byte fetch block, which on the AMD processors measured halved its
 * speed whenever unrelated code moved it there (docs/performance.md,
 * "Accumulates under the gate"). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic", "align-loops=32")
#endif

/* On x86-64 each kernel is built for AVX-512, AVX2 and the baseline
 * (SSE2), and the loader picks the widest the CPU runs (an ifunc): each
 * step doubles the width of every loop, which shows wherever the data sit
 * in cache (a reduction's chunks, an accumulate's run). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__ELF__)
#define KERNEL_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define KERNEL_CLONES
#endif

#define LOOP(expr)                                                                                 \
    do {                                                                                           \
        for (size_t i = 0; i < n; i++)                                                             \
            o[i] = (expr);                                                                         \
    } while (0)

/* Every kernel comes in two forms with one body OPS over a[i] (in) and
 * b[i]: inout = in op inout (b reads o), and out = in op src into a third
 * buffer (bmpi_op_apply_into), which saves a reduction a copy. */
#define DEF_KERNEL(name, T, OPS)                                                                   \
    KERNEL_CLONES static void name(int op, const void *vin, void *vio, size_t n)                   \
    {                                                                                              \
        const T *restrict a = vin;                                                                 \
        T *restrict o = vio;                                                                       \
        const T *b = o;                                                                            \
        OPS                                                                                        \
    }                                                                                              \
    KERNEL_CLONES static void name##_into(int op, const void *vin, const void *vsrc, void *vout,   \
                                          size_t n)                                                \
    {                                                                                              \
        const T *restrict a = vin;                                                                 \
        const T *restrict b = vsrc;                                                                \
        T *restrict o = vout;                                                                      \
        OPS                                                                                        \
    }

/* Integers. Signed overflow in SUM/PROD wraps in every MPI users know;
 * U is the unsigned twin the sum and product are computed in, so that it
 * is defined behaviour here too (the product from unsigned int up: two
 * 16-bit values would be promoted to int and could overflow it). */
#define INT_OPS(T, U)                                                                              \
    switch (op) {                                                                                  \
    case OP_MAX: LOOP(a[i] > b[i] ? a[i] : b[i]); break;                                           \
    case OP_MIN: LOOP(a[i] < b[i] ? a[i] : b[i]); break;                                           \
    case OP_SUM: LOOP((T)((U)a[i] + (U)b[i])); break;                                              \
    case OP_PROD: LOOP((T)((U)(1u * (U)a[i] * (U)b[i]))); break;                                   \
    case OP_LAND: LOOP((T)(a[i] && b[i])); break;                                                  \
    case OP_LOR: LOOP((T)(a[i] || b[i])); break;                                                   \
    case OP_LXOR: LOOP((T)(!a[i] != !b[i])); break;                                                \
    case OP_BAND: LOOP((T)(a[i] & b[i])); break;                                                   \
    case OP_BOR: LOOP((T)(a[i] | b[i])); break;                                                    \
    case OP_BXOR: LOOP((T)(a[i] ^ b[i])); break;                                                   \
    }

#define FLOAT_OPS                                                                                  \
    switch (op) {                                                                                  \
    case OP_MAX: LOOP(a[i] > b[i] ? a[i] : b[i]); break;                                           \
    case OP_MIN: LOOP(a[i] < b[i] ? a[i] : b[i]); break;                                           \
    case OP_SUM: LOOP(a[i] + b[i]); break;                                                         \
    case OP_PROD: LOOP(a[i] * b[i]); break;                                                        \
    }

#define COMPLEX_OPS                                                                                \
    switch (op) {                                                                                  \
    case OP_SUM: LOOP(a[i] + b[i]); break;                                                         \
    case OP_PROD: LOOP(a[i] * b[i]); break;                                                        \
    }

DEF_KERNEL(k_i8, int8_t, INT_OPS(int8_t, uint8_t))
DEF_KERNEL(k_u8, uint8_t, INT_OPS(uint8_t, uint8_t))
DEF_KERNEL(k_i16, int16_t, INT_OPS(int16_t, uint16_t))
DEF_KERNEL(k_u16, uint16_t, INT_OPS(uint16_t, uint16_t))
DEF_KERNEL(k_i32, int32_t, INT_OPS(int32_t, uint32_t))
DEF_KERNEL(k_u32, uint32_t, INT_OPS(uint32_t, uint32_t))
DEF_KERNEL(k_i64, int64_t, INT_OPS(int64_t, uint64_t))
DEF_KERNEL(k_u64, uint64_t, INT_OPS(uint64_t, uint64_t))
DEF_KERNEL(k_f, float, FLOAT_OPS)
DEF_KERNEL(k_d, double, FLOAT_OPS)
DEF_KERNEL(k_ld, long double, FLOAT_OPS)
DEF_KERNEL(k_cf, float _Complex, COMPLEX_OPS)
DEF_KERNEL(k_cd, double _Complex, COMPLEX_OPS)
DEF_KERNEL(k_cld, long double _Complex, COMPLEX_OPS)

static void k_bool(int op, const void *vin, void *vio, size_t n)
{
    const _Bool *a = vin;
    _Bool *o = vio;
    const _Bool *b = o;
    switch (op) {
    case OP_LAND: LOOP(a[i] && b[i]); break;
    case OP_LOR: LOOP(a[i] || b[i]); break;
    case OP_LXOR: LOOP(a[i] != b[i]); break;
    }
}

/* Fortran LOGICAL: any non-zero is true; results are 0 or 1. */
static void k_flogical(int op, const void *vin, void *vio, size_t n)
{
    const int32_t *a = vin;
    int32_t *o = vio;
    const int32_t *b = o;
    switch (op) {
    case OP_LAND: LOOP(a[i] && b[i]); break;
    case OP_LOR: LOOP(a[i] || b[i]); break;
    case OP_LXOR: LOOP(!a[i] != !b[i]); break;
    }
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif

typedef bmpi_op_kernel_fn kernel_fn;

static kernel_fn kernel_of(enum elem e)
{
    switch (e) {
    case E_I8: return k_i8;
    case E_U8: return k_u8;
    case E_I16: return k_i16;
    case E_U16: return k_u16;
    case E_I32: return k_i32;
    case E_U32: return k_u32;
    case E_I64: return k_i64;
    case E_U64: return k_u64;
    case E_F: return k_f;
    case E_D: return k_d;
    case E_LD: return k_ld;
    case E_CF: return k_cf;
    case E_CD: return k_cd;
    case E_CLD: return k_cld;
    case E_BOOL: return k_bool;
    case E_FLOGICAL: return k_flogical;
    default: return NULL;
    }
}

typedef void (*kernel_into_fn)(int op, const void *in, const void *src, void *out, size_t n);

static kernel_into_fn kernel_into_of(enum elem e)
{
    switch (e) {
    case E_I8: return k_i8_into;
    case E_U8: return k_u8_into;
    case E_I16: return k_i16_into;
    case E_U16: return k_u16_into;
    case E_I32: return k_i32_into;
    case E_U32: return k_u32_into;
    case E_I64: return k_i64_into;
    case E_U64: return k_u64_into;
    case E_F: return k_f_into;
    case E_D: return k_d_into;
    case E_LD: return k_ld_into;
    case E_CF: return k_cf_into;
    case E_CD: return k_cd_into;
    case E_CLD: return k_cld_into;
    default: return NULL;
    }
}

/* Pairs: element i's value at base + i*stride, its index at + ioff. The
 * in-memory layout of the C struct and the packed layout (no padding)
 * differ, so both are parameters; memcpy keeps unaligned access legal. */
#define DEF_PAIR_KERNEL(name, V, I)                                                                \
    static void name(int op, const void *vin, void *vio, size_t n, size_t stride, size_t ioff)     \
    {                                                                                              \
        const char *a = vin;                                                                       \
        char *b = vio;                                                                             \
        for (size_t k = 0; k < n; k++, a += stride, b += stride) {                                 \
            V av, bv;                                                                              \
            I ai, bi;                                                                              \
            memcpy(&av, a, sizeof(V));                                                             \
            memcpy(&bv, b, sizeof(V));                                                             \
            memcpy(&ai, a + ioff, sizeof(I));                                                      \
            memcpy(&bi, b + ioff, sizeof(I));                                                      \
            int take;                                                                              \
            if (op == OP_MAXLOC)                                                                   \
                take = av > bv || (av == bv && ai < bi);                                           \
            else                                                                                   \
                take = av < bv || (av == bv && ai < bi);                                           \
            if (take) {                                                                            \
                memcpy(b, &av, sizeof(V));                                                         \
                memcpy(b + ioff, &ai, sizeof(I));                                                  \
            }                                                                                      \
        }                                                                                          \
    }

DEF_PAIR_KERNEL(p_float_int, float, int)
DEF_PAIR_KERNEL(p_double_int, double, int)
DEF_PAIR_KERNEL(p_long_int, long, int)
DEF_PAIR_KERNEL(p_short_int, short, int)
DEF_PAIR_KERNEL(p_2int, int, int)
DEF_PAIR_KERNEL(p_long_double_int, long double, int)
DEF_PAIR_KERNEL(p_2float, float, float)
DEF_PAIR_KERNEL(p_2double, double, double)

typedef void (*pair_fn)(int op, const void *in, void *inout, size_t n, size_t stride, size_t ioff);

#define PAIR_CASE(E, fn, V, I)                                                                     \
    case E: {                                                                                      \
        struct pv {                                                                                \
            V v;                                                                                   \
            I i;                                                                                   \
        };                                                                                         \
        *memstride = sizeof(struct pv);                                                            \
        *memoff = offsetof(struct pv, i);                                                          \
        *packoff = sizeof(V);                                                                      \
        *packstride = sizeof(V) + sizeof(I);                                                       \
        return fn;                                                                                 \
    }

static pair_fn pair_of(enum elem e, size_t *memstride, size_t *memoff, size_t *packstride,
                       size_t *packoff)
{
    switch (e) {
        PAIR_CASE(E_P_FLOAT_INT, p_float_int, float, int)
        PAIR_CASE(E_P_DOUBLE_INT, p_double_int, double, int)
        PAIR_CASE(E_P_LONG_INT, p_long_int, long, int)
        PAIR_CASE(E_P_SHORT_INT, p_short_int, short, int)
        PAIR_CASE(E_P_2INT, p_2int, int, int)
        PAIR_CASE(E_P_LONG_DOUBLE_INT, p_long_double_int, long double, int)
        PAIR_CASE(E_P_2FLOAT, p_2float, float, float)
        PAIR_CASE(E_P_2DOUBLE, p_2double, double, double)
    default: return NULL;
    }
}

/* --- op objects --------------------------------------------------------------- */

static struct {
    struct bmpi_op predef[OP_COUNT];
    bool ready;
    struct bmpi_handle_table table;
} ops = {.table = {.type = BMPI_OBJ_OP}};

static void predef_init(void)
{
    for (int i = 1; i < OP_COUNT; i++)
        ops.predef[i] = (struct bmpi_op){.handle = (MPI_Op)(0x58000000 | i), .refs = 1,
                                         .commute = true, .predefined = true, .index = i};
    ops.ready = true;
}

struct bmpi_op *bmpi_op_get(MPI_Op h)
{
    if (bmpi_handle_is_builtin(h, BMPI_OBJ_OP)) {
        int i = (int)((uint32_t)h & BMPI_HANDLE_INDEX_MASK);
        if (i < 1 || i >= OP_COUNT)
            return NULL;
        if (!ops.ready)
            predef_init();
        return &ops.predef[i];
    }
    return bmpi_handle_get(&ops.table, h);
}

void bmpi_op_retain(struct bmpi_op *op)
{
    if (!op->predefined)
        op->refs++;
}

void bmpi_op_release(struct bmpi_op *op)
{
    if (!op->predefined && --op->refs == 0)
        free(op);
}

/* MPI_Finalize, once no request holds an op: the ops the program never
 * freed. */
void bmpi_op_finalize(void)
{
    for (int i = 0; i < ops.table.used; i++)
        free(ops.table.objs[i]);
    bmpi_handle_table_free(&ops.table);
}

const char *bmpi_op_name(const struct bmpi_op *op)
{
    static char buf[40];
    if (op->predefined)
        return op_names[op->index];
    snprintf(buf, sizeof(buf), "user op 0x%x", (unsigned)op->handle);
    return buf;
}

int bmpi_op_check(const struct bmpi_op *op, const struct bmpi_datatype *dt)
{
    if (!op->predefined || op->index == OP_REPLACE || op->index == OP_NO_OP)
        return BMPI_OK;
    MPI_Datatype basic = bmpi_dt_basic(dt);
    if (basic == MPI_DATATYPE_NULL) {
        if (bmpi_dt_size(dt) == 0)
            return BMPI_OK; /* no data: nothing to reduce */
        return bmpi_err_set(MPI_ERR_OP,
                            "%s needs data of one predefined type; %s mixes several",
                            op_names[op->index], bmpi_dt_name(dt->handle));
    }
    struct elem_info ei = elem_of(basic);
    if (!(op_classes[op->index] & ei.c))
        return bmpi_err_set(MPI_ERR_OP, "%s is not defined on %s", op_names[op->index],
                            bmpi_dt_name(basic));
    return BMPI_OK;
}

static void apply_user(const struct bmpi_op *op, const void *in, void *inout, size_t count,
                       const struct bmpi_datatype *dt)
{
    MPI_Datatype handle = dt->handle;
    if (op->user_fn_c) {
        MPI_Count len = (MPI_Count)count;
        op->user_fn_c((void *)(uintptr_t)in, inout, &len, &handle);
        return;
    }
    MPI_Aint ext = bmpi_dt_extent(dt);
    while (count > 0) {
        int len = count > INT_MAX ? INT_MAX : (int)count;
        MPI_Datatype t = handle;
        if (op->lang == BMPI_LANG_FORTRAN) {
            MPI_Fint flen = len, ftype = MPI_Type_c2f(t);
            ((bmpi_f_user_function *)op->user_fn)((void *)(uintptr_t)in, inout, &flen, &ftype);
        } else {
            ((MPI_User_function *)op->user_fn)((void *)(uintptr_t)in, inout, &len, &t);
        }
        count -= (size_t)len;
        in = (const char *)in + (MPI_Aint)len * ext;
        inout = (char *)inout + (MPI_Aint)len * ext;
    }
}

void bmpi_op_apply(const struct bmpi_op *op, const void *in, void *inout, size_t count,
                   const struct bmpi_datatype *dt)
{
    if (count == 0 || (op->predefined && op->index == OP_NO_OP))
        return;
    if (!op->predefined) {
        apply_user(op, in, inout, count, dt);
        return;
    }
    size_t bytes = count * bmpi_dt_size(dt);
    if (bytes == 0)
        return;
    if (op->index == OP_REPLACE) {
        if (bmpi_dt_is_contig(dt)) {
            MPI_Aint lb = bmpi_dt_true_lb(dt);
            memmove((char *)inout + lb, (const char *)in + lb, bytes);
        } else {
            void *tmp = malloc(bytes);
            if (!tmp)
                return;
            bmpi_dt_pack_all(in, count, dt, tmp);
            bmpi_dt_unpack_all(tmp, inout, count, dt);
            free(tmp);
        }
        return;
    }
    MPI_Datatype basic = bmpi_dt_basic(dt);
    struct elem_info ei = elem_of(basic);
    if (ei.c == C_PAIR) {
        size_t ms = 0, mo = 0, ps = 1, po = 0;
        pair_fn pf = pair_of(ei.e, &ms, &mo, &ps, &po);
        if (!pf)
            return;
        if (bmpi_dt_is_predefined(dt)) {
            pf(op->index, in, inout, count, ms, mo);
        } else {
            /* A derived type of pairs: reduce in the packed form. */
            char *tmp = malloc(2 * bytes);
            if (!tmp)
                return;
            bmpi_dt_pack_all(in, count, dt, tmp);
            bmpi_dt_pack_all(inout, count, dt, tmp + bytes);
            pf(op->index, tmp, tmp + bytes, bytes / ps, ps, po);
            bmpi_dt_unpack_all(tmp + bytes, inout, count, dt);
            free(tmp);
        }
        return;
    }
    kernel_fn k = kernel_of(ei.e);
    if (!k)
        return;
    struct bmpi_datatype *b = bmpi_dt_get(basic);
    size_t esize = bmpi_dt_size(b);
    if (bmpi_dt_is_contig(dt)) {
        MPI_Aint lb = bmpi_dt_true_lb(dt);
        k(op->index, (const char *)in + lb, (char *)inout + lb, bytes / esize);
        return;
    }
    /* Walk inout's contiguous pieces; in has the same layout. */
    struct bmpi_dt_cursor cur;
    bmpi_dt_cursor_init(&cur, inout, count, dt);
    struct iovec iov[16];
    ptrdiff_t delta = (const char *)in - (char *)inout;
    while (bmpi_dt_cursor_left(&cur) > 0) {
        size_t got;
        int n = bmpi_dt_iov(&cur, iov, 16, SIZE_MAX, &got);
        if (n <= 0)
            break;
        for (int i = 0; i < n; i++)
            k(op->index, (const char *)iov[i].iov_base + delta, iov[i].iov_base,
              iov[i].iov_len / esize);
    }
}

bmpi_op_kernel_fn bmpi_op_basic_kernel(const struct bmpi_op *op, MPI_Datatype basic)
{
    if (!op->predefined || op->index == OP_REPLACE || op->index == OP_NO_OP)
        return NULL;
    struct elem_info ei = elem_of(basic);
    return ei.c == C_PAIR ? NULL : kernel_of(ei.e);
}

void bmpi_op_apply_into(const struct bmpi_op *op, const void *in, const void *src, void *out,
                        size_t count, const struct bmpi_datatype *dt)
{
    MPI_Datatype basic = bmpi_dt_basic(dt);
    MPI_Aint lb = bmpi_dt_true_lb(dt);
    size_t bytes = count * bmpi_dt_size(dt);
    kernel_into_fn k = NULL;
    if (op->predefined && op->index != OP_REPLACE && op->index != OP_NO_OP)
        k = kernel_into_of(elem_of(basic).e);
    if (!k) {
        memmove((char *)out + lb, (const char *)src + lb, bytes);
        bmpi_op_apply(op, in, out, count, dt);
        return;
    }
    /* elements of the basic type: count itself when the type is basic */
    size_t n = basic == dt->handle ? count : bytes / bmpi_dt_size(bmpi_dt_get(basic));
    k(op->index, (const char *)in + lb, (const char *)src + lb, (char *)out + lb, n);
}

/* --- entry points ------------------------------------------------------------- */

/* A user op calling user_fn (with lang's ABI), or user_fn_c (MPI_Op_create_c),
 * the other NULL. */
static int op_create(const char *fn, void (*user_fn)(void), MPI_User_function_c *user_fn_c,
                     int commute, enum bmpi_lang lang, MPI_Op *op)
{
    if (!op)
        return bmpi_err_noobj(MPI_ERR_ARG, fn, "op is NULL");
    if (!user_fn && !user_fn_c)
        return bmpi_err_noobj(MPI_ERR_ARG, fn, "user_fn is NULL");
    struct bmpi_op *o = calloc(1, sizeof(*o));
    if (!o)
        return bmpi_err_noobj(MPI_ERR_NO_MEM, fn, "out of memory");
    o->refs = 1;
    o->commute = commute != 0;
    o->lang = lang;
    o->user_fn = user_fn;
    o->user_fn_c = user_fn_c;
    o->handle = bmpi_handle_new(&ops.table, o);
    if (!o->handle) {
        free(o);
        return bmpi_err_noobj(MPI_ERR_NO_MEM, fn, "out of op handles");
    }
    *op = o->handle;
    return MPI_SUCCESS;
}

int bmpi_lang_op_create(void (*fn)(void), int commute, enum bmpi_lang lang, MPI_Op *op)
{
    return op_create("MPI_Op_create", fn, NULL, commute, lang, op);
}

BMPI_API(MPI_Op_create)
int PMPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op)
{
    return op_create("MPI_Op_create", (void (*)(void))user_fn, NULL, commute, BMPI_LANG_C, op);
}

BMPI_API(MPI_Op_create_c)
int PMPI_Op_create_c(MPI_User_function_c *user_fn, int commute, MPI_Op *op)
{
    return op_create("MPI_Op_create_c", NULL, user_fn, commute, BMPI_LANG_C, op);
}

BMPI_API(MPI_Op_free)
int PMPI_Op_free(MPI_Op *op)
{
    if (!op)
        return bmpi_err_noobj(MPI_ERR_ARG, "MPI_Op_free", "op is NULL");
    struct bmpi_op *o = bmpi_op_get(*op);
    if (!o)
        return bmpi_err_noobj(MPI_ERR_OP, "MPI_Op_free", "invalid op 0x%x", (unsigned)*op);
    if (o->predefined)
        return bmpi_err_noobj(MPI_ERR_OP, "MPI_Op_free", "%s is predefined and cannot be freed",
                              op_names[o->index]);
    bmpi_handle_release(&ops.table, o->handle);
    bmpi_op_release(o);
    *op = MPI_OP_NULL;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Op_commutative)
int PMPI_Op_commutative(MPI_Op op, int *commute)
{
    if (!commute)
        return bmpi_err_noobj(MPI_ERR_ARG, "MPI_Op_commutative", "commute is NULL");
    struct bmpi_op *o = bmpi_op_get(op);
    if (!o)
        return bmpi_err_noobj(MPI_ERR_OP, "MPI_Op_commutative", "invalid op 0x%x", (unsigned)op);
    *commute = o->commute;
    return MPI_SUCCESS;
}

static int reduce_local(const char *fn, const void *inbuf, void *inoutbuf, MPI_Count count,
                        MPI_Datatype datatype, MPI_Op op)
{
    if (count < 0)
        return bmpi_err_noobj(MPI_ERR_COUNT, fn, "negative count %lld", count);
    struct bmpi_datatype *dt;
    if (bmpi_dt_check_usable(datatype, &dt) != BMPI_OK)
        return bmpi_err_noobj(MPI_ERR_TYPE, fn, NULL);
    struct bmpi_op *o = bmpi_op_get(op);
    if (!o)
        return bmpi_err_noobj(MPI_ERR_OP, fn, "invalid op 0x%x", (unsigned)op);
    if (bmpi_op_check(o, dt) != BMPI_OK)
        return bmpi_err_noobj(MPI_ERR_OP, fn, NULL);
    if (count > 0 && bmpi_dt_size(dt) > 0) {
        if (inbuf == MPI_IN_PLACE || inoutbuf == MPI_IN_PLACE)
            return bmpi_err_noobj(MPI_ERR_BUFFER, fn, "MPI_IN_PLACE is not allowed here");
        if ((!inbuf || !inoutbuf) && bmpi_dt_is_predefined(dt))
            return bmpi_err_noobj(MPI_ERR_BUFFER, fn, "NULL buffer for %lld elements", count);
    }
    bmpi_op_apply(o, inbuf, inoutbuf, (size_t)count, dt);
    return MPI_SUCCESS;
}

BMPI_API(MPI_Reduce_local)
int PMPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype,
                      MPI_Op op)
{
    return reduce_local("MPI_Reduce_local", inbuf, inoutbuf, count, datatype, op);
}

BMPI_API(MPI_Reduce_local_c)
int PMPI_Reduce_local_c(const void *inbuf, void *inoutbuf, MPI_Count count, MPI_Datatype datatype,
                        MPI_Op op)
{
    return reduce_local("MPI_Reduce_local_c", inbuf, inoutbuf, count, datatype, op);
}
