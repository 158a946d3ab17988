/* limits: what this machine allows an MPI on one node, without any MPI.
 *
 * Four floors against which the MPI numbers are read:
 *   memcpy     bandwidth of memcpy within one process, per size (the cost
 *              of one copy through a bounce buffer); with -o OFFSET the
 *              destination starts OFFSET bytes further into its page than
 *              the source (default 0: both at a page boundary);
 *   cma        bandwidth of process_vm_readv from a process pinned to the
 *              second core into one pinned to the first, per size (the
 *              single-copy path that MPIs use for large messages);
 *   mapped     bandwidth of memcpy from pages the process on the second core
 *              wrote, mapped shared, into the first (a single copy without
 *              the system call: what XPMEM or a shared heap would allow);
 *   cacheline  two threads pinned to the two cores bounce one cache line;
 *              nanoseconds per one-way transfer, the floor under any
 *              small-message latency through shared memory;
 *   atomic     1, 2, 4 .. -P processes (default 2) at once make an atomic
 *              fetch-add on one counter in a MAP_SHARED mapping, each
 *              pinned to a core of its own while there are enough
 *              (round robin beyond); nanoseconds per fetch-add, the
 *              slowest process's: the floor under MPI_Fetch_and_op on
 *              one counter that many ranks contend for.
 * The two cores are the first two of this process's CPU affinity mask.
 *
 * Output (machine readable; '#' lines are comments; MB = 1e6 bytes):
 *   memcpy <size_bytes> <best_MB/s> <median_MB/s>
 *   cma <size_bytes> <best_MB/s> <median_MB/s>
 *   mapped <size_bytes> <best_MB/s> <median_MB/s>
 *   cacheline 64 <best_ns> <median_ns>
 *   atomic <processes> <best_ns> <median_ns>
 *
 * Usage: limits [memcpy] [cma] [mapped] [cacheline] [atomic] [-m MIN]
 *               [-M MAX] [-s SAMPLES] [-t MS] [-P PROCESSES] [-o OFFSET]
 *               (default: all but atomic, 4k .. 16m, 7 samples, 20 ms)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"

static int samples = 7;
static double target = 20e-3;
static int cpu[2] = {-1, -1};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int pin(int c)
{
    cpu_set_t set;
    if (c < 0) return 0;
    CPU_ZERO(&set);
    CPU_SET(c, &set);
    return sched_setaffinity(0, sizeof(set), &set);
}

static void *alloc_touched(size_t len)
{
    void *p;
    if (posix_memalign(&p, 4096, len ? len : 1)) return NULL;
    memset(p, 1, len);
    return p;
}

/* Runs op(size) in batches: calibrates the batch from a warm-up so that a
 * sample lasts about `target`, then reports best and median MB/s. */
static int bandwidth(const char *name, int (*op)(size_t), size_t size)
{
    double t[64], t0, per;
    long iters = 0;
    int n = samples > 64 ? 64 : samples;

    t0 = now();
    do {
        if (op(size)) return -1;
        iters++;
    } while (now() - t0 < target / 4 && iters < 1000000);
    per = (now() - t0) / (double)iters;
    iters = (long)(target / per);
    if (iters < 1) iters = 1;

    for (int s = 0; s < n; s++) {
        t0 = now();
        for (long i = 0; i < iters; i++)
            if (op(size)) return -1;
        t[s] = (double)size * (double)iters / (now() - t0) / 1e6;
    }
    qsort(t, (size_t)n, sizeof(double), cmp_double);
    printf("%s %zu %.1f %.1f\n", name, size, t[n - 1], t[(n - 1) / 2]);
    fflush(stdout);
    return 0;
}

/* --- memcpy ------------------------------------------------------------ */
static char *msrc, *mdst;
static long memcpy_offset; /* -o */

static int op_memcpy(size_t size)
{
    memcpy(mdst, msrc, size);
    /* Keep the compiler from dropping a copy nobody reads. */
    __asm__ volatile("" : : "r"(mdst) : "memory");
    return 0;
}

static void run_memcpy(size_t min, size_t max)
{
    msrc = alloc_touched(max);
    char *dst_pages = alloc_touched(max + BENCH_PAGE);
    if (!msrc || !dst_pages) {
        fprintf(stderr, "limits: out of memory for 2 x %zu bytes\n", max);
        exit(1);
    }
    mdst = dst_pages + memcpy_offset;
    pin(cpu[0]);
    printf("# memcpy size_bytes best_MB/s median_MB/s (one process, cpu %d, "
           "destination %ld bytes further into its page)\n", cpu[0], memcpy_offset);
    for (size_t size = min; size <= max; size *= 2)
        bandwidth("memcpy", op_memcpy, size);
    free(msrc);
    free(dst_pages);
}

/* --- a helper process on the second core -------------------------------- */
static pid_t helper_pid;
static int helper_done = -1;

/* Forks a child pinned to the second core that writes buf (len bytes) and
 * then waits until helper_stop(): the pages the tests below read are the
 * child's, written from the other core. */
static void helper_start(char *buf, size_t len)
{
    int ready[2], done[2];
    char c = 0;
    if (pipe(ready) || pipe(done)) {
        fprintf(stderr, "limits: pipe: %s\n", strerror(errno));
        exit(1);
    }
    fflush(stdout);
    helper_pid = fork();
    if (helper_pid < 0) {
        fprintf(stderr, "limits: fork: %s\n", strerror(errno));
        exit(1);
    }
    if (helper_pid == 0) {
        close(ready[0]);
        close(done[1]); /* or the read below never sees end of file */
        pin(cpu[1]);
        memset(buf, 2, len);
        if (write(ready[1], &c, 1) != 1) _exit(1);
        /* Wait until the parent is done (or gone). */
        while (read(done[0], &c, 1) < 0 && errno == EINTR)
            ;
        _exit(0);
    }
    close(ready[1]);
    close(done[0]);
    if (read(ready[0], &c, 1) != 1) {
        fprintf(stderr, "limits: helper process died\n");
        exit(1);
    }
    close(ready[0]);
    helper_done = done[1];
    pin(cpu[0]);
}

static void helper_stop(void)
{
    close(helper_done);
    waitpid(helper_pid, NULL, 0);
}

/* --- process_vm_readv ----------------------------------------------------- */
static char *cma_remote, *cma_local;

static int op_cma(size_t size)
{
    struct iovec l = {cma_local, size}, r = {cma_remote, size};
    ssize_t n = process_vm_readv(helper_pid, &l, 1, &r, 1, 0);
    if (n != (ssize_t)size) {
        if (n < 0)
            printf("# cma: process_vm_readv failed: %s (a container without "
                   "CAP_SYS_PTRACE or a strict seccomp profile forbids it)\n",
                   strerror(errno));
        else
            printf("# cma: process_vm_readv read %zd of %zu bytes\n", n, size);
        return -1;
    }
    return 0;
}

static void run_cma(size_t min, size_t max)
{
    /* The child writes its own copy of the buffer (so its pages are its
     * own, not copy-on-write shares of ours) at the same address. */
    cma_remote = alloc_touched(max);
    cma_local = alloc_touched(max);
    if (!cma_remote || !cma_local) {
        fprintf(stderr, "limits: out of memory for 2 x %zu bytes\n", max);
        exit(1);
    }
    helper_start(cma_remote, max);
    printf("# cma size_bytes best_MB/s median_MB/s (process_vm_readv, "
           "cpu %d reads from cpu %d)\n", cpu[0], cpu[1]);
    for (size_t size = min; size <= max; size *= 2)
        if (bandwidth("cma", op_cma, size))
            break;
    helper_stop();
    free(cma_remote);
    free(cma_local);
}

/* --- memcpy from another process's pages, mapped ---------------------------- */
/* The single copy that needs no system call and no pinning of pages: the
 * other process's buffer is mapped here, as XPMEM or a heap in shared
 * memory would map it. The same reads as the cma test. */
static void run_mapped(size_t min, size_t max)
{
    msrc = mmap(NULL, max, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    mdst = alloc_touched(max);
    if (msrc == MAP_FAILED || !mdst) {
        fprintf(stderr, "limits: cannot set up the mapped test: %s\n", strerror(errno));
        exit(1);
    }
    helper_start(msrc, max);
    printf("# mapped size_bytes best_MB/s median_MB/s (memcpy from a shared "
           "mapping cpu %d wrote, on cpu %d)\n", cpu[1], cpu[0]);
    for (size_t size = min; size <= max; size *= 2)
        bandwidth("mapped", op_memcpy, size);
    helper_stop();
    munmap(msrc, max);
    free(mdst);
}

/* --- cache-line ping-pong ------------------------------------------------ */
static struct {
    _Alignas(64) atomic_long flag;
    char pad[64 - sizeof(atomic_long)];
} line;
static long bounce_rounds;
static atomic_int ponger_ready;

static void *ponger(void *arg)
{
    (void)arg;
    pin(cpu[1]);
    atomic_store(&ponger_ready, 1);
    for (long i = 0; i < bounce_rounds; i++) {
        long want = 2 * i + 1;
        while (atomic_load_explicit(&line.flag, memory_order_acquire) != want)
            ;
        atomic_store_explicit(&line.flag, want + 1, memory_order_release);
    }
    return NULL;
}

static void run_cacheline(void)
{
    double t[64];
    int n = samples > 64 ? 64 : samples;
    long rounds = 2000; /* small: a busy core may cost a time slice each */

    pin(cpu[0]);
    printf("# cacheline 64 best_ns median_ns (one-way, cpu %d <-> cpu %d)\n",
           cpu[0], cpu[1]);
    /* Sample -1 calibrates the number of round trips per sample. */
    for (int s = -1; s < n; s++) {
        pthread_t th;
        double t0, dt;
        atomic_store(&line.flag, 0);
        atomic_store(&ponger_ready, 0);
        bounce_rounds = rounds;
        if (pthread_create(&th, NULL, ponger, NULL)) {
            fprintf(stderr, "limits: pthread_create failed\n");
            exit(1);
        }
        /* Let the other thread reach its core before the clock starts. */
        while (!atomic_load(&ponger_ready))
            ;
        t0 = now();
        for (long i = 0; i < rounds; i++) {
            long want = 2 * i + 2;
            atomic_store_explicit(&line.flag, want - 1, memory_order_release);
            while (atomic_load_explicit(&line.flag, memory_order_acquire) != want)
                ;
        }
        dt = now() - t0;
        pthread_join(th, NULL);
        if (s < 0) {
            double per = dt / (double)rounds;
            rounds = per > 0 ? (long)(target / per) : 100000;
            if (rounds < 1000) rounds = 1000;
        } else {
            t[s] = dt / (double)rounds / 2 * 1e9;
        }
    }
    qsort(t, (size_t)n, sizeof(double), cmp_double);
    printf("cacheline 64 %.1f %.1f\n", t[0], t[(n - 1) / 2]);
    fflush(stdout);
}

/* --- fetch-add on a counter in shared memory ---------------------------- */
#define ATOMIC_MAX_PROCS 64

struct atomic_shared {
    _Alignas(64) atomic_long counter;
    _Alignas(64) atomic_int go;   /* the sample the workers may run */
    atomic_int done;              /* worker samples finished, all samples */
    double ns[ATOMIC_MAX_PROCS];  /* per worker, its last sample */
};

/* The CPUs of this process's affinity mask, at most max of them. */
static int cpu_list(int *cpus, int max)
{
    cpu_set_t set;
    int n = 0;
    if (sched_getaffinity(0, sizeof(set), &set)) return 0;
    for (int c = 0; c < CPU_SETSIZE && n < max; c++)
        if (CPU_ISSET(c, &set)) cpus[n++] = c;
    return n;
}

static void atomic_worker(struct atomic_shared *sh, int id, long ops, int nsamples)
{
    for (int s = 0; s < nsamples; s++) {
        while (atomic_load(&sh->go) < s)
            sched_yield(); /* more processes than cores: let the others run */
        double t0 = now();
        for (long i = 0; i < ops; i++)
            atomic_fetch_add_explicit(&sh->counter, 1, memory_order_acq_rel);
        sh->ns[id] = (now() - t0) / (double)ops * 1e9;
        atomic_fetch_add(&sh->done, 1);
    }
    _exit(0);
}

/* One line: nproc processes, each pinned (round robin over the CPUs). */
static void atomic_line(struct atomic_shared *sh, int nproc, const int *cpus, int ncpus, long ops)
{
    double t[64];
    int n = samples > 64 ? 64 : samples;
    pid_t pid[ATOMIC_MAX_PROCS];

    atomic_store(&sh->counter, 0);
    atomic_store(&sh->go, -1);
    atomic_store(&sh->done, 0);
    fflush(stdout);
    for (int p = 0; p < nproc; p++) {
        pid[p] = fork();
        if (pid[p] < 0) {
            fprintf(stderr, "limits: fork: %s\n", strerror(errno));
            exit(1);
        }
        if (pid[p] == 0) {
            if (ncpus > 0) pin(cpus[p % ncpus]);
            atomic_worker(sh, p, ops, n);
        }
    }
    for (int s = 0; s < n; s++) {
        atomic_store(&sh->go, s);
        while (atomic_load(&sh->done) < (s + 1) * nproc)
            usleep(200);
        t[s] = 0;
        for (int p = 0; p < nproc; p++)
            if (sh->ns[p] > t[s]) t[s] = sh->ns[p];
    }
    for (int p = 0; p < nproc; p++)
        waitpid(pid[p], NULL, 0);
    if (atomic_load(&sh->counter) != (long)nproc * ops * n) {
        fprintf(stderr, "limits: atomic counter %ld, expected %ld\n",
                (long)atomic_load(&sh->counter), (long)nproc * ops * n);
        exit(1);
    }
    qsort(t, (size_t)n, sizeof(double), cmp_double);
    printf("atomic %d %.1f %.1f\n", nproc, t[0], t[(n - 1) / 2]);
    fflush(stdout);
}

static void run_atomic(int max_procs)
{
    int cpus[ATOMIC_MAX_PROCS];
    int ncpus = cpu_list(cpus, ATOMIC_MAX_PROCS);
    struct atomic_shared *sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
                                    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) {
        fprintf(stderr, "limits: mmap: %s\n", strerror(errno));
        exit(1);
    }
    if (max_procs > ATOMIC_MAX_PROCS) max_procs = ATOMIC_MAX_PROCS;
    /* A sample's fetch-adds per process: what one uncontended process
     * makes in the target time. */
    long ops = 1000;
    double t0 = now();
    for (long i = 0; i < ops; i++)
        atomic_fetch_add(&sh->counter, 1);
    for (double dt = now() - t0; dt < 1e-3; dt = now() - t0) {
        for (long i = 0; i < ops; i++)
            atomic_fetch_add(&sh->counter, 1);
        ops *= 2;
    }
    ops = (long)(target / ((now() - t0) / (double)ops));
    if (ops < 1000) ops = 1000;
    printf("# atomic processes best_ns median_ns (fetch-add on one MAP_SHARED "
           "counter, slowest process, %d cpus)\n", ncpus);
    for (int p = 1; p <= max_procs; p *= 2)
        atomic_line(sh, p, cpus, ncpus, ops);
    munmap(sh, sizeof(*sh));
}

int main(int argc, char **argv)
{
    size_t min = 4096, max = 16 << 20;
    int want_memcpy = 0, want_cma = 0, want_mapped = 0, want_line = 0;
    int want_atomic = 0, max_procs = 2;
    cpu_set_t set;

    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : "0";
        if (!strcmp(argv[i], "-m")) min = parse_size(v), i++;
        else if (!strcmp(argv[i], "-M")) max = parse_size(v), i++;
        else if (!strcmp(argv[i], "-s")) samples = atoi(v), i++;
        else if (!strcmp(argv[i], "-t")) target = atof(v) * 1e-3, i++;
        else if (!strcmp(argv[i], "memcpy")) want_memcpy = 1;
        else if (!strcmp(argv[i], "cma")) want_cma = 1;
        else if (!strcmp(argv[i], "mapped")) want_mapped = 1;
        else if (!strcmp(argv[i], "cacheline")) want_line = 1;
        else if (!strcmp(argv[i], "atomic")) want_atomic = 1;
        else if (!strcmp(argv[i], "-P")) max_procs = atoi(v), i++;
        else if (!strcmp(argv[i], "-o") && atol(v) >= 0 && atol(v) < BENCH_PAGE) memcpy_offset = atol(v), i++;
        else {
            fprintf(stderr, "usage: %s [memcpy] [cma] [mapped] [cacheline] "
                    "[atomic] [-m MIN] [-M MAX] [-s SAMPLES] [-t MS] "
                    "[-P PROCESSES] [-o OFFSET]\n", argv[0]);
            return 2;
        }
    }
    if (!want_memcpy && !want_cma && !want_mapped && !want_line && !want_atomic)
        want_memcpy = want_cma = want_mapped = want_line = 1;
    if (samples < 1) samples = 1;
    if (min < 1) min = 1;

    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
        for (int c = 0, k = 0; c < CPU_SETSIZE && k < 2; c++)
            if (CPU_ISSET(c, &set)) cpu[k++] = c;
    }
    printf("# limits cpus %d,%d samples %d target %.0f ms\n", cpu[0], cpu[1],
           samples, target * 1e3);

    if (want_memcpy)
        run_memcpy(min, max);
    if (want_atomic)
        run_atomic(max_procs);
    if (cpu[1] < 0) {
        printf("# only one cpu available: cma, mapped and cacheline need two\n");
        return 0;
    }
    if (want_cma)
        run_cma(min, max);
    if (want_mapped)
        run_mapped(min, max);
    if (want_line)
        run_cacheline();
    return 0;
}
