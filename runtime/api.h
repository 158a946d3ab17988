/*
 * What every file that defines MPI entry points includes.
 *
 * Each MPI function is defined once as PMPI_X; MPI_X is a weak alias in the
 * same translation unit, so a profiling library can interpose MPI_X and
 * still reach the implementation through PMPI_X:
 *
 *     BMPI_API(MPI_Comm_rank)
 *     int PMPI_Comm_rank(MPI_Comm comm, int *rank) { ... }
 *
 * tools/gen-api-status finds implemented functions by that BMPI_API line and
 * generates honest "unsupported" stubs for the rest.
 */
#ifndef BMPI_RUNTIME_API_H
#define BMPI_RUNTIME_API_H

#include <mpi.h>
#include "runtime/error.h"

#define BMPI_PRAGMA(x) _Pragma(#x)
#define BMPI_API(fn) BMPI_PRAGMA(weak fn = P##fn)

#endif
