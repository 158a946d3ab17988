/* pingpong: point-to-point latency between ranks 0 and 1.
 *
 * Standard MPI only, so the same file builds with bmpicc, Open MPI's mpicc
 * and MPICH's mpicc.mpich. Rank 0 sends, rank 1 sends back; one-way latency
 * is half the round trip. Each size is warmed up, then timed as several
 * samples of a batch of round trips (the batch is sized from the warm-up so
 * a sample lasts about -t milliseconds); the best and the median sample are
 * reported. Ranks beyond 1 wait in MPI_Finalize.
 *
 * Output (machine readable; '#' lines are comments):
 *   pingpong <size_bytes> <best_usec> <median_usec>
 *
 * Options: -m MIN -M MAX  sizes in bytes (default 0 .. 8192; powers of two,
 *                         0 first when MIN is 0; suffixes k, m accepted)
 *          -s N           samples per size (default 11)
 *          -t MS          target milliseconds per sample (default 2)
 *          -w N           warm-up round trips per size, at least (default 200;
 *                         the warm-up also lasts four samples' time, at most 1 s)
 *          -o OFFSET      rank 0's buffer starts at a page boundary and rank
 *                         1's OFFSET bytes (0 .. 4095) past one, so that what
 *                         rank 0 sends lands OFFSET bytes further into the
 *                         page (default: both where malloc puts them)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

/* One round trip of n bytes between rank 0 and peer. */
static void round_trip(int rank, int peer, char *buf, int n)
{
    if (rank == 0) {
        MPI_Send(buf, n, MPI_CHAR, peer, 1, MPI_COMM_WORLD);
        MPI_Recv(buf, n, MPI_CHAR, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(buf, n, MPI_CHAR, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf, n, MPI_CHAR, peer, 1, MPI_COMM_WORLD);
    }
}

/* Round trips in batches of doubling size until rank 0 has made at least
 * min_trips and seen `seconds` go by (never past 1 s); returns the time
 * of one round trip in the last batch, on rank 0. A warm-up of a fixed
 * count ends too early where an MPI's first lap through a ring is slow:
 * on a VM with slow traps each page's first touch by each process costs
 * 5-11 us, and bmpi's 512 KiB ring per pair took over 8000 messages to
 * get past it (200 round trips, samples sized from them and all inside
 * that lap: 0.27 us one-way against 0.125 us after). */
static double warm_up(int rank, int peer, char *buf, int n, int min_trips, double seconds)
{
    int go = 1, trips = 0;
    double per = 0, start = MPI_Wtime();
    for (int batch = 1; go; batch *= 2) {
        double t0 = MPI_Wtime();
        for (int i = 0; i < batch; i++)
            round_trip(rank, peer, buf, n);
        trips += batch;
        double now = MPI_Wtime();
        per = (now - t0) / batch;
        if (rank == 0) {
            go = (trips < min_trips || now - start < seconds) && now - start < 1.0;
            MPI_Send(&go, 1, MPI_INT, peer, 2, MPI_COMM_WORLD);
        } else {
            MPI_Recv(&go, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    }
    return per;
}

static size_t next_size(size_t s) { return s == 0 ? 1 : s * 2; }

int main(int argc, char **argv)
{
    size_t min = 0, max = 8192;
    int samples = 11, warmup = 200;
    long offset = -1;
    double target = 2e-3;
    int rank, np;

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
        else if (!strcmp(argv[i], "-o") && atol(v) >= 0 && atol(v) < BENCH_PAGE) offset = atol(v), i++;
        else {
            if (rank == 0)
                fprintf(stderr, "usage: %s [-m MIN] [-M MAX] [-s SAMPLES] "
                        "[-t MS] [-w WARMUP] [-o OFFSET]\n", argv[0]);
            MPI_Finalize();
            return 2;
        }
    }
    if (np < 2) {
        if (rank == 0) fprintf(stderr, "pingpong: needs 2 ranks, got %d\n", np);
        MPI_Finalize();
        return 2;
    }
    if (samples < 1) samples = 1;

    void *block;
    long my_offset = offset < 0 ? -1 : rank == 1 ? offset : 0;
    char *buf = buffer_at_offset(max ? max : 1, my_offset, &block);
    double *t = malloc(sizeof(double) * (size_t)samples);
    if (!buf || !t) {
        fprintf(stderr, "pingpong: out of memory for %zu bytes\n", max);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(buf, 'a', max ? max : 1);

    if (rank == 0) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(lib, &len);
        lib[strcspn(lib, "\n")] = '\0';
        printf("# pingpong np=%d library: %s\n", np, lib);
        printf("# pingpong size_bytes best_usec median_usec (one-way = RTT/2)\n");
        fflush(stdout);
    }

    if (rank < 2) {
        int peer = 1 - rank;
        for (size_t size = min; size <= max; size = next_size(size)) {
            int n = (int)size;
            int iters;
            double t0;

            /* Warm up and time it; rank 0 decides the batch size. */
            double per = warm_up(rank, peer, buf, n, warmup, 4 * target);
            if (rank == 0) {
                iters = per > 0 ? (int)(target / per) : 100;
                if (iters < 1) iters = 1;
                if (iters > 100000) iters = 100000;
                MPI_Send(&iters, 1, MPI_INT, peer, 2, MPI_COMM_WORLD);
            } else {
                MPI_Recv(&iters, 1, MPI_INT, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }

            for (int s = 0; s < samples; s++) {
                t0 = MPI_Wtime();
                for (int i = 0; i < iters; i++)
                    round_trip(rank, peer, buf, n);
                t[s] = (MPI_Wtime() - t0) / iters / 2 * 1e6;
            }
            if (rank == 0) {
                qsort(t, (size_t)samples, sizeof(double), cmp_double);
                printf("pingpong %zu %.3f %.3f\n", size, t[0], t[samples / 2]);
                fflush(stdout);
            }
        }
    }

    free(t);
    free(block);
    MPI_Finalize();
    return 0;
}
