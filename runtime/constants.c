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
static MPI_Fint f_status_ignore[MPI_F_STATUS_SIZE], f_statuses_ignore[MPI_F_STATUS_SIZE];
static MPI_F08_status f08_status_ignore, f08_statuses_ignore;
MPI_Fint *const MPI_F_STATUS_IGNORE = f_status_ignore;
MPI_Fint *const MPI_F_STATUSES_IGNORE = f_statuses_ignore;
MPI_F08_status *const MPI_F08_STATUS_IGNORE = &f08_status_ignore;
MPI_F08_status *const MPI_F08_STATUSES_IGNORE = &f08_statuses_ignore;
struct bmpi_t_pvar_handle *const MPI_T_PVAR_ALL_HANDLES = (struct bmpi_t_pvar_handle *)&pvar_all_handles;

BMPI_API(MPI_Pcontrol)
int PMPI_Pcontrol(const int level, ...)
{
    (void)level;
    return MPI_SUCCESS;
}
