/* stream: what an MPI library's allocator costs a compute kernel.
 *
 * Standard MPI plus Linux's /proc. Every rank works on arrays of its own,
 * malloc'd after MPI_Init (so under bmpi they come from whatever serves
 * malloc there: the shared heap, or glibc with BMPI_SHM_HEAP=0), sized
 * well beyond the last-level cache, and touched first by the rank itself:
 *
 *   triad    a[i] = b[i] + s * c[i], three arrays of -n bytes each;
 *            STREAM's count: 24 bytes moved per element
 *   stencil  a 7-point stencil on a cube grid (two arrays of about -n
 *            bytes, swapped after each sweep); 16 bytes per point
 *
 * No MPI call runs inside a timed loop. Each kernel runs a fixed number of
 * iterations per repeat (-i, -j); every rank starts each repeat together
 * (barrier) and times its own loop. The sum over ranks is of rates taken
 * in the same repeat, so it is what the node moved with every rank busy.
 * The results are checked (triad exactly, stencil by a checksum that must
 * be the same on every rank), so a compiler cannot drop the loops.
 *
 * Before the timing each rank reads /proc/self/smaps for the mappings
 * that hold each array and prints how much of them is resident and how
 * much in huge pages (anonymous THP, shmem/memfd THP, file THP). A
 * mapping can be larger than the array (bmpi's shared heap is one mapping
 * for all large blocks): the line is about the mappings, not the bytes.
 *
 * Output (machine readable; '#' lines are comments; GB = 1e9 bytes):
 *   pages <rank> <array> <mapping_kB> <rss_kB> <anon_huge_kB> <shmem_pmd_kB> <file_pmd_kB>
 *   triad <rank> <best_GB/s> <median_GB/s>
 *   stencil <rank> <best_GB/s> <median_GB/s>
 *   triad sum <best_GB/s> <median_GB/s>       (over repeats of the per-repeat sums)
 *   stencil sum <best_GB/s> <median_GB/s>
 *
 * Options: -n SIZE  bytes per array (k/m/g suffix; default 256m)
 *          -i N     triad iterations per repeat (default 10)
 *          -j N     stencil sweeps per repeat (default 5)
 *          -r N     repeats (default 5)
 *          -H       madvise(MADV_HUGEPAGE) the arrays, as a program that
 *                   asks for transparent huge pages does
 *          -c       time by the rank's CPU time instead of the wall clock:
 *                   on a machine shared with other work, the time the
 *                   rank spent descheduled does not count (its memory
 *                   traffic still competes with theirs)
 */
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "bench_util.h"

struct options {
    size_t bytes;
    int triad_iters, stencil_sweeps, repeats, madvise_huge, cpu_time;
};

/* Seconds by the clock -c chose. */
static double now(const struct options *o)
{
    if (!o->cpu_time)
        return MPI_Wtime();
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static size_t parse_bytes(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    switch (*end) {
    case 'g': case 'G': v *= 1024.0; /* fall through */
    case 'm': case 'M': v *= 1024.0; /* fall through */
    case 'k': case 'K': v *= 1024.0; break;
    default: break;
    }
    return (size_t)v;
}

static int parse_options(int argc, char **argv, struct options *o)
{
    *o = (struct options){.bytes = (size_t)256 << 20, .triad_iters = 10,
                          .stencil_sweeps = 5, .repeats = 5};
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : "0";
        if (!strcmp(argv[i], "-n")) o->bytes = parse_bytes(v), i++;
        else if (!strcmp(argv[i], "-i")) o->triad_iters = atoi(v), i++;
        else if (!strcmp(argv[i], "-j")) o->stencil_sweeps = atoi(v), i++;
        else if (!strcmp(argv[i], "-r")) o->repeats = atoi(v), i++;
        else if (!strcmp(argv[i], "-H")) o->madvise_huge = 1;
        else if (!strcmp(argv[i], "-c")) o->cpu_time = 1;
        else return -1;
    }
    return o->bytes >= 4096 && o->triad_iters > 0 && o->stencil_sweeps > 0 &&
           o->repeats > 0 ? 0 : -1;
}

static double *alloc_array(size_t bytes, const struct options *o)
{
    double *p = malloc(bytes);
    if (!p) {
        fprintf(stderr, "stream: out of memory for %zu bytes\n", bytes);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (o->madvise_huge) {
        /* madvise wants page-aligned bounds: the whole pages inside */
        uintptr_t from = ((uintptr_t)p + 4095) & ~(uintptr_t)4095;
        uintptr_t to = ((uintptr_t)p + bytes) & ~(uintptr_t)4095;
        if (to > from && madvise((void *)from, to - from, MADV_HUGEPAGE) != 0)
            perror("stream: madvise(MADV_HUGEPAGE)");
    }
    return p;
}

/* ---- where the pages are ------------------------------------------------- */

struct page_use {
    unsigned long mapping_kb, rss_kb, anon_huge_kb, shmem_pmd_kb, file_pmd_kb;
};

static void add_smaps_field(struct page_use *u, const char *line)
{
    static const struct { const char *name; size_t off; } fields[] = {
        {"Rss:", offsetof(struct page_use, rss_kb)},
        {"AnonHugePages:", offsetof(struct page_use, anon_huge_kb)},
        {"ShmemPmdMapped:", offsetof(struct page_use, shmem_pmd_kb)},
        {"FilePmdMapped:", offsetof(struct page_use, file_pmd_kb)},
    };
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
        size_t len = strlen(fields[i].name);
        if (!strncmp(line, fields[i].name, len))
            *(unsigned long *)((char *)u + fields[i].off) += strtoul(line + len, NULL, 10);
    }
}

/* Sum the smaps figures of every mapping that overlaps [p, p + bytes). */
static struct page_use page_use_of(const void *p, size_t bytes)
{
    struct page_use u = {0};
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f)
        return u;
    uintptr_t lo = (uintptr_t)p, hi = lo + bytes;
    char line[512];
    int inside = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long start, end;
        /* a mapping's first line starts "start-end "; its fields, "Name:" */
        if (sscanf(line, "%lx-%lx ", &start, &end) == 2) {
            inside = start < hi && end > lo;
            if (inside)
                u.mapping_kb += (end - start) >> 10;
        } else if (inside) {
            add_smaps_field(&u, line);
        }
    }
    fclose(f);
    return u;
}

static void print_page_use(int rank, const char *name, const void *p, size_t bytes)
{
    struct page_use u = page_use_of(p, bytes);
    printf("pages %d %s %lu %lu %lu %lu %lu\n", rank, name, u.mapping_kb, u.rss_kb,
           u.anon_huge_kb, u.shmem_pmd_kb, u.file_pmd_kb);
}

/* ---- kernels ------------------------------------------------------------- */

static void triad(double *restrict a, const double *restrict b, const double *restrict c,
                  size_t n, double s)
{
    for (size_t i = 0; i < n; i++)
        a[i] = b[i] + s * c[i];
}

static size_t at(size_t nx, size_t x, size_t y, size_t z) { return (z * nx + y) * nx + x; }

/* One sweep over the interior of an nx^3 grid; the faces keep their values. */
static void stencil(double *restrict out, const double *restrict in, size_t nx)
{
    for (size_t z = 1; z + 1 < nx; z++)
        for (size_t y = 1; y + 1 < nx; y++)
            for (size_t x = 1; x + 1 < nx; x++)
                out[at(nx, x, y, z)] =
                    0.4 * in[at(nx, x, y, z)] +
                    0.1 * (in[at(nx, x - 1, y, z)] + in[at(nx, x + 1, y, z)] +
                           in[at(nx, x, y - 1, z)] + in[at(nx, x, y + 1, z)] +
                           in[at(nx, x, y, z - 1)] + in[at(nx, x, y, z + 1)]);
}

/* ---- timing -------------------------------------------------------------- */

/* Sort rates[0..n) and report best and median. */
static void best_median(double *rates, int n, double *best, double *median)
{
    qsort(rates, (size_t)n, sizeof *rates, cmp_double);
    *best = rates[n - 1];
    *median = rates[(n - 1) / 2];
}

/* Every rank's best and median, then the node's per-repeat sums. */
static void report(const char *kernel, int rank, int np, double *rates, int repeats)
{
    double *sums = malloc(sizeof(double) * (size_t)repeats);
    MPI_Reduce(rates, sums, repeats, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    double mine[2], *all = malloc(sizeof(double) * 2 * (size_t)np);
    best_median(rates, repeats, &mine[0], &mine[1]);
    MPI_Gather(mine, 2, MPI_DOUBLE, all, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        for (int r = 0; r < np; r++)
            printf("%s %d %.2f %.2f\n", kernel, r, all[2 * r], all[2 * r + 1]);
        double best, median;
        best_median(sums, repeats, &best, &median);
        printf("%s sum %.2f %.2f\n", kernel, best, median);
        fflush(stdout);
    }
    free(all);
    free(sums);
}

static double timed_triad(const struct options *o, double *a, const double *b, const double *c,
                          size_t n)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now(o);
    for (int k = 0; k < o->triad_iters; k++)
        triad(a, b, c, n, 3.0);
    double dt = now(o) - t0;
    return 24.0 * (double)n * o->triad_iters / dt / 1e9;
}

static double timed_stencil(const struct options *o, double **in, double **out, size_t nx)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now(o);
    for (int k = 0; k < o->stencil_sweeps; k++) {
        stencil(*out, *in, nx);
        double *t = *in;
        *in = *out;
        *out = t;
    }
    double dt = now(o) - t0;
    return 16.0 * (double)(nx * nx * nx) * o->stencil_sweeps / dt / 1e9;
}

static int run_triad(const struct options *o, int rank, int np)
{
    size_t n = o->bytes / sizeof(double);
    double *a = alloc_array(n * sizeof(double), o), *b = alloc_array(n * sizeof(double), o),
           *c = alloc_array(n * sizeof(double), o);
    for (size_t i = 0; i < n; i++)
        a[i] = 0.0, b[i] = 1.0, c[i] = 2.0;
    triad(a, b, c, n, 3.0); /* warm up */
    MPI_Barrier(MPI_COMM_WORLD);
    for (int r = 0; r < np; r++, MPI_Barrier(MPI_COMM_WORLD))
        if (r == rank) {
            print_page_use(rank, "triad.a", a, n * sizeof(double));
            print_page_use(rank, "triad.b", b, n * sizeof(double));
            print_page_use(rank, "triad.c", c, n * sizeof(double));
            fflush(stdout);
        }
    double *rates = malloc(sizeof(double) * (size_t)o->repeats);
    for (int r = 0; r < o->repeats; r++)
        rates[r] = timed_triad(o, a, b, c, n);
    int bad = a[0] != 7.0 || a[n / 2] != 7.0 || a[n - 1] != 7.0;
    report("triad", rank, np, rates, o->repeats);
    free(rates);
    free(c);
    free(b);
    free(a);
    return bad;
}

static int run_stencil(const struct options *o, int rank, int np)
{
    size_t nx = 3;
    while ((nx + 1) * (nx + 1) * (nx + 1) * sizeof(double) <= o->bytes)
        nx++;
    size_t points = nx * nx * nx;
    double *in = alloc_array(points * sizeof(double), o),
           *out = alloc_array(points * sizeof(double), o);
    for (size_t i = 0; i < points; i++)
        in[i] = out[i] = (double)(i % 1000) * 1e-3;
    stencil(out, in, nx); /* warm up */
    MPI_Barrier(MPI_COMM_WORLD);
    for (int r = 0; r < np; r++, MPI_Barrier(MPI_COMM_WORLD))
        if (r == rank) {
            print_page_use(rank, "stencil.in", in, points * sizeof(double));
            print_page_use(rank, "stencil.out", out, points * sizeof(double));
            fflush(stdout);
        }
    double *rates = malloc(sizeof(double) * (size_t)o->repeats);
    for (int r = 0; r < o->repeats; r++)
        rates[r] = timed_stencil(o, &in, &out, nx);
    /* Every rank computed the same grid: the checksums must agree. */
    double sum = 0, range[2];
    for (size_t i = 0; i < points; i += 97)
        sum += in[i];
    double minus = -sum;
    MPI_Allreduce(&sum, &range[0], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&minus, &range[1], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    report("stencil", rank, np, rates, o->repeats);
    if (rank == 0)
        printf("# stencil %zu^3 points, checksum %.6e\n", nx, sum);
    free(rates);
    free(out);
    free(in);
    return range[0] != -range[1];
}

int main(int argc, char **argv)
{
    int rank, np;
    struct options o;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (parse_options(argc, argv, &o) != 0) {
        if (rank == 0)
            fprintf(stderr, "usage: %s [-n BYTES] [-i TRIAD_ITERS] [-j STENCIL_SWEEPS] "
                            "[-r REPEATS] [-H] [-c]\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    if (rank == 0) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(lib, &len);
        lib[strcspn(lib, "\n")] = '\0';
        printf("# stream np=%d array_bytes=%zu triad_iters=%d stencil_sweeps=%d repeats=%d%s%s "
               "library: %s\n", np, o.bytes, o.triad_iters, o.stencil_sweeps, o.repeats,
               o.madvise_huge ? " madvise-hugepage" : "", o.cpu_time ? " cpu-time" : "", lib);
        printf("# pages rank array mapping_kB rss_kB anon_huge_kB shmem_pmd_kB file_pmd_kB\n");
        printf("# KERNEL rank|sum best_GB/s median_GB/s (GB = 1e9 bytes)\n");
        fflush(stdout);
    }
    int bad = run_triad(&o, rank, np);
    bad |= run_stencil(&o, rank, np);
    if (bad)
        fprintf(stderr, "stream: rank %d: wrong results\n", rank);
    MPI_Finalize();
    return bad;
}
