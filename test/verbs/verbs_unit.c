/*
 * verbs_unit: the verbs transport alone, in one process connected to
 * itself (a QP whose peer is itself), over libibverbs-emu (run by
 * test/verbs/verbs_emu.sh with LD_PRELOAD). Like test/unit/check_shm it
 * builds the transport's sources and fakes the runtime pieces they call
 * (bmpi_world, PMIx put/get, bmpi_am_deliver, errors).
 *
 * Checks: the lazy self-connection; credit accounting (exactly rx_depth
 * messages go out before BMPI_TL_EAGAIN when nothing is delivered, and
 * everything arrives in order once progress runs); the registration
 * cache (operations share a registration, nothing survives its last user
 * without ODP, unused ones are kept with it); get and put; a get with a
 * bad key failing with the device's words and breaking the connection;
 * close and open again; a get past the end of a registration failing;
 * the atomics (which pairs are native, fetch-and-add with and without a
 * result, several elements, compare-and-swap that swaps and one that
 * does not, READ, what amo() refuses, a bad key), or with
 * BMPI_VERBS_EMU_ATOMIC=none none of them. test/verbs/verbs_amo runs
 * them from several processes at once.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/error.h"
#include "runtime/pmix.h"
#include "runtime/world.h"
#include "test/unit/fake_world.h"
#include "transport/verbs/verbs.h"

extern const struct bmpi_tl_ops bmpi_tl_verbs_ops;

static int failures;

#define CHECK(c, ...)                                                                              \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #c);                           \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

int bmpi_err_comm(MPI_Comm comm, int errclass, const char *fn, const char *fmt, ...)
{
    (void)comm;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "error reported by %s: ", fn);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return errclass;
}

static unsigned char blob[256];
static size_t blob_len;

int bmpi_pmix_put(const char *key, const void *data, size_t len)
{
    if (strcmp(key, VERBS_PMIX_KEY) || len > sizeof blob)
        return MPI_ERR_INTERN;
    memcpy(blob, data, len);
    blob_len = len;
    return BMPI_OK;
}

int bmpi_pmix_get(int rank, const char *key, void **data, size_t *len)
{
    if (strcmp(key, VERBS_PMIX_KEY) || rank != 0 || !blob_len)
        return MPI_ERR_INTERN;
    *data = malloc(blob_len);
    memcpy(*data, blob, blob_len);
    *len = blob_len;
    return BMPI_OK;
}

static unsigned delivered, out_of_order;

void bmpi_am_deliver(int peer, uint8_t am_id, const void *hdr, size_t hdr_len, const void *payload,
                     size_t len)
{
    unsigned seq;
    (void)peer, (void)payload, (void)len;
    if (am_id != 7 || hdr_len != sizeof seq) {
        out_of_order++;
        return;
    }
    memcpy(&seq, hdr, sizeof seq);
    if (seq != delivered)
        out_of_order++;
    delivered++;
}

static int done_status = -1;
static void done_cb(void *ctx, int status)
{
    (void)ctx;
    done_status = status;
}

static void wait_done(struct bmpi_tl *tl)
{
    done_status = -1;
    for (long i = 0; i < 1000000 && done_status < 0; i++)
        tl->ops->progress(tl);
}

/* The words atomics go to, and the key that covers them. */
struct amo_target {
    struct bmpi_tl *tl;
    uint64_t *words;
    const void *rkey;
    size_t klen;
};

/* An atomic on t's words from index `at`, waited for. */
static int run_amo(const struct amo_target *t, enum bmpi_tl_amo_op op, enum bmpi_tl_amo_type type,
                   size_t at, size_t count, const uint64_t *operand, const uint64_t *compare,
                   uint64_t *result)
{
    struct bmpi_tl_amo a = {.op = op,
                            .type = type,
                            .count = count,
                            .operand = operand,
                            .compare = compare,
                            .result = result,
                            .remote_addr = (uintptr_t)(t->words + at),
                            .rkey = t->rkey,
                            .rkey_len = t->klen};
    int rc = t->tl->ops->amo(t->tl, 0, &a, done_cb, NULL);
    if (rc)
        return rc;
    wait_done(t->tl);
    return done_status;
}

/* Which (op, type, fetch) the device does itself: 64-bit SUM and CSWAP,
 * READ with a fetch; nothing without atomics. */
static void check_amo_native(struct bmpi_tl *tl, bool atomics)
{
    for (int op = 0; op < BMPI_TL_AMO_NOPS; op++)
        for (int type = 0; type < BMPI_TL_AMO_NTYPES; type++)
            for (int fetch = 0; fetch < 2; fetch++) {
                bool want = atomics &&
                            (type == BMPI_TL_AMO_INT64 || type == BMPI_TL_AMO_UINT64) &&
                            (op == BMPI_TL_AMO_SUM || op == BMPI_TL_AMO_CSWAP ||
                             (op == BMPI_TL_AMO_READ && fetch));
                bool got = tl->ops->amo_native(tl, 0, (enum bmpi_tl_amo_op)op,
                                               (enum bmpi_tl_amo_type)type, fetch);
                CHECK(got == want, "amo_native(op %d, type %d, fetch %d) = %d", op, type, fetch,
                      got);
            }
    CHECK(!!(tl->caps.flags & BMPI_TL_RMA_AMO) == atomics, "caps 0x%x, atomics %d",
          tl->caps.flags, atomics);
    CHECK((tl->caps.flags & BMPI_TL_RMA_REMOTE_DONE) && !(tl->caps.flags & BMPI_TL_RMA_ORDERED),
          "caps 0x%x: RC completion is remote, ordering is not promised", tl->caps.flags);
}

static void check_atomics(const struct amo_target *t)
{
    uint64_t *w = t->words;
    uint64_t old[3] = {0}, add[3] = {5, (uint64_t)-3, 1ull << 40};
    w[0] = 100;
    int rc = run_amo(t, BMPI_TL_AMO_SUM, BMPI_TL_AMO_INT64, 0, 1, add, NULL, old);
    CHECK(rc == BMPI_OK && old[0] == 100 && w[0] == 105,
          "fetch-and-add: rc %d, old %llu, now %llu", rc, (unsigned long long)old[0],
          (unsigned long long)w[0]);
    rc = run_amo(t, BMPI_TL_AMO_SUM, BMPI_TL_AMO_INT64, 0, 1, add + 1, NULL, NULL);
    CHECK(rc == BMPI_OK && w[0] == 102, "add without fetch: rc %d, now %llu", rc,
          (unsigned long long)w[0]);
    w[1] = 1, w[2] = 2, w[3] = 3;
    rc = run_amo(t, BMPI_TL_AMO_SUM, BMPI_TL_AMO_UINT64, 1, 3, add, NULL, old);
    CHECK(rc == BMPI_OK && old[0] == 1 && old[1] == 2 && old[2] == 3 && w[1] == 6 &&
              w[2] == (uint64_t)-1 && w[3] == 3 + (1ull << 40),
          "three elements: rc %d, words %llu %llu %llu", rc, (unsigned long long)w[1],
          (unsigned long long)w[2], (unsigned long long)w[3]);
    rc = run_amo(t, BMPI_TL_AMO_SUM, BMPI_TL_AMO_UINT64, 1, 3, add, NULL, NULL);
    CHECK(rc == BMPI_OK && w[1] == 11 && w[3] == 3 + (2ull << 40),
          "three elements without fetch: rc %d", rc);
    uint64_t cmp = 102, swap = 7;
    rc = run_amo(t, BMPI_TL_AMO_CSWAP, BMPI_TL_AMO_INT64, 0, 1, &swap, &cmp, old);
    CHECK(rc == BMPI_OK && old[0] == 102 && w[0] == 7,
          "compare-and-swap: rc %d, old %llu, now %llu", rc, (unsigned long long)old[0],
          (unsigned long long)w[0]);
    swap = 9;
    rc = run_amo(t, BMPI_TL_AMO_CSWAP, BMPI_TL_AMO_INT64, 0, 1, &swap, &cmp, old);
    CHECK(rc == BMPI_OK && old[0] == 7 && w[0] == 7,
          "compare-and-swap that must not swap: rc %d, old %llu, now %llu", rc,
          (unsigned long long)old[0], (unsigned long long)w[0]);
    rc = run_amo(t, BMPI_TL_AMO_READ, BMPI_TL_AMO_UINT64, 0, 1, NULL, NULL, old);
    CHECK(rc == BMPI_OK && old[0] == 7 && w[0] == 7, "READ: rc %d, old %llu, now %llu", rc,
          (unsigned long long)old[0], (unsigned long long)w[0]);
    /* what amo() refuses, before posting anything */
    rc = run_amo(t, BMPI_TL_AMO_MAX, BMPI_TL_AMO_INT64, 0, 1, add, NULL, old);
    CHECK(rc == MPI_ERR_INTERN && strstr(err_reason, "not native"), "MAX: rc %d, \"%s\"", rc,
          err_reason);
    rc = run_amo(t, BMPI_TL_AMO_CSWAP, BMPI_TL_AMO_INT64, 0, 2, add, &cmp, old);
    CHECK(rc == MPI_ERR_INTERN, "compare-and-swap of two elements: rc %d", rc);
    struct amo_target odd = *t;
    odd.words = (uint64_t *)((char *)w + 4);
    rc = run_amo(&odd, BMPI_TL_AMO_SUM, BMPI_TL_AMO_INT64, 0, 1, add, NULL, NULL);
    CHECK(rc == MPI_ERR_INTERN && strstr(err_reason, "8-byte aligned"),
          "misaligned: rc %d, \"%s\"", rc, err_reason);
}

int main(void)
{
    bmpi_world.rank = 0;
    bmpi_world.size = 1;
    bmpi_world.local_size = 1;
    bmpi_world.verbose = getenv("BMPI_VERBOSE") ? atoi(getenv("BMPI_VERBOSE")) : 0;
    setenv("BMPI_VERBS_RX_DEPTH", "4", 1);
    struct bmpi_tl tl = {.ops = &bmpi_tl_verbs_ops};
    char why[256];
    if (tl.ops->query(why, sizeof why) != BMPI_OK) {
        printf("SKIP: verbs unusable: %s\n", why);
        return 77;
    }
    int rc = tl.ops->open(&tl);
    if (rc) {
        fprintf(stderr, "FAIL: open: %s\n", err_reason);
        return 1;
    }
    bool reach = false;
    int peer = 0;
    tl.ops->add_peers(&tl, &peer, 1, &reach, NULL);
    CHECK(reach, "self not reachable");
    struct verbs_state *s = tl.priv;

    /* connection on first use */
    unsigned seq = 0;
    struct iovec iov = {.iov_base = "payload", .iov_len = 7};
    rc = tl.ops->am_send(&tl, 0, 7, &seq, sizeof seq, &iov, 1);
    CHECK(rc == BMPI_TL_EAGAIN, "first am_send returned %d, expected EAGAIN (connecting)", rc);
    for (int i = 0; i < 100000 && s->peers[0].state != VERBS_PEER_READY; i++)
        tl.ops->progress(&tl);
    CHECK(s->peers[0].state == VERBS_PEER_READY, "not connected to itself (state %d)",
          s->peers[0].state);

    /* credits: rx_depth messages, then EAGAIN until something is delivered */
    int sent = 0;
    while (sent < 10) {
        seq = (unsigned)sent;
        rc = tl.ops->am_send(&tl, 0, 7, &seq, sizeof seq, &iov, 1);
        if (rc != BMPI_OK)
            break;
        sent++;
    }
    CHECK(rc == BMPI_TL_EAGAIN && sent == 4, "%d sent before rc %d, expected 4 then EAGAIN",
          sent, rc);
    /* everything arrives, in order, with flow control going round */
    char big[8192];
    memset(big, 'x', sizeof big);
    struct iovec biov = {.iov_base = big, .iov_len = sizeof big};
    for (long spin = 0; sent < 500 && spin < 10000000; spin++) {
        seq = (unsigned)sent;
        rc = tl.ops->am_send(&tl, 0, 7, &seq, sizeof seq, sent % 3 ? &iov : &biov, 1);
        if (rc == BMPI_OK)
            sent++;
        else if (rc != BMPI_TL_EAGAIN)
            break;
        tl.ops->progress(&tl);
    }
    for (long spin = 0; delivered < (unsigned)sent && spin < 1000000; spin++)
        tl.ops->progress(&tl);
    CHECK(sent == 500 && delivered == 500 && !out_of_order,
          "sent %d, delivered %u, %u out of order (last rc %d: %s)", sent, delivered,
          out_of_order, rc, err_reason);

    /* registration cache without ODP: shared while in use, gone after */
    size_t n = 1 << 20;
    char *src = malloc(n), *dst = malloc(n);
    for (size_t i = 0; i < n; i++)
        src[i] = (char)(i * 7);
    void *m1 = NULL, *m2 = NULL;
    uint64_t regs0 = s->mrc.regs;
    CHECK(tl.ops->mem_reg(&tl, src, n, &m1) == BMPI_OK, "mem_reg: %s", err_reason);
    CHECK(tl.ops->mem_reg(&tl, src + 4096, 4096, &m2) == BMPI_OK, "mem_reg: %s", err_reason);
    CHECK(m1 == m2 && s->mrc.regs == regs0 + 1, "two users of one range: %llu registrations",
          (unsigned long long)(s->mrc.regs - regs0));
    tl.ops->mem_dereg(&tl, m2);
    CHECK(s->mrc.count == 1, "registration gone while still used");

    /* get and put through it */
    unsigned char rkey[BMPI_TL_RKEY_MAX];
    size_t klen = sizeof rkey;
    CHECK(tl.ops->rkey_pack(&tl, m1, rkey, &klen) == BMPI_OK, "rkey_pack");
    memset(dst, 0, n);
    rc = tl.ops->get(&tl, 0, dst, NULL, n, (uintptr_t)src, rkey, klen, done_cb, NULL);
    CHECK(rc == BMPI_OK, "get: %s", err_reason);
    wait_done(&tl);
    CHECK(done_status == BMPI_OK && !memcmp(src, dst, n), "get: status %d", done_status);
    memset(dst, 'p', 65536);
    rc = tl.ops->put(&tl, 0, dst, NULL, 65536, (uintptr_t)src + 100, rkey, klen, done_cb, NULL);
    CHECK(rc == BMPI_OK, "put: %s", err_reason);
    wait_done(&tl);
    CHECK(done_status == BMPI_OK && src[100] == 'p' && src[100 + 65535] == 'p' &&
              src[99] == (char)(99 * 7) && src[100 + 65536] == (char)((100 + 65536) * 7),
          "put: status %d", done_status);
    const char *emu_atomic = getenv("BMPI_VERBS_EMU_ATOMIC");
    bool atomics = !emu_atomic || strcmp(emu_atomic, "none") != 0;
    check_amo_native(&tl, atomics);
    if (atomics)
        check_atomics(&(struct amo_target){&tl, (uint64_t *)src, rkey, klen});
    tl.ops->mem_dereg(&tl, m1);
    bool odp = getenv("BMPI_VERBS_ODP") && getenv("BMPI_VERBS_EMU_ODP");
    if (!odp) {
        /* nothing of user memory is kept (local buffers of get/put included) */
        CHECK(s->mrc.count == 0, "%d registrations kept without ODP", s->mrc.count);
    } else {
        CHECK(s->mrc.count > 0, "nothing kept with ODP");
        uint64_t r = s->mrc.regs;
        CHECK(tl.ops->mem_reg(&tl, src, n, &m1) == BMPI_OK, "mem_reg");
        CHECK(s->mrc.regs == r && s->mrc.hits > 0, "no cache hit with ODP");
        tl.ops->mem_dereg(&tl, m1);
    }

    /* a bad key: the get fails with the device's words, and so does what follows */
    CHECK(tl.ops->mem_reg(&tl, src, n, &m1) == BMPI_OK, "mem_reg");
    klen = sizeof rkey;
    tl.ops->rkey_pack(&tl, m1, rkey, &klen);
    rkey[1] ^= 0x5a;
    rc = tl.ops->get(&tl, 0, dst, NULL, 4096, (uintptr_t)src, rkey, klen, done_cb, NULL);
    CHECK(rc == BMPI_OK, "get with a bad key refused at once: %s", err_reason);
    wait_done(&tl);
    CHECK(done_status == MPI_ERR_OTHER && strstr(err_reason, "RDMA READ of 4096 bytes") &&
              strstr(err_reason, "remote access error"),
          "bad key: status %d, reason \"%s\"", done_status, err_reason);
    tl.ops->mem_dereg(&tl, m1);
    for (int i = 0; i < 1000; i++)
        tl.ops->progress(&tl);
    seq = 0;
    rc = tl.ops->am_send(&tl, 0, 7, &seq, sizeof seq, &iov, 1);
    CHECK(rc == MPI_ERR_OTHER && strstr(err_reason, "remote access error"),
          "am_send after the failure: rc %d, \"%s\"", rc, err_reason);

    tl.ops->close(&tl);

    /* Open again (close must have released everything the emulation
     * counts) and read past the end of a registration with a good key:
     * IBV_WC_REM_ACCESS_ERR too. */
    rc = tl.ops->open(&tl);
    CHECK(rc == BMPI_OK, "second open: %s", err_reason);
    if (rc == BMPI_OK) {
        tl.ops->add_peers(&tl, &peer, 1, &reach, NULL);
        s = tl.priv;
        CHECK(tl.ops->mem_reg(&tl, src, n, &m1) == BMPI_OK, "mem_reg");
        struct verbs_mr_entry *e = m1;
        klen = sizeof rkey;
        tl.ops->rkey_pack(&tl, m1, rkey, &klen);
        rc = tl.ops->get(&tl, 0, dst, NULL, 8192, (uint64_t)(e->base + e->len - 4096), rkey, klen,
                         done_cb, NULL);
        CHECK(rc == BMPI_OK, "get past the end refused at once: %s", err_reason);
        wait_done(&tl);
        CHECK(done_status == MPI_ERR_OTHER && strstr(err_reason, "remote access error"),
              "past the end: status %d, reason \"%s\"", done_status, err_reason);
        tl.ops->mem_dereg(&tl, m1);
        tl.ops->close(&tl);
    }

    /* An atomic with a bad key fails with the device's words. */
    rc = atomics ? tl.ops->open(&tl) : MPI_ERR_OTHER;
    CHECK(!atomics || rc == BMPI_OK, "third open: %s", err_reason);
    if (rc == BMPI_OK) {
        tl.ops->add_peers(&tl, &peer, 1, &reach, NULL);
        CHECK(tl.ops->mem_reg(&tl, src, n, &m1) == BMPI_OK, "mem_reg");
        klen = sizeof rkey;
        tl.ops->rkey_pack(&tl, m1, rkey, &klen);
        rkey[1] ^= 0x5a;
        uint64_t add = 1, old;
        rc = run_amo(&(struct amo_target){&tl, (uint64_t *)src, rkey, klen}, BMPI_TL_AMO_SUM,
                     BMPI_TL_AMO_INT64, 0, 1, &add, NULL, &old);
        CHECK(rc == MPI_ERR_OTHER &&
                  strstr(err_reason, "ATOMIC FETCH AND ADD of 8 bytes to rank 0 failed") &&
                  strstr(err_reason, "remote access error"),
              "atomic with a bad key: rc %d, \"%s\"", rc, err_reason);
        tl.ops->mem_dereg(&tl, m1);
        tl.ops->close(&tl);
    }
    free(src);
    free(dst);
    if (failures)
        return 1;
    printf("ok: verbs_unit%s\n", odp ? " (ODP)" : "");
    return 0;
}
