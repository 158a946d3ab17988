/* hello: every rank says who it is. Used to time launch (start-up of N
 * ranks through MPI_Init, one MPI_Barrier and MPI_Finalize) as much as to
 * check that a build runs at all. The barrier makes the ranks talk at
 * least once, so a runtime that defers all connection set-up past MPI_Init
 * is not timed as if it had none.
 *
 * Standard MPI only. Output: one line per rank,
 *   hello <rank> <size> <host>
 * in whatever order the launcher forwards them; with -q only rank 0
 * prints (hello 0 <size> <host>), which keeps output forwarding out of a
 * start-up measurement.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank, size, len, quiet = argc > 1 && !strcmp(argv[1], "-q");
    char host[MPI_MAX_PROCESSOR_NAME];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_processor_name(host, &len);
    MPI_Barrier(MPI_COMM_WORLD);
    if (!quiet || rank == 0)
        printf("hello %d %d %s\n", rank, size, host);
    MPI_Finalize();
    return 0;
}
