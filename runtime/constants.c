/*
 * The data objects mpi.h declares extern, and MPI_Pcontrol, whose
 * standard behaviour without a profiling library is to do nothing.
 */
#include "config.h"

#include "runtime/api.h"

static int unweighted, weights_empty;
static char pvar_all_handles;
int *const MPI_UNWEIGHTED = &unweighted;
int *const MPI_WEIGHTS_EMPTY = &weights_empty;
struct bmpi_t_pvar_handle *const MPI_T_PVAR_ALL_HANDLES = (struct bmpi_t_pvar_handle *)&pvar_all_handles;

BMPI_API(MPI_Pcontrol)
int PMPI_Pcontrol(const int level, ...)
{
    (void)level;
    return MPI_SUCCESS;
}
