/*
 * Unit tests of runtime/datatype*: layouts (size, bounds, extents) against
 * hand-computed values, envelopes and contents, lifetimes, and above all
 * the pack/unpack/iov cursor against a naive reference that walks each
 * type's definition recursively through MPI_Type_get_envelope/_contents.
 *
 * Most tests run without MPI_Init (the type functions work before it); the
 * "api" case initialises a singleton with MPI_ERRORS_RETURN to check error
 * classes. Each test runs in its own process (Check's fork mode).
 */
#include <check.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <mpi.h>

#include "runtime/datatype.h"
#include "runtime/datatype_impl.h"

#define OK(call) ck_assert_int_eq((call), MPI_SUCCESS)

/* --- the reference: enumerate (offset, length) of every basic element -------- */

typedef void (*visit_fn)(MPI_Aint off, size_t len, void *ctx);

static MPI_Aint ext_of(MPI_Datatype t)
{
    MPI_Aint lb, ext;
    OK(MPI_Type_get_extent(t, &lb, &ext));
    return ext;
}

static int size_of(MPI_Datatype t)
{
    MPI_Count s;
    OK(MPI_Type_size_x(t, &s));
    return (int)s;
}

/* the predefined pair types, by their C layout */
static bool pair_layout(MPI_Datatype t, MPI_Aint off[2], size_t len[2])
{
#define PAIR(h, V) \
    if (t == h) { \
        struct { V v; int i; } s; \
        off[0] = 0; len[0] = sizeof s.v; \
        off[1] = (char *)&s.i - (char *)&s; len[1] = sizeof s.i; \
        return true; \
    }
    PAIR(MPI_FLOAT_INT, float)
    PAIR(MPI_DOUBLE_INT, double)
    PAIR(MPI_LONG_INT, long)
    PAIR(MPI_SHORT_INT, short)
    PAIR(MPI_LONG_DOUBLE_INT, long double)
    PAIR(MPI_2INT, int)
    PAIR(MPI_2INTEGER, int)
    PAIR(MPI_2REAL, float)
#undef PAIR
    if (t == MPI_2DOUBLE_PRECISION) {
        off[0] = 0, off[1] = 8, len[0] = len[1] = 8;
        return true;
    }
    return false;
}

static void free_if_derived(MPI_Datatype t)
{
    int ni, na, nt, comb;
    OK(MPI_Type_get_envelope(t, &ni, &na, &nt, &comb));
    /* the F90 types count as predefined: they are not freed */
    if (comb != MPI_COMBINER_NAMED && comb != MPI_COMBINER_F90_REAL &&
        comb != MPI_COMBINER_F90_COMPLEX && comb != MPI_COMBINER_F90_INTEGER)
        OK(MPI_Type_free(&t));
}

static void ref_walk(MPI_Datatype t, MPI_Aint base, visit_fn fn, void *ctx);

/* Visit the elements of an n-d array of `old` at the given global indices
 * per dimension (idx[d][0..cnt[d]-1]), in storage order. */
static void array_walk(int nd, const int *sizes, int **idx, const int *cnt, int order,
                       MPI_Datatype old, MPI_Aint base, visit_fn fn, void *ctx)
{
    MPI_Aint ext = ext_of(old);
    int pos[16] = {0};
    for (int d = 0; d < nd; d++)
        if (cnt[d] == 0)
            return;
    for (;;) {
        MPI_Aint lin = 0;
        if (order == MPI_ORDER_C)
            for (int d = 0; d < nd; d++)
                lin = lin * sizes[d] + idx[d][pos[d]];
        else
            for (int d = nd - 1; d >= 0; d--)
                lin = lin * sizes[d] + idx[d][pos[d]];
        ref_walk(old, base + lin * ext, fn, ctx);
        /* odometer, fastest dimension first */
        int k;
        for (k = 0; k < nd; k++) {
            int d = order == MPI_ORDER_C ? nd - 1 - k : k;
            if (++pos[d] < cnt[d])
                break;
            pos[d] = 0;
        }
        if (k == nd)
            return;
    }
}

static void ref_walk(MPI_Datatype t, MPI_Aint base, visit_fn fn, void *ctx)
{
    int ni, na, nt, comb;
    OK(MPI_Type_get_envelope(t, &ni, &na, &nt, &comb));
    if (comb == MPI_COMBINER_NAMED) {
        MPI_Aint o[2];
        size_t l[2];
        if (pair_layout(t, o, l)) {
            fn(base + o[0], l[0], ctx);
            fn(base + o[1], l[1], ctx);
        } else if (size_of(t)) {
            fn(base, (size_t)size_of(t), ctx);
        }
        return;
    }
    int *in = malloc(sizeof(int) * (size_t)(ni + 1));
    MPI_Aint *a = malloc(sizeof(MPI_Aint) * (size_t)(na + 1));
    MPI_Datatype *ty = malloc(sizeof(MPI_Datatype) * (size_t)(nt + 1));
    OK(MPI_Type_get_contents(t, ni, na, nt, in, a, ty));
    MPI_Aint e = nt ? ext_of(ty[0]) : 0;
    switch (comb) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED:
        ref_walk(ty[0], base, fn, ctx);
        break;
    case MPI_COMBINER_CONTIGUOUS:
        for (int i = 0; i < in[0]; i++)
            ref_walk(ty[0], base + i * e, fn, ctx);
        break;
    case MPI_COMBINER_VECTOR:
        for (int i = 0; i < in[0]; i++)
            for (int j = 0; j < in[1]; j++)
                ref_walk(ty[0], base + ((MPI_Aint)i * in[2] + j) * e, fn, ctx);
        break;
    case MPI_COMBINER_HVECTOR:
        for (int i = 0; i < in[0]; i++)
            for (int j = 0; j < in[1]; j++)
                ref_walk(ty[0], base + i * a[0] + j * e, fn, ctx);
        break;
    case MPI_COMBINER_INDEXED:
        for (int i = 0; i < in[0]; i++)
            for (int j = 0; j < in[1 + i]; j++)
                ref_walk(ty[0], base + ((MPI_Aint)in[1 + in[0] + i] + j) * e, fn, ctx);
        break;
    case MPI_COMBINER_HINDEXED:
        for (int i = 0; i < in[0]; i++)
            for (int j = 0; j < in[1 + i]; j++)
                ref_walk(ty[0], base + a[i] + j * e, fn, ctx);
        break;
    case MPI_COMBINER_INDEXED_BLOCK:
        for (int i = 0; i < in[0]; i++)
            for (int j = 0; j < in[1]; j++)
                ref_walk(ty[0], base + ((MPI_Aint)in[2 + i] + j) * e, fn, ctx);
        break;
    case MPI_COMBINER_HINDEXED_BLOCK:
        for (int i = 0; i < in[0]; i++)
            for (int j = 0; j < in[1]; j++)
                ref_walk(ty[0], base + a[i] + j * e, fn, ctx);
        break;
    case MPI_COMBINER_STRUCT:
        for (int i = 0; i < in[0]; i++)
            for (int j = 0; j < in[1 + i]; j++)
                ref_walk(ty[i], base + a[i] + j * ext_of(ty[i]), fn, ctx);
        break;
    case MPI_COMBINER_SUBARRAY: {
        int nd = in[0], *idx[16], cnt[16] = {0};
        for (int d = 0; d < nd; d++) {
            cnt[d] = in[1 + nd + d];
            idx[d] = malloc(sizeof(int) * (size_t)(cnt[d] + 1));
            for (int k = 0; k < cnt[d]; k++)
                idx[d][k] = in[1 + 2 * nd + d] + k;
        }
        array_walk(nd, in + 1, idx, cnt, in[3 * nd + 1], ty[0], base, fn, ctx);
        for (int d = 0; d < nd; d++)
            free(idx[d]);
        break;
    }
    case MPI_COMBINER_DARRAY: {
        int size = in[0], rank = in[1], nd = in[2];
        const int *g = in + 3, *dist = in + 3 + nd, *darg = in + 3 + 2 * nd, *ps = in + 3 + 3 * nd;
        int *idx[16], cnt[16] = {0}, coord[16] = {0};
        for (int d = 0, left = rank, procs = size; d < nd; d++) {
            procs /= ps[d];
            coord[d] = left / procs;
            left %= procs;
        }
        for (int d = 0; d < nd; d++) {
            idx[d] = malloc(sizeof(int) * (size_t)(g[d] + 1));
            cnt[d] = 0;
            if (dist[d] == MPI_DISTRIBUTE_NONE) {
                for (int k = 0; k < g[d]; k++)
                    idx[d][cnt[d]++] = k;
            } else if (dist[d] == MPI_DISTRIBUTE_BLOCK) {
                int b = darg[d] == MPI_DISTRIBUTE_DFLT_DARG ? (g[d] + ps[d] - 1) / ps[d] : darg[d];
                for (int k = coord[d] * b; k < (coord[d] + 1) * b && k < g[d]; k++)
                    idx[d][cnt[d]++] = k;
            } else {
                int b = darg[d] == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg[d];
                for (int s = coord[d] * b; s < g[d]; s += ps[d] * b)
                    for (int k = s; k < s + b && k < g[d]; k++)
                        idx[d][cnt[d]++] = k;
            }
        }
        array_walk(nd, g, idx, cnt, in[3 + 4 * nd], ty[0], base, fn, ctx);
        for (int d = 0; d < nd; d++)
            free(idx[d]);
        break;
    }
    case MPI_COMBINER_F90_REAL:
    case MPI_COMBINER_F90_COMPLEX:
    case MPI_COMBINER_F90_INTEGER:
        fn(base, (size_t)size_of(t), ctx); /* one Fortran number */
        break;
    default:
        ck_abort_msg("combiner %d not handled by the reference", comb);
    }
    for (int i = 0; i < nt; i++)
        free_if_derived(ty[i]);
    free(in);
    free(a);
    free(ty);
}

struct ref_pack { const char *buf; char *out; size_t pos; };
static void v_pack(MPI_Aint off, size_t len, void *ctx)
{
    struct ref_pack *r = ctx;
    if (r->out)
        memcpy(r->out + r->pos, r->buf + off, len);
    r->pos += len;
}

struct ref_unpack { char *buf; const char *in; size_t pos; };
static void v_unpack(MPI_Aint off, size_t len, void *ctx)
{
    struct ref_unpack *r = ctx;
    memcpy(r->buf + off, r->in + r->pos, len);
    r->pos += len;
}

struct ref_span { bool any; MPI_Aint lo, hi; };
static void v_span(MPI_Aint off, size_t len, void *ctx)
{
    struct ref_span *s = ctx;
    if (!s->any || off < s->lo)
        s->lo = off;
    if (!s->any || off + (MPI_Aint)len > s->hi)
        s->hi = off + (MPI_Aint)len;
    s->any = true;
}

static void ref_walk_n(MPI_Datatype t, int count, visit_fn fn, void *ctx)
{
    MPI_Aint e = ext_of(t);
    for (int i = 0; i < count; i++)
        ref_walk(t, i * e, fn, ctx);
}

/* --- checking the engine against the reference ------------------------------------ */

#define GUARD 64

/* Memory for count elements of t: base points at offset 0 of the buffer;
 * the described bytes plus GUARD bytes on each side are inside. */
struct area { char *mem, *base; size_t len; };

static struct area area_for(MPI_Datatype t, int count)
{
    struct ref_span s = {0};
    ref_walk_n(t, count, v_span, &s);
    struct area a;
    a.len = (size_t)(s.any ? s.hi - s.lo : 0) + 2 * GUARD;
    a.mem = malloc(a.len);
    ck_assert_ptr_nonnull(a.mem);
    a.base = a.mem + GUARD - (s.any ? s.lo : 0);
    return a;
}

static void fill(char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (char)(seed >> 16);
    }
}

static void check_engine(MPI_Datatype t, int count)
{
    struct bmpi_datatype *dt = bmpi_dt_get(t);
    ck_assert_ptr_nonnull(dt);
    struct area a = area_for(t, count);
    fill(a.mem, a.len, 42u + (unsigned)count);

    struct ref_pack rp = {.buf = a.base, .out = NULL};
    ref_walk_n(t, count, v_pack, &rp);
    size_t total = rp.pos;
    ck_assert_uint_eq(total, (size_t)count * bmpi_dt_size(dt));
    char *ref = malloc(total + 1), *out = malloc(total + 1);
    rp.out = ref;
    rp.pos = 0;
    ref_walk_n(t, count, v_pack, &rp);

    /* whole */
    memset(out, 0, total + 1);
    bmpi_dt_pack_all(a.base, (size_t)count, dt, out);
    ck_assert_msg(memcmp(out, ref, total) == 0, "pack_all differs from the reference");

    /* in chunks, at awkward sizes */
    static const size_t chunks[] = {1, 3, 7, 4096};
    for (size_t k = 0; k < sizeof chunks / sizeof chunks[0]; k++) {
        struct bmpi_dt_cursor c;
        bmpi_dt_cursor_init(&c, a.base, (size_t)count, dt);
        size_t done = 0, n;
        memset(out, 0, total + 1);
        while ((n = bmpi_dt_pack(&c, out + done, chunks[k])) > 0) {
            ck_assert_uint_le(n, chunks[k]);
            done += n;
        }
        ck_assert_uint_eq(done, total);
        ck_assert_uint_eq(bmpi_dt_cursor_left(&c), 0);
        ck_assert_msg(memcmp(out, ref, total) == 0, "pack in chunks of %zu differs", chunks[k]);
    }

    /* from arbitrary positions */
    size_t offs[] = {0, total / 3, total / 2 + 1, total ? total - 1 : 0, total};
    for (size_t k = 0; k < sizeof offs / sizeof offs[0]; k++) {
        if (offs[k] > total)
            continue;
        struct bmpi_dt_cursor c;
        bmpi_dt_cursor_init(&c, a.base, (size_t)count, dt);
        bmpi_dt_cursor_seek(&c, offs[k]);
        size_t n = bmpi_dt_pack(&c, out, total);
        ck_assert_uint_eq(n, total - offs[k]);
        ck_assert_msg(memcmp(out, ref + offs[k], n) == 0, "pack after seek(%zu) differs", offs[k]);
    }

    /* as scatter-gather lists */
    {
        struct bmpi_dt_cursor c;
        struct iovec iov[3];
        size_t done = 0, bytes;
        int n;
        bmpi_dt_cursor_init(&c, a.base, (size_t)count, dt);
        while ((n = bmpi_dt_iov(&c, iov, 3, 50, &bytes)) > 0) {
            size_t sum = 0;
            ck_assert_uint_le(bytes, 50);
            for (int i = 0; i < n; i++) {
                ck_assert((char *)iov[i].iov_base >= a.mem &&
                          (char *)iov[i].iov_base + iov[i].iov_len <= a.mem + a.len);
                memcpy(out + done + sum, iov[i].iov_base, iov[i].iov_len);
                sum += iov[i].iov_len;
            }
            ck_assert_uint_eq(sum, bytes);
            done += bytes;
        }
        ck_assert_uint_eq(done, total);
        ck_assert_msg(memcmp(out, ref, total) == 0, "iov differs from the reference");
    }

    /* as runs of blocks, at awkward byte and block limits */
    static const size_t run_limits[][2] = {{SIZE_MAX, SIZE_MAX}, {50, 3}, {7, 1}, {4096, 2}};
    for (size_t k = 0; k < sizeof run_limits / sizeof run_limits[0]; k++) {
        struct bmpi_dt_cursor c;
        struct bmpi_dt_run r;
        size_t done = 0, bytes;
        bmpi_dt_cursor_init(&c, a.base, (size_t)count, dt);
        while ((bytes = bmpi_dt_next_run(&c, run_limits[k][0], run_limits[k][1], &r)) > 0) {
            ck_assert_uint_le(bytes, run_limits[k][0]);
            ck_assert_uint_le(r.count, run_limits[k][1]);
            ck_assert_uint_eq(bytes, r.len * r.count);
            for (size_t b = 0; b < r.count; b++) {
                const char *p = (const char *)(r.addr + (uintptr_t)((MPI_Aint)b * r.stride));
                ck_assert(p >= a.mem && p + r.len <= a.mem + a.len);
                memcpy(out + done, p, r.len);
                done += r.len;
            }
        }
        ck_assert_uint_eq(done, total);
        ck_assert_uint_eq(bmpi_dt_cursor_left(&c), 0);
        ck_assert_msg(memcmp(out, ref, total) == 0, "runs (limits %zu, %zu) differ from the reference",
                      run_limits[k][0], run_limits[k][1]);
    }

    /* unpack: same bytes as the reference, nothing outside (guards intact) */
    {
        char *mine = malloc(a.len), *theirs = malloc(a.len);
        char *src = malloc(total + 100);
        fill(src, total + 100, 7u);
        memset(mine, 0xAA, a.len);
        memset(theirs, 0xAA, a.len);
        struct ref_unpack ru = {.buf = theirs + (a.base - a.mem), .in = src};
        ref_walk_n(t, count, v_unpack, &ru);

        struct bmpi_dt_cursor c;
        bmpi_dt_cursor_init(&c, mine + (a.base - a.mem), (size_t)count, dt);
        size_t done = 0, n;
        while (done < total && (n = bmpi_dt_unpack(&c, src + done, 5)) > 0)
            done += n;
        ck_assert_uint_eq(done, total);
        /* offering more than described takes nothing more */
        ck_assert_uint_eq(bmpi_dt_unpack(&c, src + done, 100), 0);
        ck_assert_msg(memcmp(mine, theirs, a.len) == 0, "unpack differs (or wrote outside)");

        /* all at once, offering too much */
        memset(mine, 0xAA, a.len);
        bmpi_dt_cursor_init(&c, mine + (a.base - a.mem), (size_t)count, dt);
        ck_assert_uint_eq(bmpi_dt_unpack(&c, src, total + 100), total);
        ck_assert_msg(memcmp(mine, theirs, a.len) == 0, "unpack in one go differs");
        free(mine);
        free(theirs);
        free(src);
    }
    free(ref);
    free(out);
    free(a.mem);
}

static void check_type(MPI_Datatype t)
{
    OK(MPI_Type_commit(&t));
    for (int count = 0; count <= 3; count++)
        check_engine(t, count);
}

static void check_and_free(MPI_Datatype t)
{
    check_type(t);
    OK(MPI_Type_free(&t));
    ck_assert_int_eq(t, MPI_DATATYPE_NULL);
}

static void expect_layout(MPI_Datatype t, MPI_Count size, MPI_Aint lb, MPI_Aint extent,
                          MPI_Aint tlb, MPI_Aint textent)
{
    MPI_Count s;
    MPI_Aint l, e;
    OK(MPI_Type_size_x(t, &s));
    ck_assert_int_eq(s, size);
    OK(MPI_Type_get_extent(t, &l, &e));
    ck_assert_int_eq(l, lb);
    ck_assert_int_eq(e, extent);
    OK(MPI_Type_get_true_extent(t, &l, &e));
    ck_assert_int_eq(l, tlb);
    ck_assert_int_eq(e, textent);
}

/* --- predefined types ------------------------------------------------------------ */

static const struct { MPI_Datatype h; const char *name; int size; } predefined[] = {
#define P(h, T) {h, #h, (int)sizeof(T)}
    P(MPI_CHAR, char), P(MPI_SIGNED_CHAR, signed char), P(MPI_UNSIGNED_CHAR, unsigned char),
    P(MPI_BYTE, char), P(MPI_WCHAR, wchar_t), P(MPI_SHORT, short),
    P(MPI_UNSIGNED_SHORT, unsigned short), P(MPI_INT, int), P(MPI_UNSIGNED, unsigned),
    P(MPI_LONG, long), P(MPI_UNSIGNED_LONG, unsigned long), P(MPI_FLOAT, float),
    P(MPI_DOUBLE, double), P(MPI_LONG_DOUBLE, long double), P(MPI_LONG_LONG_INT, long long),
    P(MPI_UNSIGNED_LONG_LONG, unsigned long long), P(MPI_PACKED, char), P(MPI_INT8_T, int8_t),
    P(MPI_INT16_T, int16_t), P(MPI_INT32_T, int32_t), P(MPI_INT64_T, int64_t),
    P(MPI_UINT8_T, uint8_t), P(MPI_UINT16_T, uint16_t), P(MPI_UINT32_T, uint32_t),
    P(MPI_UINT64_T, uint64_t), P(MPI_C_BOOL, _Bool), P(MPI_C_FLOAT_COMPLEX, float _Complex),
    P(MPI_C_DOUBLE_COMPLEX, double _Complex),
    P(MPI_C_LONG_DOUBLE_COMPLEX, long double _Complex), P(MPI_AINT, MPI_Aint),
    P(MPI_OFFSET, MPI_Offset), P(MPI_COUNT, MPI_Count), P(MPI_CXX_BOOL, _Bool),
    P(MPI_CXX_FLOAT_COMPLEX, float _Complex), P(MPI_CXX_DOUBLE_COMPLEX, double _Complex),
    P(MPI_CXX_LONG_DOUBLE_COMPLEX, long double _Complex), P(MPI_CHARACTER, char),
    P(MPI_INTEGER, int), P(MPI_REAL, float), P(MPI_LOGICAL, int), P(MPI_COMPLEX, float _Complex),
    P(MPI_DOUBLE_PRECISION, double), P(MPI_DOUBLE_COMPLEX, double _Complex),
    P(MPI_REAL4, float), P(MPI_REAL8, double), P(MPI_REAL16, long double),
    P(MPI_COMPLEX8, float _Complex), P(MPI_COMPLEX16, double _Complex),
    P(MPI_COMPLEX32, long double _Complex), P(MPI_INTEGER1, int8_t), P(MPI_INTEGER2, int16_t),
    P(MPI_INTEGER4, int32_t), P(MPI_INTEGER8, int64_t),
    {MPI_2INT, "MPI_2INT", 8}, {MPI_2INTEGER, "MPI_2INTEGER", 8}, {MPI_2REAL, "MPI_2REAL", 8},
    {MPI_2DOUBLE_PRECISION, "MPI_2DOUBLE_PRECISION", 16}, {MPI_FLOAT_INT, "MPI_FLOAT_INT", 8},
    {MPI_DOUBLE_INT, "MPI_DOUBLE_INT", 12}, {MPI_LONG_INT, "MPI_LONG_INT", 12},
    {MPI_SHORT_INT, "MPI_SHORT_INT", 6}, {MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT", 20},
#undef P
};
#define NPREDEF (sizeof predefined / sizeof predefined[0])

START_TEST(predefined_types)
{
    for (size_t i = 0; i < NPREDEF; i++) {
        MPI_Datatype h = predefined[i].h;
        char name[MPI_MAX_OBJECT_NAME];
        int len, size;
        struct bmpi_datatype *dt = bmpi_dt_get(h);
        ck_assert_msg(dt != NULL, "%s is not a valid handle", predefined[i].name);
        OK(MPI_Type_size(h, &size));
        ck_assert_msg(size == predefined[i].size, "%s: size %d, want %d", predefined[i].name, size,
                      predefined[i].size);
        /* MPICH handles carry the size in bits 8-15 */
        if (((uint32_t)h >> 24) == 0x4c)
            ck_assert_int_eq(((uint32_t)h >> 8) & 0xff, size);
        OK(MPI_Type_get_name(h, name, &len));
        ck_assert_str_eq(name, predefined[i].name);
        ck_assert_int_eq(len, (int)strlen(predefined[i].name));
        int ni, na, nt, comb;
        OK(MPI_Type_get_envelope(h, &ni, &na, &nt, &comb));
        ck_assert_int_eq(comb, MPI_COMBINER_NAMED);
        ck_assert_int_eq(ni + na + nt, 0);
        ck_assert(bmpi_dt_check_usable(h, &dt) == BMPI_OK);
        ck_assert_int_eq(bmpi_dt_basic(dt), h);
        check_engine(h, 3);
    }
    ck_assert_ptr_null(bmpi_dt_get(MPI_DATATYPE_NULL));
    ck_assert_ptr_null(bmpi_dt_get((MPI_Datatype)0x4c000499)); /* unused index */
    ck_assert_ptr_null(bmpi_dt_get((MPI_Datatype)0x8c000009));
    ck_assert_ptr_null(bmpi_dt_get((MPI_Datatype)0x44000000)); /* MPI_COMM_WORLD */
    ck_assert_ptr_null(bmpi_dt_get((MPI_Datatype)0xcc000000)); /* no derived type yet */
}
END_TEST

START_TEST(pair_layouts)
{
    /* true layouts: value, padding, index, padding */
    expect_layout(MPI_FLOAT_INT, 8, 0, 8, 0, 8);
    expect_layout(MPI_DOUBLE_INT, 12, 0, 16, 0, 12);
    expect_layout(MPI_LONG_INT, 12, 0, 16, 0, 12);
    expect_layout(MPI_SHORT_INT, 6, 0, 8, 0, 8);
    expect_layout(MPI_2INT, 8, 0, 8, 0, 8);
    expect_layout(MPI_LONG_DOUBLE_INT, 20, 0, 32, 0, 20);
    struct bmpi_datatype *dt = bmpi_dt_get(MPI_DOUBLE_INT);
    ck_assert(!bmpi_dt_is_contig(dt));
    ck_assert(bmpi_dt_is_contig(bmpi_dt_get(MPI_2INT)));
    ck_assert(bmpi_dt_is_contig(bmpi_dt_get(MPI_FLOAT_INT)));
    ck_assert_int_eq(bmpi_dt_basic(dt), MPI_DOUBLE_INT);
    /* a pair is two basic elements */
    ck_assert_int_eq(bmpi_dt_elements(dt, 12), 2);
    ck_assert_int_eq(bmpi_dt_elements(dt, 8), 1);
    ck_assert_int_eq(bmpi_dt_elements(dt, 10), -1);
    /* contiguous of pairs keeps the pair as its basic type */
    MPI_Datatype t;
    OK(MPI_Type_contiguous(4, MPI_SHORT_INT, &t));
    OK(MPI_Type_commit(&t));
    ck_assert_int_eq(bmpi_dt_basic(bmpi_dt_get(t)), MPI_SHORT_INT);
    expect_layout(t, 24, 0, 32, 0, 32);
    check_and_free(t);
}
END_TEST

START_TEST(f90_types)
{
    MPI_Datatype t, u;
    int ni, na, nt, comb, ints[2];
    OK(MPI_Type_create_f90_real(10, MPI_UNDEFINED, &t));
    ck_assert_int_eq(size_of(t), 8);
    ck_assert_int_eq(bmpi_dt_basic(bmpi_dt_get(t)), MPI_REAL8);
    OK(MPI_Type_get_envelope(t, &ni, &na, &nt, &comb));
    ck_assert_int_eq(comb, MPI_COMBINER_F90_REAL);
    ck_assert_int_eq(ni, 2);
    ck_assert_int_eq(na + nt, 0);
    OK(MPI_Type_get_contents(t, 2, 0, 0, ints, NULL, NULL));
    ck_assert_int_eq(ints[0], 10);
    ck_assert_int_eq(ints[1], MPI_UNDEFINED);
    /* the same parameters give the same type */
    OK(MPI_Type_create_f90_real(10, MPI_UNDEFINED, &u));
    ck_assert_int_eq(t, u);
    OK(MPI_Type_create_f90_complex(MPI_UNDEFINED, 40, &t));
    ck_assert_int_eq(size_of(t), 16);
    OK(MPI_Type_create_f90_integer(5, &t));
    ck_assert_int_eq(size_of(t), 4);
    OK(MPI_Type_get_envelope(t, &ni, &na, &nt, &comb));
    ck_assert_int_eq(comb, MPI_COMBINER_F90_INTEGER);
    ck_assert_int_eq(ni, 1);
    /* usable in other types, and by itself */
    OK(MPI_Type_vector(3, 2, 3, t, &u));
    check_and_free(u);
    check_engine(t, 3);
}
END_TEST

START_TEST(match_size_and_value_index)
{
    MPI_Datatype t;
    OK(MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &t));
    ck_assert_int_eq(size_of(t), 8);
    OK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 2, &t));
    ck_assert_int_eq(size_of(t), 2);
    OK(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 16, &t));
    ck_assert_int_eq(size_of(t), 16);
    OK(MPI_Type_get_value_index(MPI_DOUBLE, MPI_INT, &t));
    ck_assert_int_eq(t, MPI_DOUBLE_INT);
    OK(MPI_Type_get_value_index(MPI_INT, MPI_INT, &t));
    ck_assert_int_eq(t, MPI_2INT);
    OK(MPI_Type_get_value_index(MPI_CHAR, MPI_INT, &t));
    ck_assert_int_eq(t, MPI_DATATYPE_NULL);
}
END_TEST

/* --- layouts, by hand -------------------------------------------------------------- */

START_TEST(layouts)
{
    MPI_Datatype t, u;
    /* 3 blocks of 2 ints, 4 ints apart */
    OK(MPI_Type_vector(3, 2, 4, MPI_INT, &t));
    expect_layout(t, 24, 0, 40, 0, 40);
    check_and_free(t);

    /* negative stride: doubles at 0, -16, -32 */
    OK(MPI_Type_vector(3, 1, -2, MPI_DOUBLE, &t));
    expect_layout(t, 24, -32, 40, -32, 40);
    check_and_free(t);

    /* resized: explicit bounds, data untouched */
    OK(MPI_Type_create_resized(MPI_INT, -4, 16, &t));
    expect_layout(t, 4, -4, 16, 0, 4);
    check_type(t);
    /* ... and they stick: a contiguous of it spaces elements by 16 */
    OK(MPI_Type_contiguous(3, t, &u));
    expect_layout(u, 12, -4, 48, 0, 36);
    check_and_free(u);
    OK(MPI_Type_free(&t));

    /* struct {double; char}: padded to 16 like the C struct */
    {
        int bl[2] = {1, 1};
        MPI_Aint d[2] = {0, 8};
        MPI_Datatype ty[2] = {MPI_DOUBLE, MPI_CHAR};
        OK(MPI_Type_create_struct(2, bl, d, ty, &t));
        expect_layout(t, 9, 0, 16, 0, 9);
        check_and_free(t);
    }
    /* struct with a gap and a negative displacement: char at -3, int at 8 */
    {
        int bl[2] = {2, 1};
        MPI_Aint d[2] = {-3, 8};
        MPI_Datatype ty[2] = {MPI_CHAR, MPI_INT};
        OK(MPI_Type_create_struct(2, bl, d, ty, &t));
        expect_layout(t, 6, -3, 16, -3, 15); /* ub 12, padded to a multiple of 4 */
        check_and_free(t);
    }
    /* subarray, C order: 4x5 ints, 2x3 from (1,2) */
    {
        int sz[2] = {4, 5}, sub[2] = {2, 3}, st[2] = {1, 2};
        OK(MPI_Type_create_subarray(2, sz, sub, st, MPI_ORDER_C, MPI_INT, &t));
        expect_layout(t, 24, 0, 80, 28, 32);
        check_and_free(t);
        OK(MPI_Type_create_subarray(2, sz, sub, st, MPI_ORDER_FORTRAN, MPI_INT, &t));
        expect_layout(t, 24, 0, 80, 36, 40);
        check_and_free(t);
    }
    /* empty types */
    OK(MPI_Type_contiguous(0, MPI_INT, &t));
    expect_layout(t, 0, 0, 0, 0, 0);
    check_and_free(t);
    {
        int bl[2] = {0, 0}, dis[2] = {5, 7};
        OK(MPI_Type_indexed(2, bl, dis, MPI_DOUBLE, &t));
        expect_layout(t, 0, 0, 0, 0, 0);
        check_and_free(t);
    }
    /* hindexed, blocks out of order */
    {
        int bl[3] = {1, 2, 1};
        MPI_Aint d[3] = {100, -20, 40};
        OK(MPI_Type_create_hindexed(3, bl, d, MPI_SHORT, &t));
        expect_layout(t, 8, -20, 122, -20, 122);
        check_and_free(t);
    }
}
END_TEST

START_TEST(contig_detection)
{
    MPI_Datatype t, u;
    OK(MPI_Type_contiguous(10, MPI_DOUBLE, &t));
    OK(MPI_Type_commit(&t));
    ck_assert(bmpi_dt_is_contig(bmpi_dt_get(t)));
    ck_assert_int_eq(bmpi_dt_basic(bmpi_dt_get(t)), MPI_DOUBLE);
    /* a vector whose stride equals its block is contiguous too */
    OK(MPI_Type_vector(4, 3, 3, t, &u));
    OK(MPI_Type_commit(&u));
    ck_assert(bmpi_dt_is_contig(bmpi_dt_get(u)));
    ck_assert_int_eq(bmpi_dt_get(u)->node->nsegs, 1);
    OK(MPI_Type_free(&u));
    /* a real vector is not, and stays one segment */
    OK(MPI_Type_vector(1000, 1, 2, MPI_DOUBLE, &u));
    OK(MPI_Type_commit(&u));
    struct bmpi_datatype *dt = bmpi_dt_get(u);
    ck_assert(!bmpi_dt_is_contig(dt));
    ck_assert_int_eq(dt->node->nsegs, 1);
    ck_assert_int_eq(dt->node->segs[0].count, 1000);
    OK(MPI_Type_free(&u));
    /* struct {int, int} with no gap merges into one block */
    {
        int bl[2] = {1, 1};
        MPI_Aint d[2] = {0, 4};
        MPI_Datatype ty[2] = {MPI_INT, MPI_INT};
        OK(MPI_Type_create_struct(2, bl, d, ty, &u));
        OK(MPI_Type_commit(&u));
        ck_assert(bmpi_dt_is_contig(bmpi_dt_get(u)));
        ck_assert_int_eq(bmpi_dt_basic(bmpi_dt_get(u)), MPI_INT);
        OK(MPI_Type_free(&u));
    }
    /* mixed basic types have none */
    {
        int bl[2] = {1, 1};
        MPI_Aint d[2] = {0, 8};
        MPI_Datatype ty[2] = {MPI_DOUBLE, MPI_LONG};
        OK(MPI_Type_create_struct(2, bl, d, ty, &u));
        OK(MPI_Type_commit(&u));
        ck_assert(bmpi_dt_is_contig(bmpi_dt_get(u)));
        ck_assert_int_eq(bmpi_dt_basic(bmpi_dt_get(u)), MPI_DATATYPE_NULL);
        OK(MPI_Type_free(&u));
    }
    /* a 3-d subarray is three nested loops, not a block list */
    {
        int sz[3] = {50, 60, 70}, sub[3] = {10, 20, 30}, st[3] = {5, 6, 7};
        OK(MPI_Type_create_subarray(3, sz, sub, st, MPI_ORDER_C, MPI_DOUBLE, &u));
        OK(MPI_Type_commit(&u));
        dt = bmpi_dt_get(u);
        ck_assert_int_le(dt->node->depth, 3);
        ck_assert_int_le(dt->node->nsegs, 1);
        OK(MPI_Type_free(&u));
    }
    OK(MPI_Type_free(&t));
}
END_TEST

/* --- nested and odd types against the reference ------------------------------------- */

START_TEST(nested_types)
{
    MPI_Datatype vec, idx, st, rs, outer, sub;
    /* indexed with a negative displacement */
    int bl[3] = {2, 1, 3}, dis[3] = {4, -2, 9};
    OK(MPI_Type_indexed(3, bl, dis, MPI_SHORT, &idx));
    /* vector of it with negative stride */
    OK(MPI_Type_vector(3, 2, -3, idx, &vec));
    /* resized to a negative lb */
    OK(MPI_Type_create_resized(vec, -50, 40, &rs));
    /* struct of (resized, double, subarray) with gaps */
    int sz[2] = {3, 4}, ssz[2] = {2, 2}, sst[2] = {1, 1};
    OK(MPI_Type_create_subarray(2, sz, ssz, sst, MPI_ORDER_FORTRAN, MPI_CHAR, &sub));
    int sbl[3] = {2, 1, 2};
    MPI_Aint sd[3] = {-100, 7, 200};
    MPI_Datatype sty[3] = {rs, MPI_DOUBLE, sub};
    OK(MPI_Type_create_struct(3, sbl, sd, sty, &st));
    /* the parts may go now: the struct holds them */
    OK(MPI_Type_free(&idx));
    OK(MPI_Type_free(&vec));
    OK(MPI_Type_free(&rs));
    OK(MPI_Type_free(&sub));
    OK(MPI_Type_contiguous(2, st, &outer));
    check_type(st);
    check_and_free(outer);
    OK(MPI_Type_free(&st));
}
END_TEST

/* darray goes through the internal constructor (see type_api.c on mpi.h) */
static MPI_Datatype darray(int size, int rank, int nd, const int *g, const int *dist,
                           const int *darg, const int *ps, int order, MPI_Datatype old)
{
    struct bmpi_datatype *dt;
    MPI_Datatype h;
    ck_assert_int_eq(bmpi_dt_darray(size, rank, nd, g, dist, darg, ps, order, bmpi_dt_get(old),
                                    &dt),
                     BMPI_OK);
    ck_assert_int_eq(bmpi_dt_register(dt, &h), BMPI_OK);
    return h;
}

/* Constructor k of every constructor's list over base b, committed: each
 * constructor, vectors with overlapping blocks and a negative stride,
 * both subarray orders, a struct, a darray and a nesting. */
enum { CASE_STRUCT = 12, N_CONSTRUCTOR_CASES = 15 }; /* the struct: its last item a double */

static MPI_Datatype constructor_case(int k, MPI_Datatype b)
{
    MPI_Datatype t = MPI_DATATYPE_NULL, v;
    int bl[4] = {1, 0, 3, 2}, dis[4] = {0, 3, 7, -4};
    MPI_Aint hd[4] = {0, 24, 64, -40};
    int sz[3] = {4, 3, 5}, sub[3] = {2, 3, 1}, st[3] = {1, 0, 4};
    int g[2] = {10, 7}, dist[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK};
    int darg[2] = {2, MPI_DISTRIBUTE_DFLT_DARG}, ps[2] = {2, 2};
    int sbl[2] = {2, 1};
    MPI_Aint sd[2] = {0, 40};
    MPI_Datatype stypes[2] = {b, MPI_DOUBLE};
    switch (k) {
    case 0: OK(MPI_Type_contiguous(3, b, &t)); break;
    case 1: OK(MPI_Type_vector(3, 2, 3, b, &t)); break;
    case 2: OK(MPI_Type_vector(3, 2, 1, b, &t)); break; /* overlapping blocks */
    case 3: OK(MPI_Type_create_hvector(4, 2, -37, b, &t)); break;
    case 4: OK(MPI_Type_indexed(4, bl, dis, b, &t)); break;
    case 5: OK(MPI_Type_create_hindexed(4, bl, hd, b, &t)); break;
    case 6: OK(MPI_Type_create_indexed_block(4, 2, dis, b, &t)); break;
    case 7: OK(MPI_Type_create_hindexed_block(4, 1, hd, b, &t)); break;
    case 8: OK(MPI_Type_create_resized(b, 3, 100, &t)); break;
    case 9: OK(MPI_Type_dup(b, &t)); break;
    case 10: OK(MPI_Type_create_subarray(3, sz, sub, st, MPI_ORDER_C, b, &t)); break;
    case 11: OK(MPI_Type_create_subarray(3, sz, sub, st, MPI_ORDER_FORTRAN, b, &t)); break;
    case CASE_STRUCT: OK(MPI_Type_create_struct(2, sbl, sd, stypes, &t)); break;
    case 13: t = darray(4, 3, 2, g, dist, darg, ps, MPI_ORDER_C, b); break;
    case 14:
        OK(MPI_Type_vector(2, 1, 3, b, &v));
        OK(MPI_Type_contiguous(2, v, &t));
        OK(MPI_Type_free(&v));
        break;
    }
    OK(MPI_Type_commit(&t));
    return t;
}

START_TEST(every_constructor)
{
    MPI_Datatype base[] = {MPI_INT, MPI_DOUBLE_INT, MPI_SHORT_INT, MPI_C_DOUBLE_COMPLEX, MPI_CHAR};
    for (size_t i = 0; i < sizeof base / sizeof base[0]; i++)
        for (int k = 0; k < N_CONSTRUCTOR_CASES; k++)
            check_and_free(constructor_case(k, base[i]));
}
END_TEST

START_TEST(darrays)
{
    int g[3] = {10, 7, 5};
    int dist_sets[][3] = {
        {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_NONE},
        {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_NONE},
        {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_NONE},
        {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_NONE},
    };
    int darg_sets[][3] = {
        {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG},
        {2, 3, MPI_DISTRIBUTE_DFLT_DARG},
    };
    int ps[3] = {3, 2, 1};
    for (size_t d = 0; d < sizeof dist_sets / sizeof dist_sets[0]; d++)
        for (size_t a = 0; a < sizeof darg_sets / sizeof darg_sets[0]; a++)
            for (int order = MPI_ORDER_C; order <= MPI_ORDER_FORTRAN; order++)
                for (int rank = 0; rank < 6; rank++) {
                    int darg[3];
                    memcpy(darg, darg_sets[a], sizeof darg);
                    /* block sizes given must cover the dimension */
                    for (int k = 0; k < 3; k++)
                        if (dist_sets[d][k] == MPI_DISTRIBUTE_BLOCK && darg[k] != MPI_DISTRIBUTE_DFLT_DARG &&
                            darg[k] * ps[k] < g[k])
                            darg[k] = MPI_DISTRIBUTE_DFLT_DARG;
                    MPI_Datatype t = darray(6, rank, 3, g, dist_sets[d], darg, ps, order, MPI_INT);
                    MPI_Aint lb, ext;
                    OK(MPI_Type_get_extent(t, &lb, &ext));
                    ck_assert_int_eq(lb, 0);
                    ck_assert_int_eq(ext, 10 * 7 * 5 * 4);
                    int ni, na, nt, comb;
                    OK(MPI_Type_get_envelope(t, &ni, &na, &nt, &comb));
                    ck_assert_int_eq(comb, MPI_COMBINER_DARRAY);
                    ck_assert_int_eq(ni, 4 * 3 + 4);
                    check_and_free(t);
                }
    /* the ranks' pieces tile the array exactly once */
    for (int order = MPI_ORDER_C; order <= MPI_ORDER_FORTRAN; order++) {
        int hits[350] = {0};
        int darg[3] = {2, 3, MPI_DISTRIBUTE_DFLT_DARG};
        for (int rank = 0; rank < 6; rank++) {
            MPI_Datatype t = darray(6, rank, 3, g, dist_sets[1], darg, ps, order, MPI_INT);
            OK(MPI_Type_commit(&t));
            struct bmpi_dt_cursor c;
            struct iovec iov[1];
            size_t bytes;
            bmpi_dt_cursor_init(&c, NULL, 1, bmpi_dt_get(t));
            while (bmpi_dt_iov(&c, iov, 1, 4, &bytes) == 1)
                hits[(uintptr_t)iov[0].iov_base / 4]++;
            OK(MPI_Type_free(&t));
        }
        for (int i = 0; i < 350; i++)
            ck_assert_int_eq(hits[i], 1);
    }
}
END_TEST

/* Random nested types: the broadest check of the compiler and the cursor. */
static unsigned rnd(unsigned *s, unsigned n)
{
    *s = *s * 1664525u + 1013904223u;
    return (*s >> 8) % n;
}

static int rrange(unsigned *s, int lo, int hi) { return lo + (int)rnd(s, (unsigned)(hi - lo + 1)); }

static MPI_Datatype rand_type(int depth, unsigned *s)
{
    static const MPI_Datatype leaves[] = {MPI_CHAR, MPI_SHORT, MPI_INT, MPI_DOUBLE,
                                          MPI_DOUBLE_INT, MPI_SHORT_INT, MPI_2INT,
                                          MPI_C_FLOAT_COMPLEX, MPI_LONG_DOUBLE_INT};
    if (depth == 0 || rnd(s, 5) == 0)
        return leaves[rnd(s, sizeof leaves / sizeof leaves[0])];
    MPI_Datatype c = rand_type(depth - 1, s), t = MPI_DATATYPE_NULL;
    int n = rrange(s, 1, 4), bl[4], dis[4];
    MPI_Aint hd[4];
    for (int i = 0; i < 4; i++) {
        bl[i] = rrange(s, 0, 3);
        dis[i] = rrange(s, -6, 6);
        hd[i] = rrange(s, -100, 100);
    }
    switch (rnd(s, 11)) {
    case 0: OK(MPI_Type_contiguous(n, c, &t)); break;
    case 1: OK(MPI_Type_vector(n, bl[0], rrange(s, -5, 5), c, &t)); break;
    case 2: OK(MPI_Type_create_hvector(n, bl[0], rrange(s, -64, 64), c, &t)); break;
    case 3: OK(MPI_Type_indexed(n, bl, dis, c, &t)); break;
    case 4: OK(MPI_Type_create_hindexed(n, bl, hd, c, &t)); break;
    case 5: OK(MPI_Type_create_indexed_block(n, bl[0], dis, c, &t)); break;
    case 6: OK(MPI_Type_create_hindexed_block(n, bl[0], hd, c, &t)); break;
    case 7: {
        MPI_Datatype ty[4] = {c, rand_type(depth - 1, s), rand_type(depth - 1, s), MPI_INT};
        OK(MPI_Type_create_struct(n, bl, hd, ty, &t));
        for (int i = 1; i < 3; i++)
            free_if_derived(ty[i]);
        break;
    }
    case 8: OK(MPI_Type_create_resized(c, rrange(s, -16, 16), rrange(s, 1, 64), &t)); break;
    case 9: {
        int nd = rrange(s, 1, 3), sz[3], sub[3], st[3];
        for (int i = 0; i < nd; i++) {
            sz[i] = rrange(s, 1, 4);
            sub[i] = rrange(s, 0, sz[i]);
            st[i] = rrange(s, 0, sz[i] - sub[i]);
        }
        OK(MPI_Type_create_subarray(nd, sz, sub, st, rnd(s, 2) ? MPI_ORDER_C : MPI_ORDER_FORTRAN,
                                    c, &t));
        break;
    }
    default: OK(MPI_Type_dup(c, &t)); break;
    }
    free_if_derived(c); /* the new type keeps it alive */
    return t;
}

/* --- other representations (dt_repr.c) ------------------------------------------- */

/* A representation in which MPI_INT takes 8 bytes (and the rest their
 * memory size), and one in which nothing changes. */
static int int_as_8(const struct bmpi_datatype *basic, void *ctx, MPI_Count *size)
{
    (void)ctx;
    *size = basic->handle == MPI_INT ? 8 : (MPI_Count)bmpi_dt_size(basic);
    return BMPI_OK;
}

static int unchanged(const struct bmpi_datatype *basic, void *ctx, MPI_Count *size)
{
    (void)ctx;
    *size = (MPI_Count)bmpi_dt_size(basic);
    return BMPI_OK;
}

/* a and b describe the same bytes: bounds, and what packing 2 elements
 * of each out of one patterned buffer gives. */
static void expect_same_bytes(struct bmpi_datatype *a, MPI_Datatype b, int k)
{
    struct bmpi_datatype *B = bmpi_dt_get(b);
    ck_assert_msg(bmpi_dt_size(a) == bmpi_dt_size(B), "case %d: size %zu, expected %zu", k, bmpi_dt_size(a),
                  bmpi_dt_size(B));
    ck_assert_msg(bmpi_dt_lb(a) == bmpi_dt_lb(B) && bmpi_dt_extent(a) == bmpi_dt_extent(B),
                  "case %d: lb %ld extent %ld, expected %ld %ld", k, (long)bmpi_dt_lb(a), (long)bmpi_dt_extent(a),
                  (long)bmpi_dt_lb(B), (long)bmpi_dt_extent(B));
    ck_assert_int_eq(bmpi_dt_true_lb(a), bmpi_dt_true_lb(B));
    ck_assert_int_eq(bmpi_dt_true_extent(a), bmpi_dt_true_extent(B));
    enum { SPAN = 1 << 14 };
    static unsigned char src[2 * SPAN], pa[SPAN], pb[SPAN];
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (unsigned char)(i % 251);
    ck_assert(2 * bmpi_dt_size(a) <= SPAN);
    bmpi_dt_pack_all(src + SPAN, 2, a, pa);
    bmpi_dt_pack_all(src + SPAN, 2, B, pb);
    ck_assert_msg(!memcmp(pa, pb, 2 * bmpi_dt_size(a)), "case %d: the layouts select other bytes", k);
}

/* Relaid out with MPI_INT in 8 bytes, every constructor's type over
 * MPI_INT is the same type over MPI_INT64_T (element counts scale, bytes stay); with no size
 * changed it is itself. Sizes and prefixes in the representation too. */
START_TEST(relayouts)
{
    for (int k = 0; k < N_CONSTRUCTOR_CASES; k++) {
        MPI_Datatype on_int = constructor_case(k, MPI_INT), on_int64 = constructor_case(k, MPI_INT64_T);
        struct bmpi_datatype *dt = bmpi_dt_get(on_int), *r;
        ck_assert_int_eq(bmpi_dt_relayout(dt, int_as_8, NULL, &r), BMPI_OK);
        expect_same_bytes(r, on_int64, k);
        bmpi_dt_release(r);
        ck_assert_int_eq(bmpi_dt_relayout(dt, unchanged, NULL, &r), BMPI_OK);
        expect_same_bytes(r, on_int, k);
        bmpi_dt_release(r);

        MPI_Count size, mem;
        ck_assert_int_eq(bmpi_dt_size_in(dt, int_as_8, NULL, &size), BMPI_OK);
        ck_assert_int_eq(size, (MPI_Count)bmpi_dt_size(bmpi_dt_get(on_int64)));
        /* every item but the last whole, and 3 of the last one's 8 bytes
         * (an int, or the struct's double) */
        MPI_Count last = k == CASE_STRUCT ? 8 : 4; /* memory bytes of the last item */
        ck_assert_int_eq(bmpi_dt_prefix_in(dt, int_as_8, NULL, size - 8 + 3, &mem), BMPI_OK);
        ck_assert_int_eq(mem, (MPI_Count)bmpi_dt_size(dt) - last);
        /* one byte short: each part on the way to the last item is cut */
        ck_assert_int_eq(bmpi_dt_prefix_in(dt, int_as_8, NULL, size - 1, &mem), BMPI_OK);
        ck_assert_int_eq(mem, (MPI_Count)bmpi_dt_size(dt) - last);
        ck_assert_int_eq(bmpi_dt_prefix_in(dt, int_as_8, NULL, size, &mem), BMPI_OK);
        ck_assert_int_eq(mem, (MPI_Count)bmpi_dt_size(dt));
        OK(MPI_Type_free(&on_int));
        OK(MPI_Type_free(&on_int64));
    }
}
END_TEST

START_TEST(random_types)
{
    unsigned s = 12345u + (unsigned)_i * 7919u;
    for (int k = 0; k < 60; k++) {
        MPI_Datatype t = rand_type(3, &s);
        check_type(t);
        free_if_derived(t);
    }
}
END_TEST

/* --- large counts, without large memory ------------------------------------------------ */

START_TEST(large_counts)
{
    MPI_Datatype gig, big;
    OK(MPI_Type_contiguous(1 << 30, MPI_BYTE, &gig));
    OK(MPI_Type_contiguous(1 << 20, gig, &big)); /* 2^50 bytes */
    int size;
    MPI_Count sx;
    OK(MPI_Type_size(big, &size));
    ck_assert_int_eq(size, MPI_UNDEFINED);
    OK(MPI_Type_size_x(big, &sx));
    ck_assert_int_eq(sx, (MPI_Count)1 << 50);
    OK(MPI_Type_commit(&big));
    struct bmpi_datatype *dt = bmpi_dt_get(big);
    ck_assert(bmpi_dt_is_contig(dt));
    size_t bytes;
    ck_assert(bmpi_dt_total(dt, 1 << 13, &bytes));
    ck_assert(!bmpi_dt_total(dt, (size_t)1 << 14, &bytes)); /* 2^64 overflows */
    /* elements beyond int */
    MPI_Status st;
    memset(&st, 0, sizeof st);
    OK(MPI_Status_set_elements_x(&st, MPI_BYTE, (MPI_Count)1 << 40));
    OK(MPI_Get_elements_x(&st, big, &sx));
    ck_assert_int_eq(sx, (MPI_Count)1 << 40);
    int n;
    OK(MPI_Get_elements(&st, big, &n));
    ck_assert_int_eq(n, MPI_UNDEFINED);
    OK(MPI_Type_free(&big));
    OK(MPI_Type_free(&gig));

    /* A strided type over 32 GiB of address space, reserved but barely
     * touched: seek far into the stream and pack from there. */
    const size_t span = (size_t)1 << 35;
    char *mem = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                     -1, 0);
    if (mem == MAP_FAILED)
        return; /* no room for the reservation here: nothing to test */
    MPI_Datatype vec, arr;
    OK(MPI_Type_vector(1 << 12, 1, 2, MPI_INT, &vec)); /* 16 KiB of data, 32 KiB extent */
    OK(MPI_Type_contiguous(1 << 20, vec, &arr));       /* 16 GiB of data, 32 GiB extent */
    OK(MPI_Type_commit(&arr));
    dt = bmpi_dt_get(arr);
    ck_assert_int_eq(dt->size, (MPI_Count)1 << 34);
    /* int number k of the stream: vector k / 4096, int k % 4096 of it */
#define AT(k) (*(int *)(mem + ((k) >> 12) * 32764 + ((k) & 4095) * 8))
    const size_t k0 = ((size_t)3 << 30) + 12345; /* 12 GiB into the stream */
    for (size_t k = k0; k < k0 + 1024; k++)
        AT(k) = (int)(k * 2654435761u);
    struct bmpi_dt_cursor c;
    bmpi_dt_cursor_init(&c, mem, 1, dt);
    ck_assert_uint_eq(c.total, (size_t)1 << 34);
    bmpi_dt_cursor_seek(&c, k0 * 4);
    int out[1024];
    ck_assert_uint_eq(bmpi_dt_pack(&c, out, sizeof out), sizeof out);
    for (size_t k = 0; k < 1024; k++)
        ck_assert_int_eq(out[k], (int)((k0 + k) * 2654435761u));
    /* and back, from a different position */
    for (size_t k = 0; k < 1024; k++)
        out[k] = -(int)k;
    bmpi_dt_cursor_seek(&c, k0 * 4 + 8);
    ck_assert_uint_eq(bmpi_dt_unpack(&c, out, 16), 16);
    ck_assert_int_eq(AT(k0 + 2), 0);
    ck_assert_int_eq(AT(k0 + 5), -3);
    ck_assert_int_eq(AT(k0 + 6), (int)((k0 + 6) * 2654435761u));
#undef AT
    OK(MPI_Type_free(&arr));
    OK(MPI_Type_free(&vec));
    munmap(mem, span);
}
END_TEST

/* Nesting that no merging flattens: each level doubles the blocks. The
 * cursor's depth is bounded, so commit refuses beyond it, clearly. */
START_TEST(too_deep)
{
    MPI_Datatype t = MPI_INT, u;
    int level, rc = BMPI_OK;
    for (level = 1; level <= 30 && rc == BMPI_OK; level++) {
        OK(MPI_Type_create_hvector(2, 1, 3 * ext_of(t), t, &u));
        if (t != MPI_INT)
            OK(MPI_Type_free(&t));
        t = u;
        rc = bmpi_dt_commit(bmpi_dt_get(t));
    }
    ck_assert_int_eq(rc, MPI_ERR_TYPE);
    ck_assert_int_gt(level, 8);
    ck_assert_ptr_nonnull(strstr(bmpi_err_reason(), "nested too deeply"));
    OK(MPI_Type_free(&t));
}
END_TEST

/* --- envelopes, contents, lifetimes -------------------------------------------------- */

START_TEST(envelopes)
{
    MPI_Datatype v, s, r;
    int ni, na, nt, comb, ints[8];
    MPI_Aint ad[4];
    MPI_Datatype ty[4];
    OK(MPI_Type_vector(5, 2, 7, MPI_FLOAT, &v));
    OK(MPI_Type_get_envelope(v, &ni, &na, &nt, &comb));
    ck_assert_int_eq(comb, MPI_COMBINER_VECTOR);
    ck_assert_int_eq(ni, 3);
    ck_assert_int_eq(na, 0);
    ck_assert_int_eq(nt, 1);
    OK(MPI_Type_get_contents(v, 8, 4, 4, ints, ad, ty));
    ck_assert_int_eq(ints[0], 5);
    ck_assert_int_eq(ints[1], 2);
    ck_assert_int_eq(ints[2], 7);
    ck_assert_int_eq(ty[0], MPI_FLOAT);

    int bl[2] = {3, 1};
    MPI_Aint d[2] = {-8, 64};
    MPI_Datatype st[2] = {v, MPI_CHAR};
    OK(MPI_Type_create_struct(2, bl, d, st, &s));
    OK(MPI_Type_get_envelope(s, &ni, &na, &nt, &comb));
    ck_assert_int_eq(comb, MPI_COMBINER_STRUCT);
    ck_assert_int_eq(ni, 3);
    ck_assert_int_eq(na, 2);
    ck_assert_int_eq(nt, 2);

    /* the struct keeps v alive after the user frees it ... */
    MPI_Datatype vh = v;
    OK(MPI_Type_free(&v));
    ck_assert_ptr_null(bmpi_dt_get(vh));
    check_type(s);
    /* ... and get_contents hands it out again, as a handle to free */
    OK(MPI_Type_get_contents(s, 8, 4, 4, ints, ad, ty));
    ck_assert_int_eq(ints[0], 2);
    ck_assert_int_eq(ints[1], 3);
    ck_assert_int_eq(ints[2], 1);
    ck_assert_int_eq(ad[0], -8);
    ck_assert_int_eq(ad[1], 64);
    ck_assert_int_eq(ty[1], MPI_CHAR);
    ck_assert_ptr_nonnull(bmpi_dt_get(ty[0]));
    OK(MPI_Type_get_envelope(ty[0], &ni, &na, &nt, &comb));
    ck_assert_int_eq(comb, MPI_COMBINER_VECTOR);
    OK(MPI_Type_free(&ty[0]));

    OK(MPI_Type_create_resized(s, -4, 1000, &r));
    OK(MPI_Type_get_envelope(r, &ni, &na, &nt, &comb));
    ck_assert_int_eq(comb, MPI_COMBINER_RESIZED);
    ck_assert_int_eq(ni + na * 10 + nt * 100, 0 + 20 + 100);
    OK(MPI_Type_get_contents(r, 0, 2, 1, NULL, ad, ty));
    ck_assert_int_eq(ad[0], -4);
    ck_assert_int_eq(ad[1], 1000);
    ck_assert_int_eq(ty[0], s);
    OK(MPI_Type_free(&ty[0]));
    OK(MPI_Type_free(&s));
    check_and_free(r);

    /* subarray keeps its own arguments */
    int sz[2] = {6, 7}, sub[2] = {2, 3}, stt[2] = {4, 1};
    OK(MPI_Type_create_subarray(2, sz, sub, stt, MPI_ORDER_FORTRAN, MPI_DOUBLE, &s));
    OK(MPI_Type_get_envelope(s, &ni, &na, &nt, &comb));
    ck_assert_int_eq(comb, MPI_COMBINER_SUBARRAY);
    ck_assert_int_eq(ni, 8);
    OK(MPI_Type_get_contents(s, 8, 0, 1, ints, NULL, ty));
    int want[8] = {2, 6, 7, 2, 3, 4, 1, MPI_ORDER_FORTRAN};
    ck_assert_mem_eq(ints, want, sizeof want);
    ck_assert_int_eq(ty[0], MPI_DOUBLE);
    OK(MPI_Type_free(&s));

    /* dup: same layout, committed if the original was, no name */
    OK(MPI_Type_contiguous(3, MPI_INT, &v));
    OK(MPI_Type_set_name(v, "three ints"));
    OK(MPI_Type_commit(&v));
    OK(MPI_Type_dup(v, &s));
    struct bmpi_datatype *dt;
    ck_assert_int_eq(bmpi_dt_check_usable(s, &dt), BMPI_OK);
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    OK(MPI_Type_get_name(v, name, &len));
    ck_assert_str_eq(name, "three ints");
    ck_assert_str_eq(bmpi_dt_name(v), "three ints");
    OK(MPI_Type_get_name(s, name, &len));
    ck_assert_str_eq(name, "");
    ck_assert_int_eq(len, 0);
    OK(MPI_Type_free(&v));
    OK(MPI_Type_free(&s));
}
END_TEST

START_TEST(lifetimes)
{
    MPI_Datatype t, h;
    OK(MPI_Type_vector(10, 1, 3, MPI_INT, &t));
    struct bmpi_datatype *dt;
    /* uncommitted: valid, but not for communication */
    ck_assert_ptr_nonnull(bmpi_dt_get(t));
    ck_assert_int_eq(bmpi_dt_check_usable(t, &dt), MPI_ERR_TYPE);
    ck_assert_int_eq(bmpi_dt_check_usable(MPI_DATATYPE_NULL, &dt), MPI_ERR_TYPE);
    OK(MPI_Type_commit(&t));
    ck_assert_int_eq(bmpi_dt_check_usable(t, &dt), BMPI_OK);
    OK(MPI_Type_commit(&t)); /* again: harmless */

    /* a pending operation keeps it alive across MPI_Type_free */
    bmpi_dt_retain(dt);
    h = t;
    OK(MPI_Type_free(&t));
    ck_assert_int_eq(t, MPI_DATATYPE_NULL);
    ck_assert_ptr_null(bmpi_dt_get(h));
    ck_assert_int_eq(bmpi_dt_check_usable(h, &dt), MPI_ERR_TYPE);
    int src[30], dst[10];
    for (int i = 0; i < 30; i++)
        src[i] = i;
    bmpi_dt_pack_all(src, 1, dt, dst);
    for (int i = 0; i < 10; i++)
        ck_assert_int_eq(dst[i], 3 * i);
    bmpi_dt_release(dt);

    /* a freed slot's next tenant gets a different handle */
    OK(MPI_Type_contiguous(2, MPI_INT, &t));
    ck_assert_int_ne(t, h);
    ck_assert_ptr_null(bmpi_dt_get(h));
    OK(MPI_Type_free(&t));

    /* many types; finalize frees whatever is left, then all works again */
    MPI_Datatype keep[100];
    for (int i = 0; i < 100; i++)
        OK(MPI_Type_contiguous(2, i % 5 ? keep[i - 1] : MPI_INT, &keep[i]));
    bmpi_dt_finalize();
    ck_assert_ptr_null(bmpi_dt_get(keep[50]));
    ck_assert_int_eq(bmpi_dt_init(), BMPI_OK);
    ck_assert_ptr_nonnull(bmpi_dt_get(MPI_INT));
    OK(MPI_Type_contiguous(2, MPI_INT, &t));
    OK(MPI_Type_free(&t));
}
END_TEST

START_TEST(elements_and_counts)
{
    MPI_Datatype t;
    int bl[2] = {1, 1};
    MPI_Aint d[2] = {0, 8};
    MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE};
    OK(MPI_Type_create_struct(2, bl, d, ty, &t));
    OK(MPI_Type_commit(&t));
    MPI_Status st;
    memset(&st, 0, sizeof st);
    int n;
    MPI_Count x;
    /* 3 basic elements: int, double, int = 16 bytes */
    OK(MPI_Status_set_elements(&st, t, 3));
    ck_assert_int_eq(st.count_lo, 16);
    OK(MPI_Get_elements(&st, t, &n));
    ck_assert_int_eq(n, 3);
    OK(MPI_Get_count(&st, t, &n));
    ck_assert_int_eq(n, MPI_UNDEFINED);
    OK(MPI_Status_set_elements_x(&st, t, 4));
    OK(MPI_Get_count(&st, t, &n));
    ck_assert_int_eq(n, 2);
    OK(MPI_Get_elements_x(&st, t, &x));
    ck_assert_int_eq(x, 4);
    /* the cancelled bit survives */
    st.count_hi_and_cancelled |= 1;
    OK(MPI_Status_set_elements_x(&st, MPI_BYTE, ((MPI_Count)5 << 32) + 7));
    ck_assert_int_eq(st.count_hi_and_cancelled & 1, 1);
    OK(MPI_Get_elements_x(&st, MPI_BYTE, &x));
    ck_assert_int_eq(x, ((MPI_Count)5 << 32) + 7);
    /* a byte count ending inside an element */
    st.count_lo = 6;
    st.count_hi_and_cancelled = 0;
    OK(MPI_Get_elements(&st, t, &n));
    ck_assert_int_eq(n, MPI_UNDEFINED);
    OK(MPI_Get_count(&st, MPI_SHORT, &n));
    ck_assert_int_eq(n, 3);
    /* zero-size types count zero */
    MPI_Datatype z;
    OK(MPI_Type_contiguous(0, MPI_INT, &z));
    st.count_lo = 0;
    OK(MPI_Get_count(&st, z, &n));
    ck_assert_int_eq(n, 0);
    OK(MPI_Type_free(&z));
    OK(MPI_Type_free(&t));

    MPI_Aint a1, a2;
    int arr[4];
    OK(MPI_Get_address(&arr[1], &a1));
    OK(MPI_Get_address(&arr[3], &a2));
    ck_assert_int_eq(MPI_Aint_diff(a2, a1), 8);
    ck_assert_int_eq(MPI_Aint_add(a1, 8), a2);
}
END_TEST

/* absolute addresses with MPI_BOTTOM */
START_TEST(bottom)
{
    double x[4] = {1, 2, 3, 4};
    int k = 7;
    MPI_Aint d[2];
    OK(MPI_Get_address(&x[2], &d[0]));
    OK(MPI_Get_address(&k, &d[1]));
    int bl[2] = {2, 1};
    MPI_Datatype ty[2] = {MPI_DOUBLE, MPI_INT}, t;
    OK(MPI_Type_create_struct(2, bl, d, ty, &t));
    OK(MPI_Type_commit(&t));
    char out[20];
    bmpi_dt_pack_all(MPI_BOTTOM, 1, bmpi_dt_get(t), out);
    double y[2];
    int j;
    memcpy(y, out, 16);
    memcpy(&j, out + 16, 4);
    ck_assert(y[0] == 3 && y[1] == 4 && j == 7);
    j = 9;
    memcpy(out + 16, &j, 4);
    bmpi_dt_unpack_all(out, MPI_BOTTOM, 1, bmpi_dt_get(t));
    ck_assert_int_eq(k, 9);
    OK(MPI_Type_free(&t));
}
END_TEST

/* --- the MPI API with an initialised singleton and MPI_ERRORS_RETURN ----------------- */

static void api_setup(void)
{
    OK(MPI_Init(NULL, NULL));
    OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
}

static void api_teardown(void) { MPI_Finalize(); }

START_TEST(api_errors)
{
    MPI_Datatype t = MPI_DATATYPE_NULL, u;
    int bl[2] = {1, -1}, dis[2] = {0, 1};
    ck_assert_int_eq(MPI_Type_contiguous(-1, MPI_INT, &t), MPI_ERR_COUNT);
    ck_assert_int_eq(MPI_Type_vector(-3, 1, 1, MPI_INT, &t), MPI_ERR_COUNT);
    ck_assert_int_eq(MPI_Type_vector(3, -1, 1, MPI_INT, &t), MPI_ERR_ARG);
    ck_assert_int_eq(MPI_Type_indexed(2, bl, dis, MPI_INT, &t), MPI_ERR_ARG);
    ck_assert_int_eq(MPI_Type_contiguous(2, MPI_DATATYPE_NULL, &t), MPI_ERR_TYPE);
    ck_assert_int_eq(MPI_Type_contiguous(2, (MPI_Datatype)0x4c000499, &t), MPI_ERR_TYPE);
    ck_assert_int_eq(MPI_Type_contiguous(2, MPI_INT, NULL), MPI_ERR_ARG);
    u = MPI_INT;
    ck_assert_int_eq(MPI_Type_free(&u), MPI_ERR_TYPE);
    ck_assert_int_eq(MPI_Type_get_contents(MPI_INT, 0, 0, 0, NULL, NULL, NULL), MPI_ERR_TYPE);

    int sz[2] = {4, 4}, sub[2] = {2, 5}, st[2] = {0, 0};
    ck_assert_int_eq(MPI_Type_create_subarray(2, sz, sub, st, MPI_ORDER_C, MPI_INT, &t),
                     MPI_ERR_ARG);
    sub[1] = 2;
    ck_assert_int_eq(MPI_Type_create_subarray(2, sz, sub, st, 99, MPI_INT, &t), MPI_ERR_ARG);
    ck_assert_int_eq(MPI_Type_create_subarray(0, sz, sub, st, MPI_ORDER_C, MPI_INT, &t),
                     MPI_ERR_DIMS);

    /* overflow of the byte arithmetic */
    MPI_Datatype big;
    OK(MPI_Type_contiguous(INT_MAX, MPI_DOUBLE, &big));
    ck_assert_int_eq(MPI_Type_create_hvector(3, 1, LONG_MAX / 2 + 1, big, &t),
                     MPI_ERR_VALUE_TOO_LARGE);
    int n;
    ck_assert_int_eq(MPI_Pack_size(2, big, MPI_COMM_WORLD, &n), MPI_ERR_VALUE_TOO_LARGE);
    OK(MPI_Type_free(&big));

    /* freed handles are invalid */
    OK(MPI_Type_contiguous(2, MPI_INT, &t));
    u = t;
    OK(MPI_Type_free(&t));
    ck_assert_int_eq(MPI_Type_free(&u), MPI_ERR_TYPE);
    ck_assert_int_eq(MPI_Type_size(u, &n), MPI_ERR_TYPE);

    /* packing needs a committed type and room */
    int in[4] = {1, 2, 3, 4}, pos = 0;
    char buf[64];
    OK(MPI_Type_vector(2, 1, 2, MPI_INT, &t));
    ck_assert_int_eq(MPI_Pack(in, 1, t, buf, sizeof buf, &pos, MPI_COMM_WORLD), MPI_ERR_TYPE);
    OK(MPI_Type_commit(&t));
    ck_assert_int_eq(MPI_Pack(in, -1, t, buf, sizeof buf, &pos, MPI_COMM_WORLD), MPI_ERR_COUNT);
    ck_assert_int_eq(MPI_Pack(in, 1, t, buf, 4, &pos, MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
    ck_assert_int_eq(MPI_Pack(in, 1, t, buf, sizeof buf, &pos, MPI_COMM_NULL), MPI_ERR_COMM);
    OK(MPI_Type_free(&t));

    ck_assert_int_eq(MPI_Pack_external_size("native", 1, MPI_INT, (MPI_Aint[1]){0}),
                     MPI_ERR_UNSUPPORTED_DATAREP);
    long big_long = 1L << 40;
    MPI_Aint apos = 0;
    ck_assert_int_eq(MPI_Pack_external("external32", &big_long, 1, MPI_LONG, buf, sizeof buf, &apos),
                     MPI_ERR_CONVERSION);
    ck_assert_int_eq(MPI_Get_count(MPI_STATUS_IGNORE, MPI_INT, &n), MPI_ERR_ARG);

    /* F90 types exist or not, and are not the user's to free */
    ck_assert_int_eq(MPI_Type_create_f90_real(40, MPI_UNDEFINED, &t), MPI_ERR_ARG);
    ck_assert_int_eq(MPI_Type_create_f90_integer(19, &t), MPI_ERR_ARG);
    OK(MPI_Type_create_f90_integer(3, &t));
    ck_assert_int_eq(MPI_Type_free(&t), MPI_ERR_TYPE);
}
END_TEST

START_TEST(api_pack_unpack)
{
    MPI_Datatype t;
    int bl[3] = {1, 2, 1}, dis[3] = {5, 0, 9};
    OK(MPI_Type_indexed(3, bl, dis, MPI_INT, &t));
    OK(MPI_Type_commit(&t));
    int in[20], out[20], size;
    for (int i = 0; i < 20; i++)
        in[i] = 100 + i, out[i] = -1;
    OK(MPI_Pack_size(2, t, MPI_COMM_WORLD, &size));
    ck_assert_int_eq(size, 32);
    char buf[40];
    int pos = 4;
    OK(MPI_Pack(in, 2, t, buf, sizeof buf, &pos, MPI_COMM_WORLD));
    ck_assert_int_eq(pos, 36);
    int first;
    memcpy(&first, buf + 4, 4);
    ck_assert_int_eq(first, 105);
    pos = 4;
    OK(MPI_Unpack(buf, sizeof buf, &pos, out, 2, t, MPI_COMM_WORLD));
    ck_assert_int_eq(pos, 36);
    /* element 2 starts at 10 ints: 15, 10, 11, 19 */
    int want[20] = {100, 101, -1, -1, -1, 105, -1, -1, -1, 109,
                    110, 111, -1, -1, -1, 115, -1, -1, -1, 119};
    ck_assert_mem_eq(out, want, sizeof want);
    pos = 20;
    ck_assert_int_eq(MPI_Unpack(buf, sizeof buf, &pos, out, 2, t, MPI_COMM_WORLD),
                     MPI_ERR_TRUNCATE);
    OK(MPI_Type_free(&t));
}
END_TEST

START_TEST(api_external32)
{
    unsigned char buf[128];
    MPI_Aint pos = 0, size;
    int iv[2] = {1, 0x01020304};
    OK(MPI_Pack_external("external32", iv, 2, MPI_INT, buf, sizeof buf, &pos));
    ck_assert_int_eq(pos, 8);
    unsigned char want_i[8] = {0, 0, 0, 1, 1, 2, 3, 4};
    ck_assert_mem_eq(buf, want_i, 8);

    long lv = -5;
    OK(MPI_Pack_external_size("external32", 3, MPI_LONG, &size));
    ck_assert_int_eq(size, 12);
    pos = 0;
    OK(MPI_Pack_external("external32", &lv, 1, MPI_LONG, buf, sizeof buf, &pos));
    ck_assert_int_eq(pos, 4);
    unsigned char want_l[4] = {0xff, 0xff, 0xff, 0xfb};
    ck_assert_mem_eq(buf, want_l, 4);
    lv = 0;
    pos = 0;
    OK(MPI_Unpack_external("external32", buf, 4, &pos, &lv, 1, MPI_LONG));
    ck_assert_int_eq(lv, -5);

    double dv = 1.0;
    pos = 0;
    OK(MPI_Pack_external("external32", &dv, 1, MPI_DOUBLE, buf, sizeof buf, &pos));
    unsigned char want_d[8] = {0x3f, 0xf0, 0, 0, 0, 0, 0, 0};
    ck_assert_mem_eq(buf, want_d, 8);

    /* long double as binary128: 1.5 = 0x3fff 8000 0000 ... */
    long double ld[3] = {1.5L, -3.0e-4000L, 1.0L / 3.0L}, back[3];
    pos = 0;
    OK(MPI_Pack_external("external32", ld, 3, MPI_LONG_DOUBLE, buf, sizeof buf, &pos));
    ck_assert_int_eq(pos, 48);
    unsigned char want_q[16] = {0x3f, 0xff, 0x80};
    ck_assert_mem_eq(buf, want_q, 16);
    pos = 0;
    OK(MPI_Unpack_external("external32", buf, 48, &pos, back, 3, MPI_LONG_DOUBLE));
    for (int i = 0; i < 3; i++)
        ck_assert(back[i] == ld[i]);

    /* a derived type of mixed elements round-trips */
    struct { short s; double d; long l; } in = {-2, 2.5, 123456}, out = {0, 0, 0};
    int bl[3] = {1, 1, 1};
    MPI_Aint d[3] = {offsetof(typeof(in), s), offsetof(typeof(in), d), offsetof(typeof(in), l)};
    MPI_Datatype ty[3] = {MPI_SHORT, MPI_DOUBLE, MPI_LONG}, t;
    OK(MPI_Type_create_struct(3, bl, d, ty, &t));
    OK(MPI_Type_commit(&t));
    OK(MPI_Pack_external_size("external32", 1, t, &size));
    ck_assert_int_eq(size, 2 + 8 + 4);
    pos = 0;
    OK(MPI_Pack_external("external32", &in, 1, t, buf, sizeof buf, &pos));
    ck_assert_int_eq(pos, 14);
    pos = 0;
    OK(MPI_Unpack_external("external32", buf, 14, &pos, &out, 1, t));
    ck_assert(out.s == -2 && out.d == 2.5 && out.l == 123456);
    OK(MPI_Type_free(&t));
}
END_TEST

static Suite *datatype_suite(void)
{
    Suite *s = suite_create("datatype");
    TCase *tc = tcase_create("types");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, predefined_types);
    tcase_add_test(tc, pair_layouts);
    tcase_add_test(tc, match_size_and_value_index);
    tcase_add_test(tc, f90_types);
    tcase_add_test(tc, layouts);
    tcase_add_test(tc, contig_detection);
    tcase_add_test(tc, nested_types);
    tcase_add_test(tc, every_constructor);
    tcase_add_test(tc, darrays);
    tcase_add_test(tc, relayouts);
    tcase_add_loop_test(tc, random_types, 0, 10);
    tcase_add_test(tc, large_counts);
    tcase_add_test(tc, too_deep);
    tcase_add_test(tc, envelopes);
    tcase_add_test(tc, lifetimes);
    tcase_add_test(tc, elements_and_counts);
    tcase_add_test(tc, bottom);
    suite_add_tcase(s, tc);

    TCase *api = tcase_create("api");
    tcase_set_timeout(api, 60);
    tcase_add_checked_fixture(api, api_setup, api_teardown);
    tcase_add_test(api, api_errors);
    tcase_add_test(api, api_pack_unpack);
    tcase_add_test(api, api_external32);
    suite_add_tcase(s, api);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(datatype_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
