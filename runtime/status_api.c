/*
 * MPI_Status accessors (MPI 4.1) and the conversions between the C status
 * and the Fortran ones. With the MPICH ABI the three layouts are the same
 * five integers (count_lo, count_hi_and_cancelled, MPI_SOURCE, MPI_TAG,
 * MPI_ERROR; MPI_F_SOURCE = 2 ...), so a conversion is a field copy.
 */
#include "config.h"

#include <stdbool.h>

#include "runtime/api.h"
#include "runtime/request.h"

_Static_assert(sizeof(MPI_Status) == MPI_F_STATUS_SIZE * sizeof(MPI_Fint),
               "C and Fortran statuses must have the same layout");
_Static_assert(sizeof(MPI_F08_status) == MPI_F_STATUS_SIZE * sizeof(MPI_Fint),
               "Fortran 2008 and Fortran statuses must have the same layout");

/* NULL or one of the IGNORE sentinels of C and Fortran (MPI_F_STATUS_IGNORE ...) */
static bool no_status(const void *status)
{
    return !status || status == (const void *)MPI_STATUS_IGNORE ||
           status == MPI_F_STATUS_IGNORE || status == MPI_F_STATUSES_IGNORE ||
           status == MPI_F08_STATUS_IGNORE || status == MPI_F08_STATUSES_IGNORE;
}

/* The field at Fortran index i of a status, read or written. */
static int get_field(const MPI_Status *status, int *out, int i, const char *fn)
{
    if (no_status(status) || !out)
        return bmpi_err_noobj(MPI_ERR_ARG, fn, "%s is NULL", out ? "status" : "the result");
    *out = ((const int *)status)[i];
    return MPI_SUCCESS;
}

static int set_field(MPI_Status *status, int value, int i, const char *fn)
{
    if (no_status(status))
        return bmpi_err_noobj(MPI_ERR_ARG, fn, "status is NULL or MPI_STATUS_IGNORE");
    ((int *)status)[i] = value;
    return MPI_SUCCESS;
}

/* The five integers of any of the three layouts, in order. */
static int convert(const void *from, void *to, const char *fn)
{
    if (no_status(from) || no_status(to))
        return bmpi_err_noobj(MPI_ERR_ARG, fn, "a status is NULL or MPI_STATUS_IGNORE");
    for (int i = 0; i < MPI_F_STATUS_SIZE; i++)
        ((MPI_Fint *)to)[i] = ((const MPI_Fint *)from)[i];
    return MPI_SUCCESS;
}

BMPI_API(MPI_Status_get_source)
int PMPI_Status_get_source(MPI_Status *status, int *source)
{
    return get_field(status, source, MPI_F_SOURCE, "MPI_Status_get_source");
}

BMPI_API(MPI_Status_get_tag)
int PMPI_Status_get_tag(MPI_Status *status, int *tag)
{
    return get_field(status, tag, MPI_F_TAG, "MPI_Status_get_tag");
}

BMPI_API(MPI_Status_get_error)
int PMPI_Status_get_error(MPI_Status *status, int *error)
{
    return get_field(status, error, MPI_F_ERROR, "MPI_Status_get_error");
}

BMPI_API(MPI_Status_set_source)
int PMPI_Status_set_source(MPI_Status *status, int source)
{
    return set_field(status, source, MPI_F_SOURCE, "MPI_Status_set_source");
}

BMPI_API(MPI_Status_set_tag)
int PMPI_Status_set_tag(MPI_Status *status, int tag)
{
    return set_field(status, tag, MPI_F_TAG, "MPI_Status_set_tag");
}

BMPI_API(MPI_Status_set_error)
int PMPI_Status_set_error(MPI_Status *status, int error)
{
    return set_field(status, error, MPI_F_ERROR, "MPI_Status_set_error");
}

BMPI_API(MPI_Status_set_cancelled)
int PMPI_Status_set_cancelled(MPI_Status *status, int flag)
{
    if (no_status(status))
        return bmpi_err_noobj(MPI_ERR_ARG, "MPI_Status_set_cancelled",
                              "status is NULL or MPI_STATUS_IGNORE");
    bmpi_status_set_cancelled(status, flag != 0);
    return MPI_SUCCESS;
}

BMPI_API(MPI_Status_c2f)
int PMPI_Status_c2f(const MPI_Status *c_status, MPI_Fint *f_status)
{
    return convert(c_status, f_status, "MPI_Status_c2f");
}

BMPI_API(MPI_Status_f2c)
int PMPI_Status_f2c(const MPI_Fint *f_status, MPI_Status *c_status)
{
    return convert(f_status, c_status, "MPI_Status_f2c");
}

BMPI_API(MPI_Status_c2f08)
int PMPI_Status_c2f08(const MPI_Status *c_status, MPI_F08_status *f08_status)
{
    return convert(c_status, f08_status, "MPI_Status_c2f08");
}

BMPI_API(MPI_Status_f082c)
int PMPI_Status_f082c(const MPI_F08_status *f08_status, MPI_Status *c_status)
{
    return convert(f08_status, c_status, "MPI_Status_f082c");
}

BMPI_API(MPI_Status_f082f)
int PMPI_Status_f082f(const MPI_F08_status *f08_status, MPI_Fint *f_status)
{
    return convert(f08_status, f_status, "MPI_Status_f082f");
}

BMPI_API(MPI_Status_f2f08)
int PMPI_Status_f2f08(const MPI_Fint *f_status, MPI_F08_status *f08_status)
{
    return convert(f_status, f08_status, "MPI_Status_f2f08");
}
