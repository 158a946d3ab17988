/*
 * ofi_amo: the ofi transport's remote atomics, called through the
 * transport contract (amo_native, amo, put) by ranks of a real job under
 * BMPI_TRANSPORT=ofi; run by test/ofi/ofi_amo.sh. Links the core library
 * for bmpi_world and the progress engine; MPI only sets up and checks.
 *
 *   ofi_amo native [N]   the provider has atomics: every rank storms rank
 *                        0's memory with N fetch-adds (the old values seen,
 *                        all ranks together, are exactly 0 .. size*N-1),
 *                        N adds without a result, a bitwise or over more
 *                        elements than one provider call takes, a compare
 *                        and swap only one rank wins, swaps whose old
 *                        values account for every value written, reads;
 *                        and N puts; rank 0 finds every operation in its
 *                        memory once all ranks had their done callbacks
 *                        (and their puts' flush, where a put's done is
 *                        local).
 *   ofi_amo none         the provider has none (or RMA is off): no
 *                        BMPI_TL_RMA_AMO, amo_native false for every pair,
 *                        amo refused.
 *   ofi_amo auto [N]     native if the transport says BMPI_TL_RMA_AMO,
 *                        none otherwise (for providers whose atomics
 *                        depend on the libfabric release).
 */
#include "config.h"

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/progress.h"
#include "runtime/world.h"
#include "transport/transport.h"

#define WINDOW 32   /* operations in flight per rank */
#define OR_COUNT 5000 /* more uint32 elements than one call carries (shm: 1024, rxm: 4072) */

static int rank, size, failures;

#define CHECK(c, ...)                                                                              \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "FAIL rank %d %s:%d: %s: ", rank, __FILE__, __LINE__, #c);             \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

/* Rank 0's memory the others work on. */
struct target {
    int64_t fadd;             /* fetch-add storm */
    int64_t add;              /* adds without a result */
    int64_t cas;              /* compare and swap */
    int64_t swap;             /* swaps */
    int64_t put[64];          /* one slot per rank, written with put */
    uint32_t bits[OR_COUNT];  /* bitwise or over many elements */
};

struct where {
    uint64_t addr;
    size_t rkey_len;
    unsigned char rkey[BMPI_TL_RKEY_MAX];
};

struct counter {
    int pending;
    int errors;
};

static void done_cb(void *ctx, int status)
{
    struct counter *c = ctx;
    c->pending--;
    if (status != 0)
        c->errors++;
}

static void wait_below(struct counter *c, int limit)
{
    while (c->pending > limit)
        bmpi_progress();
}

static struct bmpi_tl *ofi_tl(void)
{
    struct bmpi_tl *tl = bmpi_world.peers[0].tl;
    if (!tl || strcmp(tl->caps.name, "ofi") != 0) {
        fprintf(stderr, "rank %d: rank 0 is not reached through ofi (%s)\n", rank, tl ? tl->caps.name : "none");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return tl;
}

/* Issue one amo, waiting while WINDOW are in flight; aborts the job on a
 * synchronous error (the transport's words are in bmpi_err_reason). */
static void issue(struct bmpi_tl *tl, const struct bmpi_tl_amo *a, struct counter *c)
{
    wait_below(c, WINDOW - 1);
    c->pending++;
    int rc = tl->ops->amo(tl, 0, a, done_cb, c);
    if (rc != 0) {
        fprintf(stderr, "rank %d: amo: error %d\n", rank, rc);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static struct bmpi_tl_amo amo_at(const struct where *w, size_t offset, enum bmpi_tl_amo_op op,
                                 enum bmpi_tl_amo_type type)
{
    return (struct bmpi_tl_amo){.op = op, .type = type, .count = 1, .remote_addr = w->addr + offset,
                                .rkey = w->rkey, .rkey_len = w->rkey_len};
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static void fetch_add_storm(struct bmpi_tl *tl, const struct where *w, int n)
{
    int64_t one = 1, *old = malloc((size_t)n * sizeof(*old));
    struct counter c = {0, 0};
    struct bmpi_tl_amo a = amo_at(w, offsetof(struct target, fadd), BMPI_TL_AMO_SUM, BMPI_TL_AMO_INT64);
    a.operand = &one;
    for (int i = 0; i < n; i++) {
        a.result = &old[i];
        issue(tl, &a, &c);
    }
    wait_below(&c, 0);
    CHECK(c.errors == 0, "%d fetch-adds failed", c.errors);
    int64_t *all = rank == 0 ? malloc((size_t)n * (size_t)size * sizeof(*all)) : NULL;
    MPI_Gather(old, n, MPI_INT64_T, all, n, MPI_INT64_T, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        qsort(all, (size_t)n * (size_t)size, sizeof(*all), cmp_i64);
        for (int64_t i = 0; i < (int64_t)n * size; i++)
            if (all[i] != i) {
                CHECK(all[i] == i, "sorted old values: [%lld] = %lld", (long long)i, (long long)all[i]);
                break;
            }
    }
    free(all);
    free(old);
}

static void add_storm(struct bmpi_tl *tl, const struct where *w, int n)
{
    int64_t mine = rank + 1;
    struct counter c = {0, 0};
    struct bmpi_tl_amo a = amo_at(w, offsetof(struct target, add), BMPI_TL_AMO_SUM, BMPI_TL_AMO_INT64);
    a.operand = &mine;
    for (int i = 0; i < n; i++)
        issue(tl, &a, &c);
    wait_below(&c, 0);
    CHECK(c.errors == 0, "%d adds failed", c.errors);
}

static void or_many(struct bmpi_tl *tl, const struct where *w)
{
    uint32_t *mine = malloc(OR_COUNT * sizeof(*mine));
    for (int i = 0; i < OR_COUNT; i++)
        mine[i] = 1u << ((rank + i) % 32);
    struct counter c = {0, 0};
    struct bmpi_tl_amo a = amo_at(w, offsetof(struct target, bits), BMPI_TL_AMO_BOR, BMPI_TL_AMO_UINT32);
    a.count = OR_COUNT;
    a.operand = mine;
    issue(tl, &a, &c);
    memset(mine, 0xff, OR_COUNT * sizeof(*mine)); /* the transport copied it */
    wait_below(&c, 0);
    CHECK(c.errors == 0, "the bitwise or failed");
    free(mine);
}

static void cswap_and_swap(struct bmpi_tl *tl, const struct where *w)
{
    int64_t expect = -1, mine = rank, cas_old = 0, swap_in = 100 + rank, swap_old = 0;
    struct counter c = {0, 0};
    struct bmpi_tl_amo a = amo_at(w, offsetof(struct target, cas), BMPI_TL_AMO_CSWAP, BMPI_TL_AMO_INT64);
    a.operand = &mine;
    a.compare = &expect;
    a.result = &cas_old;
    issue(tl, &a, &c);
    a = amo_at(w, offsetof(struct target, swap), BMPI_TL_AMO_SWAP, BMPI_TL_AMO_INT64);
    a.operand = &swap_in;
    a.result = &swap_old;
    issue(tl, &a, &c);
    wait_below(&c, 0);
    CHECK(c.errors == 0, "%d of compare-and-swap and swap failed", c.errors);
    int64_t cas_all[64], swap_all[65];
    MPI_Gather(&cas_old, 1, MPI_INT64_T, cas_all, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
    MPI_Gather(&swap_old, 1, MPI_INT64_T, swap_all, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
    if (rank != 0)
        return;
    int winners = 0;
    for (int r = 0; r < size; r++)
        winners += cas_all[r] == -1;
    CHECK(winners == 1, "%d ranks saw the initial value in compare-and-swap", winners);
    /* The others saw what the winner wrote, which is the final value. */
    const struct target *t = (const struct target *)(uintptr_t)w->addr;
    CHECK(t->cas >= 0 && t->cas < size && cas_all[t->cas] == -1, "final value %lld", (long long)t->cas);
    for (int r = 0; r < size; r++)
        CHECK(cas_all[r] == -1 || cas_all[r] == t->cas, "rank %d saw %lld", r, (long long)cas_all[r]);
    /* Old values of the swaps and the last value: the initial one (7)
     * and each rank's, each once. */
    swap_all[size] = t->swap;
    qsort(swap_all, (size_t)size + 1, sizeof(int64_t), cmp_i64);
    CHECK(swap_all[0] == 7, "smallest %lld", (long long)swap_all[0]);
    for (int r = 0; r < size; r++)
        CHECK(swap_all[r + 1] == 100 + r, "swapped value %d: %lld", r + 1, (long long)swap_all[r + 1]);
}

/* Every rank reads the fetch-add counter (READ fetches only) and writes
 * its slot with put; both complete remotely when done. */
static void read_and_put(struct bmpi_tl *tl, const struct where *w, int n)
{
    int64_t seen = -1, zero = 0;
    struct counter c = {0, 0};
    struct bmpi_tl_amo a = amo_at(w, offsetof(struct target, fadd), BMPI_TL_AMO_READ, BMPI_TL_AMO_INT64);
    a.operand = &zero;
    a.result = &seen;
    if (tl->ops->amo_native(tl, 0, BMPI_TL_AMO_READ, BMPI_TL_AMO_INT64, true)) {
        issue(tl, &a, &c);
        wait_below(&c, 0);
        CHECK(seen == (int64_t)n * size, "read %lld, expected %lld", (long long)seen, (long long)n * size);
    }
    int64_t value = 1000 + rank;
    uint64_t slot = w->addr + offsetof(struct target, put) + (uint64_t)rank * sizeof(int64_t);
    for (int i = 0; i < n; i++) {
        wait_below(&c, WINDOW - 1);
        c.pending++;
        int rc = tl->ops->put(tl, 0, &value, NULL, sizeof(value), slot, w->rkey, w->rkey_len, done_cb, &c);
        CHECK(rc == 0, "put: %d", rc);
        if (rc) {
            c.pending--;
            break;
        }
    }
    wait_below(&c, 0);
    /* where a put's done is local (docs/ofi.md, "Completion") */
    if (!(tl->caps.flags & BMPI_TL_RMA_REMOTE_DONE)) {
        c.pending++;
        int rc = tl->ops->flush(tl, 0, done_cb, &c);
        CHECK(rc == 0, "flush: %d", rc);
        if (rc)
            c.pending--;
        wait_below(&c, 0);
    }
    CHECK(c.errors == 0, "%d of the read, puts and flush failed", c.errors);
}

static void check_final(const struct where *w, int n)
{
    const struct target *t = (const struct target *)(uintptr_t)w->addr;
    int64_t add = (int64_t)n * size * (size + 1) / 2;
    CHECK(t->fadd == (int64_t)n * size, "fetch-add counter %lld, expected %lld", (long long)t->fadd,
          (long long)n * size);
    CHECK(t->add == add, "add counter %lld, expected %lld", (long long)t->add, (long long)add);
    for (int r = 0; r < size; r++)
        CHECK(t->put[r] == 1000 + r, "put slot %d: %lld", r, (long long)t->put[r]);
    for (int i = 0; i < OR_COUNT; i++) {
        uint32_t want = 0;
        for (int r = 0; r < size; r++)
            want |= 1u << ((r + i) % 32);
        if (t->bits[i] != want) {
            CHECK(t->bits[i] == want, "bits[%d] = %#x, expected %#x", i, t->bits[i], want);
            break;
        }
    }
}

static void run_native(struct bmpi_tl *tl, int n)
{
    unsigned need = BMPI_TL_RMA_AMO | BMPI_TL_RMA_PUT;
    CHECK((tl->caps.flags & need) == need, "flags %#x", tl->caps.flags);
    CHECK(tl->ops->amo_native(tl, 0, BMPI_TL_AMO_SUM, BMPI_TL_AMO_INT64, true), "no fetch-add on int64");
    CHECK(tl->ops->amo_native(tl, 0, BMPI_TL_AMO_SUM, BMPI_TL_AMO_INT64, false), "no add on int64");
    CHECK(tl->ops->amo_native(tl, 0, BMPI_TL_AMO_BOR, BMPI_TL_AMO_UINT32, false), "no or on uint32");
    CHECK(tl->ops->amo_native(tl, 0, BMPI_TL_AMO_CSWAP, BMPI_TL_AMO_INT64, true), "no compare-and-swap");
    CHECK(tl->ops->amo_native(tl, 0, BMPI_TL_AMO_SWAP, BMPI_TL_AMO_INT64, true), "no swap");
    CHECK(!tl->ops->amo_native(tl, 0, BMPI_TL_AMO_READ, BMPI_TL_AMO_INT64, false), "a read without result");
    CHECK(!tl->ops->amo_native(tl, 0, BMPI_TL_AMO_BOR, BMPI_TL_AMO_DOUBLE, false), "a bitwise or on doubles");
    if (failures)
        return;

    struct target *t = NULL;
    void *memh = NULL;
    struct where w;
    memset(&w, 0, sizeof(w));
    if (rank == 0) {
        t = calloc(1, sizeof(*t));
        t->cas = -1;
        t->swap = 7;
        w.addr = (uintptr_t)t;
        w.rkey_len = sizeof(w.rkey);
        if (tl->ops->mem_reg(tl, t, sizeof(*t), &memh) || tl->ops->rkey_pack(tl, memh, w.rkey, &w.rkey_len)) {
            fprintf(stderr, "rank 0: registering the target failed\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    MPI_Bcast(&w, sizeof(w), MPI_BYTE, 0, MPI_COMM_WORLD);
    fetch_add_storm(tl, &w, n);
    add_storm(tl, &w, n);
    or_many(tl, &w);
    cswap_and_swap(tl, &w);
    MPI_Barrier(MPI_COMM_WORLD); /* every fetch-add is done */
    read_and_put(tl, &w, n);
    /* Every operation's done (and the puts' flush) came before this
     * barrier, and they mean remote completion: rank 0 sees all of them in
     * its memory. */
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        check_final(&w, n);
        tl->ops->mem_dereg(tl, memh);
        free(t);
    }
}

static void run_none(struct bmpi_tl *tl)
{
    CHECK(!(tl->caps.flags & BMPI_TL_RMA_AMO), "flags %#x", tl->caps.flags);
    for (int fetch = 0; fetch < 2; fetch++)
        for (int op = 0; op < BMPI_TL_AMO_NOPS; op++)
            for (int type = 0; type < BMPI_TL_AMO_NTYPES; type++)
                CHECK(!tl->ops->amo_native(tl, 0, (enum bmpi_tl_amo_op)op, (enum bmpi_tl_amo_type)type, fetch),
                      "op %d type %d fetch %d", op, type, fetch);
    int64_t one = 1, old;
    unsigned char rkey[16] = {0};
    struct counter c = {1, 0};
    struct bmpi_tl_amo a = {.op = BMPI_TL_AMO_SUM, .type = BMPI_TL_AMO_INT64, .count = 1, .operand = &one,
                            .result = &old, .remote_addr = 4096, .rkey = rkey, .rkey_len = sizeof(rkey)};
    CHECK(tl->ops->amo(tl, 0, &a, done_cb, &c) == MPI_ERR_INTERN, "amo of a pair not native");
    CHECK(c.pending == 1, "a refused amo completed");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2 || size > 64) {
        fprintf(stderr, "usage: ofi_amo native|none [N], at most 64 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    struct bmpi_tl *tl = ofi_tl();
    int n = argc > 2 ? atoi(argv[2]) : 2000;
    const char *mode = argv[1];
    if (strcmp(mode, "auto") == 0)
        mode = (tl->caps.flags & BMPI_TL_RMA_AMO) ? "native" : "none";
    if (strcmp(mode, "native") == 0)
        run_native(tl, n);
    else
        run_none(tl);
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s: %s over ofi, %d ranks\n", total ? "FAIL" : "ok",
               strcmp(mode, "native") == 0 ? "native atomics" : "no native atomics", size);
    MPI_Finalize();
    return total ? 1 : 0;
}
