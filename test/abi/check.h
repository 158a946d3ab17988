/* CHECK for the MPICH-built programs (test/abi, and test/io's clients
 * through mpich_client.h): on a false condition, say where, on which
 * rank and what on stderr and abort the job. Between MPI_Init and
 * MPI_Finalize only. */
#ifndef BMPI_TEST_ABI_CHECK_H
#define BMPI_TEST_ABI_CHECK_H

#include <stdio.h>
#include <mpi.h>

#define CHECK(cond, ...)                                                        \
    do {                                                                        \
        if (!(cond)) {                                                          \
            int rank_;                                                          \
            MPI_Comm_rank(MPI_COMM_WORLD, &rank_);                              \
            fprintf(stderr, "FAIL rank %d line %d: ", rank_, __LINE__);         \
            fprintf(stderr, __VA_ARGS__);                                       \
            fputc('\n', stderr);                                                \
            MPI_Abort(MPI_COMM_WORLD, 1);                                       \
        }                                                                       \
    } while (0)

#endif
