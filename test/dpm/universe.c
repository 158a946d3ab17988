/* Prints MPI_UNIVERSE_SIZE; universe.sh checks it against bmpirun's slots. */
#include <stdio.h>
#include <mpi.h>

int main(int argc, char **argv)
{
    int rank, flag, *univ;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &univ, &flag);
    printf("rank %d: universe %d\n", rank, flag ? *univ : -1);
    MPI_Finalize();
    return 0;
}
