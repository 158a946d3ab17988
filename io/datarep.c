/*
 * Data representations (io/file.h). "native" and "internal" keep the data
 * as memory holds it; no other representation is supported yet: a view
 * that names one is refused with MPI_ERR_UNSUPPORTED_DATAREP.
 */
#include "config.h"

#include <string.h>

#include "io/file.h"

struct bmpi_datarep {
    const char *name;
};

static const struct bmpi_datarep native_reps[] = {{"native"}, {"internal"}};

const struct bmpi_datarep *bmpi_datarep_find(const char *datarep)
{
    for (size_t i = 0; i < sizeof(native_reps) / sizeof(native_reps[0]); i++)
        if (!strcmp(datarep, native_reps[i].name))
            return &native_reps[i];
    bmpi_err_set(MPI_ERR_UNSUPPORTED_DATAREP, "data representation \"%s\" is not supported", datarep);
    return NULL;
}

const char *bmpi_datarep_name(const struct bmpi_datarep *rep) { return rep->name; }

bool bmpi_datarep_is_native(const struct bmpi_datarep *rep)
{
    (void)rep;
    return true;
}

int bmpi_datarep_check_view(const struct bmpi_datarep *rep, const struct bmpi_datatype *edt,
                            const struct bmpi_datatype *fdt)
{
    (void)rep, (void)edt, (void)fdt;
    return BMPI_OK;
}

int bmpi_datarep_extent(const struct bmpi_datarep *rep, MPI_Datatype datatype, MPI_Aint *extent)
{
    (void)rep;
    MPI_Aint lb;
    return PMPI_Type_get_extent(datatype, &lb, extent);
}

int bmpi_datarep_to_file(const struct bmpi_datarep *rep, const struct bmpi_io_access *a, void **out)
{
    (void)a, (void)out;
    return bmpi_err_set(MPI_ERR_UNSUPPORTED_DATAREP, "no conversion to %s", rep->name);
}

int bmpi_datarep_from_file(const struct bmpi_datarep *rep, const struct bmpi_io_access *a, const void *src,
                           size_t bytes)
{
    (void)a, (void)src, (void)bytes;
    return bmpi_err_set(MPI_ERR_UNSUPPORTED_DATAREP, "no conversion from %s", rep->name);
}

void bmpi_datarep_finalize(void) {}
