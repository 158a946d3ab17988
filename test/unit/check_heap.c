/*
 * Unit test of the shared heap (transport/shm/heap.c) and of the mapping
 * of a peer's heap (transport/shm/peer_heap.c).
 *
 * The test program links heap.c itself, so its malloc is the heap's. Check
 * runs every test in a child of its own that starts with no heap (the
 * runner itself makes no large block), so each test sees a fresh one.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/error.h"
#include "runtime/world.h"
#include "transport/shm/heap.h"

#define KIB ((size_t)1 << 10)
#define MIB ((size_t)1 << 20)

/* segment.c names its files after it; peer_heap.c uses none of those. */
struct bmpi_world bmpi_world;

/* peer_heap.c reports CMA failures through this; the test needs no more. */
int bmpi_err_set(int errclass, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return errclass;
}

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(seed * 131u + i * 7u);
}

static size_t first_mismatch(const unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != (unsigned char)(seed * 131u + i * 7u))
            return i;
    return SIZE_MAX;
}

START_TEST(small_blocks_stay_with_glibc)
{
    void *small = malloc(64 * KIB - 1), *large = malloc(64 * KIB);
    ck_assert_ptr_nonnull(small);
    ck_assert_ptr_nonnull(large);
    ck_assert(!bmpi_shm_heap_owns(small));
    ck_assert(bmpi_shm_heap_owns(large));
    ck_assert_uint_eq((uintptr_t)large % 64, 0);
    ck_assert_uint_ge(malloc_usable_size(large), 64 * KIB);
    ck_assert_uint_ge(malloc_usable_size(small), 64 * KIB - 1);
    fill(large, 64 * KIB, 1);
    ck_assert_uint_eq(first_mismatch(large, 64 * KIB, 1), SIZE_MAX);
    free(small);
    free(large);
    free(NULL);
}
END_TEST

START_TEST(heap_off_by_environment)
{
    setenv("BMPI_SHM_HEAP", "0", 1);
    void *large = malloc(4 * MIB);
    ck_assert_ptr_nonnull(large);
    ck_assert(!bmpi_shm_heap_owns(large));
    struct bmpi_shm_heap_info info;
    bmpi_shm_heap_info(&info);
    ck_assert_uint_eq(info.len, 0);
    free(large);
}
END_TEST

START_TEST(calloc_zeroes_a_reused_block)
{
    size_t n = 3 * MIB;
    unsigned char *a = malloc(n), *guard = malloc(64 * KIB);
    memset(a, 0xa5, n);
    free(a);
    unsigned char *b = calloc(n / 8, 8);
    ck_assert_ptr_eq(b, a); /* the freed block, not fresh pages */
    for (size_t i = 0; i < n; i++)
        ck_assert_uint_eq(b[i], 0);
    volatile size_t huge = SIZE_MAX / 2; /* volatile: gcc refuses a constant overflow */
    ck_assert_ptr_null(calloc(huge, 4));
    free(b);
    free(guard);
}
END_TEST

START_TEST(freed_neighbours_merge)
{
    size_t n = MIB;
    char *a = malloc(n), *b = malloc(n), *c = malloc(n), *guard = malloc(n);
    ck_assert(a < b && b < c && c < guard);
    free(b);
    free(a);
    free(c);
    char *all = malloc(3 * n); /* fits only in a, b and c merged */
    ck_assert_ptr_eq(all, a);
    free(all);
    free(guard);
    /* With everything freed the top is back at the start. */
    ck_assert_ptr_eq(malloc(n), a);
}
END_TEST

START_TEST(realloc_keeps_the_contents)
{
    unsigned char *p = malloc(100 * KIB);
    fill(p, 100 * KIB, 3);
    unsigned char *q = realloc(p, 5 * MIB); /* the top block grows in place */
    ck_assert_ptr_eq(q, p);
    ck_assert_uint_eq(first_mismatch(q, 100 * KIB, 3), SIZE_MAX);
    fill(q, 5 * MIB, 4);
    unsigned char *guard = malloc(64 * KIB);
    unsigned char *r = realloc(q, 9 * MIB); /* not on top any more: moves */
    ck_assert_ptr_ne(r, q);
    ck_assert_uint_eq(first_mismatch(r, 5 * MIB, 4), SIZE_MAX);
    uintptr_t before = (uintptr_t)r;
    r = realloc(r, MIB);
    ck_assert_uint_eq((uintptr_t)r, before); /* shrinking stays */
    ck_assert_ptr_null(realloc(r, 0));
    volatile size_t huge = SIZE_MAX / 2;
    ck_assert_ptr_null(reallocarray(guard, huge, 4));
    errno = 0;
    unsigned char *small = realloc(NULL, 10);
    ck_assert(!bmpi_shm_heap_owns(small));
    unsigned char *big = realloc(NULL, 10 * MIB);
    ck_assert(bmpi_shm_heap_owns(big));
    free(small);
    free(big);
    free(guard);
}
END_TEST

START_TEST(aligned_blocks)
{
    size_t aligns[] = {8, 64, 128, 4096, 2 * MIB};
    for (size_t i = 0; i < sizeof aligns / sizeof *aligns; i++) {
        void *p = NULL;
        ck_assert_int_eq(posix_memalign(&p, aligns[i], 3 * MIB + 5), 0);
        ck_assert_uint_eq((uintptr_t)p % aligns[i], 0);
        ck_assert_uint_ge(malloc_usable_size(p), 3 * MIB + 5);
        fill(p, 3 * MIB + 5, (unsigned)i);
        void *q = aligned_alloc(aligns[i], 256 * KIB);
        ck_assert_uint_eq((uintptr_t)q % aligns[i], 0);
        void *r = memalign(aligns[i], 128 * KIB);
        ck_assert_uint_eq((uintptr_t)r % aligns[i], 0);
        ck_assert_uint_eq(first_mismatch(p, 3 * MIB + 5, (unsigned)i), SIZE_MAX);
        free(r);
        free(q);
        free(p);
    }
    void *p = NULL;
    ck_assert_int_eq(posix_memalign(&p, 3 * 64, MIB), EINVAL);
}
END_TEST

/* Random allocations, reallocations and frees of blocks up to 4 MiB,
 * each filled with its own pattern and checked before it goes. */
START_TEST(random_traffic_keeps_every_block)
{
    enum { SLOTS = 64, OPS = 4000 };
    struct {
        unsigned char *p;
        size_t n;
        unsigned seed;
    } s[SLOTS] = {{0}};
    unsigned rng = 12345;
    for (unsigned op = 0; op < OPS; op++) {
        rng = rng * 1103515245u + 12345u;
        unsigned i = (rng >> 8) % SLOTS;
        size_t n = ((size_t)(rng >> 4) * 2654435761u) % (4 * MIB);
        if (s[i].p)
            ck_assert_uint_eq(first_mismatch(s[i].p, s[i].n, s[i].seed), SIZE_MAX);
        if (s[i].p && (rng & 1)) {
            size_t keep = n < s[i].n ? n : s[i].n;
            s[i].p = realloc(s[i].p, n ? n : 1);
            ck_assert_uint_eq(first_mismatch(s[i].p, keep, s[i].seed), SIZE_MAX);
        } else {
            free(s[i].p);
            s[i].p = malloc(n);
        }
        ck_assert_ptr_nonnull(s[i].p);
        s[i].n = n;
        s[i].seed = op;
        fill(s[i].p, n, op);
    }
    for (unsigned i = 0; i < SLOTS; i++) {
        ck_assert_uint_eq(first_mismatch(s[i].p, s[i].n, s[i].seed), SIZE_MAX);
        free(s[i].p);
    }
}
END_TEST

START_TEST(fork_child_gets_a_private_copy)
{
    size_t n = 2 * MIB;
    unsigned char *p = malloc(n);
    memset(p, 'a', n);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int bad = p[0] != 'a' || p[n - 1] != 'a';
        memset(p, 'b', n);
        void *q = malloc(n); /* the child's new blocks come from glibc */
        bad |= bmpi_shm_heap_owns(q);
        free(q);
        free(p);
        _exit(bad);
    }
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    for (size_t i = 0; i < n; i++)
        ck_assert_uint_eq(p[i], 'a');
    free(p);
}
END_TEST

/* A child maps its parent's heap as a peer rank would and both see each
 * other's writes to one block, through memcpy and not through CMA. */
START_TEST(peer_reads_and_writes_the_heap)
{
    size_t n = 4 * MIB;
    unsigned char *p = malloc(n);
    struct bmpi_shm_heap_info info;
    bmpi_shm_heap_info(&info);
    ck_assert_uint_gt(info.len, 0);
    int go[2], done[2];
    ck_assert_int_eq(pipe(go), 0);
    ck_assert_int_eq(pipe(done), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        char why[256] = "", c;
        if (bmpi_shm_peer_heap_attach(&info, why, sizeof why) != 0) {
            fprintf(stderr, "attach: %s\n", why);
            _exit(1);
        }
        if (read(go[0], &c, 1) != 1)
            _exit(2);
        unsigned char *mine = malloc(n);
        if (bmpi_shm_peer_read(info.pid, mine, (uintptr_t)p, n) != 0 ||
            first_mismatch(mine, n, 9) != SIZE_MAX)
            _exit(3); /* the parent's writes after the fork */
        fill(mine, n, 10);
        if (bmpi_shm_peer_write(info.pid, mine, (uintptr_t)p, n) != 0)
            _exit(4);
        bmpi_shm_peer_heap_detach_all();
        _exit(write(done[1], "x", 1) == 1 ? 0 : 5);
    }
    fill(p, n, 9);
    ck_assert_int_eq(write(go[1], "x", 1), 1);
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
    ck_assert_uint_eq(first_mismatch(p, n, 10), SIZE_MAX);
    free(p);
}
END_TEST

START_TEST(peer_without_a_heap_is_refused)
{
    struct bmpi_shm_heap_info none = {.pid = getpid(), .fd = -1};
    char why[256] = "";
    ck_assert_int_ne(bmpi_shm_peer_heap_attach(&none, why, sizeof why), 0);
    ck_assert_ptr_nonnull(strstr(why, "no shared heap"));
    struct bmpi_shm_heap_info gone = {.base = 1 << 20, .len = 1 << 30, .pid = 1, .fd = 999};
    ck_assert_int_ne(bmpi_shm_peer_heap_attach(&gone, why, sizeof why), 0);
    ck_assert_ptr_nonnull(strstr(why, "/proc/1/fd/999"));
}
END_TEST

/* ---- transparent huge pages ---------------------------------------------- */

/* A fake /sys/kernel/mm/transparent_hugepage: the global settings and
 * those of the 2 MiB size (NULL: that file is missing). */
static void write_setting(const char *dir, const char *file, const char *value)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    if (!value) {
        unlink(path);
        return;
    }
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "%s\n", value);
    fclose(f);
}

static void fake_thp(const char *dir, const char *anon, const char *shmem, const char *anon_2m,
                     const char *shmem_2m)
{
    write_setting(dir, "hpage_pmd_size", "2097152");
    write_setting(dir, "enabled", anon);
    write_setting(dir, "shmem_enabled", shmem);
    write_setting(dir, "hugepages-2048kB/enabled", anon_2m);
    write_setting(dir, "hugepages-2048kB/shmem_enabled", shmem_2m);
}

START_TEST(thp_plan_follows_the_kernel_settings)
{
    char dir[] = "/tmp/check_heap_thp.XXXXXX", sub[64];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(sub, sizeof sub, "%s/hugepages-2048kB", dir);
    ck_assert_int_eq(mkdir(sub, 0700), 0);
    const char *madvise = "always [madvise] never", *always = "[always] madvise never";
    const char *anon_never = "always madvise [never]";
    const char *shm_never = "always within_size advise [never] deny force";
    const char *shm_advise = "always within_size [advise] never deny force";
    const char *shm_within = "always [within_size] advise never deny force";
    const char *inherit = "always [inherit] madvise never";
    const char *hugetlb = "glibc.malloc.check=0:glibc.malloc.hugetlb=1";

    fake_thp(dir, madvise, shm_never, NULL, NULL);
    ck_assert_int_eq(bmpi_shm_heap_thp_plan(dir, NULL), BMPI_SHM_HEAP_THP_NONE);
    ck_assert_int_eq(bmpi_shm_heap_thp_plan(dir, hugetlb), BMPI_SHM_HEAP_THP_LOST);
    ck_assert_int_eq(bmpi_shm_heap_thp_plan(dir, "glibc.malloc.hugetlb=0"),
                     BMPI_SHM_HEAP_THP_NONE);
    fake_thp(dir, always, shm_never, inherit, "always inherit within_size advise [never]");
    ck_assert_int_eq(bmpi_shm_heap_thp_plan(dir, NULL), BMPI_SHM_HEAP_THP_LOST);
    fake_thp(dir, always, shm_advise, inherit, NULL);
    ck_assert_int_eq(bmpi_shm_heap_thp_plan(dir, NULL), BMPI_SHM_HEAP_THP_ASK);
    fake_thp(dir, always, shm_within, NULL, NULL);
    ck_assert_int_eq(bmpi_shm_heap_thp_plan(dir, NULL), BMPI_SHM_HEAP_THP_BY_ITSELF);
    /* the 2 MiB size's own settings win over the global ones */
    fake_thp(dir, anon_never, shm_never, always, "always inherit within_size [advise] never");
    ck_assert_int_eq(bmpi_shm_heap_thp_plan(dir, NULL), BMPI_SHM_HEAP_THP_ASK);
    fake_thp(dir, always, shm_advise, "always inherit madvise [never]", NULL);
    ck_assert_int_eq(bmpi_shm_heap_thp_plan(dir, NULL), BMPI_SHM_HEAP_THP_NONE);
    /* glibc's madvise does nothing where THP is off */
    fake_thp(dir, anon_never, shm_never, NULL, NULL);
    ck_assert_int_eq(bmpi_shm_heap_thp_plan(dir, hugetlb), BMPI_SHM_HEAP_THP_NONE);
    ck_assert_int_eq(bmpi_shm_heap_thp_plan("/nonexistent", hugetlb), BMPI_SHM_HEAP_THP_NONE);

    fake_thp(dir, NULL, NULL, NULL, NULL);
    write_setting(dir, "hpage_pmd_size", NULL);
    ck_assert_int_eq(rmdir(sub), 0);
    ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* Whether /proc/self/smaps flags the mapping holding p with VM_HUGEPAGE
 * ("hg" in VmFlags). */
static bool mapping_asks_for_huge_pages(const void *p)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    ck_assert_ptr_nonnull(f);
    char line[512];
    bool inside = false, huge = false;
    while (fgets(line, sizeof line, f)) {
        unsigned long start, end;
        if (sscanf(line, "%lx-%lx ", &start, &end) == 2)
            inside = start <= (uintptr_t)p && (uintptr_t)p < end;
        else if (inside && !strncmp(line, "VmFlags:", 8))
            huge = strstr(line, " hg") != NULL;
    }
    fclose(f);
    return huge;
}

/* With glibc.malloc.hugetlb=1 glibc's large blocks get huge pages wherever
 * THP is not off. The heap must then give its blocks huge pages too, or
 * leave them to glibc. */
START_TEST(blocks_keep_the_huge_pages_glibc_would_give)
{
    const char *tunables = "glibc.malloc.hugetlb=1";
    setenv("GLIBC_TUNABLES", tunables, 1);
    unsetenv("BMPI_SHM_HEAP");
    enum bmpi_shm_heap_thp plan = bmpi_shm_heap_thp_plan(BMPI_SHM_THP_SYSFS, tunables);
    char *p = malloc(8 * MIB);
    ck_assert_ptr_nonnull(p);
    struct bmpi_shm_heap_info info;
    bmpi_shm_heap_info(&info);
    ck_assert_uint_eq(info.base % (2 * MIB), 0);
    ck_assert_msg(bmpi_shm_heap_owns(p) == (plan != BMPI_SHM_HEAP_THP_LOST),
                  "THP plan %d, block %s the heap", (int)plan,
                  bmpi_shm_heap_owns(p) ? "in" : "outside");
    if (plan == BMPI_SHM_HEAP_THP_ASK)
        ck_assert(mapping_asks_for_huge_pages(p));
    free(p);
}
END_TEST

START_TEST(heap_asked_for_by_name_stays_on)
{
    setenv("GLIBC_TUNABLES", "glibc.malloc.hugetlb=1", 1);
    setenv("BMPI_SHM_HEAP", "1", 1);
    char *p = malloc(8 * MIB);
    ck_assert(bmpi_shm_heap_owns(p));
    free(p);
}
END_TEST

START_TEST(double_free_aborts)
{
    void *volatile p = malloc(MIB); /* volatile: gcc may drop a free it can see is doubled */
    void *guard = malloc(MIB);
    free(p);
    free(p);
    free(guard);
}
END_TEST

static Suite *heap_suite(void)
{
    Suite *s = suite_create("heap");
    TCase *tc = tcase_create("heap");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, small_blocks_stay_with_glibc);
    tcase_add_test(tc, heap_off_by_environment);
    tcase_add_test(tc, calloc_zeroes_a_reused_block);
    tcase_add_test(tc, freed_neighbours_merge);
    tcase_add_test(tc, realloc_keeps_the_contents);
    tcase_add_test(tc, aligned_blocks);
    tcase_add_test(tc, random_traffic_keeps_every_block);
    tcase_add_test(tc, fork_child_gets_a_private_copy);
    tcase_add_test(tc, peer_reads_and_writes_the_heap);
    tcase_add_test(tc, peer_without_a_heap_is_refused);
    tcase_add_test(tc, thp_plan_follows_the_kernel_settings);
    tcase_add_test(tc, blocks_keep_the_huge_pages_glibc_would_give);
    tcase_add_test(tc, heap_asked_for_by_name_stays_on);
    tcase_add_test_raise_signal(tc, double_free_aborts, SIGABRT);
    suite_add_tcase(s, tc);
    return s;
}

/* Whether this program's malloc is the heap's: asked in a child, so that
 * the runner starts no heap that its test children would inherit. */
static bool heap_is_the_allocator(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        char *probe = malloc(MIB);
        if (probe)
            probe[0] = 1;
        _exit(bmpi_shm_heap_owns(probe) ? 0 : 1);
    }
    int status;
    return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
           WEXITSTATUS(status) == 0;
}

int main(void)
{
    /* The allocator's tests want the heap on also where the machine's
     * huge-page settings make it stand down by default; the tests of that
     * decision unset this again. */
    setenv("BMPI_SHM_HEAP", "1", 0);
    if (!heap_is_the_allocator()) {
        printf("the shared heap is not this program's allocator (valgrind, or "
               "BMPI_SHM_HEAP=0): skipped\n");
        return 77;
    }
    SRunner *sr = srunner_create(heap_suite());
    srunner_set_fork_status(sr, CK_FORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
