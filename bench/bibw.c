/* bibw: bidirectional bandwidth between ranks 0 and 1 (OSU osu_bibw style).
 *
 * Standard MPI only. Per iteration each of the two ranks posts a window of
 * MPI_Irecv from the other, then a window of MPI_Isend to it, and waits for
 * all of them; the bandwidth counts the bytes of both directions.
 * Each size is warmed up, then timed as several samples of a batch of
 * windows (batch sized from the warm-up so that a sample lasts about -t
 * milliseconds); the best and the median sample are reported.
 *
 * As in OSU, all receives of a window share one buffer (the data is not
 * checked); -D gives each a buffer of its own, which is what the MPI
 * standard asks for and makes large sizes run from memory, not cache.
 *
 * Output (machine readable; '#' lines are comments; MB = 1e6 bytes):
 *   bibw <size_bytes> <best_MB/s> <median_MB/s>
 *
 * Options: -m MIN -M MAX  sizes in bytes (default 4k .. 16m, powers of two)
 *          -W N           window (default 64)
 *          -s N           samples per size (default 7)
 *          -t MS          target milliseconds per sample (default 20)
 *          -w N           warm-up windows per size (default 4)
 *          -D             a distinct receive buffer per window slot
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

static void window(int rank, char *sbuf, char *rbuf, size_t rstride, int n,
                   int win, MPI_Request *req)
{
    int peer = 1 - rank;
    for (int i = 0; i < win; i++)
        MPI_Irecv(rbuf + rstride * (size_t)i, n, MPI_CHAR, peer, 100,
                  MPI_COMM_WORLD, &req[i]);
    for (int i = 0; i < win; i++)
        MPI_Isend(sbuf, n, MPI_CHAR, peer, 100, MPI_COMM_WORLD, &req[win + i]);
    MPI_Waitall(2 * win, req, MPI_STATUSES_IGNORE);
}

int main(int argc, char **argv)
{
    size_t min = 4096, max = 16 << 20;
    int samples = 7, warmup = 4, win = 64, distinct = 0;
    double target = 20e-3;
    int rank, np;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);

    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : "0";
        if (!strcmp(argv[i], "-m")) min = parse_size(v), i++;
        else if (!strcmp(argv[i], "-M")) max = parse_size(v), i++;
        else if (!strcmp(argv[i], "-W")) win = atoi(v), i++;
        else if (!strcmp(argv[i], "-s")) samples = atoi(v), i++;
        else if (!strcmp(argv[i], "-t")) target = atof(v) * 1e-3, i++;
        else if (!strcmp(argv[i], "-w")) warmup = atoi(v), i++;
        else if (!strcmp(argv[i], "-D")) distinct = 1;
        else {
            if (rank == 0)
                fprintf(stderr, "usage: %s [-m MIN] [-M MAX] [-W WINDOW] "
                        "[-s SAMPLES] [-t MS] [-w WARMUP] [-D]\n", argv[0]);
            MPI_Finalize();
            return 2;
        }
    }
    if (np < 2) {
        if (rank == 0) fprintf(stderr, "bibw: needs 2 ranks, got %d\n", np);
        MPI_Finalize();
        return 2;
    }
    if (samples < 1) samples = 1;
    if (win < 1) win = 1;
    if (min < 1) min = 1;

    size_t rlen = distinct ? max * (size_t)win : max;
    char *sbuf = malloc(max), *rbuf = malloc(rlen);
    MPI_Request *req = malloc(sizeof(MPI_Request) * 2 * (size_t)win);
    double *t = malloc(sizeof(double) * (size_t)samples);
    if (!sbuf || !rbuf || !req || !t) {
        fprintf(stderr, "bibw: out of memory for %zu bytes\n", rlen);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(sbuf, 'a', max);
    memset(rbuf, 'b', rlen);

    if (rank == 0) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(lib, &len);
        lib[strcspn(lib, "\n")] = '\0';
        printf("# bibw np=%d window=%d%s library: %s\n", np, win,
               distinct ? " distinct-recv-buffers" : "", lib);
        printf("# bibw size_bytes best_MB/s median_MB/s (both directions; MB = 1e6 bytes)\n");
        fflush(stdout);
    }

    if (rank < 2) {
        for (size_t size = min; size <= max; size *= 2) {
            int n = (int)size, iters;
            size_t stride = distinct ? size : 0;
            double t0;

            t0 = MPI_Wtime();
            for (int w = 0; w < warmup; w++)
                window(rank, sbuf, rbuf, stride, n, win, req);
            if (rank == 0) {
                double per = warmup > 0 ? (MPI_Wtime() - t0) / warmup : 0;
                iters = per > 0 ? (int)(target / per) : 10;
                if (iters < 1) iters = 1;
                MPI_Send(&iters, 1, MPI_INT, 1, 102, MPI_COMM_WORLD);
            } else {
                MPI_Recv(&iters, 1, MPI_INT, 0, 102, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }

            for (int s = 0; s < samples; s++) {
                t0 = MPI_Wtime();
                for (int i = 0; i < iters; i++)
                    window(rank, sbuf, rbuf, stride, n, win, req);
                double dt = MPI_Wtime() - t0;
                t[s] = 2.0 * (double)size * win * iters / dt / 1e6;
            }
            if (rank == 0) {
                qsort(t, (size_t)samples, sizeof(double), cmp_double);
                printf("bibw %zu %.1f %.1f\n", size, t[samples - 1],
                       t[(samples - 1) / 2]);
                fflush(stdout);
            }
        }
    }

    free(t);
    free(req);
    free(rbuf);
    free(sbuf);
    MPI_Finalize();
    return 0;
}
