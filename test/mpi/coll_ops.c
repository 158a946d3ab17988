/*
 * Every predefined op on every predefined type: where the standard allows
 * the pair, MPI_Allreduce must match a serial reference computed in the C
 * type; where it does not, MPI_Reduce_local and MPI_Allreduce must fail
 * with MPI_ERR_OP. Also MINLOC/MAXLOC on every pair type (ties keep the
 * lower index), and Reduce_local with a user op on a strided type.
 */
#include <complex.h>
#include <limits.h>

#include "coll_util.h"

#define N 5
static const MPI_Op ops[] = {MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD, MPI_LAND,
                             MPI_LOR, MPI_BAND, MPI_BOR, MPI_LXOR, MPI_BXOR};
static const char *const opname[] = {"MAX", "MIN", "SUM", "PROD", "LAND",
                                     "LOR", "BAND", "BOR", "LXOR", "BXOR"};
enum { MAX, MIN, SUM, PROD, LAND, LOR, BAND, BOR, LXOR, BXOR, NOPS };
enum cls { CI = 1, FI = 2, FL = 4, LO = 8, CX = 16, BY = 32, ML = 64 /* multi-language */ };
static const unsigned allowed[NOPS] = {
    [MAX] = CI | FI | FL | ML, [MIN] = CI | FI | FL | ML, [SUM] = CI | FI | FL | CX | ML,
    [PROD] = CI | FI | FL | CX | ML, [LAND] = CI | LO, [LOR] = CI | LO, [LXOR] = CI | LO,
    [BAND] = CI | FI | BY | ML, [BOR] = CI | FI | BY | ML, [BXOR] = CI | FI | BY | ML,
};

/* Value of rank r, element i, for op o: small, so products stay exact. */
static int val(int r, int i, int o)
{
    int v = (r * 7 + i * 3 + o) % 5;
    if (o == PROD)
        return 1 + (v % 2);
    if (o == LAND || o == LOR || o == LXOR)
        return (r + i) % 3 == 0 ? 0 : v;
    return v;
}

#define INT_REF(T)                                                                                 \
    {                                                                                              \
        T *b = buf;                                                                                \
        for (int i = 0; i < N; i++) {                                                              \
            T acc = (T)val(0, i, o);                                                               \
            for (int r = 1; r < p; r++) {                                                          \
                T v = (T)val(r, i, o);                                                             \
                switch (o) {                                                                       \
                case MAX: acc = v > acc ? v : acc; break;                                          \
                case MIN: acc = v < acc ? v : acc; break;                                          \
                case SUM: acc = (T)(acc + v); break;                                               \
                case PROD: acc = (T)(acc * v); break;                                              \
                case LAND: acc = (T)(acc && v); break;                                             \
                case LOR: acc = (T)(acc || v); break;                                              \
                case LXOR: acc = (T)(!acc != !v); break;                                           \
                case BAND: acc = (T)(acc & v); break;                                              \
                case BOR: acc = (T)(acc | v); break;                                               \
                case BXOR: acc = (T)(acc ^ v); break;                                              \
                }                                                                                  \
            }                                                                                      \
            if (fill)                                                                              \
                b[i] = (T)val(me, i, o);                                                           \
            else if (b[i] != acc)                                                                  \
                return 0;                                                                          \
        }                                                                                          \
        return 1;                                                                                  \
    }
#define FLT_REF(T)                                                                                 \
    {                                                                                              \
        T *b = buf;                                                                                \
        for (int i = 0; i < N; i++) {                                                              \
            T acc = (T)val(0, i, o);                                                               \
            for (int r = 1; r < p; r++) {                                                          \
                T v = (T)val(r, i, o);                                                             \
                switch (o) {                                                                       \
                case MAX: acc = v > acc ? v : acc; break;                                          \
                case MIN: acc = v < acc ? v : acc; break;                                          \
                case SUM: acc = acc + v; break;                                                    \
                case PROD: acc = acc * v; break;                                                   \
                }                                                                                  \
            }                                                                                      \
            if (fill)                                                                              \
                b[i] = (T)val(me, i, o);                                                           \
            else if (b[i] != acc)                                                                  \
                return 0;                                                                          \
        }                                                                                          \
        return 1;                                                                                  \
    }
#define CPX_REF(T)                                                                                 \
    {                                                                                              \
        T *b = buf;                                                                                \
        for (int i = 0; i < N; i++) {                                                              \
            T acc = (T)val(0, i, o) + (T)I * (T)val(0, i + 1, o);                                  \
            for (int r = 1; r < p; r++) {                                                          \
                T v = (T)val(r, i, o) + (T)I * (T)val(r, i + 1, o);                                \
                acc = o == SUM ? acc + v : acc * v;                                                \
            }                                                                                      \
            if (fill)                                                                              \
                b[i] = (T)val(me, i, o) + (T)I * (T)val(me, i + 1, o);                             \
            else if (b[i] != acc)                                                                  \
                return 0;                                                                          \
        }                                                                                          \
        return 1;                                                                                  \
    }

#define BOOL_REF()                                                                                 \
    {                                                                                              \
        _Bool *b = buf;                                                                            \
        for (int i = 0; i < N; i++) {                                                              \
            _Bool acc = val(0, i, o) != 0;                                                         \
            for (int r = 1; r < p; r++) {                                                          \
                _Bool v = val(r, i, o) != 0;                                                       \
                acc = o == LAND ? (acc && v) : o == LOR ? (acc || v) : (acc != v);                 \
            }                                                                                      \
            if (fill)                                                                              \
                b[i] = val(me, i, o) != 0;                                                         \
            else if (b[i] != acc)                                                                  \
                return 0;                                                                          \
        }                                                                                          \
        return 1;                                                                                  \
    }

struct tinfo {
    MPI_Datatype t;
    const char *name;
    unsigned cls;
    int kind; /* which C type below */
};
enum { K_I8, K_U8, K_I16, K_U16, K_I32, K_U32, K_I64, K_U64, K_F, K_D, K_LD, K_CF, K_CD, K_CLD,
       K_BOOL };
static const struct tinfo types[] = {
    {MPI_SIGNED_CHAR, "SIGNED_CHAR", CI, K_I8},   {MPI_UNSIGNED_CHAR, "UNSIGNED_CHAR", CI, K_U8},
    {MPI_CHAR, "CHAR", CI, CHAR_MIN < 0 ? K_I8 : K_U8}, /* as Open MPI and MPICH */
    {MPI_SHORT, "SHORT", CI, K_I16},              {MPI_UNSIGNED_SHORT, "UNSIGNED_SHORT", CI, K_U16},
    {MPI_INT, "INT", CI, K_I32},                  {MPI_UNSIGNED, "UNSIGNED", CI, K_U32},
    {MPI_LONG, "LONG", CI, K_I64},                {MPI_UNSIGNED_LONG, "UNSIGNED_LONG", CI, K_U64},
    {MPI_LONG_LONG, "LONG_LONG", CI, K_I64},      {MPI_UNSIGNED_LONG_LONG, "ULL", CI, K_U64},
    {MPI_INT8_T, "INT8_T", CI, K_I8},             {MPI_UINT8_T, "UINT8_T", CI, K_U8},
    {MPI_INT16_T, "INT16_T", CI, K_I16},          {MPI_UINT16_T, "UINT16_T", CI, K_U16},
    {MPI_INT32_T, "INT32_T", CI, K_I32},          {MPI_UINT32_T, "UINT32_T", CI, K_U32},
    {MPI_INT64_T, "INT64_T", CI, K_I64},          {MPI_UINT64_T, "UINT64_T", CI, K_U64},
    {MPI_AINT, "AINT", ML, K_I64},                {MPI_OFFSET, "OFFSET", ML, K_I64},
    {MPI_COUNT, "COUNT", ML, K_I64},              {MPI_INTEGER, "INTEGER", FI, K_I32},
    {MPI_INTEGER1, "INTEGER1", FI, K_I8},         {MPI_INTEGER2, "INTEGER2", FI, K_I16},
    {MPI_INTEGER4, "INTEGER4", FI, K_I32},        {MPI_INTEGER8, "INTEGER8", FI, K_I64},
    {MPI_FLOAT, "FLOAT", FL, K_F},                {MPI_DOUBLE, "DOUBLE", FL, K_D},
    {MPI_LONG_DOUBLE, "LONG_DOUBLE", FL, K_LD},   {MPI_REAL, "REAL", FL, K_F},
    {MPI_DOUBLE_PRECISION, "DOUBLE_PRECISION", FL, K_D}, {MPI_REAL4, "REAL4", FL, K_F},
    {MPI_REAL8, "REAL8", FL, K_D},                {MPI_C_BOOL, "C_BOOL", LO, K_BOOL},
    {MPI_CXX_BOOL, "CXX_BOOL", LO, K_BOOL},       {MPI_LOGICAL, "LOGICAL", LO, K_I32},
    {MPI_C_FLOAT_COMPLEX, "C_FLOAT_COMPLEX", CX, K_CF},
    {MPI_C_DOUBLE_COMPLEX, "C_DOUBLE_COMPLEX", CX, K_CD},
    {MPI_C_LONG_DOUBLE_COMPLEX, "C_LONG_DOUBLE_COMPLEX", CX, K_CLD},
    {MPI_COMPLEX, "COMPLEX", CX, K_CF},           {MPI_DOUBLE_COMPLEX, "DOUBLE_COMPLEX", CX, K_CD},
    {MPI_BYTE, "BYTE", BY, K_U8},
};

static int p, me;

/* fill: my contribution into buf; else: does buf hold the reference? */
static int ref(int kind, int o, void *buf, int fill)
{
    switch (kind) {
    case K_I8: INT_REF(int8_t)
    case K_U8: INT_REF(uint8_t)
    case K_I16: INT_REF(int16_t)
    case K_U16: INT_REF(uint16_t)
    case K_I32: INT_REF(int32_t)
    case K_U32: INT_REF(uint32_t)
    case K_I64: INT_REF(int64_t)
    case K_U64: INT_REF(uint64_t)
    case K_BOOL: BOOL_REF()
    case K_F: FLT_REF(float)
    case K_D: FLT_REF(double)
    case K_LD: FLT_REF(long double)
    case K_CF: CPX_REF(float _Complex)
    case K_CD: CPX_REF(double _Complex)
    case K_CLD: CPX_REF(long double _Complex)
    }
    return 0;
}

#define PAIR_TEST(V, I, T)                                                                         \
    {                                                                                              \
        struct {                                                                                   \
            V v;                                                                                   \
            I i;                                                                                   \
        } a[N], b[N];                                                                              \
        for (int k = 0; k < N; k++)                                                                \
            a[k].v = (V)((me * 3 + k) % 4), a[k].i = (I)me;                                        \
        for (int mx = 0; mx < 2; mx++) {                                                           \
            MPICHK(MPI_Allreduce(a, b, N, T, mx ? MPI_MAXLOC : MPI_MINLOC, MPI_COMM_WORLD));       \
            for (int k = 0; k < N; k++) {                                                          \
                V bv = (V)(k % 4);                                                                 \
                I bi = 0;                                                                          \
                for (int r = 1; r < p; r++) {                                                      \
                    V v = (V)((r * 3 + k) % 4);                                                    \
                    if (mx ? v > bv : v < bv)                                                      \
                        bv = v, bi = (I)r;                                                         \
                }                                                                                  \
                CHECK(b[k].v == bv && b[k].i == bi, "%s %s [%d]", #T, mx ? "MAXLOC" : "MINLOC", k); \
            }                                                                                      \
        }                                                                                          \
        EXPECT_CLASS(MPI_Reduce_local(a, b, N, T, MPI_SUM), MPI_ERR_OP);                            \
    }

static void strided_user(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    /* the type is a vector(2, 1, 3, MPI_INT): element e has ints at 0 and 3 */
    int *a = in, *b = inout;
    for (int e = 0; e < *len; e++) {
        b[6 * e] -= a[6 * e];
        b[6 * e + 3] -= a[6 * e + 3];
    }
}

int main(int argc, char **argv)
{
    cu_init(&argc, &argv, "coll_ops");
    p = cu_size, me = cu_rank;
    long double mem_in[2 * N * 2], mem_out[2 * N * 2]; /* room and alignment for any type */
    int tested = 0, refused = 0;
    for (size_t ti = 0; ti < sizeof(types) / sizeof(types[0]); ti++) {
        const struct tinfo *t = &types[ti];
        for (int o = 0; o < NOPS; o++) {
            if (allowed[o] & t->cls) {
                ref(t->kind, o, mem_in, 1);
                memset(mem_out, 0, sizeof(mem_out));
                MPICHK(MPI_Allreduce(mem_in, mem_out, N, t->t, ops[o], MPI_COMM_WORLD));
                CHECK(ref(t->kind, o, mem_out, 0), "MPI_%s on MPI_%s differs from the reference",
                      opname[o], t->name);
                tested++;
            } else {
                EXPECT_CLASS(MPI_Reduce_local(mem_in, mem_out, N, t->t, ops[o]), MPI_ERR_OP);
                EXPECT_CLASS(MPI_Allreduce(mem_in, mem_out, N, t->t, ops[o], MPI_COMM_WORLD), MPI_ERR_OP);
                refused++;
            }
        }
        EXPECT_CLASS(MPI_Reduce_local(mem_in, mem_out, N, t->t, MPI_MAXLOC), MPI_ERR_OP);
    }
    /* Other character data takes no op. */
    EXPECT_CLASS(MPI_Reduce_local(mem_in, mem_out, N, MPI_CHARACTER, MPI_SUM), MPI_ERR_OP);
    EXPECT_CLASS(MPI_Reduce_local(mem_in, mem_out, N, MPI_WCHAR, MPI_MAX), MPI_ERR_OP);
    EXPECT_CLASS(MPI_Reduce_local(mem_in, mem_out, N, MPI_PACKED, MPI_BOR), MPI_ERR_OP);
    PAIR_TEST(float, int, MPI_FLOAT_INT)
    PAIR_TEST(double, int, MPI_DOUBLE_INT)
    PAIR_TEST(long, int, MPI_LONG_INT)
    PAIR_TEST(short, int, MPI_SHORT_INT)
    PAIR_TEST(int, int, MPI_2INT)
    PAIR_TEST(long double, int, MPI_LONG_DOUBLE_INT)
    PAIR_TEST(int, int, MPI_2INTEGER)
    PAIR_TEST(float, float, MPI_2REAL)
    PAIR_TEST(double, double, MPI_2DOUBLE_PRECISION)

    /* Reduce_local with a user op and a predefined op on a strided type. */
    MPI_Datatype vec;
    MPI_Op op;
    MPICHK(MPI_Type_vector(2, 1, 3, MPI_INT, &vec));
    MPI_Datatype vr;
    MPICHK(MPI_Type_create_resized(vec, 0, 6 * sizeof(int), &vr));
    MPICHK(MPI_Type_commit(&vr));
    MPICHK(MPI_Op_create(strided_user, 1, &op));
    int x[12], y[12];
    for (int i = 0; i < 12; i++)
        x[i] = i, y[i] = 100 + i;
    MPICHK(MPI_Reduce_local(x, y, 2, vr, op));
    for (int i = 0; i < 12; i++)
        CHECK(y[i] == (i % 3 == 0 ? 100 : 100 + i), "user op on a strided type [%d]=%d", i, y[i]);
    MPICHK(MPI_Reduce_local(x, y, 2, vr, MPI_SUM));
    for (int i = 0; i < 12; i++)
        CHECK(y[i] == (i % 3 == 0 ? 100 + i : 100 + i), "SUM on a strided type [%d]=%d", i, y[i]);
    MPICHK(MPI_Op_free(&op));
    MPICHK(MPI_Type_free(&vr));
    MPICHK(MPI_Type_free(&vec));
    if (me == 0)
        printf("%d (op, type) pairs reduced, %d refused\n", tested, refused);
    cu_finish();
    return 0;
}
