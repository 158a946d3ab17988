/*
 * A program that brings its own allocator (here: malloc and friends
 * defined in the program, passing each call on to glibc's internal entry
 * points and counting the large ones). The dynamic linker binds every
 * malloc of the process to the program's, so libbmpi's shared heap must
 * stand down: no heap set up, nothing published for the peers to map,
 * and large messages still move (by CMA or fragments).
 */
#include <errno.h>
#include <stdatomic.h>

#include "testutil.h"

#define LARGE ((size_t)64 << 10)

extern void *__libc_malloc(size_t);
extern void __libc_free(void *);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static atomic_long large_requests;

static void count(size_t n)
{
    if (n >= LARGE)
        atomic_fetch_add(&large_requests, 1);
}

void *malloc(size_t n)
{
    count(n);
    return __libc_malloc(n);
}

void free(void *p) { __libc_free(p); }

void *calloc(size_t n, size_t m)
{
    count(n * m);
    return __libc_calloc(n, m);
}

void *realloc(void *p, size_t n)
{
    count(n);
    return __libc_realloc(p, n);
}

void *memalign(size_t align, size_t n)
{
    count(n);
    return __libc_memalign(align, n);
}

void *aligned_alloc(size_t align, size_t n) { return memalign(align, n); }

int posix_memalign(void **out, size_t align, size_t n)
{
    if (align < sizeof(void *) || (align & (align - 1)))
        return EINVAL;
    void *p = memalign(align, n);
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}

/* Whether a mapping of this process is the shared heap's memfd. */
static int heap_is_mapped(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    CHECK(f != NULL, "cannot read /proc/self/maps");
    char line[512];
    int found = 0;
    while (fgets(line, sizeof line, f))
        found |= strstr(line, "bmpi-heap") != NULL;
    fclose(f);
    return found;
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv, "heap_own_malloc");
    size_t n = (size_t)8 << 20;
    long before = atomic_load(&large_requests);
    unsigned char *s = malloc(n), *r = malloc(n);
    CHECK(s && r, "malloc of %zu bytes", n);
    CHECK(atomic_load(&large_requests) == before + 2, "the program's own malloc was not called");
    int to = (tu_rank + 1) % tu_size, from = (tu_rank + tu_size - 1) % tu_size;
    for (int round = 0; round < 4; round++) {
        tu_fill(s, n, tu_seed(round, tu_rank, to, 0));
        MPICHK(MPI_Sendrecv(s, (int)n, MPI_BYTE, to, round, r, (int)n, MPI_BYTE, from, round,
                            MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        long bad = tu_verify(r, n, tu_seed(round, from, tu_rank, 0));
        CHECK(bad < 0, "round %d: byte %ld from rank %d is wrong", round, bad, from);
    }
    CHECK(!heap_is_mapped(), "libbmpi set up its shared heap although the program's malloc "
                             "serves every block");
    free(r);
    free(s);
    tu_finish();
    return 0;
}
