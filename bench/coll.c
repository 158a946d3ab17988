/* coll: latency of one collective across message sizes (OSU style).
 *
 * Standard MPI only. The collective is the first argument:
 *   allreduce  MPI_Allreduce, MPI_FLOAT MPI_SUM, size = bytes per rank
 *   reduce     MPI_Reduce to rank 0, MPI_FLOAT MPI_SUM
 *   bcast      MPI_Bcast from rank 0, size = bytes broadcast
 *   allgather  MPI_Allgather, size = bytes each rank contributes
 *   alltoall   MPI_Alltoall, size = bytes each rank sends to each rank
 *   barrier    MPI_Barrier (one line, size 0)
 * Sizes are per rank as in the OSU micro-benchmarks, so alltoall at 1 MiB
 * on 8 ranks moves 8 MiB out of every rank.
 *
 * Each size is warmed up, then timed as several samples of a batch of
 * calls, each sample starting from a barrier. A sample's time is the
 * slowest rank's (MPI_MAX), since the collective is done only when every
 * rank is; the best and the median sample are reported.
 *
 * Output (machine readable; '#' lines are comments):
 *   <collective> <size_bytes> <best_usec> <median_usec>
 *
 * Options: -m MIN -M MAX  sizes in bytes (default 8 .. 16m, powers of two)
 *          -s N           samples per size (default 11)
 *          -t MS          target milliseconds per sample (default 5)
 *          -w N           at most N warm-up calls per size (default 100000;
 *                         the warm-up lasts about four samples' time)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

enum coll { ALLREDUCE, REDUCE, BCAST, ALLGATHER, ALLTOALL, BARRIER };
static const char *names[] = {
    "allreduce", "reduce", "bcast", "allgather", "alltoall", "barrier",
};

static void run(enum coll c, void *sbuf, void *rbuf, size_t size)
{
    int n = (int)size;
    switch (c) {
    case ALLREDUCE:
        MPI_Allreduce(sbuf, rbuf, n / (int)sizeof(float), MPI_FLOAT, MPI_SUM,
                      MPI_COMM_WORLD);
        break;
    case REDUCE:
        MPI_Reduce(sbuf, rbuf, n / (int)sizeof(float), MPI_FLOAT, MPI_SUM, 0,
                   MPI_COMM_WORLD);
        break;
    case BCAST:
        MPI_Bcast(sbuf, n, MPI_BYTE, 0, MPI_COMM_WORLD);
        break;
    case ALLGATHER:
        MPI_Allgather(sbuf, n, MPI_BYTE, rbuf, n, MPI_BYTE, MPI_COMM_WORLD);
        break;
    case ALLTOALL:
        MPI_Alltoall(sbuf, n, MPI_BYTE, rbuf, n, MPI_BYTE, MPI_COMM_WORLD);
        break;
    case BARRIER:
        MPI_Barrier(MPI_COMM_WORLD);
        break;
    }
}

/* Calls the collective in batches of doubling size until rank 0 has
 * seen `seconds` go by and made at least WARMUP_MIN_CALLS calls (but
 * never past WARMUP_MAX_SECONDS or max_calls calls), and returns the time
 * of one call in the last batch. The warm-up is long enough that no MPI's
 * one-time costs reach the samples: connections, memory registration,
 * the first lap of a deep ring of slots, and on a VM with slow traps the
 * first touch of each page by each process (5-11 us a page; the first
 * ten 64 KiB alltoalls at 8 ranks on 2 cores took 3-31 ms against 0.3
 * ms after, with bmpi; 0.8-15 ms against 0.4 with Open MPI). */
#define WARMUP_MIN_CALLS 20
#define WARMUP_MAX_SECONDS 1.0
static double warm_up(enum coll c, char *sbuf, char *rbuf, size_t size, double seconds,
                      int max_calls)
{
    int rank, go = 1, calls = 0;
    double per = 0, start;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    start = MPI_Wtime();
    for (int batch = 1; go; batch *= 2) {
        double t0 = MPI_Wtime();
        for (int i = 0; i < batch; i++)
            run(c, sbuf, rbuf, size);
        calls += batch;
        double now = MPI_Wtime();
        per = (now - t0) / batch;
        go = (now - start < seconds || calls < WARMUP_MIN_CALLS) &&
             now - start < WARMUP_MAX_SECONDS && calls < max_calls;
        MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD);
    }
    return per;
}

int main(int argc, char **argv)
{
    size_t min = 8, max = 16 << 20;
    int samples = 11, warmup = 100000;
    double target = 5e-3;
    int rank, np, c = -1;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);

    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : "0";
        if (!strcmp(argv[i], "-m")) min = parse_size(v), i++;
        else if (!strcmp(argv[i], "-M")) max = parse_size(v), i++;
        else if (!strcmp(argv[i], "-s")) samples = atoi(v), i++;
        else if (!strcmp(argv[i], "-t")) target = atof(v) * 1e-3, i++;
        else if (!strcmp(argv[i], "-w")) warmup = atoi(v), i++;
        else if (c < 0) {
            for (int k = 0; k <= BARRIER; k++)
                if (!strcmp(argv[i], names[k])) c = k;
            if (c < 0) goto usage;
        } else {
            goto usage;
        }
    }
    if (c < 0) {
usage:
        if (rank == 0)
            fprintf(stderr, "usage: %s allreduce|reduce|bcast|allgather|"
                    "alltoall|barrier [-m MIN] [-M MAX] [-s SAMPLES] [-t MS] "
                    "[-w WARMUP]\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    if (samples < 1) samples = 1;
    if (c == ALLREDUCE || c == REDUCE) {
        if (min < sizeof(float)) min = sizeof(float);
    } else if (min < 1) {
        min = 1;
    }
    if (c == BARRIER) min = max = 0;

    /* allgather and alltoall hold np blocks; the others one. */
    size_t blocks = (c == ALLGATHER || c == ALLTOALL) ? (size_t)np : 1;
    size_t slen = (c == ALLTOALL ? blocks : 1) * (max ? max : 1);
    size_t rlen = blocks * (max ? max : 1);
    char *sbuf = malloc(slen), *rbuf = malloc(rlen);
    double *t = malloc(sizeof(double) * (size_t)samples);
    if (!sbuf || !rbuf || !t) {
        fprintf(stderr, "coll: out of memory for %zu + %zu bytes\n", slen, rlen);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    /* Small float values keep sums finite and away from denormals. */
    for (size_t i = 0; i < slen / sizeof(float); i++) ((float *)sbuf)[i] = 1.0f;
    memset(rbuf, 0, rlen);

    if (rank == 0) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(lib, &len);
        lib[strcspn(lib, "\n")] = '\0';
        printf("# %s np=%d library: %s\n", names[c], np, lib);
        printf("# %s size_bytes best_usec median_usec (slowest rank per sample)\n",
               names[c]);
        fflush(stdout);
    }

    for (size_t size = min; size <= max; size = size ? size * 2 : 1) {
        int iters;
        double t0;

        /* Every rank must make the same number of calls, so rank 0 decides
         * from its clock: the warm-up lasts about four samples' time and
         * its last batch says how many calls make a sample. */
        double per = warm_up((enum coll)c, sbuf, rbuf, size, 4 * target, warmup);
        int plan = per > 0 ? (int)(target / per) : 10;
        if (plan < 1) plan = 1;
        if (plan > 100000) plan = 100000;
        MPI_Bcast(&plan, 1, MPI_INT, 0, MPI_COMM_WORLD);
        iters = plan;

        for (int s = 0; s < samples; s++) {
            double dt, worst;
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
            for (int i = 0; i < iters; i++)
                run((enum coll)c, sbuf, rbuf, size);
            dt = (MPI_Wtime() - t0) / iters * 1e6;
            MPI_Reduce(&dt, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
            t[s] = worst;
        }
        if (rank == 0) {
            qsort(t, (size_t)samples, sizeof(double), cmp_double);
            printf("%s %zu %.3f %.3f\n", names[c], size, t[0], t[samples / 2]);
            fflush(stdout);
        }
        if (max == 0) break;
    }

    free(t);
    free(rbuf);
    free(sbuf);
    MPI_Finalize();
    return 0;
}
