/* reduce_local: MPI_Reduce_local of doubles with MPI_SUM, one process: the
 * speed of the library's reduction kernel, which every reduction
 * collective and every accumulate runs, with the data in cache (4 KiB,
 * 32 KiB) and beyond it (1 MiB by default as largest).
 *
 * Standard MPI only, one rank. For each size a fixed warm-up of 100 calls,
 * then -s samples of a fixed count of calls (about 200 MB reduced a
 * sample); the best and median time per call.
 *
 * Output (machine readable; '#' lines are comments):
 *   reduce_local <size_bytes> <best_usec> <median_usec>
 *
 * Options: -m MIN -M MAX (bytes, k/m suffixes; default 4k .. 1m, powers of
 * two stepping by 8x)  -s SAMPLES (default 5)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"

#define WARMUP 100
#define MAX_SAMPLES 64
#define BYTES_PER_SAMPLE 200e6

static void one_size(size_t bytes, int samples)
{
    size_t n = bytes / sizeof(double);
    double *in = malloc(bytes), *inout = malloc(bytes), t[MAX_SAMPLES];
    if (!in || !inout) {
        fprintf(stderr, "reduce_local: out of memory for %zu bytes\n", bytes);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (size_t i = 0; i < n; i++)
        in[i] = inout[i] = (double)i;
    int calls = (int)(BYTES_PER_SAMPLE / (double)bytes) + 1;
    for (int i = 0; i < WARMUP; i++)
        MPI_Reduce_local(in, inout, (int)n, MPI_DOUBLE, MPI_SUM);
    for (int s = 0; s < samples; s++) {
        double t0 = MPI_Wtime();
        for (int i = 0; i < calls; i++)
            MPI_Reduce_local(in, inout, (int)n, MPI_DOUBLE, MPI_SUM);
        t[s] = (MPI_Wtime() - t0) / calls * 1e6;
    }
    qsort(t, (size_t)samples, sizeof t[0], cmp_double);
    printf("reduce_local %zu %.4f %.4f\n", bytes, t[0], t[samples / 2]);
    free(in);
    free(inout);
}

int main(int argc, char **argv)
{
    size_t min = 4096, max = 1 << 20;
    int samples = 5, opt;
    MPI_Init(&argc, &argv);
    while ((opt = getopt(argc, argv, "m:M:s:")) != -1) {
        if (opt == 'm')
            min = parse_size(optarg);
        else if (opt == 'M')
            max = parse_size(optarg);
        else if (opt == 's')
            samples = atoi(optarg);
    }
    if (min < sizeof(double) || max < min || samples < 1 || samples > MAX_SAMPLES) {
        fprintf(stderr, "reduce_local: need 8 <= -m <= -M and -s 1 .. %d\n", MAX_SAMPLES);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(lib, &len);
    lib[strcspn(lib, "\n")] = '\0';
    printf("# reduce_local library: %s\n", lib);
    printf("# MPI_Reduce_local, MPI_DOUBLE, MPI_SUM\n");
    for (size_t b = min; b <= max; b *= 8)
        one_size(b, samples);
    MPI_Finalize();
    return 0;
}
