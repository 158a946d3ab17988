/*
 * A direct (CMA) collective between two ranks in which one rank's copy
 * fails must fail on both: run with test/mpi/cma_fault.c preloaded, so
 * that the bcast root's process_vm_writev into the other rank's buffer
 * and the reduce leaf's write of its folded part into the root's fail.
 * Afterwards the communicator still works.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define COUNT (1 << 20) /* bytes of the bcast, doubles of the reduce: direct */

static int rank;

static int expect_failure(const char *what, int rc)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len;
    if (rc == MPI_SUCCESS) {
        printf("FAIL: rank %d: %s succeeded although a copy failed\n", rank, what);
        return 1;
    }
    MPI_Error_string(rc, msg, &len);
    printf("rank %d: %s failed: %s\n", rank, what, msg);
    return 0;
}

int main(int argc, char **argv)
{
    int size, bad = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "coll_shm_fault: run at 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    setvbuf(stdout, NULL, _IOLBF, 0); /* lines of both ranks survive an early exit */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    char *bytes = calloc(COUNT, 1);
    double *in = calloc(COUNT, sizeof(double)), *out = calloc(COUNT, sizeof(double));
    if (!bytes || !in || !out)
        MPI_Abort(MPI_COMM_WORLD, 2);

    bad |= expect_failure("bcast", MPI_Bcast(bytes, COUNT, MPI_CHAR, 0, MPI_COMM_WORLD));
    bad |= expect_failure("reduce",
                          MPI_Reduce(in, out, COUNT, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD));

    int one = 1, sum = 0;
    if (MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS || sum != 2) {
        printf("FAIL: rank %d: allreduce after the failures gave %d\n", rank, sum);
        bad = 1;
    }
    free(bytes), free(in), free(out);
    MPI_Finalize();
    return bad;
}
