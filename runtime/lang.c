/*
 * runtime/lang.c: the hooks of runtime/lang.h that are not about one kind
 * of object: a datatype's extent, and errors the language bindings detect
 * themselves (a buffer they cannot describe), reported as C's entry points
 * report theirs. The others live with their objects (op.c, errhandler.c,
 * attr.c).
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>

#include "runtime/datatype.h"
#include "runtime/error.h"
#include "runtime/lang.h"

int bmpi_lang_err_set(int errclass, const char *fmt, ...)
{
    char reason[MPI_MAX_ERROR_STRING];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof(reason), fmt, ap);
    va_end(ap);
    return bmpi_err_set(errclass, "%s", reason);
}

int bmpi_lang_err_report(MPI_Comm comm, int errclass, const char *fn)
{
    return bmpi_err_comm(comm, errclass, fn, NULL);
}

int bmpi_lang_type_extent(MPI_Datatype type, MPI_Aint *extent)
{
    struct bmpi_datatype *dt;
    if (bmpi_dt_check_usable(type, &dt) != BMPI_OK)
        return MPI_ERR_TYPE;
    *extent = bmpi_dt_extent(dt);
    return MPI_SUCCESS;
}
