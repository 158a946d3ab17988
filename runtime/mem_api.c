/*
 * MPI_Alloc_mem and MPI_Free_mem. No transport of bmpi needs special
 * memory (registrations are cached on demand), so this is the C heap,
 * aligned to a cache line so that buffers from here never share a line
 * with other data. Info hints are checked and not used.
 */
#include "config.h"

#include <stdlib.h>

#include "runtime/api.h"
#include "runtime/info.h"

#define ALLOC_MEM_ALIGN 64

BMPI_API(MPI_Alloc_mem)
int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    const char *fn = "MPI_Alloc_mem";
    if (size < 0)
        return bmpi_err_noobj(MPI_ERR_SIZE, fn, "negative size %lld", (long long)size);
    if (!baseptr)
        return bmpi_err_noobj(MPI_ERR_ARG, fn, "baseptr is NULL");
    if (info != MPI_INFO_NULL && !bmpi_info_lookup(info))
        return bmpi_err_noobj(MPI_ERR_INFO, fn, "invalid info 0x%x", (unsigned)info);
    void *p = NULL;
    /* size 0 still gives a pointer MPI_Free_mem accepts */
    if (posix_memalign(&p, ALLOC_MEM_ALIGN, size ? (size_t)size : 1) != 0)
        return bmpi_err_noobj(MPI_ERR_NO_MEM, fn, "cannot allocate %lld bytes", (long long)size);
    *(void **)baseptr = p;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Free_mem)
int PMPI_Free_mem(void *base)
{
    free(base);
    return MPI_SUCCESS;
}
