/*
 * Subarray and distributed-array types. Each is built as the equivalent
 * chain of internal (anonymous) vector/indexed/resized types, which gives it
 * its layout; the result then carries its own envelope (MPI_COMBINER_SUBARRAY
 * or _DARRAY) with the user's arguments. Arguments are validated by the
 * callers in type_api.c.
 */
#include <stdlib.h>
#include <string.h>

#include "runtime/datatype_impl.h"
#include "runtime/error.h"

/* Internal constructors: each consumes the reference to `old` it is given
 * when it succeeds or fails, so that chains read straight. */
static int anon(int combiner, int ni, const int *ints, int na, const MPI_Aint *aints,
                struct bmpi_datatype *old, struct bmpi_datatype **out)
{
    int rc = bmpi_dt_create(combiner, ni, ints, na, aints, 1, &old, NULL, out);
    bmpi_dt_release(old);
    return rc;
}

static int anon_contig(int n, struct bmpi_datatype *old, struct bmpi_datatype **out)
{
    return anon(MPI_COMBINER_CONTIGUOUS, 1, &n, 0, NULL, old, out);
}

static int anon_hvector(int count, int bl, MPI_Aint stride, struct bmpi_datatype *old,
                        struct bmpi_datatype **out)
{
    int ints[2] = {count, bl};
    return anon(MPI_COMBINER_HVECTOR, 2, ints, 1, &stride, old, out);
}

/* One block of `bl` instances at byte displacement disp. */
static int anon_at(MPI_Aint disp, int bl, struct bmpi_datatype *old, struct bmpi_datatype **out)
{
    int ints[2] = {1, bl};
    return anon(MPI_COMBINER_HINDEXED, 2, ints, 1, &disp, old, out);
}

static int anon_resized(MPI_Aint lb, MPI_Aint extent, struct bmpi_datatype *old,
                        struct bmpi_datatype **out)
{
    MPI_Aint a[2] = {lb, extent};
    return anon(MPI_COMBINER_RESIZED, 0, NULL, 2, a, old, out);
}

static int too_large(const char *what)
{
    return bmpi_err_set(BMPI_ERR_TOO_LARGE, "%s overflows MPI_Aint", what);
}

int bmpi_dt_subarray(int ndims, const int sizes[], const int subsizes[], const int starts[],
                     int order, struct bmpi_datatype *old, struct bmpi_datatype **out)
{
    MPI_Aint ext = old->ub - old->lb, step = ext, disp = 0;
    struct bmpi_datatype *t = old, *inner;
    int rc;
    bmpi_dt_retain(old);
    /* from the fastest-varying dimension out */
    for (int k = 0; k < ndims; k++) {
        int i = order == MPI_ORDER_C ? ndims - 1 - k : k;
        MPI_Aint off;
        if (__builtin_mul_overflow((MPI_Aint)starts[i], step, &off) ||
            __builtin_add_overflow(disp, off, &disp)) {
            bmpi_dt_release(t);
            return too_large("the subarray's start displacement");
        }
        rc = k == 0 ? anon_contig(subsizes[i], t, &t) : anon_hvector(subsizes[i], 1, step, t, &t);
        if (rc)
            return rc;
        if (__builtin_mul_overflow(step, (MPI_Aint)sizes[i], &step)) {
            bmpi_dt_release(t);
            return too_large("the extent of the full array");
        }
    }
    if ((rc = anon_at(disp, 1, t, &t)) || (rc = anon_resized(0, step, t, &inner)))
        return rc;

    int ni = 3 * ndims + 2;
    int *ints = malloc((size_t)ni * sizeof *ints);
    if (!ints) {
        bmpi_dt_release(inner);
        return bmpi_err_set(MPI_ERR_NO_MEM, "no memory for a subarray datatype");
    }
    ints[0] = ndims;
    memcpy(ints + 1, sizes, (size_t)ndims * sizeof *ints);
    memcpy(ints + 1 + ndims, subsizes, (size_t)ndims * sizeof *ints);
    memcpy(ints + 1 + 2 * ndims, starts, (size_t)ndims * sizeof *ints);
    ints[ni - 1] = order;
    rc = bmpi_dt_create(MPI_COMBINER_SUBARRAY, ni, ints, 0, NULL, 1, &old, inner, out);
    free(ints);
    return rc;
}

/*
 * Darray, dimension by dimension from the fastest-varying one. Before
 * dimension i the type t describes this process's part of one "row" (all
 * faster dimensions) and is resized to exactly one row, rowext bytes, so
 * that consecutive instances of t are consecutive indices of dimension i.
 * (Building it this way, rather than MPICH's struct with MPI_LB/MPI_UB
 * only in the first dimension, keeps cyclic(k > 1) right in any dimension.)
 */
int bmpi_dt_darray(int size, int rank, int ndims, const int gsizes[], const int distribs[],
                   const int dargs[], const int psizes[], int order,
                   struct bmpi_datatype *old, struct bmpi_datatype **out)
{
    int coords[ndims > 0 ? ndims : 1];
    int rc, left = rank, procs = size;
    for (int i = 0; i < ndims; i++) { /* the process grid is always row-major */
        procs /= psizes[i];
        coords[i] = left / procs;
        left %= procs;
    }

    MPI_Aint rowext = old->ub - old->lb;
    struct bmpi_datatype *t = old;
    bmpi_dt_retain(old);
    for (int k = 0; k < ndims; k++) {
        int i = order == MPI_ORDER_C ? ndims - 1 - k : k;
        int g = gsizes[i], np = psizes[i], me = coords[i];
        struct bmpi_datatype *blk;
        MPI_Aint next;
        if (__builtin_mul_overflow(rowext, (MPI_Aint)g, &next)) {
            bmpi_dt_release(t);
            return too_large("the extent of the distributed array");
        }
        if (distribs[i] == MPI_DISTRIBUTE_CYCLIC) {
            int b = dargs[i] == MPI_DISTRIBUTE_DFLT_DARG ? 1 : dargs[i];
            long st = (long)me * b, period = (long)np * b;
            long mine = 0, full = 0, rem = 0;
            if (st < g) {
                mine = (g - st) / period * b;
                long r = (g - st) % period;
                mine += r < b ? r : b;
            }
            full = mine / b;
            rem = mine % b;
            MPI_Aint stride = (MPI_Aint)period * rowext, disp = (MPI_Aint)st * rowext;
            if (rem == 0) {
                bmpi_dt_retain(t);
                rc = anon_hvector((int)full, b, stride, t, &blk);
                if (!rc)
                    rc = anon_at(disp, 1, blk, &blk);
            } else {
                /* full blocks, then a short one */
                struct bmpi_datatype *v, *parts[2];
                bmpi_dt_retain(t);
                bmpi_dt_retain(t);
                if ((rc = anon_hvector((int)full, b, stride, t, &v))) {
                    bmpi_dt_release(t);
                } else if ((rc = anon_contig((int)rem, t, &parts[1]))) {
                    bmpi_dt_release(v);
                } else {
                    parts[0] = v;
                    int ints[3] = {2, 1, 1};
                    MPI_Aint d[2] = {disp, disp + (MPI_Aint)full * stride};
                    rc = bmpi_dt_create(MPI_COMBINER_STRUCT, 3, ints, 2, d, 2, parts, NULL, &blk);
                    bmpi_dt_release(parts[0]);
                    bmpi_dt_release(parts[1]);
                }
            }
        } else { /* BLOCK, or NONE: one block of everything */
            long b, st, mine;
            if (distribs[i] == MPI_DISTRIBUTE_NONE)
                b = g, me = 0;
            else
                b = dargs[i] == MPI_DISTRIBUTE_DFLT_DARG ? (g + np - 1) / np : dargs[i];
            st = (long)me * b;
            mine = g - st < b ? g - st : b;
            if (mine < 0)
                mine = 0;
            bmpi_dt_retain(t);
            rc = anon_at((MPI_Aint)st * rowext, (int)mine, t, &blk);
        }
        bmpi_dt_release(t);
        if (rc)
            return rc;
        /* exactly one row of the next dimension */
        if ((rc = anon_resized(0, next, blk, &t)))
            return rc;
        rowext = next;
    }

    int ni = 4 * ndims + 4;
    int *ints = malloc((size_t)ni * sizeof *ints);
    if (!ints) {
        bmpi_dt_release(t);
        return bmpi_err_set(MPI_ERR_NO_MEM, "no memory for a darray datatype");
    }
    ints[0] = size;
    ints[1] = rank;
    ints[2] = ndims;
    memcpy(ints + 3, gsizes, (size_t)ndims * sizeof *ints);
    memcpy(ints + 3 + ndims, distribs, (size_t)ndims * sizeof *ints);
    memcpy(ints + 3 + 2 * ndims, dargs, (size_t)ndims * sizeof *ints);
    memcpy(ints + 3 + 3 * ndims, psizes, (size_t)ndims * sizeof *ints);
    ints[ni - 1] = order;
    rc = bmpi_dt_create(MPI_COMBINER_DARRAY, ni, ints, 0, NULL, 1, &old, t, out);
    free(ints);
    return rc;
}
