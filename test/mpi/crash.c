/*
 * A job that is busy communicating when one of its ranks dies:
 *   crash ring MARKER    every rank passes a token around a ring forever
 *   crash abort MARKER   the same, and rank 1 calls MPI_Abort(7) after a while
 * Each rank prints "ready <rank> <pid>" once every rank has finished
 * MPI_Init (the shared segment is mapped everywhere by then).
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Barrier(MPI_COMM_WORLD);
    printf("ready %d %ld\n", rank, (long)getpid());
    fflush(stdout);
    int abort_mode = argc > 1 && strcmp(argv[1], "abort") == 0;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (long round = 0;; round++) {
        int token = rank;
        MPI_Sendrecv_replace(&token, 1, MPI_INT, right, 0, left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (abort_mode && rank == 1 && round == 2000)
            MPI_Abort(MPI_COMM_WORLD, 7);
        usleep(1000);
    }
}
