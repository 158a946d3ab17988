/*
 * The "external32" data representation (MPI_Pack_external and friends):
 * big-endian, IEEE floats, long double as IEEE binary128, and fixed sizes
 * that may differ from the native ones (MPI_LONG and MPI_UNSIGNED_LONG are
 * 4 bytes, MPI_WCHAR 2). Values that do not fit the external size fail
 * with MPI_ERR_CONVERSION rather than being silently cut.
 *
 * This walks the type map element by element (only basic runs of
 * same-size types are done in a loop): external32 is for portability, not
 * the fast path, which is native packing in dt_pack.c.
 */
#include <string.h>

#include "runtime/datatype_impl.h"
#include "runtime/error.h"

static int ext_basic_size(const struct bmpi_datatype *T)
{
    if (T->handle == MPI_LONG || T->handle == MPI_UNSIGNED_LONG)
        return 4;
    if (T->handle == MPI_WCHAR)
        return 2;
    return (int)T->size;
}

static int ext_size_of(const struct bmpi_datatype *basic, void *ctx, MPI_Count *size)
{
    (void)ctx;
    *size = ext_basic_size(basic);
    return BMPI_OK;
}

int bmpi_dt_external_size(const struct bmpi_datatype *dt, MPI_Count *size)
{
    return bmpi_dt_size_in(dt, ext_size_of, NULL, size);
}

int bmpi_dt_for_each_basic(const struct bmpi_datatype *dt,
                           int (*fn)(const struct bmpi_datatype *basic, void *ctx), void *ctx)
{
    if (dt->size == 0)
        return 0;
    if (dt->defn == MPI_COMBINER_NAMED)
        return fn(dt, ctx);
    size_t np = bmpi_dt_nparts(dt);
    for (size_t i = 0; i < np; i++) {
        struct bmpi_dt_part p;
        bmpi_dt_part(dt, i, &p);
        if (p.count == 0 || p.bl == 0)
            continue;
        int rc = bmpi_dt_for_each_basic(p.type, fn, ctx);
        if (rc)
            return rc;
    }
    return 0;
}

/* --- one basic element ------------------------------------------------------------- */

static void put_be(unsigned char *dst, uint64_t v, int n)
{
    for (int i = n - 1; i >= 0; i--, v >>= 8)
        dst[i] = (unsigned char)v;
}

static uint64_t get_be(const unsigned char *src, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = v << 8 | src[i];
    return v;
}

static uint64_t get_le(const unsigned char *src, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | src[i];
    return v;
}

static void put_le(unsigned char *dst, uint64_t v, int n)
{
    for (int i = 0; i < n; i++, v >>= 8)
        dst[i] = (unsigned char)v;
}

static void reverse(unsigned char *dst, const unsigned char *src, int n)
{
    for (int i = 0; i < n; i++)
        dst[i] = src[n - 1 - i];
}

/* x87 80-bit extended (in 16 bytes, little-endian) <-> IEEE binary128
 * (big-endian). Same sign and 15-bit biased exponent; the 63 explicit
 * fraction bits are the top of binary128's 112. */
static void x87_to_quad(unsigned char *dst, const unsigned char *src)
{
    uint64_t mant = get_le(src, 8);
    uint64_t se = get_le(src + 8, 2); /* sign and exponent */
    uint64_t frac = mant & 0x7fffffffffffffffull;
    uint64_t hi = se << 48 | frac >> 15, lo = frac << 49;
    put_be(dst, hi, 8);
    put_be(dst + 8, lo, 8);
}

static void quad_to_x87(unsigned char *dst, const unsigned char *src)
{
    uint64_t hi = get_be(src, 8), lo = get_be(src + 8, 8);
    uint64_t se = hi >> 48, exp = se & 0x7fff;
    uint64_t frac = (hi & 0xffffffffffffull) << 15 | lo >> 49; /* top 63 of 112 bits */
    uint64_t rest = lo & ((1ull << 49) - 1), half = 1ull << 48;
    if (exp != 0x7fff && (rest > half || (rest == half && (frac & 1)))) {
        if (++frac == 1ull << 63) { /* rounded up into the next binade */
            frac = 0;
            se++;
            exp++;
        }
    }
    if (exp == 0x7fff && (hi & 0xffffffffffffull || lo) && !frac)
        frac = 1ull << 62; /* a NaN stays a NaN */
    uint64_t mant = frac | (exp != 0 ? 1ull << 63 : 0);
    put_le(dst, mant, 8);
    put_le(dst + 8, se, 2);
    memset(dst + 10, 0, 6);
}

/* native -> external for one basic element of T */
static int to_ext(const struct bmpi_datatype *T, unsigned char *dst, const unsigned char *src)
{
    int n = (int)T->size, e = ext_basic_size(T);
    switch (T->kind) {
    case BMPI_DT_K_BYTE:
        memcpy(dst, src, (size_t)n);
        return BMPI_OK;
    case BMPI_DT_K_INT:
    case BMPI_DT_K_UINT: {
        if (e == n) {
            reverse(dst, src, n);
            return BMPI_OK;
        }
        uint64_t v = get_le(src, n);
        bool fits = T->kind == BMPI_DT_K_UINT ? v >> (8 * e) == 0
                                              : (int64_t)v >= -(1ll << (8 * e - 1)) &&
                                                    (int64_t)v < (1ll << (8 * e - 1));
        if (!fits)
            return bmpi_err_set(MPI_ERR_CONVERSION,
                                "%s value %lld does not fit the %d bytes of external32",
                                bmpi_dt_get_name(T), (long long)v, e);
        put_be(dst, v, e);
        return BMPI_OK;
    }
    case BMPI_DT_K_FLOAT:
        if (n == 16)
            x87_to_quad(dst, src);
        else
            reverse(dst, src, n);
        return BMPI_OK;
    case BMPI_DT_K_COMPLEX:
        for (int h = 0; h < 2; h++) {
            if (n == 32)
                x87_to_quad(dst + 16 * h, src + 16 * h);
            else
                reverse(dst + n / 2 * h, src + n / 2 * h, n / 2);
        }
        return BMPI_OK;
    }
    return BMPI_OK;
}

static void from_ext(const struct bmpi_datatype *T, unsigned char *dst, const unsigned char *src)
{
    int n = (int)T->size, e = ext_basic_size(T);
    switch (T->kind) {
    case BMPI_DT_K_BYTE:
        memcpy(dst, src, (size_t)n);
        return;
    case BMPI_DT_K_INT:
    case BMPI_DT_K_UINT: {
        if (e == n) {
            reverse(dst, src, n);
            return;
        }
        uint64_t v = get_be(src, e);
        if (T->kind == BMPI_DT_K_INT && (v >> (8 * e - 1)) & 1)
            v |= ~0ull << (8 * e); /* sign-extend */
        put_le(dst, v, n);
        return;
    }
    case BMPI_DT_K_FLOAT:
        if (n == 16)
            quad_to_x87(dst, src);
        else
            reverse(dst, src, n);
        return;
    case BMPI_DT_K_COMPLEX:
        for (int h = 0; h < 2; h++) {
            if (n == 32)
                quad_to_x87(dst + 16 * h, src + 16 * h);
            else
                reverse(dst + n / 2 * h, src + n / 2 * h, n / 2);
        }
        return;
    }
}

/* --- walking the type map ------------------------------------------------------------ */

struct xwalk {
    unsigned char *ext; /* external buffer, at the current position */
    bool pack;
};

static int walk(const struct bmpi_datatype *T, uintptr_t base, struct xwalk *x)
{
    if (T->size == 0)
        return BMPI_OK;
    if (T->defn == MPI_COMBINER_NAMED) {
        int rc = BMPI_OK;
        if (x->pack)
            rc = to_ext(T, x->ext, (const unsigned char *)base);
        else
            from_ext(T, (unsigned char *)base, x->ext);
        x->ext += ext_basic_size(T);
        return rc;
    }
    size_t np = bmpi_dt_nparts(T);
    for (size_t i = 0; i < np; i++) {
        struct bmpi_dt_part p;
        bmpi_dt_part(T, i, &p);
        MPI_Aint ext = p.type->ub - p.type->lb;
        for (MPI_Count c = 0; c < p.count; c++)
            for (MPI_Count b = 0; b < p.bl; b++) {
                uintptr_t a = base + (uintptr_t)(p.disp + (MPI_Aint)c * p.stride + (MPI_Aint)b * ext);
                int rc = walk(p.type, a, x);
                if (rc)
                    return rc;
            }
    }
    return BMPI_OK;
}

static int walk_all(uintptr_t buf, size_t count, const struct bmpi_datatype *dt, struct xwalk *x)
{
    MPI_Aint ext = dt->ub - dt->lb;
    for (size_t i = 0; i < count; i++) {
        int rc = walk(dt, buf + (uintptr_t)((MPI_Aint)i * ext), x);
        if (rc)
            return rc;
    }
    return BMPI_OK;
}

static int room(const struct bmpi_datatype *dt, size_t count, MPI_Count size, MPI_Count pos,
                const char *what)
{
    MPI_Count one, need;
    int rc = bmpi_dt_external_size(dt, &one);
    if (rc)
        return rc;
    if (__builtin_mul_overflow(one, (MPI_Count)count, &need))
        return bmpi_err_set(BMPI_ERR_TOO_LARGE, "the external32 size overflows MPI_Count");
    if (need > size - pos)
        return bmpi_err_set(MPI_ERR_TRUNCATE,
                            "%lld bytes of external32 data to %s but only %lld left in the buffer",
                            (long long)need, what, (long long)(size - pos));
    return BMPI_OK;
}

int bmpi_dt_pack_external(const void *buf, size_t count, const struct bmpi_datatype *dt,
                          void *dst, MPI_Count dstsize, MPI_Count *position)
{
    int rc = room(dt, count, dstsize, *position, "pack");
    if (rc)
        return rc;
    struct xwalk x = {.ext = (unsigned char *)dst + *position, .pack = true};
    if ((rc = walk_all((uintptr_t)buf, count, dt, &x)))
        return rc;
    *position = (MPI_Count)(x.ext - (unsigned char *)dst);
    return BMPI_OK;
}

int bmpi_dt_unpack_external(const void *src, MPI_Count srcsize, MPI_Count *position, void *buf,
                            size_t count, const struct bmpi_datatype *dt)
{
    int rc = room(dt, count, srcsize, *position, "unpack");
    if (rc)
        return rc;
    struct xwalk x = {.ext = (unsigned char *)src + *position, .pack = false};
    if ((rc = walk_all((uintptr_t)buf, count, dt, &x)))
        return rc;
    *position = (MPI_Count)(x.ext - (const unsigned char *)src);
    return BMPI_OK;
}
