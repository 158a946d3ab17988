/* CHECK for the test/abi programs: on a false condition, say where and
 * what on stderr and abort the job. The program defines `rank`. */
#ifndef BMPI_TEST_ABI_CHECK_H
#define BMPI_TEST_ABI_CHECK_H

#include <stdio.h>

#define CHECK(cond, ...)                                                        \
    do {                                                                        \
        if (!(cond)) {                                                          \
            fprintf(stderr, "FAIL rank %d line %d: ", rank, __LINE__);           \
            fprintf(stderr, __VA_ARGS__);                                       \
            fputc('\n', stderr);                                                \
            MPI_Abort(MPI_COMM_WORLD, 1);                                       \
        }                                                                       \
    } while (0)

#endif
