/*
 * Unit test of the shared-memory transport (transport/shm/).
 *
 * Each test forks N processes that play the ranks of one node. The test
 * links only the transport's own sources plus the few runtime pieces it
 * needs, faked here: bmpi_world filled by hand, bmpi_err_set, a PMIx
 * put/get/fence over a mapping shared before the fork, and
 * bmpi_am_deliver handing every message to the test's current handler.
 *
 * A rank reports failure through its exit status (with a line on stderr);
 * the Check test in the parent asserts that every rank exited 0.
 *
 * CHECK_SHM_SCALE (default 1.0) scales the message counts, e.g. 0.05 to
 * run the whole suite under valgrind.
 */
#include "config.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runtime/error.h"
#include "runtime/pmix.h"
#include "runtime/world.h"
#include "transport/shm/cacheline.h"
#include "transport/shm/shm.h"

#define MAXR 64

/* ---- fakes of the runtime ------------------------------------------------- */

#include "test/unit/fake_world.h"

/* Shared between the ranks of one test: PMIx blobs, a barrier, results. */
struct shared {
    unsigned barrier_count;
    unsigned barrier_gen;
    struct {
        size_t len;
        uint8_t data[256];
    } blob[MAXR];
    int pids[MAXR];
    uint64_t value[MAXR]; /* free use by tests */
};
static struct shared *sh;

int bmpi_pmix_put(const char *key, const void *data, size_t len)
{
    if (strcmp(key, "bmpi.shm") || len > sizeof sh->blob[0].data)
        return MPI_ERR_INTERN;
    memcpy(sh->blob[bmpi_world.rank].data, data, len);
    sh->blob[bmpi_world.rank].len = len;
    return BMPI_OK;
}

int bmpi_pmix_get(int rank, const char *key, void **data, size_t *len)
{
    if (strcmp(key, "bmpi.shm") || rank < 0 || rank >= bmpi_world.size || !sh->blob[rank].len)
        return MPI_ERR_INTERN;
    *data = malloc(sh->blob[rank].len);
    memcpy(*data, sh->blob[rank].data, sh->blob[rank].len);
    *len = sh->blob[rank].len;
    return BMPI_OK;
}

typedef void (*deliver_fn)(int peer, uint8_t am_id, const void *hdr, size_t hdr_len,
                           const void *payload, size_t len);
static deliver_fn on_deliver;

void bmpi_am_deliver(int peer, uint8_t am_id, const void *hdr, size_t hdr_len, const void *payload,
                     size_t len)
{
    on_deliver(peer, am_id, hdr, hdr_len, payload, len);
}

/* ---- rank harness ------------------------------------------------------------ */

static struct bmpi_tl tl;
static bool tl_live; /* progress the transport while waiting */
static char nspace[64];
static struct bmpi_peer fake_peers[MAXR];
static int fake_local_peers[MAXR];

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        fprintf(stderr, "rank %d: %s:%d: ", bmpi_world.rank, __FILE__, __LINE__);                   \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fprintf(stderr, "\n");                                                                     \
        _exit(1);                                                                                  \
    } while (0)
#define REQUIRE(c, ...)                                                                            \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "rank %d: (%s) is false: ", bmpi_world.rank, #c);                      \
            FAIL(__VA_ARGS__);                                                                     \
        }                                                                                          \
    } while (0)

static double scale(void)
{
    const char *s = getenv("CHECK_SHM_SCALE");
    double v = s ? atof(s) : 1.0;
    return v > 0 ? v : 1.0;
}

static int scaled(int n)
{
    int v = (int)(n * scale());
    return v < 4 ? 4 : v;
}

static void progress(void)
{
    if (tl_live)
        tl.ops->progress(&tl);
}

static void barrier(void)
{
    unsigned gen = __atomic_load_n(&sh->barrier_gen, __ATOMIC_ACQUIRE);
    if (__atomic_add_fetch(&sh->barrier_count, 1, __ATOMIC_ACQ_REL) == (unsigned)bmpi_world.size) {
        __atomic_store_n(&sh->barrier_count, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&sh->barrier_gen, gen + 1, __ATOMIC_RELEASE);
        return;
    }
    while (__atomic_load_n(&sh->barrier_gen, __ATOMIC_ACQUIRE) == gen) {
        progress();
        sched_yield();
    }
}

int bmpi_pmix_fence(void)
{
    barrier();
    return BMPI_OK;
}

/* Names this test's ranks left in /dev/shm. */
static int count_shm_files(const char *ns)
{
    char prefix[128];
    snprintf(prefix, sizeof prefix, "bmpi.%s.", ns);
    DIR *d = opendir("/dev/shm");
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (!strncmp(e->d_name, prefix, strlen(prefix)))
            n++;
    closedir(d);
    return n;
}

static void rank_open(void)
{
    char why[256] = "";
    tl.ops = &bmpi_tl_shm_ops;
    REQUIRE(tl.ops->query(why, sizeof why) == 0, "%s", why);
    int rc = tl.ops->open(&tl);
    REQUIRE(rc == 0, "open: %s", err_reason);
    bmpi_pmix_fence();
    int n = bmpi_world.size;
    int peers[MAXR];
    bool reach[MAXR];
    char (*whys)[128] = calloc((size_t)n, 128);
    for (int i = 0; i < n; i++)
        peers[i] = i;
    rc = tl.ops->add_peers(&tl, peers, n, reach, whys);
    REQUIRE(rc == 0, "add_peers: %s", err_reason);
    for (int i = 0; i < n; i++)
        REQUIRE(reach[i], "rank %d unreachable: %s", i, whys[i]);
    free(whys);
    tl_live = true;
}

static void rank_close(void)
{
    tl_live = false;
    tl.ops->close(&tl);
    REQUIRE(tl.priv == NULL, "close left priv");
}

typedef void (*rank_fn)(void *arg);

/* Run body as n ranks of one node; returns how many ranks failed.
 * kill_ok: ranks that may die by SIGKILL (bit mask). */
static int run_ranks_ex(int n, rank_fn body, void *arg, uint64_t kill_ok)
{
    static int serial;
    snprintf(nspace, sizeof nspace, "chk%d_%d", (int)getpid(), serial++);
    sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(sh, MAP_FAILED);
    memset(sh, 0, sizeof *sh);
    fflush(stdout);
    fflush(stderr);
    pid_t pids[MAXR];
    for (int r = 0; r < n; r++) {
        pids[r] = fork();
        ck_assert_int_ge(pids[r], 0);
        if (pids[r] == 0) {
            memset(&bmpi_world, 0, sizeof bmpi_world);
            bmpi_world.state = BMPI_STATE_RUNNING;
            bmpi_world.rank = r;
            bmpi_world.size = n;
            bmpi_world.local_rank = r;
            bmpi_world.local_size = n;
            for (int i = 0; i < n; i++) {
                fake_local_peers[i] = i;
                fake_peers[i].nodeid = 7;
            }
            bmpi_world.local_peers = fake_local_peers;
            bmpi_world.peers = fake_peers;
            bmpi_world.nodeid = 7;
            snprintf(bmpi_world.nspace, sizeof bmpi_world.nspace, "%s", nspace);
            snprintf(bmpi_world.hostname, sizeof bmpi_world.hostname, "testhost");
            bmpi_world.verbose = getenv("BMPI_VERBOSE") ? atoi(getenv("BMPI_VERBOSE")) : 0;
            sh->pids[r] = getpid();
            srand48(1000 + r);
            body(arg);
            _exit(0);
        }
    }
    /* Collect the ranks; when one fails, the others would wait for it
     * forever: kill them. */
    int failed = 0, left = n;
    while (left > 0) {
        int st;
        pid_t w = wait(&st);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        int r = 0;
        while (r < n && pids[r] != w)
            r++;
        if (r == n)
            continue;
        pids[r] = 0;
        left--;
        bool killed = WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL && (kill_ok >> r & 1);
        if (!killed && !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
            if (!failed)
                fprintf(stderr, "rank %d failed (status 0x%x): stopping the others\n", r, st);
            failed++;
            for (int i = 0; i < n; i++)
                if (pids[i] > 0)
                    kill(pids[i], SIGKILL);
        }
    }
    if (failed) {
        /* what the killed ranks left behind is not this test's question */
        char cmd[160];
        snprintf(cmd, sizeof cmd, "rm -f /dev/shm/bmpi.%s.*", nspace);
        if (system(cmd) != 0)
            fprintf(stderr, "could not remove /dev/shm/bmpi.%s.*\n", nspace);
    }
    munmap(sh, sizeof *sh);
    sh = NULL;
    return failed;
}

static int run_ranks(int n, rank_fn body, void *arg) { return run_ranks_ex(n, body, arg, 0); }

/* ---- message content ------------------------------------------------------------ */

struct test_hdr {
    uint32_t src;
    uint32_t seq;
    uint32_t len;
    uint32_t hdr_len;
    uint64_t sum;
};

static inline uint8_t pattern(uint32_t src, uint32_t seq, size_t i)
{
    return (uint8_t)(src * 131 + seq * 7 + i * 31 + (i >> 8));
}

static uint64_t checksum(const uint8_t *d, size_t len)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ d[i]) * 1099511628211ull;
    return h;
}

static uint8_t sendbuf[4 << 20];

/* Build message seq from this rank in sendbuf; returns payload length. */
static size_t make_msg(struct test_hdr *h, uint8_t *hdrbuf, size_t hdr_len, uint32_t seq,
                       size_t len)
{
    h->src = (uint32_t)bmpi_world.rank;
    h->seq = seq;
    h->len = (uint32_t)len;
    h->hdr_len = (uint32_t)hdr_len;
    for (size_t i = 0; i < len; i++)
        sendbuf[i] = pattern(h->src, seq, i);
    h->sum = checksum(sendbuf, len);
    memcpy(hdrbuf, h, sizeof *h);
    for (size_t i = sizeof *h; i < hdr_len; i++)
        hdrbuf[i] = (uint8_t)(i ^ seq);
    return len;
}

/* Send hdr + sendbuf[0..len) split into up to three iovecs. */
static int send_msg(int peer, uint8_t am_id, const uint8_t *hdrbuf, size_t hdr_len, size_t len)
{
    struct iovec iov[3];
    int cnt;
    if (len < 3) {
        iov[0] = (struct iovec){sendbuf, len};
        cnt = 1;
    } else {
        size_t a = len / 3, b = len / 2;
        iov[0] = (struct iovec){sendbuf, a};
        iov[1] = (struct iovec){sendbuf + a, b - a};
        iov[2] = (struct iovec){sendbuf + b, len - b};
        cnt = 3;
    }
    return tl.ops->am_send(&tl, peer, am_id, hdrbuf, hdr_len, iov, cnt);
}

static void check_msg(int peer, const void *hdr, size_t hdr_len, const void *payload, size_t len,
                      uint32_t expect_seq)
{
    struct test_hdr h;
    REQUIRE(hdr_len >= sizeof h, "header of %zu bytes", hdr_len);
    memcpy(&h, hdr, sizeof h);
    REQUIRE(h.src == (uint32_t)peer, "message from %d claims source %u", peer, h.src);
    REQUIRE(h.seq == expect_seq, "from %d: got seq %u, expected %u (order broken)", peer, h.seq,
            expect_seq);
    REQUIRE(h.hdr_len == hdr_len && h.len == len, "from %d seq %u: lengths %zu+%zu, sent %u+%u",
            peer, h.seq, hdr_len, len, h.hdr_len, h.len);
    const uint8_t *hb = hdr;
    for (size_t i = sizeof h; i < hdr_len; i++)
        REQUIRE(hb[i] == (uint8_t)(i ^ h.seq), "from %d seq %u: header byte %zu", peer, h.seq, i);
    REQUIRE(checksum(payload, len) == h.sum, "from %d seq %u: payload checksum", peer, h.seq);
    const uint8_t *pb = payload;
    for (size_t i = 0; i < len; i += 97)
        REQUIRE(pb[i] == pattern(h.src, h.seq, i), "from %d seq %u: byte %zu", peer, h.seq, i);
}

/* ---- storms ------------------------------------------------------------------------ */

static uint32_t expect_seq[MAXR];
static uint64_t nrecv;

static void storm_deliver(int peer, uint8_t am_id, const void *hdr, size_t hdr_len,
                          const void *payload, size_t len)
{
    REQUIRE(am_id == 5, "am_id %u", am_id);
    check_msg(peer, hdr, hdr_len, payload, len, expect_seq[peer]++);
    nrecv++;
}

static size_t random_size(size_t max)
{
    double u = drand48();
    if (u < 0.5)
        return (size_t)(drand48() * 64);
    if (u < 0.8)
        return (size_t)(drand48() * 2048);
    if (u < 0.9)
        return (size_t)(drand48() * (max < 16384 ? (double)max : 16384.0));
    return (size_t)(drand48() * (double)max);
}

struct storm_arg {
    int per_peer;       /* messages from each rank to each other rank */
    bool want_fastpath; /* every pair must end on its fast path */
};

static void storm_rank(void *argp)
{
    struct storm_arg *a = argp;
    on_deliver = storm_deliver;
    rank_open();
    int n = bmpi_world.size, me = bmpi_world.rank;
    size_t max_am = tl.caps.max_am;
    REQUIRE(max_am >= 4096, "max_am %zu", max_am);

    /* after everyone mapped the segment, its name is gone */
    barrier();
    REQUIRE(count_shm_files(nspace) == 0, "segment still linked after every rank attached");
    barrier(); /* before anyone creates a fast-path ring */

    uint32_t next_seq[MAXR] = {0};
    int left[MAXR];
    int total_left = 0;
    for (int i = 0; i < n; i++) {
        left[i] = i == me ? 0 : a->per_peer;
        total_left += left[i];
    }
    uint64_t expect = (uint64_t)a->per_peer * (uint64_t)(n - 1);
    uint8_t hdrbuf[128];
    struct test_hdr h;
    int pending = -1; /* destination of a message that got EAGAIN */
    size_t plen = 0, phlen = 0;
    uint64_t eagain = 0;
    while (total_left > 0 || nrecv < expect) {
        if (total_left > 0) {
            if (pending < 0) {
                int k = (int)(drand48() * total_left);
                for (pending = 0; pending < n; pending++) {
                    if (k < left[pending])
                        break;
                    k -= left[pending];
                }
                phlen = sizeof h + (size_t)(drand48() * 48);
                plen = random_size(max_am - phlen);
                make_msg(&h, hdrbuf, phlen, next_seq[pending], plen);
            }
            int rc = send_msg(pending, 5, hdrbuf, phlen, plen);
            if (rc == 0) {
                next_seq[pending]++;
                left[pending]--;
                total_left--;
                pending = -1;
            } else {
                REQUIRE(rc == BMPI_TL_EAGAIN, "am_send: %d %s", rc, err_reason);
                eagain++;
            }
        }
        /* more ranks than cores: let the others run when stuck */
        if (tl.ops->progress(&tl) == 0 && (pending >= 0 || total_left == 0))
            sched_yield();
    }
    sh->value[me] = eagain;
    for (int i = 0; i < n; i++)
        REQUIRE(i == me || expect_seq[i] == (uint32_t)a->per_peer, "from %d: %u of %d", i,
                expect_seq[i], a->per_peer);
    const char *thr = getenv("BMPI_SHM_FASTPATH_THRESHOLD");
    if (a->want_fastpath && thr && a->per_peer > atoi(thr))
        for (int i = 0; i < n; i++)
            REQUIRE(i == me || bmpi_shm_has_fastpath(&tl, i), "no fast path to %d", i);
    barrier();
    /* every announced ring has been mapped (its messages arrived), so
     * nothing of this job is left in /dev/shm while it still runs */
    REQUIRE(count_shm_files(nspace) == 0, "%d segment(s) still linked", count_shm_files(nspace));
    rank_close();
}

static void storm(int n, int per_peer, bool want_fastpath)
{
    struct storm_arg a = {scaled(per_peer), want_fastpath};
    ck_assert_int_eq(run_ranks(n, storm_rank, &a), 0);
    ck_assert_int_eq(count_shm_files(nspace), 0);
}

/* fast path after 50 messages: the switch happens mid-stream */
START_TEST(storm_2)
{
    setenv("BMPI_SHM_FASTPATH_THRESHOLD", "50", 1);
    storm(2, 20000, true);
}
END_TEST

START_TEST(storm_3)
{
    setenv("BMPI_SHM_FASTPATH_THRESHOLD", "50", 1);
    storm(3, 6000, true);
}
END_TEST

START_TEST(storm_8)
{
    setenv("BMPI_SHM_FASTPATH_THRESHOLD", "20", 1);
    storm(8, 800, true);
}
END_TEST

/* queue only, with a tiny pool: lots of EAGAIN, all in order */
START_TEST(storm_8_queue_only)
{
    setenv("BMPI_SHM_FASTPATH_MAX", "0", 1);
    setenv("BMPI_SHM_SMALL_CELLS", "4", 1);
    setenv("BMPI_SHM_LARGE_CELLS", "2", 1);
    storm(8, 400, false);
}
END_TEST

/* one fast path per rank: some pairs on rings, the rest on the queue */
START_TEST(storm_3_capped)
{
    setenv("BMPI_SHM_FASTPATH_THRESHOLD", "10", 1);
    setenv("BMPI_SHM_FASTPATH_MAX", "1", 1);
    setenv("BMPI_SHM_MAX_AM", "8192", 1);
    setenv("BMPI_SHM_RING_SIZE", "32768", 1); /* smallest ring: wraps often */
    storm(3, 4000, false);
}
END_TEST

/* ---- back-pressure ------------------------------------------------------------------- */

static void bp_rank(void *argp)
{
    int count = *(int *)argp;
    on_deliver = storm_deliver;
    rank_open();
    barrier();
    if (bmpi_world.rank == 0) {
        uint8_t hdrbuf[64];
        struct test_hdr h;
        uint64_t eagain = 0;
        for (int i = 0; i < count; i++) {
            size_t len = i % 7 == 0 ? 20000 : (size_t)(i % 300);
            make_msg(&h, hdrbuf, sizeof h, (uint32_t)i, len);
            int rc;
            while ((rc = send_msg(1, 5, hdrbuf, sizeof h, len)) == BMPI_TL_EAGAIN) {
                eagain++;
                tl.ops->progress(&tl);
                if (eagain % 1000 == 0)
                    sched_yield();
            }
            REQUIRE(rc == 0, "am_send: %s", err_reason);
        }
        REQUIRE(eagain > 0, "a receiver that does not progress never caused EAGAIN");
        sh->value[0] = eagain;
    } else {
        /* slow receiver: nothing for a while, then drain */
        usleep(300 * 1000);
        while (nrecv < (uint64_t)count) {
            tl.ops->progress(&tl);
            if (nrecv % 64 == 0)
                usleep(100);
        }
    }
    barrier();
    rank_close();
}

START_TEST(backpressure_queue)
{
    setenv("BMPI_SHM_FASTPATH_MAX", "0", 1);
    int count = scaled(3000) < 600 ? 600 : scaled(3000); /* well past what the pool holds */
    ck_assert_int_eq(run_ranks(2, bp_rank, &count), 0);
}
END_TEST

START_TEST(backpressure_ring)
{
    setenv("BMPI_SHM_FASTPATH_THRESHOLD", "0", 1);
    int count = scaled(3000) < 600 ? 600 : scaled(3000); /* well past what the pool holds */
    ck_assert_int_eq(run_ranks(2, bp_rank, &count), 0);
}
END_TEST

/* ---- re-entrant send from the delivery handler ------------------------------------------ */

static uint8_t echo_backlog[1 << 20];
static size_t backlog_len; /* bytes of queued (hdr) records */
static int echo_peer_count;

/* Rank 1+ echoes every message straight from the handler; what does not
 * fit right now waits in a backlog, in order. */
static void echo_deliver(int peer, uint8_t am_id, const void *hdr, size_t hdr_len,
                         const void *payload, size_t len)
{
    if (bmpi_world.rank == 0) {
        REQUIRE(am_id == 6, "echo am_id %u", am_id);
        /* echoes come back with the original header */
        struct test_hdr h;
        memcpy(&h, hdr, sizeof h);
        REQUIRE(h.seq == expect_seq[peer], "echo from %d: seq %u expected %u", peer, h.seq,
                expect_seq[peer]);
        expect_seq[peer]++;
        REQUIRE(len == h.len && checksum(payload, len) == h.sum, "echo from %d corrupted", peer);
        nrecv++;
        return;
    }
    REQUIRE(am_id == 5, "am_id %u", am_id);
    check_msg(peer, hdr, hdr_len, payload, len, expect_seq[peer]++);
    nrecv++;
    int rc = BMPI_TL_EAGAIN;
    if (backlog_len == 0) {
        struct iovec iov = {(void *)payload, len};
        rc = tl.ops->am_send(&tl, peer, 6, hdr, hdr_len, &iov, 1);
    }
    if (rc == BMPI_TL_EAGAIN) {
        REQUIRE(backlog_len + 8 + hdr_len + len <= sizeof echo_backlog, "backlog full");
        uint32_t hl = (uint32_t)hdr_len, pl = (uint32_t)len;
        memcpy(echo_backlog + backlog_len, &hl, 4);
        memcpy(echo_backlog + backlog_len + 4, &pl, 4);
        memcpy(echo_backlog + backlog_len + 8, hdr, hdr_len);
        memcpy(echo_backlog + backlog_len + 8 + hdr_len, payload, len);
        backlog_len += 8 + hdr_len + len;
    } else {
        REQUIRE(rc == 0, "am_send from handler: %s", err_reason);
    }
}

static void drain_backlog(void)
{
    size_t off = 0;
    while (off < backlog_len) {
        uint32_t hl, pl;
        memcpy(&hl, echo_backlog + off, 4);
        memcpy(&pl, echo_backlog + off + 4, 4);
        struct iovec iov = {echo_backlog + off + 8 + hl, pl};
        int rc = tl.ops->am_send(&tl, 0, 6, echo_backlog + off + 8, hl, &iov, 1);
        if (rc == BMPI_TL_EAGAIN)
            break;
        REQUIRE(rc == 0, "am_send: %s", err_reason);
        off += 8 + hl + pl;
    }
    memmove(echo_backlog, echo_backlog + off, backlog_len - off);
    backlog_len -= off;
}

static void echo_rank(void *argp)
{
    int count = *(int *)argp;
    on_deliver = echo_deliver;
    rank_open();
    barrier();
    int n = bmpi_world.size;
    echo_peer_count = n - 1;
    if (bmpi_world.rank == 0) {
        uint8_t hdrbuf[64];
        struct test_hdr h;
        int sent[MAXR] = {0};
        int total = count * (n - 1), done = 0;
        while (done < total || nrecv < (uint64_t)total) {
            if (done < total) {
                int to = 1 + done % (n - 1);
                size_t len = (size_t)(drand48() * (done % 5 == 0 ? 30000 : 200));
                make_msg(&h, hdrbuf, sizeof h + 8, (uint32_t)sent[to], len);
                int rc = send_msg(to, 5, hdrbuf, sizeof h + 8, len);
                if (rc == 0) {
                    sent[to]++;
                    done++;
                } else {
                    REQUIRE(rc == BMPI_TL_EAGAIN, "am_send: %s", err_reason);
                }
            }
            tl.ops->progress(&tl);
        }
    } else {
        while (nrecv < (uint64_t)count || backlog_len) {
            tl.ops->progress(&tl);
            drain_backlog();
        }
    }
    barrier();
    rank_close();
}

START_TEST(reentrant_send)
{
    setenv("BMPI_SHM_FASTPATH_THRESHOLD", "30", 1);
    setenv("BMPI_SHM_SMALL_CELLS", "8", 1);
    setenv("BMPI_SHM_LARGE_CELLS", "2", 1);
    int count = scaled(4000);
    ck_assert_int_eq(run_ranks(2, echo_rank, &count), 0);
    ck_assert_int_eq(run_ranks(3, echo_rank, &count), 0);
}
END_TEST

/* ---- CMA get / put ------------------------------------------------------------------ */

struct rma_req {
    uint64_t addr;
    uint64_t len;
    uint32_t rkey_len;
    uint8_t rkey[BMPI_TL_RKEY_MAX];
};
static struct rma_req rma_in;
static bool rma_have, rma_ack;
static int rma_done_calls, rma_done_status;

static void rma_deliver(int peer, uint8_t am_id, const void *hdr, size_t hdr_len,
                        const void *payload, size_t len)
{
    if (am_id == 1) {
        REQUIRE(hdr_len == sizeof rma_in, "rma header %zu", hdr_len);
        memcpy(&rma_in, hdr, sizeof rma_in);
        rma_have = true;
    } else {
        REQUIRE(am_id == 2, "am_id %u", am_id);
        rma_ack = true;
    }
}

static void rma_done(void *ctx, int status)
{
    REQUIRE(ctx == &rma_done_calls, "done with the wrong context");
    rma_done_calls++;
    rma_done_status = status;
}

static void send_blocking(int peer, uint8_t am_id, const void *hdr, size_t hdr_len)
{
    int rc;
    while ((rc = tl.ops->am_send(&tl, peer, am_id, hdr, hdr_len, NULL, 0)) == BMPI_TL_EAGAIN)
        tl.ops->progress(&tl);
    REQUIRE(rc == 0, "am_send: %s", err_reason);
}

static const size_t rma_sizes[] = {1,         2,           63,       64,
                                   4095,      4096,        4097,     65536 + 13,
                                   1 << 20,   (16 << 20) + 5, 64 << 20};
#define NSIZES (sizeof rma_sizes / sizeof rma_sizes[0])

#define PLACE_PAGE ((uintptr_t)4096)

/* A place for len bytes in block (len + 3 pages), distance bytes past
 * addr's offset in the page, with a byte of block before it. */
static uint8_t *placed_after(uint8_t *block, uint64_t addr, size_t distance)
{
    uintptr_t page = ((uintptr_t)block + PLACE_PAGE) & ~(PLACE_PAGE - 1);
    return (uint8_t *)page + ((addr + distance) & (PLACE_PAGE - 1));
}

/* Rank 0 exposes a buffer, rank 1 gets it and puts it back inverted. With
 * argp (a size_t), rank 1 gets into a buffer that many bytes past the
 * remote one in the page and puts from one that many bytes before it. */
static void cma_rank(void *argp)
{
    const size_t *distance = argp;
    on_deliver = rma_deliver;
    rank_open();
    REQUIRE(tl.caps.flags & BMPI_TL_RMA_GET, "CMA works on this machine but RMA_GET is off");
    REQUIRE(!(tl.caps.flags & BMPI_TL_NEEDS_MR), "shm must not need registration");
    barrier();
    for (size_t k = 0; k < NSIZES; k++) {
        size_t len = rma_sizes[k];
        uint8_t *buf = malloc(len + 16);
        REQUIRE(buf, "malloc %zu", len);
        if (bmpi_world.rank == 0) {
            /* owner: expose buf+3 for a get, then take a put back */
            for (size_t i = 0; i < len; i++)
                buf[3 + i] = pattern(0, (uint32_t)k, i);
            void *memh = (void *)1;
            REQUIRE(tl.ops->mem_reg(&tl, buf, len + 16, &memh) == 0, "mem_reg");
            struct rma_req q = {.addr = (uint64_t)(uintptr_t)(buf + 3), .len = len};
            size_t rl = 0;
            REQUIRE(tl.ops->rkey_pack(&tl, memh, q.rkey, &rl) == 0 && rl <= BMPI_TL_RKEY_MAX,
                    "rkey_pack");
            q.rkey_len = (uint32_t)rl;
            rma_ack = false;
            send_blocking(1, 1, &q, sizeof q);
            while (!rma_ack)
                tl.ops->progress(&tl);
            /* rank 1 has put the inverted pattern at buf+3 */
            for (size_t i = 0; i < len; i++) {
                uint8_t want = pattern(0, (uint32_t)k, i) ^ 0xffu;
                REQUIRE(buf[3 + i] == want, "put: size %zu byte %zu", len, i);
            }
            tl.ops->mem_dereg(&tl, memh);
        } else {
            rma_have = false;
            while (!rma_have)
                tl.ops->progress(&tl);
            REQUIRE(rma_in.len == len, "request for %llu bytes", (unsigned long long)rma_in.len);
            uint8_t *got = buf + 5, *sent = buf + 5, *block = NULL;
            if (distance) {
                size_t room = len + 3 * PLACE_PAGE;
                block = malloc(2 * room);
                REQUIRE(block, "malloc %zu", 2 * room);
                got = placed_after(block, rma_in.addr, *distance);
                sent = placed_after(block + room, rma_in.addr, PLACE_PAGE - *distance);
            }
            memset(got - 1, 0xee, len + 2);
            rma_done_calls = 0;
            int rc = tl.ops->get(&tl, 0, got, NULL, len, rma_in.addr, rma_in.rkey,
                                 rma_in.rkey_len, rma_done, &rma_done_calls);
            REQUIRE(rc == 0, "get: %s", err_reason);
            REQUIRE(rma_done_calls == 0, "done() called inside get(): docs say from progress");
            while (rma_done_calls == 0)
                tl.ops->progress(&tl);
            REQUIRE(rma_done_calls == 1 && rma_done_status == 0, "get status %d: %s",
                    rma_done_status, err_reason);
            for (size_t i = 0; i < len; i++)
                REQUIRE(got[i] == pattern(0, (uint32_t)k, i), "get: size %zu byte %zu", len, i);
            REQUIRE(got[-1] == 0xee && got[len] == 0xee, "get wrote outside its buffer");
            for (size_t i = 0; i < len; i++)
                sent[i] = (uint8_t)~got[i];
            rma_done_calls = 0;
            rc = tl.ops->put(&tl, 0, sent, NULL, len, rma_in.addr, rma_in.rkey,
                             rma_in.rkey_len, rma_done, &rma_done_calls);
            REQUIRE(rc == 0, "put: %s", err_reason);
            while (rma_done_calls == 0)
                tl.ops->progress(&tl);
            REQUIRE(rma_done_status == 0, "put status %d", rma_done_status);
            send_blocking(0, 2, "", 0);
            free(block);
        }
        free(buf);
    }
    barrier();
    rank_close();
}

START_TEST(cma_get)
{
    unsetenv("BMPI_SHM_CMA");
    ck_assert_int_eq(run_ranks(2, cma_rank, NULL), 0);
}
END_TEST

static void cma_off_rank(void *argp)
{
    on_deliver = storm_deliver;
    rank_open();
    REQUIRE(!(tl.caps.flags & (BMPI_TL_RMA_GET | BMPI_TL_RMA_PUT)), "BMPI_SHM_CMA=0 left RMA on");
    uint8_t b[16], rk[BMPI_TL_RKEY_MAX];
    size_t rl = 0;
    tl.ops->rkey_pack(&tl, NULL, rk, &rl);
    rma_done_calls = 0;
    int rc = tl.ops->get(&tl, 1 - bmpi_world.rank, b, NULL, 8, (uint64_t)(uintptr_t)b, rk, rl,
                         rma_done, &rma_done_calls);
    REQUIRE(rc != 0 && rc != BMPI_TL_EAGAIN, "get with CMA off returned %d", rc);
    tl.ops->progress(&tl);
    REQUIRE(rma_done_calls == 0, "refused get called done()");
    /* messages still flow, large ones included */
    barrier();
    uint8_t hdrbuf[64];
    struct test_hdr h;
    int count = scaled(500);
    for (int i = 0; i < count; i++) {
        size_t len = (size_t)i * 61 % (tl.caps.max_am - sizeof h);
        make_msg(&h, hdrbuf, sizeof h, (uint32_t)i, len);
        while ((rc = send_msg(1 - bmpi_world.rank, 5, hdrbuf, sizeof h, len)) == BMPI_TL_EAGAIN)
            tl.ops->progress(&tl);
        REQUIRE(rc == 0, "am_send: %s", err_reason);
        tl.ops->progress(&tl);
    }
    while (nrecv < (uint64_t)count)
        tl.ops->progress(&tl);
    barrier();
    rank_close();
}

/* Where the kernel's copy is slow, reads and writes go through a stage
 * (transport/shm/cma.c): every size, with the heap off so that CMA
 * carries them. */
START_TEST(cma_get_aliased)
{
    setenv("BMPI_SHM_HEAP", "0", 1);
    size_t distance = 16;
    ck_assert_int_eq(run_ranks(2, cma_rank, &distance), 0);
}
END_TEST

START_TEST(cma_off)
{
    setenv("BMPI_SHM_CMA", "0", 1);
    ck_assert_int_eq(run_ranks(2, cma_off_rank, NULL), 0);
}
END_TEST

/* ---- crashes leave nothing behind ------------------------------------------------------- */

static void kill_after_attach_rank(void *argp)
{
    on_deliver = storm_deliver;
    setenv("BMPI_SHM_FASTPATH_THRESHOLD", "3", 1);
    rank_open();
    barrier();
    int me = bmpi_world.rank;
    uint8_t hdrbuf[64];
    struct test_hdr h;
    if (me == 2) {
        /* set up fast paths to both others, then die mid-stream */
        for (int i = 0; i < 40; i++) {
            for (int to = 0; to < 2; to++) {
                make_msg(&h, hdrbuf, sizeof h, (uint32_t)i, 100);
                int rc;
                while ((rc = send_msg(to, 5, hdrbuf, sizeof h, 100)) == BMPI_TL_EAGAIN)
                    ;
                REQUIRE(rc == 0, "am_send: %s", err_reason);
            }
        }
        __atomic_store_n(&sh->value[2], 1, __ATOMIC_RELEASE);
        kill(getpid(), SIGKILL);
    }
    while (nrecv < 40)
        tl.ops->progress(&tl);
    /* rank 2 is dead or about to be (it only reaps as a zombie when the
     * test collects it); its rings are unlinked by the rank that maps them,
     * and the other survivor may not have got there yet on a loaded
     * machine: wait for that, up to 5 s, before calling a file left over */
    while (!__atomic_load_n(&sh->value[2], __ATOMIC_ACQUIRE))
        usleep(1000);
    for (int ms = 0; ms < 5000 && count_shm_files(nspace) != 0; ms++)
        usleep(1000);
    REQUIRE(count_shm_files(nspace) == 0, "a SIGKILLed rank left %d file(s) in /dev/shm",
            count_shm_files(nspace));
    rank_close();
}

START_TEST(sigkill_after_attach)
{
    ck_assert_int_eq(run_ranks_ex(3, kill_after_attach_rank, NULL, 1u << 2), 0);
    ck_assert_int_eq(count_shm_files(nspace), 0);
}
END_TEST

/* A rank that dies before it maps the segment: the creator's close removes it. */
static void kill_before_attach_rank(void *argp)
{
    char why[256];
    tl.ops = &bmpi_tl_shm_ops;
    REQUIRE(tl.ops->query(why, sizeof why) == 0, "%s", why);
    REQUIRE(tl.ops->open(&tl) == 0, "open: %s", err_reason);
    bmpi_pmix_fence();
    if (bmpi_world.rank == 2)
        kill(getpid(), SIGKILL);
    int peers[3] = {0, 1, 2};
    bool reach[3];
    REQUIRE(tl.ops->add_peers(&tl, peers, 3, reach, NULL) == 0, "add_peers");
    /* only 2 of 3 mapped it: still linked (rank 1 cannot have removed it) */
    if (bmpi_world.rank == 0)
        REQUIRE(count_shm_files(nspace) == 1, "segment should stay linked until all attach");
    tl.ops->close(&tl);
}

START_TEST(sigkill_before_attach)
{
    ck_assert_int_eq(run_ranks_ex(3, kill_before_attach_rank, NULL, 1u << 2), 0);
    ck_assert_int_eq(count_shm_files(nspace), 0);
}
END_TEST

/* ---- memory for 64 ranks ------------------------------------------------------------------ */

static int ring_hits;
static void mem_deliver(int peer, uint8_t am_id, const void *hdr, size_t hdr_len,
                        const void *payload, size_t len)
{
    REQUIRE(am_id == 9 && len == 0 && hdr_len == 4, "unexpected message");
    int from;
    memcpy(&from, hdr, 4);
    REQUIRE(from == peer, "message from %d claims %d", peer, from);
    ring_hits++;
}

static void mem64_rank(void *argp)
{
    on_deliver = mem_deliver;
    rank_open();
    size_t bytes = bmpi_shm_base_bytes(&tl);
    REQUIRE(bytes > 0 && bytes / 64 <= 512 * 1024, "base segment %zu bytes for 64 ranks: %zu per rank",
            bytes, bytes / 64);
    if (bmpi_world.rank == 0)
        sh->value[0] = bytes;
    /* everyone sends one message to everyone (itself included) */
    int me = bmpi_world.rank;
    for (int i = 0; i < 64; i++) {
        int to = (me + i) % 64, rc;
        while ((rc = tl.ops->am_send(&tl, to, 9, &me, 4, NULL, 0)) == BMPI_TL_EAGAIN) {
            tl.ops->progress(&tl);
            sched_yield();
        }
        REQUIRE(rc == 0, "am_send to %d: %s", to, err_reason);
    }
    while (ring_hits < 64) {
        tl.ops->progress(&tl);
        sched_yield();
    }
    barrier();
    REQUIRE(count_shm_files(nspace) == 0, "segment still linked");
    rank_close();
}

START_TEST(memory_64)
{
    unsetenv("BMPI_SHM_SMALL_CELLS");
    unsetenv("BMPI_SHM_LARGE_CELLS");
    unsetenv("BMPI_SHM_MAX_AM");
    struct shm_config c = {
        .max_am = 32768, .nsmall = 64, .nlarge = 12, .small_size = 1024};
    size_t per_rank = bmpi_shm_segment_size(&c, 64) / 64;
    ck_assert_msg(per_rank <= 512 * 1024, "default layout: %zu bytes per rank", per_rank);
    ck_assert_int_eq(run_ranks(64, mem64_rank, NULL), 0);
    ck_assert_int_eq(count_shm_files(nspace), 0);
}
END_TEST

/* ---- copy_in ----------------------------------------------------------------------------- */

/* Both ways of copy_in (REP MOVSB where the CPU has FSRM, memcpy) copy
 * exactly n bytes at any alignment, around the size where they switch. */
START_TEST(copy_in_exact)
{
    static const size_t sizes[] = {0, 1, 63, 64, 511, 1024, BMPI_COPY_IN_MOVSB_MIN,
                                   1537, 2048, 2113, 8192, 16411};
    enum { GUARD = 64, ROOM = 16411 + 2 * GUARD + 64 };
    static unsigned char src[ROOM], dst[ROOM];
    for (size_t i = 0; i < ROOM; i++)
        src[i] = (unsigned char)(i * 131 + 7);
    bool movsb = bmpi_cpu_has_fsrm();
    for (int way = 0; way <= (int)movsb; way++)
        for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++)
            for (size_t from = 0; from < 64; from += 13)
                for (size_t to = GUARD; to < 2 * GUARD; to += 17) {
                    size_t n = sizes[z];
                    memset(dst, 0xa5, sizeof dst);
                    bmpi_cacheline_copy_in(dst + to, src + from, n, way);
                    ck_assert_msg(!memcmp(dst + to, src + from, n),
                                  "movsb %d, %zu bytes from +%zu to +%zu: wrong data", way, n,
                                  from, to);
                    for (size_t i = 0; i < sizeof dst; i++)
                        ck_assert_msg((i >= to && i < to + n) || dst[i] == 0xa5,
                                      "movsb %d, %zu bytes to +%zu: byte %zu written", way, n, to,
                                      i);
                }
}
END_TEST

/* ---- stale payload where an entry of a later lap starts --------------------------------- */

/* A 16 KiB ring, the smallest there is (with 4 KiB messages). Lap one:
 * four entries of one line of headers and 63 lines of payload, each line
 * starting with the flag an entry starting there in lap two would carry.
 * Lap two: one entry of a single line. The receiver must take that one and
 * then nothing: the line after it holds lap one's payload until the next
 * entry is written, which passed for an entry before the sender checked
 * the next entry's flag word (ring_send). */
#define STALE_RING 16384
#define STALE_HDR 48 /* with the entry's 16 bytes, one line */
#define STALE_PAYLOAD 4032
#define STALE_AM 9

static int stale_got;

static void stale_deliver(int peer, uint8_t am_id, const void *hdr, size_t hdr_len, const void *payload,
                          size_t len)
{
    REQUIRE(am_id == STALE_AM && hdr_len == STALE_HDR,
            "message %d from rank %d: am_id %u with %zu + %zu bytes, a stale line taken for an entry", stale_got,
            peer, am_id, hdr_len, len);
    stale_got++;
}

static void stale_send_lap_one(void)
{
    static uint64_t payload[STALE_PAYLOAD / 8];
    uint8_t hdr[STALE_HDR] = {0};
    for (uint64_t pos = 0; pos < STALE_RING; pos += SHM_LINE + STALE_PAYLOAD) {
        memset(payload, 0, sizeof payload);
        for (size_t i = 0; i < STALE_PAYLOAD; i += SHM_LINE)
            payload[i / 8] = STALE_RING + pos + SHM_LINE + i + 1;
        struct iovec iov = {payload, STALE_PAYLOAD};
        int rc;
        while ((rc = tl.ops->am_send(&tl, 1, STALE_AM, hdr, sizeof hdr, &iov, 1)) == BMPI_TL_EAGAIN)
            tl.ops->progress(&tl);
        REQUIRE(rc == 0, "am_send: %s", err_reason);
    }
}

static void stale_rank(void *argp)
{
    (void)argp;
    on_deliver = stale_deliver;
    rank_open();
    barrier();
    if (bmpi_world.rank == 0) {
        stale_send_lap_one();
        barrier();
        uint8_t hdr[STALE_HDR] = {0};
        send_blocking(1, STALE_AM, hdr, sizeof hdr);
    } else {
        while (stale_got < 4)
            tl.ops->progress(&tl);
        barrier();
        while (stale_got < 5)
            tl.ops->progress(&tl);
        for (int i = 0; i < 100000; i++)
            tl.ops->progress(&tl);
        REQUIRE(stale_got == 5, "%d messages where 5 were sent", stale_got);
    }
    barrier();
    rank_close();
}

START_TEST(stale_payload_flag)
{
    setenv("BMPI_SHM_FASTPATH_THRESHOLD", "0", 1);
    setenv("BMPI_SHM_MAX_AM", "4096", 1);
    setenv("BMPI_SHM_RING_SIZE", "16384", 1);
    ck_assert_int_eq(run_ranks(2, stale_rank, NULL), 0);
}
END_TEST

/* ---- suite ----------------------------------------------------------------------------- */

static void clean_env(void)
{
    static const char *vars[] = {"BMPI_SHM_FASTPATH_THRESHOLD", "BMPI_SHM_FASTPATH_MAX",
                                 "BMPI_SHM_SMALL_CELLS",        "BMPI_SHM_LARGE_CELLS",
                                 "BMPI_SHM_RING_SIZE",          "BMPI_SHM_CMA",
                                 "BMPI_SHM_MAX_AM",             "BMPI_SHM_EAGER_LIMIT",
                                 "BMPI_SHM_HEAP"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        unsetenv(vars[i]);
    nrecv = 0;
    memset(expect_seq, 0, sizeof expect_seq);
}

static Suite *shm_suite(void)
{
    Suite *s = suite_create("shm");
    const TTest *tests[] = {
        storm_2,           storm_3,         storm_8,           storm_8_queue_only,
        storm_3_capped,    backpressure_queue, backpressure_ring, reentrant_send,
        cma_get,           cma_get_aliased, cma_off,         sigkill_after_attach, sigkill_before_attach,
        memory_64,         copy_in_exact,   stale_payload_flag,
    };
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
        /* one case per test, so CK_RUN_CASE=name runs just that one */
        TCase *tc = tcase_create(tests[i]->name);
        tcase_add_checked_fixture(tc, clean_env, NULL);
        tcase_set_timeout(tc, 300);
        tcase_add_test(tc, tests[i]);
        suite_add_tcase(s, tc);
    }
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(shm_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
