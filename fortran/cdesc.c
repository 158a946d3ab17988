/*
 * fortran/cdesc.c: an mpi_f08 choice buffer (a Fortran 2018 descriptor) as
 * the buffer, count and datatype of the C call (fortran/cdesc.h).
 *
 * A contiguous array goes as it is. A non-contiguous section becomes one
 * derived datatype over its base address: dimension 0 varies fastest, as
 * Fortran stores arrays, so the first n MPI elements of the section are
 * q whole steps of the outermost dimension used (an hvector with that
 * dimension's byte stride over the type of one step) plus, when n is not
 * a multiple of a step, the first remaining elements of the next step,
 * described the same way one dimension further in. Below dimension 0 are
 * the elem_len / extent(type) MPI elements of one array element.
 */
#include "config.h"

#include <limits.h>

#include "fortran/cdesc.h"
#include "runtime/lang.h"

static int is_contiguous(const CFI_cdesc_t *d)
{
    CFI_index_t want = (CFI_index_t)d->elem_len;
    for (int i = 0; i < d->rank; i++) {
        if (d->dim[i].extent == 0)
            return 1; /* empty: nothing to describe */
        if (d->dim[i].extent > 1 && d->dim[i].sm != want)
            return 0;
        want *= d->dim[i].extent;
    }
    return 1;
}

/* Free t unless it is the caller's type. */
static void drop(MPI_Datatype t, MPI_Datatype type)
{
    if (t != type && t != MPI_DATATYPE_NULL)
        PMPI_Type_free(&t);
}

static int as_int(MPI_Count n, int *out)
{
    if (n > INT_MAX)
        return bmpi_lang_err_set(MPI_ERR_COUNT, "an array section of %lld elements in one dimension is too large",
                                 (long long)n);
    *out = (int)n;
    return MPI_SUCCESS;
}

/* The first n MPI elements of type in the section's dimensions 0..dim
 * (dim -1: one array element, per_elem MPI elements), in *out; *out is
 * type itself for one element, else a new type the caller frees. */
static int describe(const CFI_cdesc_t *d, int dim, MPI_Count n, MPI_Count per_elem, MPI_Datatype type,
                    MPI_Datatype *out)
{
    int len = 0, rc;
    if (dim < 0) {
        if (n == 1) {
            *out = type;
            return MPI_SUCCESS;
        }
        return (rc = as_int(n, &len)) ? rc : PMPI_Type_contiguous(len, type, out);
    }
    MPI_Count step = per_elem; /* MPI elements per index of dimension dim */
    for (int i = 0; i < dim; i++)
        step *= d->dim[i].extent;
    MPI_Count q = n / step, rem = n % step;
    MPI_Datatype full = MPI_DATATYPE_NULL, sub = MPI_DATATYPE_NULL;
    if (q > 0) {
        if ((rc = as_int(q, &len)) || (rc = describe(d, dim - 1, step, per_elem, type, &sub)))
            return rc;
        rc = PMPI_Type_create_hvector(len, 1, (MPI_Aint)d->dim[dim].sm, sub, &full);
        drop(sub, type);
        if (rc)
            return rc;
    }
    if (rem == 0) {
        *out = full;
        return MPI_SUCCESS;
    }
    if ((rc = describe(d, dim - 1, rem, per_elem, type, &sub))) {
        drop(full, type);
        return rc;
    }
    if (q == 0) {
        *out = sub;
        return MPI_SUCCESS;
    }
    /* q whole steps, then the rest at the next step's start */
    int blocks[2] = {1, 1};
    MPI_Aint displs[2] = {0, (MPI_Aint)q * (MPI_Aint)d->dim[dim].sm};
    MPI_Datatype types[2] = {full, sub};
    rc = PMPI_Type_create_struct(2, blocks, displs, types, out);
    drop(full, type);
    drop(sub, type);
    return rc;
}

int bmpi_f08_buffer_from_cdesc(const CFI_cdesc_t *desc, MPI_Count count, MPI_Datatype type,
                               struct bmpi_f08_buffer *out)
{
    *out = (struct bmpi_f08_buffer){.buf = desc->base_addr, .count = count, .type = type};
    MPI_Aint extent;
    /* a bad datatype or count is the C call's to report, as in C */
    if (count <= 0 || is_contiguous(desc) || bmpi_lang_type_extent(type, &extent) != MPI_SUCCESS)
        return MPI_SUCCESS;
    MPI_Aint elem_len = (MPI_Aint)desc->elem_len;
    if (extent <= 0 || elem_len % extent != 0)
        return bmpi_lang_err_set(MPI_ERR_TYPE,
                                 "datatype 0x%x of extent %ld does not divide the %ld-byte elements of a "
                                 "non-contiguous array section",
                                 (unsigned)type, (long)extent, (long)elem_len);
    MPI_Count per_elem = elem_len / extent, elems = 1;
    for (int i = 0; i < desc->rank; i++)
        elems *= desc->dim[i].extent;
    if (count > elems * per_elem)
        return bmpi_lang_err_set(MPI_ERR_COUNT,
                                 "count %lld is more than the %lld elements of datatype 0x%x in the array section",
                                 (long long)count, (long long)(elems * per_elem), (unsigned)type);
    MPI_Datatype t;
    int rc = describe(desc, desc->rank - 1, count, per_elem, type, &t);
    if (rc)
        return rc;
    if (t == type) {
        /* a single element: no type to build */
        return MPI_SUCCESS;
    }
    if ((rc = PMPI_Type_commit(&t))) {
        PMPI_Type_free(&t);
        return rc;
    }
    *out = (struct bmpi_f08_buffer){.buf = desc->base_addr, .count = 1, .type = t, .owns_type = 1};
    return MPI_SUCCESS;
}

void bmpi_f08_buffer_release(struct bmpi_f08_buffer *b)
{
    if (b->owns_type) {
        PMPI_Type_free(&b->type);
        b->owns_type = 0;
    }
}
