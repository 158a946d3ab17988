/*
 * The MPI datatype functions (chapter 5 of the standard, plus the type
 * names and MPI_Type_match_size): argument checking and reporting; the
 * work is in datatype.c, dt_node.c, dt_pack.c, dt_array.c, dt_external.c.
 *
 * Type functions report through MPI_COMM_SELF's error handler (errors not
 * tied to a communicator); MPI_Pack, MPI_Unpack and MPI_Pack_size through
 * their communicator's.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/api.h"
#include "runtime/attr.h"
#include "runtime/comm.h"
#include "runtime/datatype_impl.h"
#include "runtime/p2p.h"

/* --- argument checks -------------------------------------------------------- */

/* A valid type handle (committed or not). */
static int get_type(const char *fn, MPI_Datatype h, struct bmpi_datatype **dt)
{
    *dt = bmpi_dt_get(h);
    if (*dt)
        return MPI_SUCCESS;
    if (h == MPI_DATATYPE_NULL)
        return bmpi_err_noobj(MPI_ERR_TYPE, fn, "datatype is MPI_DATATYPE_NULL");
    return bmpi_err_noobj(MPI_ERR_TYPE, fn, "invalid datatype 0x%x (not a datatype, or freed)",
                          (unsigned)h);
}

#define CHECK(cond, cls, ...)                                                                      \
    do {                                                                                           \
        if (!(cond))                                                                               \
            return bmpi_err_noobj(cls, FN, __VA_ARGS__);                                           \
    } while (0)

#define GET_TYPE(h, dt)                                                                            \
    do {                                                                                           \
        int rc_ = get_type(FN, h, dt);                                                             \
        if (rc_)                                                                                   \
            return rc_;                                                                            \
    } while (0)

/* Negative counts, blocklengths, or missing arrays. */
static int check_blocks(const char *fn, int count, const int *bls, int bl, const void *disps)
{
    if (count < 0)
        return bmpi_err_noobj(MPI_ERR_COUNT, fn, "negative count %d", count);
    if (count > 0 && !disps)
        return bmpi_err_noobj(MPI_ERR_ARG, fn, "array_of_displacements is NULL");
    if (bls) {
        for (int i = 0; i < count; i++)
            if (bls[i] < 0)
                return bmpi_err_noobj(MPI_ERR_ARG, fn, "negative array_of_blocklengths[%d] = %d",
                                      i, bls[i]);
    } else if (bl < 0) {
        return bmpi_err_noobj(MPI_ERR_ARG, fn, "negative blocklength %d", bl);
    }
    return MPI_SUCCESS;
}

/* Create, register and hand out a new type. */
static int finish_new(const char *fn, int rc, struct bmpi_datatype *dt, MPI_Datatype *newtype)
{
    if (!rc)
        rc = bmpi_dt_register(dt, newtype);
    if (rc)
        return bmpi_err_noobj(rc, fn, NULL);
    return MPI_SUCCESS;
}

static int make(const char *fn, int combiner, int ni, const int *ints, int na,
                const MPI_Aint *aints, int nt, struct bmpi_datatype *const *types,
                MPI_Datatype *newtype)
{
    struct bmpi_datatype *dt = NULL;
    int rc = bmpi_dt_create(combiner, ni, ints, na, aints, nt, types, NULL, &dt);
    return finish_new(fn, rc, dt, newtype);
}

/* ints = {count, a[0..count-1], b[0..count-1]} for the contents */
static int *ints_of(int count, const int *a, const int *b, int lead2, bool has_lead2)
{
    size_t n = 1 + (has_lead2 ? 1 : 0) + (a ? (size_t)count : 0) + (b ? (size_t)count : 0);
    int *v = malloc(n * sizeof *v), *p = v;
    if (!v)
        return NULL;
    *p++ = count;
    if (has_lead2)
        *p++ = lead2;
    if (a) {
        memcpy(p, a, (size_t)count * sizeof *p);
        p += count;
    }
    if (b)
        memcpy(p, b, (size_t)count * sizeof *p);
    return v;
}

/* --- constructors ------------------------------------------------------------- */

#undef FN
#define FN "MPI_Type_contiguous"
BMPI_API(MPI_Type_contiguous)
int PMPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    struct bmpi_datatype *old;
    CHECK(count >= 0, MPI_ERR_COUNT, "negative count %d", count);
    CHECK(newtype, MPI_ERR_ARG, "newtype is NULL");
    GET_TYPE(oldtype, &old);
    return make(FN, MPI_COMBINER_CONTIGUOUS, 1, &count, 0, NULL, 1, &old, newtype);
}

#undef FN
#define FN "MPI_Type_vector"
BMPI_API(MPI_Type_vector)
int PMPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype,
                     MPI_Datatype *newtype)
{
    struct bmpi_datatype *old;
    CHECK(count >= 0, MPI_ERR_COUNT, "negative count %d", count);
    CHECK(blocklength >= 0, MPI_ERR_ARG, "negative blocklength %d", blocklength);
    CHECK(newtype, MPI_ERR_ARG, "newtype is NULL");
    GET_TYPE(oldtype, &old);
    int ints[3] = {count, blocklength, stride};
    return make(FN, MPI_COMBINER_VECTOR, 3, ints, 0, NULL, 1, &old, newtype);
}

#undef FN
#define FN "MPI_Type_create_hvector"
BMPI_API(MPI_Type_create_hvector)
int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                             MPI_Datatype *newtype)
{
    struct bmpi_datatype *old;
    CHECK(count >= 0, MPI_ERR_COUNT, "negative count %d", count);
    CHECK(blocklength >= 0, MPI_ERR_ARG, "negative blocklength %d", blocklength);
    CHECK(newtype, MPI_ERR_ARG, "newtype is NULL");
    GET_TYPE(oldtype, &old);
    int ints[2] = {count, blocklength};
    return make(FN, MPI_COMBINER_HVECTOR, 2, ints, 1, &stride, 1, &old, newtype);
}

#undef FN
#define FN "MPI_Type_indexed"
BMPI_API(MPI_Type_indexed)
int PMPI_Type_indexed(int count, const int array_of_blocklengths[],
                      const int array_of_displacements[], MPI_Datatype oldtype,
                      MPI_Datatype *newtype)
{
    struct bmpi_datatype *old;
    int rc;
    CHECK(count == 0 || array_of_blocklengths, MPI_ERR_ARG, "array_of_blocklengths is NULL");
    if ((rc = check_blocks(FN, count, array_of_blocklengths, 0, array_of_displacements)))
        return rc;
    CHECK(newtype, MPI_ERR_ARG, "newtype is NULL");
    GET_TYPE(oldtype, &old);
    int *ints = ints_of(count, array_of_blocklengths, array_of_displacements, 0, false);
    CHECK(ints, MPI_ERR_NO_MEM, "no memory for %d blocks", count);
    rc = make(FN, MPI_COMBINER_INDEXED, 2 * count + 1, ints, 0, NULL, 1, &old, newtype);
    free(ints);
    return rc;
}

#undef FN
#define FN "MPI_Type_create_hindexed"
BMPI_API(MPI_Type_create_hindexed)
int PMPI_Type_create_hindexed(int count, const int array_of_blocklengths[],
                              const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                              MPI_Datatype *newtype)
{
    struct bmpi_datatype *old;
    int rc;
    CHECK(count == 0 || array_of_blocklengths, MPI_ERR_ARG, "array_of_blocklengths is NULL");
    if ((rc = check_blocks(FN, count, array_of_blocklengths, 0, array_of_displacements)))
        return rc;
    CHECK(newtype, MPI_ERR_ARG, "newtype is NULL");
    GET_TYPE(oldtype, &old);
    int *ints = ints_of(count, array_of_blocklengths, NULL, 0, false);
    CHECK(ints, MPI_ERR_NO_MEM, "no memory for %d blocks", count);
    rc = make(FN, MPI_COMBINER_HINDEXED, count + 1, ints, count, array_of_displacements, 1, &old,
              newtype);
    free(ints);
    return rc;
}

#undef FN
#define FN "MPI_Type_create_indexed_block"
BMPI_API(MPI_Type_create_indexed_block)
int PMPI_Type_create_indexed_block(int count, int blocklength, const int array_of_displacements[],
                                   MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    struct bmpi_datatype *old;
    int rc;
    if ((rc = check_blocks(FN, count, NULL, blocklength, array_of_displacements)))
        return rc;
    CHECK(newtype, MPI_ERR_ARG, "newtype is NULL");
    GET_TYPE(oldtype, &old);
    int *ints = ints_of(count, array_of_displacements, NULL, blocklength, true);
    CHECK(ints, MPI_ERR_NO_MEM, "no memory for %d blocks", count);
    rc = make(FN, MPI_COMBINER_INDEXED_BLOCK, count + 2, ints, 0, NULL, 1, &old, newtype);
    free(ints);
    return rc;
}

#undef FN
#define FN "MPI_Type_create_hindexed_block"
BMPI_API(MPI_Type_create_hindexed_block)
int PMPI_Type_create_hindexed_block(int count, int blocklength,
                                    const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                                    MPI_Datatype *newtype)
{
    struct bmpi_datatype *old;
    int rc;
    if ((rc = check_blocks(FN, count, NULL, blocklength, array_of_displacements)))
        return rc;
    CHECK(newtype, MPI_ERR_ARG, "newtype is NULL");
    GET_TYPE(oldtype, &old);
    int ints[2] = {count, blocklength};
    return make(FN, MPI_COMBINER_HINDEXED_BLOCK, 2, ints, count, array_of_displacements, 1, &old,
                newtype);
}

/* The objects of a struct's types, in a new array (free it). */
static int get_types(const char *fn, MPI_Count count, const MPI_Datatype array_of_types[],
                     struct bmpi_datatype ***out)
{
    struct bmpi_datatype **types = malloc((count ? (size_t)count : 1) * sizeof *types);
    if (!types)
        return bmpi_err_noobj(MPI_ERR_NO_MEM, fn, "no memory for %lld types", count);
    for (MPI_Count i = 0; i < count; i++) {
        types[i] = bmpi_dt_get(array_of_types[i]);
        if (!types[i]) {
            free(types);
            return bmpi_err_noobj(MPI_ERR_TYPE, fn, "array_of_types[%lld] is %s", i,
                                  array_of_types[i] == MPI_DATATYPE_NULL
                                      ? "MPI_DATATYPE_NULL"
                                      : "not a valid datatype");
        }
    }
    *out = types;
    return MPI_SUCCESS;
}

#undef FN
#define FN "MPI_Type_create_struct"
BMPI_API(MPI_Type_create_struct)
int PMPI_Type_create_struct(int count, const int array_of_blocklengths[],
                            const MPI_Aint array_of_displacements[],
                            const MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    int rc;
    CHECK(count == 0 || array_of_blocklengths, MPI_ERR_ARG, "array_of_blocklengths is NULL");
    if ((rc = check_blocks(FN, count, array_of_blocklengths, 0, array_of_displacements)))
        return rc;
    CHECK(count == 0 || array_of_types, MPI_ERR_ARG, "array_of_types is NULL");
    CHECK(newtype, MPI_ERR_ARG, "newtype is NULL");
    struct bmpi_datatype **types;
    if ((rc = get_types(FN, count, array_of_types, &types)))
        return rc;
    int *ints = ints_of(count, array_of_blocklengths, NULL, 0, false);
    if (!ints) {
        free(types);
        return bmpi_err_noobj(MPI_ERR_NO_MEM, FN, "no memory for %d blocks", count);
    }
    rc = make(FN, MPI_COMBINER_STRUCT, count + 1, ints, count, array_of_displacements, count,
              types, newtype);
    free(ints);
    free(types);
    return rc;
}

#undef FN
#define FN "MPI_Type_create_resized"
BMPI_API(MPI_Type_create_resized)
int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                             MPI_Datatype *newtype)
{
    struct bmpi_datatype *old;
    CHECK(newtype, MPI_ERR_ARG, "newtype is NULL");
    GET_TYPE(oldtype, &old);
    MPI_Aint a[2] = {lb, extent};
    return make(FN, MPI_COMBINER_RESIZED, 0, NULL, 2, a, 1, &old, newtype);
}

#undef FN
#define FN "MPI_Type_dup"
BMPI_API(MPI_Type_dup)
int PMPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    struct bmpi_datatype *old, *dt = NULL;
    CHECK(newtype, MPI_ERR_ARG, "newtype is NULL");
    GET_TYPE(oldtype, &old);
    int rc = bmpi_dt_create(MPI_COMBINER_DUP, 0, NULL, 0, NULL, 1, &old, NULL, &dt);
    /* the copy is committed if the original is */
    if (!rc && (old->flags & BMPI_DT_COMMITTED) && (rc = bmpi_dt_commit(dt)))
        bmpi_dt_release(dt);
    if ((rc = finish_new(FN, rc, dt, newtype)))
        return rc;
    /* and gets the attributes the copy callbacks give it */
    if ((rc = bmpi_attr_type_copy(oldtype, *newtype))) {
        bmpi_attr_type_delete_all(*newtype);
        bmpi_dt_user_free(dt);
        *newtype = MPI_DATATYPE_NULL;
        return bmpi_err_noobj(rc, FN, "copying the attributes of %s failed", bmpi_dt_name(oldtype));
    }
    return MPI_SUCCESS;
}

static int check_order(const char *fn, int order)
{
    if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
        return bmpi_err_noobj(MPI_ERR_ARG, fn, "order %d is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN",
                              order);
    return MPI_SUCCESS;
}

/* Subarray and darray serve their _c twins too: they report with fn. */
#undef FN
#define FN fn
static int subarray(const char *fn, int ndims, const int array_of_sizes[],
                    const int array_of_subsizes[], const int array_of_starts[], int order,
                    MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    struct bmpi_datatype *old, *dt = NULL;
    int rc;
    CHECK(ndims > 0, MPI_ERR_DIMS, "ndims %d must be positive", ndims);
    CHECK(array_of_sizes && array_of_subsizes && array_of_starts, MPI_ERR_ARG,
          "array_of_sizes, array_of_subsizes or array_of_starts is NULL");
    for (int i = 0; i < ndims; i++) {
        int n = array_of_sizes[i], s = array_of_subsizes[i], st = array_of_starts[i];
        CHECK(n > 0, MPI_ERR_ARG, "array_of_sizes[%d] = %d must be positive", i, n);
        CHECK(s >= 0 && s <= n, MPI_ERR_ARG, "array_of_subsizes[%d] = %d outside [0, %d]", i, s, n);
        CHECK(st >= 0 && st <= n - s, MPI_ERR_ARG,
              "array_of_starts[%d] = %d outside [0, %d] (size %d, subsize %d)", i, st, n - s, n, s);
    }
    if ((rc = check_order(FN, order)))
        return rc;
    CHECK(newtype, MPI_ERR_ARG, "newtype is NULL");
    GET_TYPE(oldtype, &old);
    rc = bmpi_dt_subarray(ndims, array_of_sizes, array_of_subsizes, array_of_starts, order, old, &dt);
    return finish_new(FN, rc, dt, newtype);
}

BMPI_API(MPI_Type_create_subarray)
int PMPI_Type_create_subarray(int ndims, const int array_of_sizes[], const int array_of_subsizes[],
                              const int array_of_starts[], int order, MPI_Datatype oldtype,
                              MPI_Datatype *newtype)
{
    return subarray("MPI_Type_create_subarray", ndims, array_of_sizes, array_of_subsizes,
                    array_of_starts, order, oldtype, newtype);
}

#undef FN
#define FN fn
static int darray(const char *fn, int size, int rank, int ndims, const int array_of_gsizes[],
                  const int array_of_distribs[], const int array_of_dargs[],
                  const int array_of_psizes[], int order, MPI_Datatype oldtype,
                  MPI_Datatype *newtype)
{
    struct bmpi_datatype *old, *dt = NULL;
    int rc;
    CHECK(size > 0, MPI_ERR_ARG, "size %d must be positive", size);
    CHECK(rank >= 0 && rank < size, MPI_ERR_RANK, "rank %d outside [0, %d)", rank, size);
    CHECK(ndims > 0, MPI_ERR_DIMS, "ndims %d must be positive", ndims);
    CHECK(array_of_gsizes && array_of_distribs && array_of_dargs && array_of_psizes, MPI_ERR_ARG,
          "an array argument is NULL");
    long procs = 1;
    for (int i = 0; i < ndims; i++) {
        int g = array_of_gsizes[i], d = array_of_distribs[i], a = array_of_dargs[i],
            p = array_of_psizes[i];
        CHECK(g > 0, MPI_ERR_ARG, "array_of_gsizes[%d] = %d must be positive", i, g);
        CHECK(p > 0, MPI_ERR_ARG, "array_of_psizes[%d] = %d must be positive", i, p);
        CHECK(d == MPI_DISTRIBUTE_BLOCK || d == MPI_DISTRIBUTE_CYCLIC || d == MPI_DISTRIBUTE_NONE,
              MPI_ERR_ARG, "array_of_distribs[%d] = %d is not a distribution", i, d);
        CHECK(a == MPI_DISTRIBUTE_DFLT_DARG || a > 0, MPI_ERR_ARG,
              "array_of_dargs[%d] = %d must be positive or MPI_DISTRIBUTE_DFLT_DARG", i, a);
        CHECK(d != MPI_DISTRIBUTE_NONE || p == 1, MPI_ERR_ARG,
              "dimension %d is MPI_DISTRIBUTE_NONE but array_of_psizes[%d] = %d, not 1", i, i, p);
        CHECK(d != MPI_DISTRIBUTE_BLOCK || a == MPI_DISTRIBUTE_DFLT_DARG || (long)a * p >= g,
              MPI_ERR_ARG, "dimension %d: block size %d times %d processes < %d elements", i, a, p,
              g);
        procs *= p;
        CHECK(procs <= size, MPI_ERR_ARG, "the process grid has more than size = %d processes",
              size);
    }
    CHECK(procs == size, MPI_ERR_ARG, "the process grid has %ld processes, size is %d", procs,
          size);
    if ((rc = check_order(FN, order)))
        return rc;
    CHECK(newtype, MPI_ERR_ARG, "newtype is NULL");
    GET_TYPE(oldtype, &old);
    rc = bmpi_dt_darray(size, rank, ndims, array_of_gsizes, array_of_distribs, array_of_dargs,
                        array_of_psizes, order, old, &dt);
    return finish_new(FN, rc, dt, newtype);
}

BMPI_API(MPI_Type_create_darray)
int PMPI_Type_create_darray(int size, int rank, int ndims, const int array_of_gsizes[],
                            const int array_of_distribs[], const int array_of_dargs[],
                            const int array_of_psizes[], int order, MPI_Datatype oldtype,
                            MPI_Datatype *newtype)
{
    return darray("MPI_Type_create_darray", size, rank, ndims, array_of_gsizes, array_of_distribs,
                  array_of_dargs, array_of_psizes, order, oldtype, newtype);
}

/* --- large-count constructors ------------------------------------------------- */

/*
 * A _c constructor's arguments as MPI_Type_get_contents_c gives them back:
 * c[0..a_off) where the int call takes ints, c[a_off..n) where it takes
 * MPI_Aint. When the former all fit an int, the type is made exactly as by
 * the int call; otherwise it keeps them in large form (datatype.h).
 */
static int make_c(const char *fn, int combiner, size_t n, const MPI_Count *c, size_t a_off,
                  int nt, struct bmpi_datatype *const *types, MPI_Datatype *newtype)
{
    if (n > INT_MAX)
        return bmpi_err_noobj(BMPI_ERR_TOO_LARGE, fn, "%zu arguments: more than a type records",
                              n);
    bool fits = true;
    for (size_t k = 0; k < a_off && fits; k++)
        fits = c[k] >= INT_MIN && c[k] <= INT_MAX;
    if (!fits) {
        struct bmpi_datatype *dt = NULL;
        int rc = bmpi_dt_create_large(combiner, (int)n, c, (int)a_off, nt, types, &dt);
        return finish_new(fn, rc, dt, newtype);
    }
    int *ints = malloc((a_off ? a_off : 1) * sizeof *ints);
    MPI_Aint *aints = malloc((n > a_off ? n - a_off : 1) * sizeof *aints);
    int rc = MPI_ERR_NO_MEM;
    if (ints && aints) {
        for (size_t k = 0; k < n; k++) {
            if (k < a_off)
                ints[k] = (int)c[k];
            else
                aints[k - a_off] = (MPI_Aint)c[k];
        }
        rc = make(fn, combiner, (int)a_off, ints, (int)(n - a_off), aints, nt, types, newtype);
    } else {
        rc = bmpi_err_noobj(MPI_ERR_NO_MEM, fn, "no memory for %zu arguments", n);
    }
    free(ints);
    free(aints);
    return rc;
}

/*
 * A _c constructor of one old type: its arguments as get_contents_c returns
 * them, head (count, blocklength, stride as it has them) then the arrays
 * bls and disps it takes (either may be NULL); the first a_off of them are
 * ints in the int call (0: all).
 */
struct args_c {
    int combiner;
    MPI_Count head[3];
    size_t nhead;
    MPI_Count count, bl; /* bl: the one blocklength when bls is NULL */
    const MPI_Count *bls, *disps;
    bool has_bls, has_disps; /* the call takes these arrays */
    size_t a_off;
};

/* Negative count or blocklengths, missing arrays. */
static int check_blocks_c(const char *fn, const struct args_c *a, MPI_Datatype *newtype)
{
    if (a->count < 0)
        return bmpi_err_noobj(MPI_ERR_COUNT, fn, "negative count %lld", a->count);
    if (a->count > 0 && ((a->has_bls && !a->bls) || (a->has_disps && !a->disps)))
        return bmpi_err_noobj(MPI_ERR_ARG, fn, "array_of_%s is NULL",
                              a->has_bls && !a->bls ? "blocklengths" : "displacements");
    for (MPI_Count i = 0; a->bls && i < a->count; i++)
        if (a->bls[i] < 0)
            return bmpi_err_noobj(MPI_ERR_ARG, fn, "negative array_of_blocklengths[%lld] = %lld",
                                  i, a->bls[i]);
    if (!a->has_bls && a->bl < 0)
        return bmpi_err_noobj(MPI_ERR_ARG, fn, "negative blocklength %lld", a->bl);
    if (!newtype)
        return bmpi_err_noobj(MPI_ERR_ARG, fn, "newtype is NULL");
    return MPI_SUCCESS;
}

/* c = {head, bls, disps}: the arguments in get_contents_c's order. */
static MPI_Count *args_of(const struct args_c *a, size_t *n)
{
    size_t nb = a->bls ? (size_t)a->count : 0, nd = a->disps ? (size_t)a->count : 0;
    *n = a->nhead + nb + nd;
    MPI_Count *c = malloc(*n * sizeof *c);
    if (!c)
        return NULL;
    memcpy(c, a->head, a->nhead * sizeof *c);
    if (nb)
        memcpy(c + a->nhead, a->bls, nb * sizeof *c);
    if (nd)
        memcpy(c + a->nhead + nb, a->disps, nd * sizeof *c);
    return c;
}

static int make_arrays_c(const char *fn, const struct args_c *a, int nt,
                         struct bmpi_datatype *const *types, MPI_Datatype *newtype)
{
    size_t n;
    MPI_Count *c = args_of(a, &n);
    if (!c)
        return bmpi_err_noobj(MPI_ERR_NO_MEM, fn, "no memory for %lld blocks", a->count);
    int rc = make_c(fn, a->combiner, n, c, a->a_off ? a->a_off : n, nt, types, newtype);
    free(c);
    return rc;
}

static int type_c(const char *fn, const struct args_c *a, MPI_Datatype oldtype,
                  MPI_Datatype *newtype)
{
    struct bmpi_datatype *old;
    int rc;
    if ((rc = check_blocks_c(fn, a, newtype)) || (rc = get_type(fn, oldtype, &old)))
        return rc;
    return make_arrays_c(fn, a, 1, &old, newtype);
}

BMPI_API(MPI_Type_contiguous_c)
int PMPI_Type_contiguous_c(MPI_Count count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    struct args_c a = {.combiner = MPI_COMBINER_CONTIGUOUS, .head = {count}, .nhead = 1,
                       .count = count};
    return type_c("MPI_Type_contiguous_c", &a, oldtype, newtype);
}

BMPI_API(MPI_Type_vector_c)
int PMPI_Type_vector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                       MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    struct args_c a = {.combiner = MPI_COMBINER_VECTOR, .head = {count, blocklength, stride},
                       .nhead = 3, .count = count, .bl = blocklength};
    return type_c("MPI_Type_vector_c", &a, oldtype, newtype);
}

BMPI_API(MPI_Type_create_hvector_c)
int PMPI_Type_create_hvector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                               MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    struct args_c a = {.combiner = MPI_COMBINER_HVECTOR, .head = {count, blocklength, stride},
                       .nhead = 3, .count = count, .bl = blocklength, .a_off = 2};
    return type_c("MPI_Type_create_hvector_c", &a, oldtype, newtype);
}

BMPI_API(MPI_Type_indexed_c)
int PMPI_Type_indexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                        const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                        MPI_Datatype *newtype)
{
    struct args_c a = {.combiner = MPI_COMBINER_INDEXED, .head = {count}, .nhead = 1,
                       .count = count, .bls = array_of_blocklengths,
                       .disps = array_of_displacements, .has_bls = true, .has_disps = true};
    return type_c("MPI_Type_indexed_c", &a, oldtype, newtype);
}

BMPI_API(MPI_Type_create_hindexed_c)
int PMPI_Type_create_hindexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                                const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                                MPI_Datatype *newtype)
{
    struct args_c a = {.combiner = MPI_COMBINER_HINDEXED, .head = {count}, .nhead = 1,
                       .count = count, .bls = array_of_blocklengths,
                       .disps = array_of_displacements, .has_bls = true, .has_disps = true,
                       .a_off = 1 + (size_t)(count > 0 ? count : 0)};
    return type_c("MPI_Type_create_hindexed_c", &a, oldtype, newtype);
}

BMPI_API(MPI_Type_create_indexed_block_c)
int PMPI_Type_create_indexed_block_c(MPI_Count count, MPI_Count blocklength,
                                     const MPI_Count array_of_displacements[],
                                     MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    struct args_c a = {.combiner = MPI_COMBINER_INDEXED_BLOCK, .head = {count, blocklength},
                       .nhead = 2, .count = count, .bl = blocklength,
                       .disps = array_of_displacements, .has_disps = true};
    return type_c("MPI_Type_create_indexed_block_c", &a, oldtype, newtype);
}

BMPI_API(MPI_Type_create_hindexed_block_c)
int PMPI_Type_create_hindexed_block_c(MPI_Count count, MPI_Count blocklength,
                                      const MPI_Count array_of_displacements[],
                                      MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    struct args_c a = {.combiner = MPI_COMBINER_HINDEXED_BLOCK, .head = {count, blocklength},
                       .nhead = 2, .count = count, .bl = blocklength,
                       .disps = array_of_displacements, .has_disps = true, .a_off = 2};
    return type_c("MPI_Type_create_hindexed_block_c", &a, oldtype, newtype);
}

#undef FN
#define FN "MPI_Type_create_struct_c"
BMPI_API(MPI_Type_create_struct_c)
int PMPI_Type_create_struct_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                              const MPI_Count array_of_displacements[],
                              const MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    struct args_c a = {.combiner = MPI_COMBINER_STRUCT, .head = {count}, .nhead = 1,
                       .count = count, .bls = array_of_blocklengths,
                       .disps = array_of_displacements, .has_bls = true, .has_disps = true,
                       .a_off = 1 + (size_t)(count > 0 ? count : 0)};
    int rc = check_blocks_c(FN, &a, newtype);
    if (rc)
        return rc;
    CHECK(count == 0 || array_of_types, MPI_ERR_ARG, "array_of_types is NULL");
    CHECK(count <= INT_MAX, BMPI_ERR_TOO_LARGE, "count %lld: more types than a type records",
          count);
    struct bmpi_datatype **types;
    if ((rc = get_types(FN, count, array_of_types, &types)))
        return rc;
    rc = make_arrays_c(FN, &a, (int)count, types, newtype);
    free(types);
    return rc;
}

#undef FN
#define FN "MPI_Type_create_resized_c"
BMPI_API(MPI_Type_create_resized_c)
int PMPI_Type_create_resized_c(MPI_Datatype oldtype, MPI_Count lb, MPI_Count extent,
                               MPI_Datatype *newtype)
{
    struct bmpi_datatype *old;
    CHECK(newtype, MPI_ERR_ARG, "newtype is NULL");
    GET_TYPE(oldtype, &old);
    MPI_Count c[2] = {lb, extent};
    return make_c(FN, MPI_COMBINER_RESIZED, 2, c, 0, 1, &old, newtype);
}

/* The int arrays of subarray and darray: bmpi builds those types from
 * int dimensions only, so a larger one is refused, not truncated. */
static int int_dims(const char *fn, int ndims, const MPI_Count *in, const char *what, int *out)
{
    for (int i = 0; i < ndims; i++) {
        if (in[i] < INT_MIN || in[i] > INT_MAX)
            return bmpi_err_noobj(BMPI_ERR_TOO_LARGE, fn,
                                  "%s[%d] = %lld: bmpi supports dimensions up to INT_MAX", what,
                                  i, in[i]);
        out[i] = (int)in[i];
    }
    return MPI_SUCCESS;
}

BMPI_API(MPI_Type_create_subarray_c)
int PMPI_Type_create_subarray_c(int ndims, const MPI_Count array_of_sizes[],
                                const MPI_Count array_of_subsizes[],
                                const MPI_Count array_of_starts[], int order,
                                MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_create_subarray_c";
    if (ndims <= 0 || !array_of_sizes || !array_of_subsizes || !array_of_starts)
        return subarray(fn, ndims, NULL, NULL, NULL, order, oldtype, newtype);
    int *d = malloc(3 * (size_t)ndims * sizeof *d);
    if (!d)
        return bmpi_err_noobj(MPI_ERR_NO_MEM, fn, "no memory for %d dimensions", ndims);
    int rc;
    if (!(rc = int_dims(fn, ndims, array_of_sizes, "array_of_sizes", d)) &&
        !(rc = int_dims(fn, ndims, array_of_subsizes, "array_of_subsizes", d + ndims)) &&
        !(rc = int_dims(fn, ndims, array_of_starts, "array_of_starts", d + 2 * ndims)))
        rc = subarray(fn, ndims, d, d + ndims, d + 2 * ndims, order, oldtype,
                                       newtype);
    free(d);
    return rc;
}

BMPI_API(MPI_Type_create_darray_c)
int PMPI_Type_create_darray_c(int size, int rank, int ndims, const MPI_Count array_of_gsizes[],
                              const int array_of_distribs[], const int array_of_dargs[],
                              const int array_of_psizes[], int order, MPI_Datatype oldtype,
                              MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_create_darray_c";
    if (ndims <= 0 || !array_of_gsizes)
        return darray(fn, size, rank, ndims, NULL, array_of_distribs,
                                       array_of_dargs, array_of_psizes, order, oldtype, newtype);
    int *g = malloc((size_t)ndims * sizeof *g);
    if (!g)
        return bmpi_err_noobj(MPI_ERR_NO_MEM, fn, "no memory for %d dimensions", ndims);
    int rc = int_dims(fn, ndims, array_of_gsizes, "array_of_gsizes", g);
    if (!rc)
        rc = darray(fn, size, rank, ndims, g, array_of_distribs, array_of_dargs,
                                     array_of_psizes, order, oldtype, newtype);
    free(g);
    return rc;
}

/* --- commit, free --------------------------------------------------------------- */

#undef FN
#define FN "MPI_Type_commit"
BMPI_API(MPI_Type_commit)
int PMPI_Type_commit(MPI_Datatype *datatype)
{
    struct bmpi_datatype *dt;
    CHECK(datatype, MPI_ERR_ARG, "datatype is NULL");
    GET_TYPE(*datatype, &dt);
    int rc = bmpi_dt_commit(dt);
    return rc ? bmpi_err_noobj(rc, FN, NULL) : MPI_SUCCESS;
}

#undef FN
#define FN "MPI_Type_free"
BMPI_API(MPI_Type_free)
int PMPI_Type_free(MPI_Datatype *datatype)
{
    struct bmpi_datatype *dt;
    CHECK(datatype, MPI_ERR_ARG, "datatype is NULL");
    GET_TYPE(*datatype, &dt);
    CHECK(!(dt->flags & (BMPI_DT_PREDEFINED | BMPI_DT_NOFREE)), MPI_ERR_TYPE,
          "%s is predefined and cannot be freed", bmpi_dt_name(*datatype));
    /* the handle dies with the user's last reference, and its attributes;
     * a failing delete callback keeps the type */
    int rc;
    if (dt->user_refs == 1 && (rc = bmpi_attr_type_delete_all(*datatype)))
        return bmpi_err_noobj(rc, FN, NULL);
    bmpi_dt_user_free(dt);
    *datatype = MPI_DATATYPE_NULL;
    return MPI_SUCCESS;
}

/* --- queries ------------------------------------------------------------------ */

#undef FN
#define FN "MPI_Type_size"
BMPI_API(MPI_Type_size)
int PMPI_Type_size(MPI_Datatype datatype, int *size)
{
    struct bmpi_datatype *dt;
    CHECK(size, MPI_ERR_ARG, "size is NULL");
    GET_TYPE(datatype, &dt);
    /* as the standard says: a size that does not fit is MPI_UNDEFINED */
    *size = dt->size > INT_MAX ? MPI_UNDEFINED : (int)dt->size;
    return MPI_SUCCESS;
}

/* The MPI_Count queries (_x and _c): size, and lb and extent, true or not. */
static int size_count(const char *fn, MPI_Datatype datatype, MPI_Count *size)
{
    struct bmpi_datatype *dt;
    int rc;
    if (!size)
        return bmpi_err_noobj(MPI_ERR_ARG, fn, "size is NULL");
    if ((rc = get_type(fn, datatype, &dt)))
        return rc;
    *size = dt->size;
    return MPI_SUCCESS;
}

static int extent_count(const char *fn, MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent,
                        bool true_extent)
{
    struct bmpi_datatype *dt;
    int rc;
    if (!lb || !extent)
        return bmpi_err_noobj(MPI_ERR_ARG, fn, "%s is NULL",
                              true_extent ? "true_lb or true_extent" : "lb or extent");
    if ((rc = get_type(fn, datatype, &dt)))
        return rc;
    *lb = true_extent ? dt->true_lb : dt->lb;
    *extent = true_extent ? dt->true_ub - dt->true_lb : dt->ub - dt->lb;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Type_size_x)
int PMPI_Type_size_x(MPI_Datatype datatype, MPI_Count *size)
{
    return size_count("MPI_Type_size_x", datatype, size);
}

BMPI_API(MPI_Type_size_c)
int PMPI_Type_size_c(MPI_Datatype datatype, MPI_Count *size)
{
    return size_count("MPI_Type_size_c", datatype, size);
}

#undef FN
#define FN "MPI_Type_get_extent"
BMPI_API(MPI_Type_get_extent)
int PMPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent)
{
    struct bmpi_datatype *dt;
    CHECK(lb && extent, MPI_ERR_ARG, "lb or extent is NULL");
    GET_TYPE(datatype, &dt);
    *lb = dt->lb;
    *extent = dt->ub - dt->lb;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Type_get_extent_x)
int PMPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    return extent_count("MPI_Type_get_extent_x", datatype, lb, extent, false);
}

BMPI_API(MPI_Type_get_extent_c)
int PMPI_Type_get_extent_c(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    return extent_count("MPI_Type_get_extent_c", datatype, lb, extent, false);
}

#undef FN
#define FN "MPI_Type_get_true_extent"
BMPI_API(MPI_Type_get_true_extent)
int PMPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint *true_lb, MPI_Aint *true_extent)
{
    struct bmpi_datatype *dt;
    CHECK(true_lb && true_extent, MPI_ERR_ARG, "true_lb or true_extent is NULL");
    GET_TYPE(datatype, &dt);
    *true_lb = dt->true_lb;
    *true_extent = dt->true_ub - dt->true_lb;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Type_get_true_extent_x)
int PMPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent)
{
    return extent_count("MPI_Type_get_true_extent_x", datatype, true_lb, true_extent, true);
}

BMPI_API(MPI_Type_get_true_extent_c)
int PMPI_Type_get_true_extent_c(MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent)
{
    return extent_count("MPI_Type_get_true_extent_c", datatype, true_lb, true_extent, true);
}

/* A type made by a large-count constructor with an argument above INT_MAX
 * has contents that only the _c queries can return. */
#define NEEDS_C "%s was built with counts that do not fit an int: use %s"

#undef FN
#define FN "MPI_Type_get_envelope"
BMPI_API(MPI_Type_get_envelope)
int PMPI_Type_get_envelope(MPI_Datatype datatype, int *num_integers, int *num_addresses,
                           int *num_datatypes, int *combiner)
{
    struct bmpi_datatype *dt;
    CHECK(num_integers && num_addresses && num_datatypes && combiner, MPI_ERR_ARG,
          "an output argument is NULL");
    GET_TYPE(datatype, &dt);
    CHECK(!dt->n_counts, MPI_ERR_TYPE, NEEDS_C, bmpi_dt_name(datatype), "MPI_Type_get_envelope_c");
    *combiner = dt->combiner;
    if (dt->combiner == MPI_COMBINER_NAMED) {
        *num_integers = *num_addresses = *num_datatypes = 0;
    } else {
        *num_integers = dt->n_ints;
        *num_addresses = dt->n_aints;
        *num_datatypes = dt->n_types;
    }
    return MPI_SUCCESS;
}

#undef FN
#define FN "MPI_Type_get_contents"
BMPI_API(MPI_Type_get_contents)
int PMPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses,
                           int max_datatypes, int array_of_integers[],
                           MPI_Aint array_of_addresses[], MPI_Datatype array_of_datatypes[])
{
    struct bmpi_datatype *dt;
    GET_TYPE(datatype, &dt);
    CHECK(dt->combiner != MPI_COMBINER_NAMED, MPI_ERR_TYPE,
          "%s is a named predefined type: it has no contents", bmpi_dt_name(datatype));
    CHECK(!dt->n_counts, MPI_ERR_TYPE, NEEDS_C, bmpi_dt_name(datatype), "MPI_Type_get_contents_c");
    CHECK(max_integers >= dt->n_ints && max_addresses >= dt->n_aints &&
              max_datatypes >= dt->n_types,
          MPI_ERR_ARG,
          "arrays too small: the type has %d integers, %d addresses, %d datatypes; room for %d, "
          "%d, %d",
          dt->n_ints, dt->n_aints, dt->n_types, max_integers, max_addresses, max_datatypes);
    CHECK((!dt->n_ints || array_of_integers) && (!dt->n_aints || array_of_addresses) &&
              (!dt->n_types || array_of_datatypes),
          MPI_ERR_ARG, "an output array is NULL");
    if (dt->n_ints)
        memcpy(array_of_integers, dt->ints, (size_t)dt->n_ints * sizeof(int));
    if (dt->n_aints)
        memcpy(array_of_addresses, dt->aints, (size_t)dt->n_aints * sizeof(MPI_Aint));
    for (int i = 0; i < dt->n_types; i++)
        array_of_datatypes[i] = bmpi_dt_user_handle(dt->types[i]);
    return MPI_SUCCESS;
}

#undef FN
#define FN "MPI_Type_get_envelope_c"
BMPI_API(MPI_Type_get_envelope_c)
int PMPI_Type_get_envelope_c(MPI_Datatype datatype, MPI_Count *num_integers,
                             MPI_Count *num_addresses, MPI_Count *num_large_counts,
                             MPI_Count *num_datatypes, int *combiner)
{
    struct bmpi_datatype *dt;
    CHECK(num_integers && num_addresses && num_large_counts && num_datatypes && combiner,
          MPI_ERR_ARG, "an output argument is NULL");
    GET_TYPE(datatype, &dt);
    *combiner = dt->combiner;
    bool named = dt->combiner == MPI_COMBINER_NAMED;
    *num_integers = named ? 0 : dt->n_ints;
    *num_addresses = named ? 0 : dt->n_aints;
    *num_large_counts = named ? 0 : dt->n_counts;
    *num_datatypes = named ? 0 : dt->n_types;
    return MPI_SUCCESS;
}

#undef FN
#define FN "MPI_Type_get_contents_c"
BMPI_API(MPI_Type_get_contents_c)
int PMPI_Type_get_contents_c(MPI_Datatype datatype, MPI_Count max_integers,
                             MPI_Count max_addresses, MPI_Count max_large_counts,
                             MPI_Count max_datatypes, int array_of_integers[],
                             MPI_Aint array_of_addresses[], MPI_Count array_of_large_counts[],
                             MPI_Datatype array_of_datatypes[])
{
    struct bmpi_datatype *dt;
    GET_TYPE(datatype, &dt);
    CHECK(dt->combiner != MPI_COMBINER_NAMED, MPI_ERR_TYPE,
          "%s is a named predefined type: it has no contents", bmpi_dt_name(datatype));
    CHECK(max_integers >= dt->n_ints && max_addresses >= dt->n_aints &&
              max_large_counts >= dt->n_counts && max_datatypes >= dt->n_types,
          MPI_ERR_ARG,
          "arrays too small: the type has %d integers, %d addresses, %d large counts, %d "
          "datatypes; room for %lld, %lld, %lld, %lld",
          dt->n_ints, dt->n_aints, dt->n_counts, dt->n_types, max_integers, max_addresses,
          max_large_counts, max_datatypes);
    CHECK((!dt->n_ints || array_of_integers) && (!dt->n_aints || array_of_addresses) &&
              (!dt->n_counts || array_of_large_counts) && (!dt->n_types || array_of_datatypes),
          MPI_ERR_ARG, "an output array is NULL");
    if (dt->n_ints)
        memcpy(array_of_integers, dt->ints, (size_t)dt->n_ints * sizeof(int));
    if (dt->n_aints)
        memcpy(array_of_addresses, dt->aints, (size_t)dt->n_aints * sizeof(MPI_Aint));
    if (dt->n_counts)
        memcpy(array_of_large_counts, dt->counts, (size_t)dt->n_counts * sizeof(MPI_Count));
    for (int i = 0; i < dt->n_types; i++)
        array_of_datatypes[i] = bmpi_dt_user_handle(dt->types[i]);
    return MPI_SUCCESS;
}

#undef FN
#define FN "MPI_Type_get_name"
BMPI_API(MPI_Type_get_name)
int PMPI_Type_get_name(MPI_Datatype datatype, char *type_name, int *resultlen)
{
    struct bmpi_datatype *dt;
    CHECK(type_name && resultlen, MPI_ERR_ARG, "type_name or resultlen is NULL");
    GET_TYPE(datatype, &dt);
    const char *name = bmpi_dt_get_name(dt);
    size_t n = strnlen(name, MPI_MAX_OBJECT_NAME - 1);
    memcpy(type_name, name, n);
    type_name[n] = '\0';
    *resultlen = (int)n;
    return MPI_SUCCESS;
}

#undef FN
#define FN "MPI_Type_set_name"
BMPI_API(MPI_Type_set_name)
int PMPI_Type_set_name(MPI_Datatype datatype, const char *type_name)
{
    struct bmpi_datatype *dt;
    CHECK(type_name, MPI_ERR_ARG, "type_name is NULL");
    GET_TYPE(datatype, &dt);
    int rc = bmpi_dt_set_name(dt, type_name);
    return rc ? bmpi_err_noobj(rc, FN, NULL) : MPI_SUCCESS;
}

#undef FN
#define FN "MPI_Type_match_size"
BMPI_API(MPI_Type_match_size)
int PMPI_Type_match_size(int typeclass, int size, MPI_Datatype *datatype)
{
    CHECK(datatype, MPI_ERR_ARG, "datatype is NULL");
    CHECK(typeclass == MPI_TYPECLASS_REAL || typeclass == MPI_TYPECLASS_INTEGER ||
              typeclass == MPI_TYPECLASS_COMPLEX,
          MPI_ERR_ARG, "typeclass %d is not MPI_TYPECLASS_REAL, _INTEGER or _COMPLEX", typeclass);
    MPI_Datatype t = bmpi_dt_match_size(typeclass, size);
    CHECK(t != MPI_DATATYPE_NULL, MPI_ERR_ARG, "no predefined type of class %d has size %d",
          typeclass, size);
    *datatype = t;
    return MPI_SUCCESS;
}

/* Fortran 90 parameterised types, as gfortran's selected_real_kind and
 * selected_int_kind choose them (MPI_UNDEFINED: no requirement). */
static int f90(const char *fn, int combiner, int p, int r, MPI_Datatype *newtype)
{
    static const struct { int p, r; MPI_Datatype real, cplx; } reals[] = {
        {6, 37, MPI_REAL4, MPI_COMPLEX8},
        {15, 307, MPI_REAL8, MPI_COMPLEX16},
        {33, 4931, MPI_REAL16, MPI_COMPLEX32},
    };
    static const struct { int r; MPI_Datatype t; } ints[] = {
        {2, MPI_INTEGER1}, {4, MPI_INTEGER2}, {9, MPI_INTEGER4}, {18, MPI_INTEGER8},
    };
    MPI_Datatype base = MPI_DATATYPE_NULL;
    if (!newtype)
        return bmpi_err_noobj(MPI_ERR_ARG, fn, "newtype is NULL");
    if (combiner == MPI_COMBINER_F90_INTEGER) {
        for (size_t i = 0; i < sizeof ints / sizeof ints[0] && base == MPI_DATATYPE_NULL; i++)
            if (r == MPI_UNDEFINED || r <= ints[i].r)
                base = ints[i].t;
        if (base == MPI_DATATYPE_NULL)
            return bmpi_err_noobj(MPI_ERR_ARG, fn, "no integer kind has a range of %d digits", r);
    } else {
        if (p == MPI_UNDEFINED && r == MPI_UNDEFINED)
            return bmpi_err_noobj(MPI_ERR_ARG, fn, "p and r are both MPI_UNDEFINED");
        for (size_t i = 0; i < sizeof reals / sizeof reals[0] && base == MPI_DATATYPE_NULL; i++)
            if ((p == MPI_UNDEFINED || p <= reals[i].p) && (r == MPI_UNDEFINED || r <= reals[i].r))
                base = combiner == MPI_COMBINER_F90_REAL ? reals[i].real : reals[i].cplx;
        if (base == MPI_DATATYPE_NULL)
            return bmpi_err_noobj(MPI_ERR_ARG, fn,
                                  "no real kind has a precision of %d and a range of %d digits", p, r);
    }
    int rc = bmpi_dt_f90(combiner, combiner == MPI_COMBINER_F90_INTEGER ? 0 : p, r, base, newtype);
    return rc ? bmpi_err_noobj(rc, fn, NULL) : MPI_SUCCESS;
}

BMPI_API(MPI_Type_create_f90_real)
int PMPI_Type_create_f90_real(int p, int r, MPI_Datatype *newtype)
{
    return f90("MPI_Type_create_f90_real", MPI_COMBINER_F90_REAL, p, r, newtype);
}

BMPI_API(MPI_Type_create_f90_complex)
int PMPI_Type_create_f90_complex(int p, int r, MPI_Datatype *newtype)
{
    return f90("MPI_Type_create_f90_complex", MPI_COMBINER_F90_COMPLEX, p, r, newtype);
}

BMPI_API(MPI_Type_create_f90_integer)
int PMPI_Type_create_f90_integer(int r, MPI_Datatype *newtype)
{
    return f90("MPI_Type_create_f90_integer", MPI_COMBINER_F90_INTEGER, 0, r, newtype);
}

#undef FN
#define FN "MPI_Type_get_value_index"
BMPI_API(MPI_Type_get_value_index)
int PMPI_Type_get_value_index(MPI_Datatype value_type, MPI_Datatype index_type,
                              MPI_Datatype *pair_type)
{
    static const struct { MPI_Datatype v, i, pair; } pairs[] = {
        {MPI_FLOAT, MPI_INT, MPI_FLOAT_INT},
        {MPI_DOUBLE, MPI_INT, MPI_DOUBLE_INT},
        {MPI_LONG, MPI_INT, MPI_LONG_INT},
        {MPI_SHORT, MPI_INT, MPI_SHORT_INT},
        {MPI_LONG_DOUBLE, MPI_INT, MPI_LONG_DOUBLE_INT},
        {MPI_INT, MPI_INT, MPI_2INT},
#ifdef MPI_2INTEGER
        {MPI_INTEGER, MPI_INTEGER, MPI_2INTEGER},
        {MPI_REAL, MPI_REAL, MPI_2REAL},
        {MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, MPI_2DOUBLE_PRECISION},
#endif
    };
    struct bmpi_datatype *dt;
    CHECK(pair_type, MPI_ERR_ARG, "pair_type is NULL");
    GET_TYPE(value_type, &dt);
    GET_TYPE(index_type, &dt);
    /* combinations without a predefined pair type give MPI_DATATYPE_NULL */
    *pair_type = MPI_DATATYPE_NULL;
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
        if (pairs[i].v == value_type && pairs[i].i == index_type)
            *pair_type = pairs[i].pair;
    return MPI_SUCCESS;
}

/* --- addresses ------------------------------------------------------------------ */

#undef FN
#define FN "MPI_Get_address"
BMPI_API(MPI_Get_address)
int PMPI_Get_address(const void *location, MPI_Aint *address)
{
    CHECK(address, MPI_ERR_ARG, "address is NULL");
    *address = (MPI_Aint)(uintptr_t)location;
    return MPI_SUCCESS;
}

/* Address arithmetic as unsigned, so it wraps instead of overflowing. */
BMPI_API(MPI_Aint_add)
MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp)
{
    return (MPI_Aint)((uintptr_t)base + (uintptr_t)disp);
}

BMPI_API(MPI_Aint_diff)
MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2)
{
    return (MPI_Aint)((uintptr_t)addr1 - (uintptr_t)addr2);
}

/* --- status ------------------------------------------------------------------------ */

/* The byte count of a status (MPICH layout; bit 0 of count_hi_and_cancelled
 * is the cancelled flag). */
static MPI_Count status_bytes(const MPI_Status *st)
{
    return (MPI_Count)((uint64_t)(uint32_t)st->count_lo |
                       (uint64_t)((uint32_t)st->count_hi_and_cancelled >> 1) << 32);
}

static void status_set_bytes(MPI_Status *st, MPI_Count bytes)
{
    uint64_t b = (uint64_t)bytes;
    st->count_lo = (int)(uint32_t)b;
    st->count_hi_and_cancelled =
        (int)((uint32_t)(b >> 32) << 1 | ((uint32_t)st->count_hi_and_cancelled & 1u));
}

static int check_status(const char *fn, const MPI_Status *status)
{
    if (!status || status == MPI_STATUS_IGNORE)
        return bmpi_err_noobj(MPI_ERR_ARG, fn, "status is %s", status ? "MPI_STATUS_IGNORE" : "NULL");
    return MPI_SUCCESS;
}

/* The count of a status in elements of datatype; MPI_UNDEFINED when the
 * bytes are no whole number of them. */
static int get_count(const char *fn, const MPI_Status *status, MPI_Datatype datatype,
                     MPI_Count *count)
{
    struct bmpi_datatype *dt;
    int rc;
    if ((rc = check_status(fn, status)))
        return rc;
    if (!count)
        return bmpi_err_noobj(MPI_ERR_ARG, fn, "count is NULL");
    if ((rc = get_type(fn, datatype, &dt)))
        return rc;
    MPI_Count bytes = status_bytes(status);
    if (dt->size == 0)
        *count = 0; /* as the standard says for zero-size types */
    else if (bytes % dt->size)
        *count = MPI_UNDEFINED;
    else
        *count = bytes / dt->size;
    return MPI_SUCCESS;
}

/* An int result: MPI_UNDEFINED when the count does not fit (MPI 4.1, 3.2.5). */
static int int_count(MPI_Count n) { return n > INT_MAX ? MPI_UNDEFINED : (int)n; }

BMPI_API(MPI_Get_count)
int PMPI_Get_count(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
    MPI_Count n;
    int rc = get_count("MPI_Get_count", status, datatype, count ? &n : NULL);
    if (!rc)
        *count = int_count(n);
    return rc;
}

BMPI_API(MPI_Get_count_c)
int PMPI_Get_count_c(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    return get_count("MPI_Get_count_c", status, datatype, count);
}

static int get_elements(const char *fn, const MPI_Status *status, MPI_Datatype datatype,
                        MPI_Count *n)
{
    struct bmpi_datatype *dt;
    int rc;
    if ((rc = check_status(fn, status)))
        return rc;
    if (!n)
        return bmpi_err_noobj(MPI_ERR_ARG, fn, "count is NULL");
    if ((rc = get_type(fn, datatype, &dt)))
        return rc;
    *n = bmpi_dt_elements(dt, status_bytes(status));
    if (*n < 0)
        *n = MPI_UNDEFINED;
    return MPI_SUCCESS;
}

#undef FN
#define FN "MPI_Get_elements"
BMPI_API(MPI_Get_elements)
int PMPI_Get_elements(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
    MPI_Count n;
    int rc = get_elements(FN, status, datatype, count ? &n : NULL);
    if (!rc)
        *count = int_count(n);
    return rc;
}

#undef FN
#define FN "MPI_Get_elements_x"
BMPI_API(MPI_Get_elements_x)
int PMPI_Get_elements_x(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    return get_elements(FN, status, datatype, count);
}

#undef FN
#define FN "MPI_Get_elements_c"
BMPI_API(MPI_Get_elements_c)
int PMPI_Get_elements_c(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    return get_elements(FN, status, datatype, count);
}

static int set_elements(const char *fn, MPI_Status *status, MPI_Datatype datatype, MPI_Count count)
{
    struct bmpi_datatype *dt;
    int rc;
    if ((rc = check_status(fn, status)) || (rc = get_type(fn, datatype, &dt)))
        return rc;
    if (count < 0)
        return bmpi_err_noobj(MPI_ERR_COUNT, fn, "negative count %lld", (long long)count);
    MPI_Count bytes = bmpi_dt_elements_bytes(dt, count);
    if (bytes < 0 || (uint64_t)bytes >> 63 != 0)
        return bmpi_err_noobj(BMPI_ERR_TOO_LARGE, fn, "%lld elements of %s do not fit in a status",
                              (long long)count, bmpi_dt_name(datatype));
    status_set_bytes(status, bytes);
    return MPI_SUCCESS;
}

#undef FN
#define FN "MPI_Status_set_elements"
BMPI_API(MPI_Status_set_elements)
int PMPI_Status_set_elements(MPI_Status *status, MPI_Datatype datatype, int count)
{
    return set_elements(FN, status, datatype, count);
}

#undef FN
#define FN "MPI_Status_set_elements_x"
BMPI_API(MPI_Status_set_elements_x)
int PMPI_Status_set_elements_x(MPI_Status *status, MPI_Datatype datatype, MPI_Count count)
{
    return set_elements(FN, status, datatype, count);
}

/* --- pack, unpack ------------------------------------------------------------------- */

static int check_comm(const char *fn, MPI_Comm comm)
{
    if (!bmpi_comm_get(comm))
        return bmpi_err_comm(comm, MPI_ERR_COMM, fn, "invalid communicator 0x%x", (unsigned)comm);
    return MPI_SUCCESS;
}

/* A committed type and a count for (un)packing. */
static int check_data(const char *fn, MPI_Comm comm, const void *buf, MPI_Count count,
                      MPI_Datatype datatype, struct bmpi_datatype **dt)
{
    if (count < 0)
        return bmpi_err_comm(comm, MPI_ERR_COUNT, fn, "negative count %lld", count);
    if (bmpi_dt_check_usable(datatype, dt))
        return bmpi_err_comm(comm, MPI_ERR_TYPE, fn, NULL);
    return bmpi_check_buffer_of(comm, fn, buf, count, *dt);
}

/* The packed buffer's size and the position in it; the bytes that remain. */
static int check_position(const char *fn, MPI_Comm comm, const MPI_Count *position, MPI_Count size,
                          MPI_Count *left)
{
    if (!position)
        return bmpi_err_comm(comm, MPI_ERR_ARG, fn, "position is NULL");
    if (size < 0 || *position < 0 || *position > size)
        return bmpi_err_comm(comm, MPI_ERR_ARG, fn, "position %lld outside the buffer of %lld bytes",
                             *position, size);
    *left = size - *position;
    return MPI_SUCCESS;
}

static int pack(const char *fn, const void *inbuf, MPI_Count incount, MPI_Datatype datatype,
                void *outbuf, MPI_Count outsize, MPI_Count *position, MPI_Comm comm)
{
    struct bmpi_datatype *dt;
    MPI_Count left;
    int rc;
    if ((rc = check_comm(fn, comm)) || (rc = check_data(fn, comm, inbuf, incount, datatype, &dt)) ||
        (rc = check_position(fn, comm, position, outsize, &left)))
        return rc;
    size_t bytes = (size_t)incount * (size_t)dt->size;
    if (bytes > (size_t)left)
        return bmpi_err_comm(comm, MPI_ERR_TRUNCATE, fn,
                             "%zu bytes to pack but only %lld left in the buffer of %lld bytes", bytes,
                             left, outsize);
    if (!outbuf && bytes > 0)
        return bmpi_err_comm(comm, MPI_ERR_BUFFER, fn, "outbuf is NULL");
    bmpi_dt_pack_all(inbuf, (size_t)incount, dt, (char *)outbuf + *position);
    *position += (MPI_Count)bytes;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Pack)
int PMPI_Pack(const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, int outsize,
              int *position, MPI_Comm comm)
{
    MPI_Count pos = position ? *position : 0;
    int rc = pack("MPI_Pack", inbuf, incount, datatype, outbuf, outsize, position ? &pos : NULL,
                  comm);
    if (!rc)
        *position = (int)pos; /* at most outsize, an int */
    return rc;
}

BMPI_API(MPI_Pack_c)
int PMPI_Pack_c(const void *inbuf, MPI_Count incount, MPI_Datatype datatype, void *outbuf,
                MPI_Count outsize, MPI_Count *position, MPI_Comm comm)
{
    return pack("MPI_Pack_c", inbuf, incount, datatype, outbuf, outsize, position, comm);
}

static int unpack(const char *fn, const void *inbuf, MPI_Count insize, MPI_Count *position,
                  void *outbuf, MPI_Count outcount, MPI_Datatype datatype, MPI_Comm comm)
{
    struct bmpi_datatype *dt;
    MPI_Count left;
    int rc;
    if ((rc = check_comm(fn, comm)) || (rc = check_data(fn, comm, outbuf, outcount, datatype, &dt)) ||
        (rc = check_position(fn, comm, position, insize, &left)))
        return rc;
    size_t bytes = (size_t)outcount * (size_t)dt->size;
    if (bytes > (size_t)left)
        return bmpi_err_comm(comm, MPI_ERR_TRUNCATE, fn,
                             "%zu bytes to unpack but only %lld left in the buffer of %lld bytes",
                             bytes, left, insize);
    if (!inbuf && bytes > 0)
        return bmpi_err_comm(comm, MPI_ERR_BUFFER, fn, "inbuf is NULL");
    bmpi_dt_unpack_all((const char *)inbuf + *position, outbuf, (size_t)outcount, dt);
    *position += (MPI_Count)bytes;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Unpack)
int PMPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount,
                MPI_Datatype datatype, MPI_Comm comm)
{
    MPI_Count pos = position ? *position : 0;
    int rc = unpack("MPI_Unpack", inbuf, insize, position ? &pos : NULL, outbuf, outcount,
                    datatype, comm);
    if (!rc)
        *position = (int)pos; /* at most insize, an int */
    return rc;
}

BMPI_API(MPI_Unpack_c)
int PMPI_Unpack_c(const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf,
                  MPI_Count outcount, MPI_Datatype datatype, MPI_Comm comm)
{
    return unpack("MPI_Unpack_c", inbuf, insize, position, outbuf, outcount, datatype, comm);
}

/* The bytes MPI_Pack needs for incount elements (at most max_size). */
static int pack_size(const char *fn, MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm,
                     MPI_Count *size, MPI_Count max_size)
{
    struct bmpi_datatype *dt;
    int rc;
    if ((rc = check_comm(fn, comm)))
        return rc;
    if (incount < 0)
        return bmpi_err_comm(comm, MPI_ERR_COUNT, fn, "negative count %lld", incount);
    if (!size)
        return bmpi_err_comm(comm, MPI_ERR_ARG, fn, "size is NULL");
    if (!(dt = bmpi_dt_get(datatype)))
        return bmpi_err_comm(comm, MPI_ERR_TYPE, fn, "invalid datatype 0x%x", (unsigned)datatype);
    MPI_Count bytes;
    if (__builtin_mul_overflow(incount, dt->size, &bytes) || bytes > max_size)
        return bmpi_err_comm(comm, BMPI_ERR_TOO_LARGE, fn,
                             "%lld elements of %s take more bytes than %s holds", incount,
                             bmpi_dt_name(datatype), max_size == INT_MAX ? "an int" : "MPI_Count");
    *size = bytes;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Pack_size)
int PMPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int *size)
{
    MPI_Count n;
    int rc = pack_size("MPI_Pack_size", incount, datatype, comm, size ? &n : NULL, INT_MAX);
    if (!rc)
        *size = (int)n;
    return rc;
}

BMPI_API(MPI_Pack_size_c)
int PMPI_Pack_size_c(MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm, MPI_Count *size)
{
    return pack_size("MPI_Pack_size_c", incount, datatype, comm, size, LLONG_MAX);
}

/* --- external32 ---------------------------------------------------------------------- */

static int check_datarep(const char *fn, const char *datarep)
{
    if (!datarep)
        return bmpi_err_noobj(MPI_ERR_ARG, fn, "datarep is NULL");
    if (strcmp(datarep, "external32") != 0)
        return bmpi_err_noobj(MPI_ERR_UNSUPPORTED_DATAREP, fn,
                              "data representation \"%s\" is not supported (only \"external32\")",
                              datarep);
    return MPI_SUCCESS;
}

/* external32 for the int calls and the _c ones alike (they report with fn). */
#undef FN
#define FN fn
static int pack_external_size(const char *fn, const char *datarep, MPI_Count incount,
                              MPI_Datatype datatype, MPI_Count *size)
{
    struct bmpi_datatype *dt;
    int rc;
    if ((rc = check_datarep(FN, datarep)))
        return rc;
    CHECK(incount >= 0, MPI_ERR_COUNT, "negative count %lld", incount);
    CHECK(size, MPI_ERR_ARG, "size is NULL");
    GET_TYPE(datatype, &dt);
    MPI_Count one;
    if ((rc = bmpi_dt_external_size(dt, &one)))
        return bmpi_err_noobj(rc, FN, NULL);
    CHECK(!__builtin_mul_overflow(one, incount, size), BMPI_ERR_TOO_LARGE,
          "the external32 size of %lld elements overflows MPI_Aint", incount);
    return MPI_SUCCESS;
}

static int pack_external(const char *fn, const char *datarep, const void *inbuf, MPI_Count incount,
                         MPI_Datatype datatype, void *outbuf, MPI_Count outsize,
                         MPI_Count *position)
{
    struct bmpi_datatype *dt;
    int rc;
    if ((rc = check_datarep(FN, datarep)))
        return rc;
    CHECK(incount >= 0, MPI_ERR_COUNT, "negative count %lld", incount);
    CHECK(position, MPI_ERR_ARG, "position is NULL");
    CHECK(outsize >= 0 && *position >= 0 && *position <= outsize, MPI_ERR_ARG,
          "position %lld outside the buffer of %lld bytes", *position, outsize);
    if (bmpi_dt_check_usable(datatype, &dt))
        return bmpi_err_noobj(MPI_ERR_TYPE, FN, NULL);
    CHECK(outbuf || incount == 0 || dt->size == 0, MPI_ERR_BUFFER, "outbuf is NULL");
    if ((rc = bmpi_dt_pack_external(inbuf, (size_t)incount, dt, outbuf, outsize, position)))
        return bmpi_err_noobj(rc, FN, NULL);
    return MPI_SUCCESS;
}

static int unpack_external(const char *fn, const char datarep[], const void *inbuf,
                           MPI_Count insize, MPI_Count *position, void *outbuf, MPI_Count outcount,
                           MPI_Datatype datatype)
{
    struct bmpi_datatype *dt;
    int rc;
    if ((rc = check_datarep(FN, datarep)))
        return rc;
    CHECK(outcount >= 0, MPI_ERR_COUNT, "negative count %lld", outcount);
    CHECK(position, MPI_ERR_ARG, "position is NULL");
    CHECK(insize >= 0 && *position >= 0 && *position <= insize, MPI_ERR_ARG,
          "position %lld outside the buffer of %lld bytes", *position, insize);
    if (bmpi_dt_check_usable(datatype, &dt))
        return bmpi_err_noobj(MPI_ERR_TYPE, FN, NULL);
    CHECK(inbuf || outcount == 0 || dt->size == 0, MPI_ERR_BUFFER, "inbuf is NULL");
    if ((rc = bmpi_dt_unpack_external(inbuf, insize, position, outbuf, (size_t)outcount, dt)))
        return bmpi_err_noobj(rc, FN, NULL);
    return MPI_SUCCESS;
}

BMPI_API(MPI_Pack_external_size)
int PMPI_Pack_external_size(const char *datarep, int incount, MPI_Datatype datatype,
                            MPI_Aint *size)
{
    MPI_Count n;
    int rc = pack_external_size("MPI_Pack_external_size", datarep, incount, datatype,
                                size ? &n : NULL);
    if (!rc)
        *size = (MPI_Aint)n;
    return rc;
}

BMPI_API(MPI_Pack_external_size_c)
int PMPI_Pack_external_size_c(const char *datarep, MPI_Count incount, MPI_Datatype datatype,
                              MPI_Count *size)
{
    return pack_external_size("MPI_Pack_external_size_c", datarep, incount, datatype, size);
}

BMPI_API(MPI_Pack_external)
int PMPI_Pack_external(const char *datarep, const void *inbuf, int incount, MPI_Datatype datatype,
                       void *outbuf, MPI_Aint outsize, MPI_Aint *position)
{
    MPI_Count pos = position ? *position : 0;
    int rc = pack_external("MPI_Pack_external", datarep, inbuf, incount, datatype, outbuf, outsize,
                           position ? &pos : NULL);
    if (!rc)
        *position = (MPI_Aint)pos;
    return rc;
}

BMPI_API(MPI_Pack_external_c)
int PMPI_Pack_external_c(const char *datarep, const void *inbuf, MPI_Count incount,
                         MPI_Datatype datatype, void *outbuf, MPI_Count outsize,
                         MPI_Count *position)
{
    return pack_external("MPI_Pack_external_c", datarep, inbuf, incount, datatype, outbuf, outsize,
                         position);
}

BMPI_API(MPI_Unpack_external)
int PMPI_Unpack_external(const char datarep[], const void *inbuf, MPI_Aint insize,
                         MPI_Aint *position, void *outbuf, int outcount, MPI_Datatype datatype)
{
    MPI_Count pos = position ? *position : 0;
    int rc = unpack_external("MPI_Unpack_external", datarep, inbuf, insize, position ? &pos : NULL,
                             outbuf, outcount, datatype);
    if (!rc)
        *position = (MPI_Aint)pos;
    return rc;
}

BMPI_API(MPI_Unpack_external_c)
int PMPI_Unpack_external_c(const char datarep[], const void *inbuf, MPI_Count insize,
                           MPI_Count *position, void *outbuf, MPI_Count outcount,
                           MPI_Datatype datatype)
{
    return unpack_external("MPI_Unpack_external_c", datarep, inbuf, insize, position, outbuf,
                           outcount, datatype);
}
