/* What the programs that mpich_client.sh runs share (hdf5_chunked.c,
 * adios_rw.c): built against MPICH by that library's wrapper, they report
 * the library they ran on and fail loudly. Standard MPI only. */
#ifndef BMPI_TEST_IO_MPICH_CLIENT_H
#define BMPI_TEST_IO_MPICH_CLIENT_H

#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "../abi/check.h"

/* Rank 0's "library: ..." line, which mpich_client_ran looks for. */
static inline void mc_print_library(int rank)
{
    if (rank != 0)
        return;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(lib, &len);
    lib[strcspn(lib, "\n")] = '\0';
    printf("library: %s\n", lib);
    fflush(stdout);
}

#endif
