/*
 * The shared heap (transport/shm/heap.c) replaces the program's malloc:
 * everything a program may do with glibc's must still work, through
 * bmpirun, with the heap on. Each part names what it checks:
 *
 *   memory_goes_back  a freed large block's pages go back to the system
 *                     (resident size drops) as glibc's munmap would, and
 *                     malloc_trim(0) returns what free kept
 *   mallinfo_counts   mallinfo2() counts the heap's blocks
 *   threads           4 threads allocating, resizing and freeing at once
 *                     with every allocator entry point
 *   fork_and_exec     a child that allocates, frees and execs a program
 *                     linked with libbmpi; system()
 *
 * Large messages between the parts show that the heap still works for
 * single copy. With --exec-child the program is the exec'd child.
 */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

#define KIB ((size_t)1 << 10)
#define MIB ((size_t)1 << 20)

/* Each rank sends n bytes to the next rank and checks what it receives. */
static void ring_round(size_t n, int phase)
{
    int to = (tu_rank + 1) % tu_size, from = (tu_rank + tu_size - 1) % tu_size;
    unsigned char *s = malloc(n), *r = malloc(n);
    CHECK(s && r, "malloc of %zu bytes", n);
    tu_fill(s, n, tu_seed(phase, tu_rank, to, 0));
    MPICHK(MPI_Sendrecv(s, (int)n, MPI_BYTE, to, phase, r, (int)n, MPI_BYTE, from, phase,
                        MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    long bad = tu_verify(r, n, tu_seed(phase, from, tu_rank, 0));
    CHECK(bad < 0, "phase %d: byte %ld of %zu from rank %d is wrong", phase, bad, n, from);
    free(r);
    free(s);
}

/* ---- memory_goes_back ---------------------------------------------------- */

/* Resident bytes of this process (shared pages included: the heap's are). */
static size_t resident(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long size = 0, pages = 0;
    CHECK(f && fscanf(f, "%lu %lu", &size, &pages) == 2, "cannot read /proc/self/statm");
    fclose(f);
    return pages * (size_t)sysconf(_SC_PAGESIZE);
}

static void *touched(size_t n)
{
    void *p = malloc(n);
    CHECK(p != NULL, "malloc of %zu bytes", n);
    memset(p, 0x5a, n);
    return p;
}

/* free(p) of n touched bytes must hand at least most of them back. */
static void expect_free_returns(void *p, size_t n, const char *what)
{
    size_t before = resident();
    free(p);
    size_t after = resident();
    size_t gone = before > after ? before - after : 0;
    CHECK(gone >= n - n / 8, "%s: free of %zu KiB returned %zu KiB to the system", what,
          n / KIB, gone / KIB);
}

static void memory_goes_back(void)
{
    /* glibc maps a first block of this size by itself and unmaps it on free */
    expect_free_returns(touched(16 * MIB), 16 * MIB, "the last block");
    /* then keeps the next one of that size in its arena, for reuse: a
     * buffer freed and allocated again must not fault its pages in anew */
    void *again = touched(16 * MIB);
    size_t before = resident();
    free(again);
    size_t after = resident();
    CHECK(after + 8 * MIB > before, "a second 16 MiB block went back to the system (%zu KiB): "
          "glibc keeps it for reuse", (before - after) / KIB);
    void *middle = touched(24 * MIB), *guard = touched(64 * KIB);
    expect_free_returns(middle, 24 * MIB, "a block below another");
    /* What free keeps (a block no larger than one freed before, which
     * glibc keeps in its arena too), malloc_trim(0) returns. */
    void *kept = touched(4 * MIB), *guard2 = touched(64 * KIB);
    free(kept);
    before = resident();
    int trimmed = malloc_trim(0);
    size_t gone = before - (before > resident() ? resident() : before);
    CHECK(trimmed == 1 && gone >= 3 * MIB, "malloc_trim(0) returned %d and %zu KiB", trimmed,
          gone / KIB);
    free(guard2);
    free(guard);
}

/* ---- mallinfo_counts ----------------------------------------------------- */

static void mallinfo_counts(void)
{
    struct mallinfo2 before = mallinfo2();
    void *a = touched(8 * MIB), *b = touched(3 * MIB);
    struct mallinfo2 in_use = mallinfo2();
    size_t seen = (in_use.uordblks + in_use.hblkhd) - (before.uordblks + before.hblkhd);
    CHECK(seen >= 11 * MIB, "mallinfo2 sees %zu KiB more in use after 11 MiB of blocks",
          seen / KIB);
    free(b);
    free(a);
    struct mallinfo2 after = mallinfo2();
    CHECK(after.uordblks + after.hblkhd <= before.uordblks + before.hblkhd + MIB,
          "mallinfo2: %zu KiB still in use after the blocks were freed",
          (after.uordblks + after.hblkhd - before.uordblks - before.hblkhd) / KIB);
}

/* ---- threads ------------------------------------------------------------- */

enum { THREADS = 4, THREAD_OPS = 600, THREAD_SLOTS = 16 };

struct slot {
    unsigned char *p;
    size_t n, align;
    uint64_t seed;
};

/* One block by one of the allocator's entry points, chosen by op. */
static unsigned char *allocate(uint64_t *rng, struct slot *s)
{
    size_t n = tu_range(rng, 1, 3 * MIB), align = (size_t)8 << tu_range(rng, 0, 10);
    unsigned char *p = NULL;
    switch (tu_range(rng, 0, 4)) {
    case 0: p = malloc(n); align = 16; break;
    case 1:
        p = calloc(n / 8 + 1, 8);
        CHECK(p && p[0] == 0 && p[n / 2] == 0 && p[n] == 0, "calloc(%zu) not zero", n / 8 + 1);
        n = n / 8 * 8 + 8;
        align = 16;
        break;
    case 2: n = (n + align - 1) / align * align; p = aligned_alloc(align, n); break;
    case 3: CHECK(posix_memalign((void **)&p, align, n) == 0, "posix_memalign(%zu, %zu)", align, n); break;
    default: p = memalign(align, n); break;
    }
    CHECK(p != NULL, "allocation of %zu bytes failed", n);
    CHECK((uintptr_t)p % align == 0, "%p is not aligned to %zu", (void *)p, align);
    CHECK(malloc_usable_size(p) >= n, "malloc_usable_size %zu < %zu", malloc_usable_size(p), n);
    s->n = n;
    s->align = align;
    return p;
}

static void *thread_main(void *arg)
{
    uint64_t rng = tu_seed(90, tu_rank, (int)(intptr_t)arg, 0);
    struct slot slots[THREAD_SLOTS] = {{0}};
    for (int op = 0; op < THREAD_OPS; op++) {
        struct slot *s = &slots[tu_range(&rng, 0, THREAD_SLOTS - 1)];
        if (s->p) {
            long bad = tu_verify(s->p, s->n, s->seed);
            CHECK(bad < 0, "thread %d: byte %ld of a %zu-byte block changed", (int)(intptr_t)arg,
                  bad, s->n);
        }
        if (s->p && tu_range(&rng, 0, 1)) {
            size_t n = tu_range(&rng, 1, 3 * MIB), keep = n < s->n ? n : s->n;
            s->p = realloc(s->p, n);
            CHECK(s->p && tu_verify(s->p, keep, s->seed) < 0, "realloc to %zu lost data", n);
            s->n = n;
        } else {
            free(s->p);
            s->p = allocate(&rng, s);
        }
        s->seed = tu_rand(&rng);
        tu_fill(s->p, s->n, s->seed);
    }
    for (int i = 0; i < THREAD_SLOTS; i++)
        free(slots[i].p);
    return NULL;
}

static void threads(void)
{
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        CHECK(pthread_create(&t[i], NULL, thread_main, (void *)(intptr_t)i) == 0, "pthread_create");
    ring_round(2 * MIB, 91); /* the main thread moves large messages meanwhile */
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
}

/* ---- fork_and_exec -------------------------------------------------------- */

/* The exec'd child: not a rank; its large blocks must work all the same. */
static int exec_child(void)
{
    unsigned char *p = touched(8 * MIB);
    p = realloc(p, 12 * MIB);
    int ok = p && p[8 * MIB - 1] == 0x5a;
    free(p);
    return ok ? 0 : 3;
}

static void fork_and_exec(const char *self)
{
    size_t n = 4 * MIB;
    unsigned char *buf = malloc(n);
    CHECK(buf != NULL, "malloc of %zu bytes", n);
    tu_fill(buf, n, 77);
    pid_t pid = fork();
    CHECK(pid >= 0, "fork: %s", strerror(errno));
    if (pid == 0) {
        if (tu_verify(buf, n, 77) >= 0)
            _exit(1);
        free(buf);
        void *p = touched(6 * MIB);
        p = realloc(p, 9 * MIB);
        free(p);
        execl(self, self, "--exec-child", (char *)NULL);
        _exit(2);
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid, "waitpid: %s", strerror(errno));
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the forked child failed: status 0x%x",
          status);
    CHECK(tu_verify(buf, n, 77) < 0, "the child changed the parent's block");
    int rc = system("exit 3");
    CHECK(WIFEXITED(rc) && WEXITSTATUS(rc) == 3, "system() returned 0x%x", rc);
    free(buf);
}

/* A sanitizer's allocator keeps freed blocks in quarantine and keeps its
 * own counts: what the system and mallinfo2 see is then its business. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define GLIBC_ALLOCATOR 0
#else
#define GLIBC_ALLOCATOR 1
#endif

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--exec-child"))
        return exec_child();
    /* the threads allocate, only the main thread calls MPI */
    int provided;
    MPICHK(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided));
    tu_prog = "heap_libc";
    MPICHK(MPI_Comm_rank(MPI_COMM_WORLD, &tu_rank));
    MPICHK(MPI_Comm_size(MPI_COMM_WORLD, &tu_size));
    MPICHK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    setvbuf(stdout, NULL, _IOLBF, 0);
    CHECK(provided >= MPI_THREAD_FUNNELED, "MPI_THREAD_FUNNELED not provided (%d)", provided);

    if (GLIBC_ALLOCATOR) {
        memory_goes_back();
        mallinfo_counts();
    } else if (tu_rank == 0) {
        printf("sanitizer build: memory_goes_back and mallinfo_counts skipped\n");
    }
    ring_round(3 * MIB, 1);
    threads();
    ring_round(5 * MIB, 2);
    fork_and_exec("/proc/self/exe");
    ring_round(5 * MIB, 3);
    tu_finish();
    return 0;
}
