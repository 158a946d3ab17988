/* Time to a usable intercommunicator after MPI_Comm_spawn.
 *
 *   spawn [-n CHILDREN] [-r REPEATS]
 *
 * The parent job (any size) spawns CHILDREN copies of this program
 * (default 8), REPEATS times (default 5), one after the other. Each time
 * it measures, at the parents' rank 0: the MPI_Comm_spawn call itself, and
 * the time until an MPI_Allreduce over the new intercommunicator has
 * completed (the children reached it through MPI_Init and the connection
 * to their parent). The children then disconnect and end. The first
 * repeat (new executable pages, the launcher's first spawn) is printed on
 * its own; the others as their median and minimum.
 *
 * Output: "spawn CHILDREN FIRST_SPAWN_MS FIRST_USABLE_MS MEDIAN_USABLE_MS
 * MIN_USABLE_MS" after a comment line naming the MPI library. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

static void child(MPI_Comm parent)
{
    int one = 1, sum = 0;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, parent);
    MPI_Comm_disconnect(&parent);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL) {
        child(parent);
        MPI_Finalize();
        return 0;
    }
    int nchildren = 8, repeats = 5, rank;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "-n") == 0)
            nchildren = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "-r") == 0)
            repeats = atoi(argv[i + 1]);
    }
    if (nchildren < 1 || repeats < 2) {
        fprintf(stderr, "usage: spawn [-n CHILDREN] [-r REPEATS >= 2]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double *usable = calloc((size_t)repeats, sizeof(*usable)), first_spawn = 0;
    for (int r = 0; r < repeats; r++) {
        MPI_Comm inter;
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, nchildren, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
                       MPI_ERRCODES_IGNORE);
        double t1 = MPI_Wtime();
        int one = 1, sum = 0;
        MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, inter);
        double t2 = MPI_Wtime();
        if (sum != nchildren) {
            fprintf(stderr, "spawn: the allreduce over the intercommunicator gave %d, not %d\n", sum, nchildren);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        MPI_Comm_disconnect(&inter);
        if (r == 0)
            first_spawn = t1 - t0;
        usable[r] = t2 - t0;
    }
    if (rank == 0) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(lib, &len);
        printf("# %s\n", strtok(lib, "\n"));
        double first = usable[0];
        qsort(usable + 1, (size_t)repeats - 1, sizeof(*usable), cmp_double);
        printf("spawn %d %.1f %.1f %.1f %.1f\n", nchildren, first_spawn * 1e3, first * 1e3,
               usable[1 + (repeats - 1) / 2] * 1e3, usable[1] * 1e3);
    }
    free(usable);
    MPI_Finalize();
    return 0;
}
