/*
 * The shared heap: the program's large blocks live in a memfd that the
 * other ranks of the node map, so that a single-copy read or write between
 * two ranks is one memcpy instead of a process_vm_readv, which pins every
 * page it copies (docs/shm.md, "Shared heap").
 *
 * libbmpi defines malloc, free, calloc, realloc, the aligned allocators,
 * malloc_usable_size, malloc_trim and mallinfo2. The dynamic linker binds every call in the process to the
 * first definition it finds, which is this one when the program links
 * libbmpi and preloads no allocator of its own (a sanitizer, valgrind,
 * jemalloc: theirs wins, this file is never called, and the heap is not
 * even set up: heap_is_the_malloc). Requests under
 * HEAP_MIN go to glibc unchanged (__libc_malloc and friends); larger ones
 * are cut from one reserved range mapped from the memfd, so that a peer
 * turns an address in it into its own by one subtraction (peer_heap.c).
 *
 * The heap is process state from before MPI_Init to after MPI_Finalize,
 * so it lives here and not in bmpi_world. Blocks have boundary tags
 * (header in front, size of the block below in the header) so that free
 * merges neighbours in constant time; free blocks sit in power-of-two
 * bins. A fork() child copies the heap into private memory before it
 * returns, since MAP_SHARED pages would otherwise be shared with the
 * parent.
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "transport/shm/heap.h"
#include "transport/transport.h"

/* glibc's own entry points, which stay reachable under their internal
 * names when a program replaces malloc. */
extern void *__libc_malloc(size_t);
extern void __libc_free(void *);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

/* Requests of at least this many bytes come from the shared heap. Single
 * copy starts near here (shm_rget_min, the collectives' direct floor);
 * glibc itself serves such sizes by mmap, so nothing small moves. */
#define HEAP_MIN ((size_t)64 << 10)
#define HEAP_PAGE ((size_t)4096)
#define HEAP_HDR ((size_t)64) /* keeps data 64-byte aligned */
/* Pages go back to the kernel when free() would give them back under
 * glibc (give_back_if_glibc_would, blk_free_locked): glibc maps a large block by itself when its arena
 * has no room for it, from a threshold that starts at 128 KiB and rises
 * to the size of each such block freed, up to 32 MiB; on free it unmaps
 * the block, and it trims the top of its arena beyond twice the
 * threshold. A merged free block of 32 MiB or more goes back too. */
#define HEAP_MAP_THRESHOLD_START ((size_t)128 << 10)
#define HEAP_PUNCH_MIN ((size_t)32 << 20)
#define HEAP_NBINS 48
/* The range starts on a boundary of the huge page size that goes with
 * HEAP_PAGE (the PMD size of 4 KiB pages), so huge pages can map it. */
#define HEAP_ALIGN ((size_t)2 << 20)

/* Under AddressSanitizer or ThreadSanitizer the sanitizer's allocator
 * must serve every block to check it, and a definition of malloc here
 * would take its place in programs that link this file statically. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define HEAP_REPLACES_MALLOC 0
#else
#define HEAP_REPLACES_MALLOC 1
#endif

enum { BLK_USED = 0x75736564u, BLK_FREE = 0x66726565u, BLK_SHIM = 0x7368696du };

struct blk {
    uint32_t magic;
    uint32_t bin;     /* while free; while used: 1 if free() gives its pages back */
    size_t size;      /* bytes, header included, a page multiple; a shim: offset back to its block */
    size_t prev_size; /* size of the block just below; 0 for the first */
    struct blk *next, *prev; /* bin links, while free */
};

enum heap_state { HEAP_UNINIT, HEAP_ON, HEAP_OFF, HEAP_FORKED };

static struct {
    pthread_mutex_t lock;
    enum heap_state state;
    int fd;
    char *base, *end;
    char *top;        /* first byte not in a block */
    char *fresh;      /* bytes from here up have never been handed out: zero */
    struct blk *last; /* the block that ends at top, or NULL */
    struct blk *bins[HEAP_NBINS];
    size_t map_threshold; /* glibc's mmap threshold, as glibc would have it now */
    size_t used_blocks, used_bytes, free_bytes; /* for mallinfo2 */
    void *libc_usable_size, *libc_trim, *libc_mallinfo2; /* glibc's, found on first use */
} heap = {.lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1, .map_threshold = HEAP_MAP_THRESHOLD_START};

/* ---- transparent huge pages --------------------------------------------- */

/* The first line of a small sysfs file, or "" (no stdio: this runs inside
 * malloc). */
static void read_line(const char *path, char *buf, size_t len)
{
    buf[0] = '\0';
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, buf, len - 1);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
}

/* The setting in brackets ("always [madvise] never" -> "madvise") of a
 * THP file; that of the PMD size's own file unless it says "inherit". */
static void thp_setting(const char *dir, const char *file, char *word, size_t len)
{
    char path[256], line[128], *open_b, *close_b;
    read_line((snprintf(path, sizeof path, "%s/hpage_pmd_size", dir), path), line, sizeof line);
    unsigned long pmd_kib = strtoul(line, NULL, 10) >> 10;
    snprintf(path, sizeof path, "%s/hugepages-%lukB/%s", dir, pmd_kib, file);
    for (int tries = 0; tries < 2; tries++) {
        read_line(path, line, sizeof line);
        word[0] = '\0';
        if ((open_b = strchr(line, '[')) && (close_b = strchr(open_b, ']')) &&
            (size_t)(close_b - open_b) <= len) {
            memcpy(word, open_b + 1, (size_t)(close_b - open_b - 1));
            word[close_b - open_b - 1] = '\0';
        }
        if (*word && strcmp(word, "inherit") != 0)
            return;
        snprintf(path, sizeof path, "%s/%s", dir, file);
    }
}

/* glibc.malloc.hugetlb in GLIBC_TUNABLES: 1 makes glibc madvise its
 * blocks for THP, 2 take hugetlbfs pages; 0 when unset. */
static int glibc_hugetlb_tunable(const char *tunables)
{
    const char *t = tunables ? strstr(tunables, "glibc.malloc.hugetlb=") : NULL;
    return t ? atoi(t + strlen("glibc.malloc.hugetlb=")) : 0;
}

enum bmpi_shm_heap_thp bmpi_shm_heap_thp_plan(const char *thp_dir, const char *glibc_tunables)
{
    char anon[32], shmem[32];
    thp_setting(thp_dir, "enabled", anon, sizeof anon);
    thp_setting(thp_dir, "shmem_enabled", shmem, sizeof shmem);
    int tunable = glibc_hugetlb_tunable(glibc_tunables);
    bool glibc_huge = !strcmp(anon, "always") || tunable == 2 ||
                      (tunable == 1 && !strcmp(anon, "madvise"));
    if (!glibc_huge)
        return BMPI_SHM_HEAP_THP_NONE;
    if (!strcmp(shmem, "always") || !strcmp(shmem, "within_size") || !strcmp(shmem, "force"))
        return BMPI_SHM_HEAP_THP_BY_ITSELF;
    return !strcmp(shmem, "advise") ? BMPI_SHM_HEAP_THP_ASK : BMPI_SHM_HEAP_THP_LOST;
}

/* ---- setting up ---------------------------------------------------------- */

#if HEAP_REPLACES_MALLOC
/* gcc wants an alias to carry its target's attributes (copy); clang
 * knows no such attribute and does not ask. */
#if __has_attribute(copy)
#define HEAP_ALIAS_OF_MALLOC __attribute__((alias("malloc"), copy(malloc)))
#else
#define HEAP_ALIAS_OF_MALLOC __attribute__((alias("malloc")))
#endif
static void *this_heaps_malloc(size_t n) HEAP_ALIAS_OF_MALLOC;

/* Whether the dynamic linker bound the process's malloc to this file's.
 * A program that defines its own, preloads another allocator, or loads
 * libbmpi after it started (Python's ctypes) allocates every block
 * elsewhere, and a heap here would be an empty range. The volatile makes
 * the compiler read the binding instead of assuming the alias. */
static bool heap_is_the_malloc(void)
{
    void *(*volatile bound)(size_t) = malloc;
    return bound == this_heaps_malloc;
}
#else
static bool heap_is_the_malloc(void) { return false; }
#endif

static bool heap_wanted(enum bmpi_shm_heap_thp thp)
{
    if (!heap_is_the_malloc())
        return false;
    int wanted = bmpi_env_switch("BMPI_SHM_HEAP");
    if (wanted == 0)
        return false;
    /* Under valgrind the blocks would escape memcheck, which replaces
     * glibc's allocator but not this one. */
    const char *pre = getenv("LD_PRELOAD");
    if (pre && strstr(pre, "vgpreload"))
        return false;
    /* A compute array must not lose the huge pages glibc would give it:
     * unless asked for by name, the heap stands down. */
    return thp != BMPI_SHM_HEAP_THP_LOST || wanted == 1;
}

static void heap_prepare_fork(void) { pthread_mutex_lock(&heap.lock); }
static void heap_parent_fork(void) { pthread_mutex_unlock(&heap.lock); }

/* In a fork() child: replace the shared pages by a private copy, and let
 * glibc serve every new block (this process is not a rank of the job). */
static void heap_child_fork(void)
{
    if (heap.state == HEAP_ON) {
        size_t used = (size_t)(heap.fresh - heap.base);
        if (used) {
            /* on failure abort: a child sharing its parent's heap would corrupt both */
            void *copy =
                mmap(NULL, used, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (copy == MAP_FAILED)
                abort();
            memcpy(copy, heap.base, used);
            if (mremap(copy, used, used, MREMAP_MAYMOVE | MREMAP_FIXED, heap.base) == MAP_FAILED)
                abort();
        }
        if (heap.end > heap.fresh)
            mmap(heap.fresh, (size_t)(heap.end - heap.fresh), PROT_NONE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
        close(heap.fd);
        heap.fd = -1;
        heap.state = HEAP_FORKED;
    }
    pthread_mutex_unlock(&heap.lock);
}

/* Map the memfd's len bytes at an address aligned to HEAP_ALIGN: the
 * kernel backs a shmem page range with a huge page only where file offset
 * and address agree modulo its size. */
static void *map_aligned(int fd, size_t len)
{
    char *r = mmap(NULL, len + HEAP_ALIGN, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (r == MAP_FAILED)
        return MAP_FAILED;
    char *a = (char *)(((uintptr_t)r + HEAP_ALIGN - 1) & ~(uintptr_t)(HEAP_ALIGN - 1));
    if (mmap(a, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE | MAP_FIXED, fd, 0) ==
        MAP_FAILED) {
        munmap(r, len + HEAP_ALIGN);
        return MAP_FAILED;
    }
    if (a > r)
        munmap(r, (size_t)(a - r));
    munmap(a + len, (size_t)(r + HEAP_ALIGN - a));
    return a;
}

/* Reserve the range, backed by a sparse memfd of the same size. A limit
 * on address space (ulimit -v) is met by trying smaller ranges. */
static void heap_init_locked(void)
{
    heap.state = HEAP_OFF;
    enum bmpi_shm_heap_thp thp =
        bmpi_shm_heap_thp_plan(BMPI_SHM_THP_SYSFS, getenv("GLIBC_TUNABLES"));
    if (!heap_wanted(thp))
        return;
    int fd = memfd_create("bmpi-heap", MFD_CLOEXEC);
    if (fd < 0)
        return;
    for (size_t len = (size_t)64 << 30; len >= ((size_t)1 << 30); len /= 4) {
        if (ftruncate(fd, (off_t)len) != 0)
            continue;
        void *a = map_aligned(fd, len);
        if (a == MAP_FAILED)
            continue;
        /* glibc's blocks would get huge pages here, and shmem gets them
         * only where asked for */
        if (thp == BMPI_SHM_HEAP_THP_ASK)
            madvise(a, len, MADV_HUGEPAGE);
        heap.fd = fd;
        heap.base = heap.top = heap.fresh = a;
        heap.end = heap.base + len;
        heap.state = HEAP_ON;
        pthread_atfork(heap_prepare_fork, heap_parent_fork, heap_child_fork);
        return;
    }
    close(fd);
}

static bool heap_ready_locked(void)
{
    if (heap.state == HEAP_UNINIT)
        heap_init_locked();
    return heap.state == HEAP_ON;
}

void bmpi_shm_heap_info(struct bmpi_shm_heap_info *info)
{
    pthread_mutex_lock(&heap.lock);
    bool on = heap_ready_locked();
    *info = (struct bmpi_shm_heap_info){
        .base = on ? (uintptr_t)heap.base : 0,
        .len = on ? (size_t)(heap.end - heap.base) : 0,
        .pid = getpid(),
        .fd = on ? heap.fd : -1,
    };
    pthread_mutex_unlock(&heap.lock);
}

bool bmpi_shm_heap_owns(const void *p)
{
    return (const char *)p >= heap.base && (const char *)p < heap.end;
}

#if HEAP_REPLACES_MALLOC

/* ---- blocks and bins ----------------------------------------------------- */

static size_t page_up(size_t n) { return (n + HEAP_PAGE - 1) & ~(HEAP_PAGE - 1); }

static struct blk *blk_above(struct blk *b) { return (struct blk *)((char *)b + b->size); }

static struct blk *blk_below(struct blk *b)
{
    return b->prev_size ? (struct blk *)((char *)b - b->prev_size) : NULL;
}

static unsigned bin_of(size_t size)
{
    unsigned k = 63u - (unsigned)__builtin_clzll(size) - 12u; /* a page is bin 0 */
    return k < HEAP_NBINS ? k : HEAP_NBINS - 1;
}

static void bin_insert(struct blk *b)
{
    heap.free_bytes += b->size;
    b->magic = BLK_FREE;
    b->bin = bin_of(b->size);
    b->prev = NULL;
    b->next = heap.bins[b->bin];
    if (b->next)
        b->next->prev = b;
    heap.bins[b->bin] = b;
}

static void bin_remove(struct blk *b)
{
    heap.free_bytes -= b->size;
    if (b->prev)
        b->prev->next = b->next;
    else
        heap.bins[b->bin] = b->next;
    if (b->next)
        b->next->prev = b->prev;
}

/* Tell the block above b (if any) how big b is now. */
static void fix_above(struct blk *b)
{
    if (b != heap.last)
        blk_above(b)->prev_size = b->size;
}

/* Give the pages of [from, to) back; they read as zero afterwards. */
static void release(char *from, char *to)
{
    from = (char *)page_up((uintptr_t)from);
    if (heap.state == HEAP_ON && to > from)
        fallocate(heap.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, from - heap.base,
                  to - from);
}

/* Keep the first `size` bytes of b, return the rest to a bin. */
static void split(struct blk *b, size_t size)
{
    if (b->size - size < HEAP_MIN)
        return;
    struct blk *r = (struct blk *)((char *)b + size);
    r->size = b->size - size;
    r->prev_size = size;
    b->size = size;
    if (heap.last == b)
        heap.last = r;
    fix_above(r);
    bin_insert(r);
}

static struct blk *take_from_bins(size_t size)
{
    for (unsigned k = bin_of(size); k < HEAP_NBINS; k++) {
        for (struct blk *b = heap.bins[k]; b; b = b->next) {
            if (b->size >= size) {
                bin_remove(b);
                split(b, size);
                return b;
            }
        }
    }
    return NULL;
}

static struct blk *take_from_top(size_t size)
{
    if ((size_t)(heap.end - heap.top) < size)
        return NULL;
    struct blk *b = (struct blk *)heap.top;
    b->size = size;
    b->prev_size = heap.last ? heap.last->size : 0;
    heap.top += size;
    heap.last = b;
    return b;
}

static void *blk_alloc_locked(size_t size, bool zero)
{
    struct blk *b = take_from_bins(size);
    bool clean = false, glibc_would_map = false;
    if (!b) {
        b = take_from_top(size);
        if (!b)
            return NULL;
        clean = (char *)b >= heap.fresh;
        glibc_would_map = size > heap.map_threshold;
    }
    b->bin = glibc_would_map;
    heap.used_blocks++;
    heap.used_bytes += b->size;
    if ((char *)b + b->size > heap.fresh)
        heap.fresh = (char *)b + b->size;
    b->magic = BLK_USED;
    if (zero && !clean)
        memset((char *)b + HEAP_HDR, 0, b->size - HEAP_HDR);
    return (char *)b + HEAP_HDR;
}

/* A block that glibc would have mapped by itself goes back at once, and
 * raises the threshold as glibc's free does. */
static void give_back_if_glibc_would(struct blk *b)
{
    if (!b->bin)
        return;
    release((char *)b + HEAP_HDR, (char *)b + b->size);
    if (b->size > heap.map_threshold && b->size <= HEAP_PUNCH_MIN)
        heap.map_threshold = b->size;
}

static void blk_free_locked(struct blk *b)
{
    heap.used_blocks--;
    heap.used_bytes -= b->size;
    give_back_if_glibc_would(b);
    struct blk *up = b == heap.last ? NULL : blk_above(b);
    if (up && up->magic == BLK_FREE) {
        bin_remove(up);
        if (heap.last == up)
            heap.last = b;
        b->size += up->size;
    }
    struct blk *down = blk_below(b);
    if (down && down->magic == BLK_FREE) {
        bin_remove(down);
        if (heap.last == b)
            heap.last = down;
        down->size += b->size;
        b = down;
    }
    if (b == heap.last) {
        heap.top = (char *)b;
        heap.last = blk_below(b);
        b->magic = 0;
        if (heap.state == HEAP_ON && (size_t)(heap.fresh - heap.top) >= 2 * heap.map_threshold) {
            release(heap.top, heap.fresh);
            heap.fresh = (char *)page_up((uintptr_t)heap.top);
        }
        return;
    }
    fix_above(b);
    bin_insert(b);
    if (b->size >= HEAP_PUNCH_MIN)
        release((char *)b + HEAP_HDR, (char *)b + b->size);
}

/* The block that data pointer p belongs to, or NULL for a pointer that
 * this heap never handed out. */
static struct blk *blk_of(void *p)
{
    if ((char *)p < heap.base + HEAP_HDR || (char *)p >= heap.top)
        return NULL;
    struct blk *h = (struct blk *)((char *)p - HEAP_HDR);
    if (h->magic == BLK_SHIM)
        h = (struct blk *)((char *)p - h->size);
    return (char *)h >= heap.base && h->magic == BLK_USED ? h : NULL;
}

static size_t usable(struct blk *b, void *p) { return b->size - (size_t)((char *)p - (char *)b); }

static _Noreturn void bad_pointer(const char *fn, void *p)
{
    fprintf(stderr, "bmpi: %s(%p): not a block of the shared heap, or freed twice\n", fn, p);
    abort();
}

/* ---- the allocator's entry points ------------------------------------------ */

static void *heap_alloc(size_t n, size_t align, bool zero)
{
    size_t extra = align > HEAP_HDR ? align : 0;
    if (n > (size_t)1 << 46)
        return NULL;
    size_t size = page_up(n + HEAP_HDR + extra);
    pthread_mutex_lock(&heap.lock);
    char *p = heap_ready_locked() ? blk_alloc_locked(size, zero) : NULL;
    pthread_mutex_unlock(&heap.lock);
    if (p && extra) {
        char *b = p - HEAP_HDR;
        p = (char *)(((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1));
        struct blk *shim = (struct blk *)(p - HEAP_HDR);
        shim->magic = BLK_SHIM;
        shim->size = (size_t)(p - b);
    }
    return p;
}

void *malloc(size_t n)
{
    void *p = n >= HEAP_MIN ? heap_alloc(n, 0, false) : NULL;
    return p ? p : __libc_malloc(n);
}

void *calloc(size_t n, size_t m)
{
    size_t total;
    if (__builtin_mul_overflow(n, m, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    void *p = total >= HEAP_MIN ? heap_alloc(total, 0, true) : NULL;
    return p ? p : __libc_calloc(n, m);
}

void free(void *p)
{
    if (!bmpi_shm_heap_owns(p)) {
        __libc_free(p);
        return;
    }
    pthread_mutex_lock(&heap.lock);
    struct blk *b = blk_of(p);
    if (!b)
        bad_pointer("free", p);
    blk_free_locked(b);
    pthread_mutex_unlock(&heap.lock);
}

/* Grow b, the top block, in place to size bytes. */
static bool grow_at_top_locked(struct blk *b, size_t size)
{
    if (heap.state != HEAP_ON || b != heap.last || (size_t)(heap.end - (char *)b) < size)
        return false;
    heap.top = (char *)b + size;
    heap.used_bytes += size - b->size;
    b->size = size;
    if (heap.top > heap.fresh)
        heap.fresh = heap.top;
    return true;
}

void *realloc(void *p, size_t n)
{
    if (!bmpi_shm_heap_owns(p))
        return n >= HEAP_MIN && !p ? malloc(n) : __libc_realloc(p, n);
    if (n == 0) {
        free(p);
        return NULL;
    }
    pthread_mutex_lock(&heap.lock);
    struct blk *b = blk_of(p);
    if (!b)
        bad_pointer("realloc", p);
    size_t have = usable(b, p);
    bool fits = n <= have || grow_at_top_locked(b, page_up(n + (size_t)((char *)p - (char *)b)));
    pthread_mutex_unlock(&heap.lock);
    if (fits)
        return p;
    void *q = malloc(n);
    if (q) {
        memcpy(q, p, have);
        free(p);
    }
    return q;
}

void *reallocarray(void *p, size_t n, size_t m)
{
    size_t total;
    if (__builtin_mul_overflow(n, m, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(p, total);
}

static void *aligned(size_t align, size_t n)
{
    void *p = n >= HEAP_MIN && align <= HEAP_MIN ? heap_alloc(n, align, false) : NULL;
    return p ? p : __libc_memalign(align, n);
}

void *memalign(size_t align, size_t n)
{
    return aligned(align, n);
}

void *aligned_alloc(size_t align, size_t n)
{
    return aligned(align, n);
}

int posix_memalign(void **out, size_t align, size_t n)
{
    if (align < sizeof(void *) || (align & (align - 1)))
        return EINVAL;
    int saved = errno;
    void *p = aligned(align, n);
    errno = saved;
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}

/* glibc's version of an allocator function that it exports under no
 * other name, looked up once. */
static void *libc_function(void **cache, const char *name)
{
    void *f = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
    if (!f) {
        f = dlsym(RTLD_NEXT, name);
        __atomic_store_n(cache, f, __ATOMIC_RELEASE);
    }
    return f;
}

size_t malloc_usable_size(void *p)
{
    if (bmpi_shm_heap_owns(p)) {
        pthread_mutex_lock(&heap.lock);
        struct blk *b = blk_of(p);
        size_t n = b ? usable(b, p) : 0;
        pthread_mutex_unlock(&heap.lock);
        return n;
    }
    size_t (*libc_usable)(void *) =
        (size_t (*)(void *))libc_function(&heap.libc_usable_size, "malloc_usable_size");
    return libc_usable ? libc_usable(p) : 0;
}

/* glibc's trim, then every free block's pages and the top's beyond pad;
 * 1 if anything went back, as glibc answers. */
int malloc_trim(size_t pad)
{
    int (*libc_trim)(size_t) = (int (*)(size_t))libc_function(&heap.libc_trim, "malloc_trim");
    int released = libc_trim ? libc_trim(pad) : 0;
    pthread_mutex_lock(&heap.lock);
    if (heap.state == HEAP_ON) {
        for (unsigned k = 0; k < HEAP_NBINS; k++)
            for (struct blk *b = heap.bins[k]; b; b = b->next, released = 1)
                release((char *)b + HEAP_HDR, (char *)b + b->size);
        char *keep = (char *)page_up((uintptr_t)heap.top + pad);
        if (keep < heap.fresh) {
            release(keep, heap.fresh);
            heap.fresh = keep;
            released = 1;
        }
    }
    pthread_mutex_unlock(&heap.lock);
    return released;
}

/* glibc's figures plus the heap's: its blocks in use count as glibc's
 * own mapped blocks (hblks, hblkhd), its free blocks and the top it has
 * not given back as free arena space (arena, ordblks, fordblks, keepcost
 * for the top). */
struct mallinfo2 mallinfo2(void)
{
    struct mallinfo2 (*libc_info)(void) =
        (struct mallinfo2 (*)(void))libc_function(&heap.libc_mallinfo2, "mallinfo2");
    struct mallinfo2 m = libc_info ? libc_info() : (struct mallinfo2){0};
    pthread_mutex_lock(&heap.lock);
    if (heap.state != HEAP_UNINIT) {
        size_t top = heap.fresh > heap.top ? (size_t)(heap.fresh - heap.top) : 0;
        m.hblks += heap.used_blocks;
        m.hblkhd += heap.used_bytes;
        for (unsigned k = 0; k < HEAP_NBINS; k++)
            for (struct blk *b = heap.bins[k]; b; b = b->next)
                m.ordblks++;
        m.arena += heap.free_bytes + top;
        m.fordblks += heap.free_bytes + top;
        m.keepcost += top;
    }
    pthread_mutex_unlock(&heap.lock);
    return m;
}

#endif /* HEAP_REPLACES_MALLOC */
