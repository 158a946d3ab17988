/* poll: a ring of ranks that completes each step by polling MPI_Testall,
 * as programs that overlap work with communication do, usually on a node
 * with more ranks than cores (a laptop, a shared node, a CI machine).
 *
 * Standard MPI only. Per step every rank posts an MPI_Irecv from its left
 * neighbour and an MPI_Isend of one int to its right one, then calls
 * MPI_Testall until both are done. A library whose idle MPI_Test keeps
 * the CPU makes the rank it waits for wait for a whole time slice of the
 * poller; one that yields lets it run. A fixed warm-up of WARMUP steps,
 * then -s samples of -i steps; the slowest rank's time per step.
 *
 * Output (machine readable; '#' lines are comments):
 *   poll <ranks> <best_usec_per_step> <median_usec_per_step>
 *
 * Options: -i STEPS (default 2000)  -s SAMPLES (default 5)
 * Run it by hand under each launcher with more ranks than cores, e.g.
 *   bmpirun -n 8 ./poll; mpirun --oversubscribe -n 8 ./poll;
 *   mpiexec.mpich -n 8 ./poll
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"

#define WARMUP 100
#define MAX_SAMPLES 64

static void steps(int n, int left, int right)
{
    int out = 1, in;
    for (int i = 0; i < n; i++) {
        MPI_Request req[2];
        int done = 0;
        MPI_Irecv(&in, 1, MPI_INT, left, 0, MPI_COMM_WORLD, &req[0]);
        MPI_Isend(&out, 1, MPI_INT, right, 0, MPI_COMM_WORLD, &req[1]);
        while (!done)
            MPI_Testall(2, req, &done, MPI_STATUSES_IGNORE);
    }
}

int main(int argc, char **argv)
{
    int iters = 2000, samples = 5, opt;
    MPI_Init(&argc, &argv);
    while ((opt = getopt(argc, argv, "i:s:")) != -1) {
        if (opt == 'i')
            iters = atoi(optarg);
        else if (opt == 's')
            samples = atoi(optarg);
    }
    if (iters < 1 || samples < 1 || samples > MAX_SAMPLES) {
        fprintf(stderr, "poll: -i must be >= 1, -s 1 .. %d\n", MAX_SAMPLES);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    steps(WARMUP, left, right);
    double t[MAX_SAMPLES];
    for (int s = 0; s < samples; s++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        steps(iters, left, right);
        double mine = (MPI_Wtime() - t0) / iters * 1e6;
        MPI_Allreduce(&mine, &t[s], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    }
    if (rank == 0) {
        qsort(t, (size_t)samples, sizeof t[0], cmp_double);
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(lib, &len);
        lib[strcspn(lib, "\n")] = '\0';
        printf("# poll np=%d library: %s\n", size, lib);
        printf("# a ring step completed by polling MPI_Testall, %d steps a sample\n", iters);
        printf("poll %d %.2f %.2f\n", size, t[0], t[samples / 2]);
    }
    MPI_Finalize();
    return 0;
}
