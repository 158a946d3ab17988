/*
 * verbs_amo: the verbs transport's remote atomics from several processes
 * at once, over libibverbs-emu (run by test/verbs/verbs_emu.sh with
 * LD_PRELOAD). Like verbs_unit it builds the transport's sources and fakes
 * the runtime; here the parent forks nprocs ranks (argument, default 4)
 * that share a mapping for the fake PMIx store and a barrier. Rank 0
 * registers eight 64-bit words; every rank, rank 0 included (over its QP
 * to itself), then goes through these phases, a barrier between each:
 *
 *   A  fetch-and-add of rank+1 to word 0, with fetch, `iters` times. The
 *      old values seen, sorted, must tile [0, final): each is the one
 *      before plus that one's addend, and the final value is the sum.
 *   B  fetch-and-add without fetch, two elements per call (words 1, 2).
 *   C  an increment of word 3 by compare-and-swap: read it (READ, a
 *      fetch-and-add of 0), swap in old+1 where it still holds old, again
 *      until it did.
 *   D  a lock in word 4 taken by compare-and-swap (0 -> rank+1), released
 *      by compare-and-swap (rank+1 -> 0); inside, word 5 is read with
 *      RDMA READ and written back plus one with RDMA WRITE, and the lock
 *      word must still name the holder.
 *
 * Lost updates show in the final values and the tiling; two holders of
 * the lock show in word 5 and in a release that finds another's name. The
 * emulation's BMPI_VERBS_EMU_ATOMIC=racy drops the lock that makes its
 * atomics atomic: this test must then fail (verbs_emu.sh checks that).
 */
#include "config.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/error.h"
#include "runtime/pmix.h"
#include "runtime/world.h"
#include "test/unit/fake_world.h"
#include "transport/verbs/verbs.h"

extern const struct bmpi_tl_ops bmpi_tl_verbs_ops;

#define MAX_PROCS 16
#define ITERS_A 1000
#define ITERS_C 300
#define ITERS_D 200

/* What the ranks share (an anonymous shared mapping made before fork). */
struct shared {
    int nprocs;
    int abort; /* a rank died: the others stop waiting */
    unsigned arrived, generation;
    struct {
        size_t len;
        unsigned char data[128];
    } addr[MAX_PROCS]; /* the fake PMIx store, one key per rank */
    uint64_t base;     /* rank 0's words */
    unsigned char rkey[BMPI_TL_RKEY_MAX];
    size_t rkey_len;
    uint64_t seen[MAX_PROCS][ITERS_A]; /* phase A: old values fetched */
};

/* One rank's state. */
struct rank {
    struct shared *sh;
    struct bmpi_tl tl;
    int me;
    int failures;
    int done_status; /* -1 while the operation runs */
};

static struct shared *the_shared; /* for the fake PMIx functions only */
static int my_rank;

#define CHECK(r, c, ...)                                                                           \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "FAIL rank %d, %s:%d: %s: ", (r)->me, __FILE__, __LINE__, #c);         \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            (r)->failures++;                                                                       \
        }                                                                                          \
    } while (0)

int bmpi_err_comm(MPI_Comm comm, int errclass, const char *fn, const char *fmt, ...)
{
    (void)comm;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "rank %d: error reported by %s: ", my_rank, fn);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return errclass;
}

int bmpi_pmix_put(const char *key, const void *data, size_t len)
{
    if (strcmp(key, VERBS_PMIX_KEY) || len > sizeof(the_shared->addr[0].data))
        return MPI_ERR_INTERN;
    memcpy(the_shared->addr[my_rank].data, data, len);
    the_shared->addr[my_rank].len = len;
    return BMPI_OK;
}

int bmpi_pmix_get(int rank, const char *key, void **data, size_t *len)
{
    if (strcmp(key, VERBS_PMIX_KEY) || rank < 0 || rank >= the_shared->nprocs ||
        !the_shared->addr[rank].len)
        return MPI_ERR_INTERN;
    *len = the_shared->addr[rank].len;
    *data = malloc(*len);
    memcpy(*data, the_shared->addr[rank].data, *len);
    return BMPI_OK;
}

void bmpi_am_deliver(int peer, uint8_t am_id, const void *hdr, size_t hdr_len, const void *payload,
                     size_t len)
{
    (void)hdr, (void)hdr_len, (void)payload, (void)len;
    fprintf(stderr, "FAIL rank %d: an active message (id %u) from rank %d\n", my_rank, am_id, peer);
    exit(1);
}

/* All ranks here, progressing meanwhile (connections are made in
 * progress, on both sides). */
static void barrier(struct rank *r)
{
    struct shared *sh = r->sh;
    unsigned gen = __atomic_load_n(&sh->generation, __ATOMIC_ACQUIRE);
    if (__atomic_add_fetch(&sh->arrived, 1, __ATOMIC_ACQ_REL) == (unsigned)sh->nprocs) {
        __atomic_store_n(&sh->arrived, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&sh->generation, gen + 1, __ATOMIC_RELEASE);
        return;
    }
    while (__atomic_load_n(&sh->generation, __ATOMIC_ACQUIRE) == gen) {
        if (__atomic_load_n(&sh->abort, __ATOMIC_RELAXED))
            exit(2);
        if (r->tl.priv)
            r->tl.ops->progress(&r->tl);
    }
}

static void done_cb(void *ctx, int status)
{
    struct rank *r = ctx;
    r->done_status = status;
}

/* Run op on rank 0's word `word` and wait for it; false on failure. */
static bool amo(struct rank *r, enum bmpi_tl_amo_op op, size_t word, size_t count,
                const uint64_t *operand, const uint64_t *compare, uint64_t *result)
{
    struct bmpi_tl_amo a = {.op = op,
                            .type = BMPI_TL_AMO_UINT64,
                            .count = count,
                            .operand = operand,
                            .compare = compare,
                            .result = result,
                            .remote_addr = r->sh->base + word * sizeof(uint64_t),
                            .rkey = r->sh->rkey,
                            .rkey_len = r->sh->rkey_len};
    r->done_status = -1;
    int rc = r->tl.ops->amo(&r->tl, 0, &a, done_cb, r);
    CHECK(r, rc == BMPI_OK, "amo: %s", err_reason);
    if (rc)
        return false;
    while (r->done_status < 0)
        r->tl.ops->progress(&r->tl);
    CHECK(r, r->done_status == BMPI_OK, "amo completed with %d: %s", r->done_status, err_reason);
    return r->done_status == BMPI_OK;
}

/* RDMA READ (get) or WRITE (put) of word 5, waited for. */
static bool rma_word(struct rank *r, bool get, uint64_t *v)
{
    uint64_t raddr = r->sh->base + 5 * sizeof(uint64_t);
    r->done_status = -1;
    int rc = get ? r->tl.ops->get(&r->tl, 0, v, NULL, sizeof(*v), raddr, r->sh->rkey,
                                  r->sh->rkey_len, done_cb, r)
                 : r->tl.ops->put(&r->tl, 0, v, NULL, sizeof(*v), raddr, r->sh->rkey,
                                  r->sh->rkey_len, done_cb, r);
    CHECK(r, rc == BMPI_OK, "%s: %s", get ? "get" : "put", err_reason);
    if (rc)
        return false;
    while (r->done_status < 0)
        r->tl.ops->progress(&r->tl);
    CHECK(r, r->done_status == BMPI_OK, "%s completed with %d: %s", get ? "get" : "put",
          r->done_status, err_reason);
    return r->done_status == BMPI_OK;
}

static void phase_fetch_add(struct rank *r)
{
    uint64_t add = (uint64_t)r->me + 1;
    for (int i = 0; i < ITERS_A; i++) {
        uint64_t old = ~0ull;
        if (!amo(r, BMPI_TL_AMO_SUM, 0, 1, &add, NULL, &old))
            return;
        r->sh->seen[r->me][i] = old;
    }
}

static void phase_add_nofetch(struct rank *r)
{
    uint64_t add[2] = {1, (uint64_t)r->me + 1};
    for (int i = 0; i < ITERS_A; i++)
        if (!amo(r, BMPI_TL_AMO_SUM, 1, 2, add, NULL, NULL))
            return;
}

static void phase_cswap_increment(struct rank *r)
{
    for (int i = 0; i < ITERS_C; i++) {
        uint64_t old, seen;
        if (!amo(r, BMPI_TL_AMO_READ, 3, 1, NULL, NULL, &old))
            return;
        for (;;) {
            uint64_t next = old + 1;
            if (!amo(r, BMPI_TL_AMO_CSWAP, 3, 1, &next, &old, &seen))
                return;
            if (seen == old)
                break;
            old = seen; /* another got there first: try from what it left */
        }
    }
}

static void phase_lock(struct rank *r)
{
    uint64_t mine = (uint64_t)r->me + 1, zero = 0, seen, v;
    int stolen = 0;
    uint64_t thief = 0;
    for (int i = 0; i < ITERS_D; i++) {
        do {
            if (!amo(r, BMPI_TL_AMO_CSWAP, 4, 1, &mine, &zero, &seen))
                return;
        } while (seen != 0);
        if (!rma_word(r, true, &v))
            return;
        v++;
        if (!rma_word(r, false, &v))
            return;
        if (!amo(r, BMPI_TL_AMO_CSWAP, 4, 1, &zero, &mine, &seen))
            return;
        if (seen != mine && !stolen++)
            thief = seen;
    }
    CHECK(r, !stolen,
          "compare-and-swap lock did not exclude: %d times the lock word did not hold %llu "
          "(this rank's name) when it released it, first %llu",
          stolen, (unsigned long long)mine, (unsigned long long)thief);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Phase A: the old values, sorted, each the previous plus its addend. An
 * addend is known from the value's rank, so keep (value, addend) pairs. */
static void check_tiling(struct rank *r, uint64_t final)
{
    int n = r->sh->nprocs * ITERS_A;
    uint64_t *v = malloc((size_t)n * 2 * sizeof(uint64_t));
    for (int p = 0, k = 0; p < r->sh->nprocs; p++)
        for (int i = 0; i < ITERS_A; i++, k++) {
            v[2 * k] = r->sh->seen[p][i];
            v[2 * k + 1] = (uint64_t)p + 1;
        }
    qsort(v, (size_t)n, 2 * sizeof(uint64_t), cmp_u64);
    uint64_t expect = 0;
    int bad = 0;
    for (int k = 0; k < n; k++) {
        if (v[2 * k] != expect && bad++ < 3)
            fprintf(stderr, "rank 0: fetch-and-add %d of %d saw %llu, expected %llu\n", k, n,
                    (unsigned long long)v[2 * k], (unsigned long long)expect);
        expect = v[2 * k] + v[2 * k + 1];
    }
    CHECK(r, !bad && expect == final,
          "fetch-and-add not atomic: %d old values out of place, they sum to %llu, the word "
          "holds %llu",
          bad, (unsigned long long)expect, (unsigned long long)final);
    free(v);
}

static void check_words(struct rank *r, const uint64_t *w)
{
    uint64_t n = (uint64_t)r->sh->nprocs, sum = n * (n + 1) / 2;
    CHECK(r, w[0] == ITERS_A * sum, "fetch-and-add not atomic: word 0 is %llu, expected %llu",
          (unsigned long long)w[0], (unsigned long long)(ITERS_A * sum));
    check_tiling(r, w[0]);
    CHECK(r, w[1] == ITERS_A * n && w[2] == ITERS_A * sum,
          "fetch-and-add (no fetch, 2 elements) not atomic: words 1, 2 are %llu, %llu, expected "
          "%llu, %llu",
          (unsigned long long)w[1], (unsigned long long)w[2], (unsigned long long)(ITERS_A * n),
          (unsigned long long)(ITERS_A * sum));
    CHECK(r, w[3] == ITERS_C * n, "compare-and-swap not atomic: word 3 is %llu, expected %llu",
          (unsigned long long)w[3], (unsigned long long)(ITERS_C * n));
    CHECK(r, w[4] == 0 && w[5] == ITERS_D * n,
          "compare-and-swap lock did not exclude: lock word %llu, counter %llu, expected 0, %llu",
          (unsigned long long)w[4], (unsigned long long)w[5], (unsigned long long)(ITERS_D * n));
}

static int run_rank(struct shared *sh, int me)
{
    struct rank r = {.sh = sh, .me = me, .tl = {.ops = &bmpi_tl_verbs_ops}};
    my_rank = me;
    bmpi_world.rank = me;
    bmpi_world.size = sh->nprocs;
    bmpi_world.local_size = sh->nprocs;
    bmpi_world.verbose = getenv("BMPI_VERBOSE") ? atoi(getenv("BMPI_VERBOSE")) : 0;
    char why[256];
    if (r.tl.ops->query(why, sizeof why) != BMPI_OK) {
        printf("SKIP: verbs unusable: %s\n", why);
        return 77;
    }
    int rc = r.tl.ops->open(&r.tl);
    CHECK(&r, rc == BMPI_OK, "open: %s", err_reason);
    if (rc)
        return 1;
    CHECK(&r, (r.tl.caps.flags & BMPI_TL_RMA_AMO) && (r.tl.caps.flags & BMPI_TL_RMA_REMOTE_DONE),
          "caps 0x%x: no native atomics or remote completion", r.tl.caps.flags);
    uint64_t *words = NULL;
    void *memh = NULL;
    if (me == 0) {
        if (posix_memalign((void **)&words, 64, 8 * sizeof(uint64_t)))
            return 1;
        memset(words, 0, 8 * sizeof(uint64_t));
        rc = r.tl.ops->mem_reg(&r.tl, words, 8 * sizeof(uint64_t), &memh);
        CHECK(&r, rc == BMPI_OK, "mem_reg: %s", err_reason);
        sh->rkey_len = sizeof(sh->rkey);
        if (rc || r.tl.ops->rkey_pack(&r.tl, memh, sh->rkey, &sh->rkey_len) != BMPI_OK)
            return 1;
        sh->base = (uintptr_t)words;
    }
    barrier(&r); /* the "PMIx fence": every address published */
    int *peers = malloc((size_t)sh->nprocs * sizeof(int));
    bool *reach = malloc((size_t)sh->nprocs * sizeof(bool));
    for (int i = 0; i < sh->nprocs; i++)
        peers[i] = i;
    r.tl.ops->add_peers(&r.tl, peers, sh->nprocs, reach, NULL);
    CHECK(&r, reach[0], "rank 0 not reachable");
    free(peers);
    free(reach);
    void (*phases[])(struct rank *) = {phase_fetch_add, phase_add_nofetch, phase_cswap_increment,
                                       phase_lock};
    for (size_t i = 0; i < sizeof(phases) / sizeof(phases[0]); i++) {
        barrier(&r);
        if (!r.failures)
            phases[i](&r);
    }
    barrier(&r); /* every operation completed (remotely) */
    if (me == 0)
        check_words(&r, words);
    barrier(&r); /* nobody closes a QP another still uses */
    if (memh)
        r.tl.ops->mem_dereg(&r.tl, memh);
    r.tl.ops->close(&r.tl);
    free(words);
    return r.failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    int nprocs = argc > 1 ? atoi(argv[1]) : 4;
    if (nprocs < 1 || nprocs > MAX_PROCS) {
        fprintf(stderr, "usage: verbs_amo [nprocs, 1..%d]\n", MAX_PROCS);
        return 2;
    }
    struct shared *sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
                             MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    sh->nprocs = nprocs;
    the_shared = sh;
    pid_t pid[MAX_PROCS];
    for (int i = 0; i < nprocs; i++) {
        pid[i] = fork();
        if (pid[i] == 0)
            _exit(run_rank(sh, i));
        if (pid[i] < 0) {
            perror("fork");
            __atomic_store_n(&sh->abort, 1, __ATOMIC_RELAXED);
            nprocs = i;
        }
    }
    int result = 0;
    for (int left = nprocs; left > 0; left--) {
        int st;
        pid_t p = wait(&st);
        if (p < 0)
            break;
        int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        if (code == 77 && !result)
            result = 77;
        else if (code != 0 && code != 77) {
            if (code != 2) /* 2: stopped because another failed */
                fprintf(stderr, "verbs_amo: a rank (pid %d) ended with %d\n", (int)p, code);
            __atomic_store_n(&sh->abort, 1, __ATOMIC_RELAXED);
            result = 1;
        }
    }
    if (result == 0)
        printf("ok: verbs_amo, %d processes\n", sh->nprocs);
    return result;
}
