/*
 * The name service of MPI's dynamic-process chapter: MPI_Publish_name,
 * MPI_Lookup_name, MPI_Unpublish_name over PMIx_Publish/Lookup/Unpublish
 * (runtime/pmix.c), served by the launcher (bmpirun: launcher/names.c).
 * docs/dynamic.md "Name service" gives the semantics. Errors not tied to a
 * communicator go to MPI_COMM_SELF's handler, as the standard says.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/api.h"
#include "runtime/info.h"
#include "runtime/pmix.h"
#include "runtime/world.h"

/* The arguments every call of the three shares. port_name may be NULL
 * where the call does not take one. */
static int check_names_args(const char *fn, const char *service_name, MPI_Info info)
{
    if (!bmpi_initialized())
        return bmpi_err_noobj(MPI_ERR_OTHER, fn, "MPI is not initialized");
    if (!service_name)
        return bmpi_err_noobj(MPI_ERR_ARG, fn, "service_name is NULL");
    if (!service_name[0])
        return bmpi_err_noobj(MPI_ERR_ARG, fn, "service_name is empty");
    if (info != MPI_INFO_NULL && !bmpi_info_lookup(info))
        return bmpi_err_noobj(MPI_ERR_INFO, fn, "invalid info 0x%x", (unsigned)info);
    return MPI_SUCCESS;
}

static int check_port_arg(const char *fn, const char *port_name)
{
    if (!port_name)
        return bmpi_err_noobj(MPI_ERR_ARG, fn, "port_name is NULL");
    if (!memchr(port_name, '\0', MPI_MAX_PORT_NAME))
        return bmpi_err_noobj(MPI_ERR_ARG, fn, "port_name is longer than MPI_MAX_PORT_NAME - 1 (%d)",
                              MPI_MAX_PORT_NAME - 1);
    return MPI_SUCCESS;
}

BMPI_API(MPI_Publish_name)
int PMPI_Publish_name(const char *service_name, MPI_Info info, const char *port_name)
{
    const char *fn = "MPI_Publish_name";
    int err = check_names_args(fn, service_name, info);
    if (!err)
        err = check_port_arg(fn, port_name);
    if (err)
        return err;
    if ((err = bmpi_pmix_publish(service_name, port_name)))
        return bmpi_err_noobj(err, fn, NULL);
    return MPI_SUCCESS;
}

BMPI_API(MPI_Lookup_name)
int PMPI_Lookup_name(const char *service_name, MPI_Info info, char *port_name)
{
    const char *fn = "MPI_Lookup_name";
    int err = check_names_args(fn, service_name, info);
    if (err)
        return err;
    if (!port_name)
        return bmpi_err_noobj(MPI_ERR_ARG, fn, "port_name is NULL");
    char *found = NULL;
    if ((err = bmpi_pmix_lookup(service_name, &found)))
        return bmpi_err_noobj(err, fn, NULL);
    size_t len = strlen(found);
    if (len >= MPI_MAX_PORT_NAME) {
        free(found);
        return bmpi_err_noobj(MPI_ERR_NAME, fn, "service '%s' was published with a value of %zu characters, "
                              "longer than a port name", service_name, len);
    }
    memcpy(port_name, found, len + 1);
    free(found);
    return MPI_SUCCESS;
}

BMPI_API(MPI_Unpublish_name)
int PMPI_Unpublish_name(const char *service_name, MPI_Info info, const char *port_name)
{
    const char *fn = "MPI_Unpublish_name";
    int err = check_names_args(fn, service_name, info);
    if (!err)
        err = check_port_arg(fn, port_name);
    if (err)
        return err;
    if ((err = bmpi_pmix_unpublish(service_name)))
        return bmpi_err_noobj(err, fn, NULL);
    return MPI_SUCCESS;
}
