/* C target of the build-system tests: a sum over the ranks. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size, sum;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (sum != size * (size - 1) / 2)
        MPI_Abort(MPI_COMM_WORLD, 1);
    if (rank == 0)
        printf("c ok at %d ranks\n", size);
    return MPI_Finalize();
}
