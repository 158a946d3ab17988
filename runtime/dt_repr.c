/*
 * A datatype in another representation, one in which a basic type may take
 * a different number of bytes than in memory (runtime/datatype.h): the
 * I/O layer's data representations, whose files hold MPI_LONG in 4 bytes
 * under "external32" or whatever a registered representation's extent
 * function says.
 *
 * Sizes and prefixes walk the parts of the type (datatype_impl.h) with
 * their counts, never element by element. The layout rebuilds the type
 * from the arguments its constructors were given, over blocks of bytes of
 * the representation's sizes.
 */
#include <stdlib.h>

#include "runtime/datatype_impl.h"
#include "runtime/error.h"

/* The representation's size of one instance of T (MPI_Count, checked). */
static int part_size_in(const struct bmpi_datatype *T, bmpi_dt_basic_size_fn *fn, void *ctx, MPI_Count *size)
{
    return T->defn == MPI_COMBINER_NAMED ? fn(T, ctx, size) : bmpi_dt_size_in(T, fn, ctx, size);
}

int bmpi_dt_size_in(const struct bmpi_datatype *dt, bmpi_dt_basic_size_fn *fn, void *ctx, MPI_Count *size)
{
    if (dt->defn == MPI_COMBINER_NAMED)
        return dt->size ? fn(dt, ctx, size) : (*size = 0, BMPI_OK);
    MPI_Count total = 0, one, n;
    size_t np = bmpi_dt_nparts(dt);
    for (size_t i = 0; i < np; i++) {
        struct bmpi_dt_part p;
        bmpi_dt_part(dt, i, &p);
        if (p.type->size == 0 || p.count == 0 || p.bl == 0)
            continue;
        int rc = part_size_in(p.type, fn, ctx, &one);
        if (rc)
            return rc;
        if (__builtin_mul_overflow(p.count * p.bl, one, &n) || __builtin_add_overflow(total, n, &total))
            return bmpi_err_set(BMPI_ERR_TOO_LARGE, "the size of the type in its representation overflows "
                                "MPI_Count");
    }
    *size = total;
    return BMPI_OK;
}

/* --- the leading items of one element ------------------------------------------------ */

struct prefix {
    bmpi_dt_basic_size_fn *fn;
    void *ctx;
    MPI_Count left; /* representation bytes not yet taken */
    MPI_Count mem;  /* memory bytes of the items taken */
    bool full;      /* an item did not fit: stop */
};

/* T takes rsize bytes in the representation (worked out by the caller,
 * so that each level works out only its parts' sizes). */
static int prefix_of(const struct bmpi_datatype *T, MPI_Count rsize, struct prefix *x)
{
    if (T->size == 0)
        return BMPI_OK;
    if (rsize <= x->left) { /* the whole instance fits */
        x->left -= rsize;
        x->mem += T->size;
        return BMPI_OK;
    }
    if (T->defn == MPI_COMBINER_NAMED) {
        x->full = true;
        return BMPI_OK;
    }
    size_t np = bmpi_dt_nparts(T);
    for (size_t i = 0; i < np && !x->full; i++) {
        struct bmpi_dt_part p;
        bmpi_dt_part(T, i, &p);
        if (p.type->size == 0 || p.count == 0 || p.bl == 0)
            continue;
        MPI_Count psize;
        int rc = part_size_in(p.type, x->fn, x->ctx, &psize);
        if (rc)
            return rc;
        MPI_Count reps = p.count * p.bl, whole = psize ? x->left / psize : reps;
        if (whole > reps)
            whole = reps;
        x->left -= whole * psize;
        x->mem += whole * p.type->size;
        if (whole < reps && (rc = prefix_of(p.type, psize, x))) /* the instance cut by the limit */
            return rc;
        if (whole < reps)
            x->full = true;
    }
    return BMPI_OK;
}

int bmpi_dt_prefix_in(const struct bmpi_datatype *dt, bmpi_dt_basic_size_fn *fn, void *ctx, MPI_Count limit,
                      MPI_Count *mem)
{
    struct prefix x = {.fn = fn, .ctx = ctx, .left = limit};
    MPI_Count rsize;
    int rc = part_size_in(dt, fn, ctx, &rsize);
    if (!rc)
        rc = prefix_of(dt, rsize, &x);
    *mem = x.mem;
    return rc;
}

/* --- the layout ------------------------------------------------------------------------ */

/* A predefined type (a pair type as a whole): itself when its size is the
 * same, else a block of the representation's bytes. */
static int relayout_named(struct bmpi_datatype *T, bmpi_dt_basic_size_fn *fn, void *ctx,
                          struct bmpi_datatype **out)
{
    MPI_Count rsize;
    int rc = T->size ? bmpi_dt_size_in(T, fn, ctx, &rsize) : BMPI_OK;
    if (rc)
        return rc;
    if (T->size == 0 || rsize == T->size) {
        bmpi_dt_retain(T);
        *out = T;
        return BMPI_OK;
    }
    if (rsize > INT32_MAX)
        return bmpi_err_set(BMPI_ERR_TOO_LARGE, "%s takes %lld bytes in the representation", bmpi_dt_name(T->handle),
                            (long long)rsize);
    int n = (int)rsize;
    struct bmpi_datatype *byte = bmpi_dt_get(MPI_BYTE);
    return bmpi_dt_create(MPI_COMBINER_CONTIGUOUS, 1, &n, 0, NULL, 1, &byte, NULL, out);
}

static int relayout(struct bmpi_datatype *dt, bmpi_dt_basic_size_fn *fn, void *ctx, struct bmpi_datatype **out);

/* Subarray and darray: built again over the new old type, from the
 * integers their constructors were given (MPI_Type_get_contents' order). */
static int relayout_array(struct bmpi_datatype *dt, struct bmpi_datatype *old, struct bmpi_datatype **out)
{
    const int *i = dt->ints;
    if (dt->defn == MPI_COMBINER_SUBARRAY) {
        int n = i[0];
        return bmpi_dt_subarray(n, i + 1, i + 1 + n, i + 1 + 2 * n, i[1 + 3 * n], old, out);
    }
    int n = i[2];
    return bmpi_dt_darray(i[0], i[1], n, i + 3, i + 3 + n, i + 3 + 2 * n, i + 3 + 3 * n, i[3 + 4 * n], old, out);
}

/* dt's constructor called again with the same arguments over types. */
static int rebuild(struct bmpi_datatype *dt, struct bmpi_datatype **types, struct bmpi_datatype **out)
{
    if (dt->defn == MPI_COMBINER_SUBARRAY || dt->defn == MPI_COMBINER_DARRAY)
        return relayout_array(dt, types[0], out);
    if (dt->n_counts)
        return bmpi_dt_create_large(dt->defn, dt->n_counts, dt->counts, dt->a_off, dt->n_types, types, out);
    return bmpi_dt_create(dt->defn, dt->n_ints, dt->ints, dt->n_aints, dt->aints, dt->n_types, types, NULL, out);
}

static int relayout_derived(struct bmpi_datatype *dt, bmpi_dt_basic_size_fn *fn, void *ctx,
                            struct bmpi_datatype **out)
{
    struct bmpi_datatype *stack[4], **types = dt->n_types <= 4 ? stack : malloc(sizeof(*types) * dt->n_types);
    if (!types)
        return bmpi_err_set(MPI_ERR_NO_MEM, "no memory to lay out a struct of %d types", dt->n_types);
    int made = 0, rc = BMPI_OK;
    while (made < dt->n_types && !(rc = relayout(dt->types[made], fn, ctx, &types[made])))
        made++;
    if (!rc)
        rc = rebuild(dt, types, out);
    for (int k = 0; k < made; k++)
        bmpi_dt_release(types[k]);
    if (types != stack)
        free(types);
    return rc;
}

static int relayout(struct bmpi_datatype *dt, bmpi_dt_basic_size_fn *fn, void *ctx, struct bmpi_datatype **out)
{
    if (dt->combiner == MPI_COMBINER_NAMED)
        return relayout_named(dt, fn, ctx, out);
    if (dt->n_types == 0 && dt->inner) /* MPI_Type_create_f90_*: the predefined type it stands for */
        return relayout(dt->inner, fn, ctx, out);
    return relayout_derived(dt, fn, ctx, out);
}

int bmpi_dt_relayout(struct bmpi_datatype *dt, bmpi_dt_basic_size_fn *fn, void *ctx, struct bmpi_datatype **out)
{
    int rc = relayout(dt, fn, ctx, out);
    if (!rc && (rc = bmpi_dt_commit(*out)))
        bmpi_dt_release(*out);
    return rc;
}
