/* Where a rank runs, as MPI sees it: its rank, the job size, and its rank
 * and size in MPI_Comm_split_type(MPI_COMM_TYPE_SHARED), the ranks that
 * share its node. For the placement tests (test/launcher/hosts.sh). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size, shared_rank, shared_size;
    MPI_Comm shared;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared);
    MPI_Comm_rank(shared, &shared_rank);
    MPI_Comm_size(shared, &shared_size);
    printf("rank %d size %d shared %d of %d\n", rank, size, shared_rank, shared_size);
    MPI_Comm_free(&shared);
    MPI_Finalize();
    return 0;
}
