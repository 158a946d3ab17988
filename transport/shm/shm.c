/*
 * Shared-memory transport: the ops table, its lifecycle, the two message
 * paths (queue and per-pair fast path) and progress. See shm.h for the
 * data structures and docs/shm.md for the design and the tunables.
 *
 * Calls go down only: to the runtime's identity (bmpi_world), bootstrap
 * (bmpi_pmix_put/get), error reporting and bmpi_am_deliver().
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "runtime/error.h"
#include "runtime/pmix.h"
#include "runtime/world.h"
#include "transport/copy.h"
#include "transport/shm/cacheline.h"
#include "transport/shm/heap.h"
#include "transport/shm/shm.h"

#define SHM_PMIX_KEY "bmpi.shm"
#define SHM_POLL_BUDGET 64 /* messages per source per progress call */

#define SHM_SMALL_CELL 1024

/* ---- tunables ------------------------------------------------------------- */

static bool shm_should_say(void) { return bmpi_world.local_rank == 0; }

static size_t pow2_ceil(size_t v)
{
    size_t r = 1;
    while (r < v)
        r <<= 1;
    return r;
}

static void shm_read_config(struct shm_config *c)
{
    c->max_am = bmpi_env_uint("BMPI_SHM_MAX_AM", 32768);
    c->max_am = SHM_ALIGN(c->max_am, SHM_LINE);
    /* within what fits one message with the runtime's header */
    c->eager_limit = bmpi_env_uint("BMPI_SHM_EAGER_LIMIT", 16384);
    if (c->eager_limit > c->max_am - 256)
        c->eager_limit = c->max_am - 256;
    c->threshold = (uint32_t)bmpi_env_uint("BMPI_SHM_FASTPATH_THRESHOLD", 8);
    c->fp_max = (uint32_t)bmpi_env_uint("BMPI_SHM_FASTPATH_MAX", 16);
    /* a ring holds at least two of the largest messages */
    size_t ring_min = pow2_ceil(2 * (c->max_am + SHM_LINE));
    size_t ring = bmpi_env_uint("BMPI_SHM_RING_SIZE", 512 << 10);
    c->ring_size = pow2_ceil(ring < ring_min ? ring_min : ring);
    c->nsmall = (uint32_t)bmpi_env_uint("BMPI_SHM_SMALL_CELLS", 64);
    c->nlarge = (uint32_t)bmpi_env_uint("BMPI_SHM_LARGE_CELLS", 12);
    c->small_size = SHM_SMALL_CELL;
    c->cma = bmpi_env_switch("BMPI_SHM_CMA");
    c->rget_min = bmpi_env_uint("BMPI_SHM_RGET_MIN", 0);
    c->shared_copy = bmpi_env_switch("BMPI_SHM_SHARED_COPY") != 0;
}

/* ---- completions of get/put ------------------------------------------------ */

static int comp_push(struct shm_priv *p, bmpi_tl_done_fn done, void *ctx, int status)
{
    if (p->comp_tail - p->comp_head == p->comp_cap) {
        size_t ncap = p->comp_cap ? 2 * p->comp_cap : 16;
        struct shm_completion *n = malloc(ncap * sizeof *n);
        if (!n)
            return bmpi_err_set(MPI_ERR_NO_MEM, "shm: out of memory for get/put completions");
        for (size_t i = 0; i < p->comp_tail - p->comp_head; i++)
            n[i] = p->comps[(p->comp_head + i) % p->comp_cap];
        p->comp_tail -= p->comp_head;
        p->comp_head = 0;
        free(p->comps);
        p->comps = n;
        p->comp_cap = ncap;
    }
    p->comps[p->comp_tail++ % p->comp_cap] = (struct shm_completion){done, ctx, status};
    return BMPI_OK;
}

static int comp_drain(struct shm_priv *p)
{
    int n = 0;
    /* done() may start another get: take each entry out before calling */
    while (p->comp_head != p->comp_tail) {
        struct shm_completion c = p->comps[p->comp_head++ % p->comp_cap];
        c.done(c.ctx, c.status);
        n++;
    }
    return n;
}

/* ---- lifecycle -------------------------------------------------------------- */

static int shm_query(char *why, size_t why_len)
{
    struct statvfs st;
    if (statvfs("/dev/shm", &st) != 0) {
        snprintf(why, why_len,
                 "no /dev/shm on this host (%s): POSIX shared memory needs a tmpfs mounted there",
                 strerror(errno));
        return MPI_ERR_OTHER;
    }
    return BMPI_OK;
}

static void cma_report(struct shm_priv *p, const char *why)
{
    if (!bmpi_world.verbose)
        return;
    if (p->seg) {
        uint32_t zero = 0;
        if (!__atomic_compare_exchange_n(&p->seg->cma_reported, &zero, 1, false, __ATOMIC_ACQ_REL,
                                         __ATOMIC_RELAXED))
            return;
    } else if (!shm_should_say()) {
        return;
    }
    fprintf(stderr,
            "bmpi: shm on %s (rank %d): single-copy CMA is off: %s; large messages are "
            "pipelined through shared memory in %zu-byte pieces instead\n",
            bmpi_world.hostname, bmpi_world.rank, why, p->cfg.max_am);
}

static uint64_t make_cookie(void)
{
    uint64_t c = 0;
    if (getrandom(&c, sizeof c, GRND_NONBLOCK) != (ssize_t)sizeof c) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        c = ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 40);
    }
    return c | 1;
}

/* Where a single-copy call costs over this many microseconds before it
 * copies anything (bmpi_shm_cma_call_usec()), point-to-point does without
 * it: there pinning pages is as slow as the system call, and the
 * pipelined fragments, which keep both cores copying, won in pingpong
 * from 32 KiB to 4 MiB and in the collectives, which matter more than a
 * stream of large messages, the one case single copy won (docs/shm.md,
 * "Where single copy loses"). The threshold lies between the cost on a VM where single
 * copy did well and the costs on VMs with slow system calls ("Why the
 * constants are what they are"). The collectives' direct calls keep CMA
 * above a floor of their own. */
#define SLOW_CMA_USEC 1.0

static size_t shm_rget_min(const struct shm_priv *p)
{
    if (p->cfg.rget_min)
        return p->cfg.rget_min;
    double usec = bmpi_shm_cma_call_usec();
    if (usec <= SLOW_CMA_USEC)
        return 0;
    if (bmpi_world.verbose && shm_should_say())
        fprintf(stderr,
                "bmpi: shm on %s: a single-copy call costs %.1f us here: point-to-point "
                "sends large messages in %zu-byte fragments (BMPI_SHM_RGET_MIN sets the size "
                "from which it takes single copy)\n",
                bmpi_world.hostname, usec, p->cfg.max_am);
    return SIZE_MAX;
}

static void shm_set_caps(struct bmpi_tl *tl, struct shm_priv *p)
{
    tl->caps = (struct bmpi_tl_caps){
        .name = "shm",
        .exclusivity = BMPI_TL_EXCL_SHM,
        .max_am = p->cfg.max_am,
        .eager_limit = p->cfg.eager_limit,
        .rma_limit = 0,
        .rget_min = p->cma ? shm_rget_min(p) : 0,
        /* get/put are synchronous copies: done means remote completion,
         * and they take effect in order */
        .flags = !p->cma ? 0
                 : BMPI_TL_RMA_GET | BMPI_TL_RMA_PUT | BMPI_TL_RMA_HEAP | BMPI_TL_RMA_REMOTE_DONE |
                       BMPI_TL_RMA_ORDERED | (p->cfg.shared_copy ? BMPI_TL_RMA_CPU : 0),
        .latency_us = 0.2,
        .bandwidth_mbs = 8000.0,
    };
}

static void shm_close(struct bmpi_tl *tl);

/* Map the peer's shared heap, so that single copy from blocks in it is a
 * memcpy; where that fails, CMA still reads them. */
static void attach_peer_heap(int peer_lr, const struct bmpi_shm_heap_info *heap)
{
    char why[256];
    if (bmpi_shm_peer_heap_attach(heap, why, sizeof why) != 0 && bmpi_world.verbose)
        fprintf(stderr,
                "bmpi: shm on %s (rank %d): single copy from local rank %d's heap goes through "
                "process_vm_readv: %s\n",
                bmpi_world.hostname, bmpi_world.rank, peer_lr, why);
}

static int base_name(struct shm_priv *p, const char *tag)
{
    char suffix[SHM_TAG_LEN + 2];
    snprintf(suffix, sizeof suffix, ".%s", tag);
    return bmpi_shm_name(p->name, sizeof p->name, bmpi_world.nspace, bmpi_world.nodeid, suffix);
}

static int shm_open_tl(struct bmpi_tl *tl)
{
    struct shm_priv *p = calloc(1, sizeof *p);
    if (!p)
        return bmpi_err_set(MPI_ERR_NO_MEM, "shm: out of memory");
    tl->priv = p;
    shm_read_config(&p->cfg);
    p->my_lr = bmpi_world.local_rank;
    p->nlocal = bmpi_world.local_size;
    /* world_size stays 0 until add_peers has built the peer table, so that
     * an early am_send fails its bounds check instead of crashing */
    int rc;

    if (p->nlocal < 1 || p->my_lr < 0 || p->my_lr >= p->nlocal || !bmpi_world.local_peers ||
        bmpi_world.local_peers[p->my_lr] != bmpi_world.rank) {
        rc = bmpi_err_set(MPI_ERR_INTERN,
                          "shm: inconsistent node map (local rank %d of %d, rank %d)", p->my_lr,
                          p->nlocal, bmpi_world.rank);
        goto fail;
    }
    struct shm_addr addr = {
        .magic = SHM_ADDR_MAGIC,
        .version = SHM_VERSION,
        .pid = (int32_t)getpid(),
        .local_rank = p->my_lr,
    };

    /* Local rank 0 creates the node's segment now, before the fence, so
     * that the others find it complete when they attach in add_peers; they
     * learn its name's random tag from what it publishes. */
    if (p->my_lr == 0) {
        size_t len = bmpi_shm_segment_size(&p->cfg, p->nlocal);
        void *a;
        rc = bmpi_shm_random_tag(addr.tag);
        if (!rc)
            rc = base_name(p, addr.tag);
        if (!rc)
            rc = bmpi_shm_create(p->name, len, &a);
        if (rc)
            goto fail;
        p->base = a;
        p->base_len = len;
        p->creator = true;
        p->seg = a;
        struct shm_seg_hdr *h = p->seg;
        h->version = SHM_VERSION;
        h->local_size = (uint32_t)p->nlocal;
        h->size = len;
        h->block_off = 4096;
        h->block_size = bmpi_shm_block_size(&p->cfg);
        h->nsmall = p->cfg.nsmall;
        h->nlarge = p->cfg.nlarge;
        h->small_size = (uint32_t)p->cfg.small_size;
        h->large_size = (uint32_t)SHM_ALIGN(SHM_CELL_HDR + p->cfg.max_am, SHM_LINE);
        h->fp_max_in = p->cfg.fp_max;
        h->attached = 1;
        __atomic_store_n(&h->magic, SHM_SEG_MAGIC, __ATOMIC_RELEASE);
        if (p->nlocal == 1) {
            bmpi_shm_unlink(p->name);
            h->unlinked = 1;
        }
    }

    char why[256] = "";
    if (p->cfg.cma == 0) {
        snprintf(why, sizeof why, "disabled by BMPI_SHM_CMA=0");
        p->cma = false;
    } else {
        p->cma = bmpi_shm_cma_probe_self(why, sizeof why) == 0;
    }
    if (!p->cma)
        cma_report(p, why);

    p->cookie = make_cookie();
    p->probe = p->cookie;
    addr.probe_addr = (uint64_t)(uintptr_t)&p->probe;
    addr.cookie = p->cookie;
    bmpi_shm_heap_info(&addr.heap);
    rc = bmpi_pmix_put(SHM_PMIX_KEY, &addr, sizeof addr);
    if (rc)
        goto fail;
    shm_set_caps(tl, p);
    return BMPI_OK;

fail:
    shm_close(tl);
    return rc;
}

/* What local rank lr published at open, checked. */
static int peer_addr(int lr, struct shm_addr *out)
{
    int rank = bmpi_world.local_peers[lr];
    void *data = NULL;
    size_t len = 0;
    int rc = bmpi_pmix_get(rank, SHM_PMIX_KEY, &data, &len);
    if (!rc && len == sizeof *out)
        memcpy(out, data, sizeof *out);
    free(data);
    if (rc || len != sizeof *out || out->magic != SHM_ADDR_MAGIC || out->version != SHM_VERSION ||
        out->local_rank != lr || (lr == 0 && strnlen(out->tag, sizeof out->tag) != SHM_TAG_LEN))
        return bmpi_err_set(MPI_ERR_OTHER,
                            "shm: rank %d published no usable shared-memory address "
                            "(different bmpi version?)",
                            rank);
    return BMPI_OK;
}

/* Map the node's segment (the creator has it already), named with the
 * tag local rank 0 published, and check that it was laid out the way
 * this process expects. */
static int shm_attach_base(struct shm_priv *p)
{
    if (p->creator)
        return BMPI_OK;
    struct shm_addr creator;
    void *a;
    size_t len;
    int rc = peer_addr(0, &creator);
    if (!rc)
        rc = base_name(p, creator.tag);
    if (!rc)
        rc = bmpi_shm_attach(p->name, &a, &len);
    if (rc)
        return rc;
    p->base = a;
    p->base_len = len;
    p->seg = a;
    struct shm_seg_hdr *h = p->seg;
    if (len < sizeof *h || __atomic_load_n(&h->magic, __ATOMIC_ACQUIRE) != SHM_SEG_MAGIC ||
        h->version != SHM_VERSION)
        return bmpi_err_set(MPI_ERR_OTHER, "shm: /dev/shm%s is not a bmpi segment of this version",
                            p->name);
    if (h->local_size != (uint32_t)p->nlocal || h->size > len ||
        h->block_off + (uint64_t)p->nlocal * h->block_size > len)
        return bmpi_err_set(MPI_ERR_OTHER,
                            "shm: /dev/shm%s was made for %u local ranks, this process expects %d",
                            p->name, h->local_size, p->nlocal);
    if (h->large_size < SHM_CELL_HDR + p->cfg.max_am)
        return bmpi_err_set(MPI_ERR_OTHER,
                            "shm: local rank 0 uses smaller messages (%u bytes) than this process "
                            "(BMPI_SHM_MAX_AM=%zu): give every rank the same environment",
                            h->large_size - SHM_CELL_HDR, p->cfg.max_am);
    p->attached = true;
    /* The last one to map the segment removes its name. */
    if (__atomic_add_fetch(&h->attached, 1, __ATOMIC_ACQ_REL) == h->local_size) {
        bmpi_shm_unlink(p->name);
        __atomic_store_n(&h->unlinked, 1, __ATOMIC_RELEASE);
    }
    return BMPI_OK;
}

static int shm_add_peers(struct bmpi_tl *tl, const int *peers, int npeers, bool *reachable,
                         char (*why)[128])
{
    struct shm_priv *p = tl->priv;
    int rc = BMPI_OK;
    char reason[256] = "";

    if (!p->peers) {
        rc = shm_attach_base(p);
        if (rc)
            goto unreachable;
        int ws = bmpi_world.size;
        shm_block(p, p->my_lr)->pid = (int32_t)getpid();
        p->lr_of_world = malloc((size_t)ws * sizeof *p->lr_of_world);
        p->peers = calloc((size_t)p->nlocal, sizeof *p->peers);
        p->in_active = calloc((size_t)p->nlocal, sizeof *p->in_active);
        if (!p->lr_of_world || !p->peers || !p->in_active) {
            rc = bmpi_err_set(MPI_ERR_NO_MEM, "shm: out of memory for %d peers", ws);
            goto unreachable;
        }
        for (int r = 0; r < ws; r++)
            p->lr_of_world[r] = -1;
        for (int i = 0; i < p->nlocal; i++) {
            int r = bmpi_world.local_peers[i];
            if (r < 0 || r >= ws) {
                rc = bmpi_err_set(MPI_ERR_INTERN, "shm: local peer %d is rank %d of %d", i, r, ws);
                goto unreachable;
            }
            p->lr_of_world[r] = i;
            struct shm_peer *s = &p->peers[i];
            s->world_rank = r;
            s->blk = shm_block(p, i);
            s->fp_state = SHM_FP_QUEUE;
        }

        /* Single copy needs every local peer to be readable: try it once
         * on the word each one published. */
        for (int i = 0; i < p->nlocal; i++) {
            if (i == p->my_lr)
                continue;
            struct shm_addr a;
            if ((rc = peer_addr(i, &a)))
                goto unreachable;
            p->peers[i].pid = a.pid;
            if (p->cma && bmpi_shm_cma_probe_peer(a.pid, a.probe_addr, a.cookie, reason,
                                                  sizeof reason) != 0) {
                p->cma = false;
                cma_report(p, reason);
            }
            if (p->cma)
                attach_peer_heap(i, &a.heap);
        }
        p->peers[p->my_lr].pid = (int)getpid();
        if (!p->cma)
            tl->caps.flags &= ~(BMPI_TL_RMA_GET | BMPI_TL_RMA_PUT);
        /* the peer table is complete: am_send and progress may use it */
        p->world_size = ws;
        p->me = shm_block(p, p->my_lr);
    }

    for (int i = 0; i < npeers; i++) {
        int r = peers[i];
        bool same = r >= 0 && r < bmpi_world.size && bmpi_world.peers &&
                    bmpi_world.peers[r].nodeid == bmpi_world.nodeid;
        reachable[i] = same && r < p->world_size && p->lr_of_world[r] >= 0;
        if (!reachable[i] && why) {
            if (!same)
                snprintf(why[i], sizeof why[i], "rank %d is on another node", r);
            else
                snprintf(why[i], sizeof why[i],
                         "rank %d has this node id but is not among its local peers", r);
        }
    }
    return BMPI_OK;

unreachable:
    for (int i = 0; i < npeers; i++) {
        reachable[i] = false;
        if (why)
            snprintf(why[i], sizeof why[i], "%s", bmpi_err_reason());
    }
    (void)rc;
    return BMPI_OK;
}

static void shm_close(struct bmpi_tl *tl)
{
    struct shm_priv *p = tl->priv;
    if (!p)
        return;
    char name[300];
    if (p->peers) {
        for (int i = 0; i < p->nlocal; i++) {
            struct shm_peer *s = &p->peers[i];
            if (s->out) {
                if (!__atomic_load_n(&s->out->unlinked, __ATOMIC_ACQUIRE) &&
                    bmpi_shm_ring_name(name, sizeof name, p->my_lr, i, s->out_tag) == BMPI_OK)
                    bmpi_shm_unlink(name);
                munmap(s->out, s->out_maplen);
            }
            if (s->in)
                munmap(s->in, s->in_maplen);
        }
        bmpi_shm_peer_heap_detach_all();
    }
    if (p->base) {
        if (p->creator && !__atomic_load_n(&p->seg->unlinked, __ATOMIC_ACQUIRE))
            bmpi_shm_unlink(p->name);
        munmap(p->base, p->base_len);
    } else if (p->creator) {
        bmpi_shm_unlink(p->name);
    }
    free(p->lr_of_world);
    free(p->peers);
    free(p->in_active);
    free(p->comps);
    free(p);
    tl->priv = NULL;
}

/* ---- sending ------------------------------------------------------------------ */

/* Copy the bytes of one part of a message (the am header or a piece of
 * payload), which start at offset start in it, that fall in [from, to). */
static inline void copy_part(uint8_t *d, const void *part, size_t start, size_t len, size_t from,
                             size_t to)
{
    size_t lo = from > start ? from : start;
    size_t hi = to < start + len ? to : start + len;
    if (lo < hi)
        bmpi_copy(d + lo, (const uint8_t *)part + (lo - start), hi - lo);
}

/* Copy bytes [from, to) of a message, its am header and then the iov
 * pieces back to back, to the same offsets from d. */
static inline void msg_copy(uint8_t *d, const void *hdr, size_t hdr_len, const struct iovec *iov,
                            int iovcnt, size_t from, size_t to)
{
    copy_part(d, hdr, 0, hdr_len, from, to);
    size_t start = hdr_len;
    for (int i = 0; i < iovcnt; i++) {
        copy_part(d, iov[i].iov_base, start, iov[i].iov_len, from, to);
        start += iov[i].iov_len;
    }
}

/* A free cell of this process's pool for need bytes of header + payload. */
static struct shm_cell *cell_alloc(struct shm_priv *p, size_t need)
{
    const struct shm_seg_hdr *h = p->seg;
    uint8_t *cells = (uint8_t *)p->me + SHM_BLOCK_HDR;
    if (need + SHM_CELL_HDR <= h->small_size) {
        for (uint32_t i = 0; i < h->nsmall; i++) {
            struct shm_cell *c = (struct shm_cell *)(cells + (size_t)p->small_cursor * h->small_size);
            if (++p->small_cursor == h->nsmall)
                p->small_cursor = 0;
            if (!__atomic_load_n(&c->busy, __ATOMIC_ACQUIRE)) {
                c->busy = 1;
                return c;
            }
        }
    }
    if (need + SHM_CELL_HDR <= h->large_size) {
        uint8_t *large = cells + (size_t)h->nsmall * h->small_size;
        for (uint32_t i = 0; i < h->nlarge; i++) {
            struct shm_cell *c = (struct shm_cell *)(large + (size_t)p->large_cursor * h->large_size);
            if (++p->large_cursor == h->nlarge)
                p->large_cursor = 0;
            if (!__atomic_load_n(&c->busy, __ATOMIC_ACQUIRE)) {
                c->busy = 1;
                return c;
            }
        }
    }
    return NULL;
}

/* Take lines [from, to) of the entry this rank writes next into the ring
 * to s into this core's cache for writing (PREFETCHW; a NOP on CPUs
 * without it), so that the round trips that invalidate the receiver's
 * copies from the last lap are paid now rather than by the stores. Only
 * when the ring, as last seen, has room for those bytes: lines the
 * receiver has yet to read stay where they are. */
static inline void ring_claim(const struct shm_peer *s, uint64_t from, uint64_t to)
{
    if (s->wr_pos + to - s->cached_tail > s->out_mask + 1)
        return;
    for (uint64_t o = from; o < to; o += SHM_LINE)
        bmpi_cacheline_claim(s->out_data + ((s->wr_pos + o) & s->out_mask));
}

/* A message from a peer that this rank has not answered yet: claim the
 * lines of the answer's entry, guessed as large as the message, so that
 * their ownership round trips overlap with matching the message and the
 * answer's way down from MPI_Send. The peer will poll the first of them
 * but, having just sent, is busy getting to its receive for a while. When
 * the answer spans several lines its first line is left alone: it is
 * written last (see ring_send), and claimed early it went back to the
 * peer while the others were written. */
static inline void ring_claim_answer(const struct shm_peer *s, uint64_t need)
{
    if (s->out && need <= SHM_ANSWER_CLAIM_MAX)
        ring_claim(s, need > SHM_LINE ? SHM_LINE : 0, need);
}

/* The flag word of the entry that starts at ring position at. */
static inline uint64_t *ring_flag_at(const struct shm_peer *s, uint64_t at)
{
    return &((struct shm_entry *)(s->out_data + (at & s->out_mask)))->flag;
}

/* Whether the line where the entry at ring position at will start already
 * reads as that entry's flag. The receiver polls there as soon as the
 * entry in front is published, and an earlier lap may have left payload
 * there, any value, that very position + 1 included (a batch of RMA
 * records listing displacements did). Only the sender writes the ring, so
 * the answer holds until the sender itself writes there. */
static inline bool ring_flag_forged(const struct shm_peer *s, uint64_t at)
{
    return *ring_flag_at(s, at) == at + 1;
}

static inline int ring_send(struct shm_peer *s, uint8_t am_id, const void *hdr, size_t hdr_len,
                            const struct iovec *iov, int iovcnt, size_t total)
{
    uint64_t size = s->out_mask + 1;
    uint64_t need = SHM_ALIGN(SHM_ENTRY_HDR + hdr_len + total, SHM_LINE);
    uint64_t pos = s->wr_pos;
    uint64_t off = pos & s->out_mask;
    uint64_t skip = off + need > size ? size - off : 0;
    /* room for the entry and the first line of the next (ring_flag_forged) */
    uint64_t span = skip + need + SHM_LINE;
    if (pos + span - s->cached_tail > size) {
        s->cached_tail = __atomic_load_n(&s->out->tail, __ATOMIC_ACQUIRE);
        if (pos + span - s->cached_tail > size)
            return BMPI_TL_EAGAIN;
    }
    /* read here, so that the load overlaps the copy; zeroed, if need be,
     * just before the entry is published */
    bool next_forged = ring_flag_forged(s, pos + skip + need);
    if (skip) {
        /* Offset 0, where the receiver goes next, needs no check: entries
         * never straddle the end, so every lap starts an entry there and
         * its first word is an older flag. */
        struct shm_entry *w = (struct shm_entry *)(s->out_data + off);
        w->type = SHM_MSG_WRAP;
        __atomic_store_n(&w->flag, pos + 1, __ATOMIC_RELEASE);
        pos += skip;
        off = 0;
    }
    /* The receiver is polling the entry's first line. Fill the other lines
     * first, then the first one in a burst of stores ending with the flag:
     * written in between, the first line would go back and forth between
     * the cores once for every wait on another line's ownership. */
    struct shm_entry *e = (struct shm_entry *)(s->out_data + off);
    uint8_t *d = (uint8_t *)(e + 1);
    size_t in_first = SHM_LINE - SHM_ENTRY_HDR, n = hdr_len + total;
    if (n > in_first)
        msg_copy(d, hdr, hdr_len, iov, iovcnt, in_first, n);
    e->len = (uint32_t)total;
    e->hdr_len = (uint16_t)hdr_len;
    e->am_id = am_id;
    e->type = SHM_MSG_AM;
    msg_copy(d, hdr, hdr_len, iov, iovcnt, 0, n < in_first ? n : in_first);
    if (next_forged)
        *ring_flag_at(s, pos + need) = 0;
    __atomic_store_n(&e->flag, pos + 1, __ATOMIC_RELEASE);
    s->wr_pos = pos + need;
    /* Demote (cacheline.h) only an answer, an entry the peer waits for
     * (it sent to us since we last sent to it): done always, it cost a
     * streaming sender about half its bandwidth. */
    if (s->answering && need >= SHM_DEMOTE_MIN && need <= SHM_DEMOTE_MAX)
        bmpi_cacheline_demote(e, need);
    /* An answer: the sender now waits for the next question and will
     * likely answer it with an entry of the same size. Claim that entry's
     * lines but the first, which the receiver is about to poll. */
    if (s->answering && need >= SHM_CLAIM_MIN)
        ring_claim(s, SHM_LINE, need);
    s->answering = false;
    return BMPI_OK;
}

/* Switch the pair (me -> lr) to a ring of its own: create it, then
 * announce it through the queue. The receiver reads the ring only after
 * the announcement, which comes after every message sent through the
 * queue before it: order is kept without waiting for an answer.
 * Returns BMPI_OK when the ring is in use, BMPI_TL_EAGAIN when no cell is
 * free for the announcement, anything else when the pair stays on the
 * queue for good. */
static int fp_setup(struct shm_priv *p, int lr)
{
    struct shm_peer *s = &p->peers[lr];
    if (lr == p->my_lr || p->n_fp_out >= p->cfg.fp_max) {
        s->fp_state = SHM_FP_NEVER;
        return MPI_ERR_OTHER;
    }
    struct shm_cell *c = cell_alloc(p, sizeof(struct shm_announce));
    if (!c)
        return BMPI_TL_EAGAIN;
    if (__atomic_fetch_add(&s->blk->fp_in, 1, __ATOMIC_ACQ_REL) >= p->seg->fp_max_in) {
        __atomic_fetch_sub(&s->blk->fp_in, 1, __ATOMIC_ACQ_REL);
        goto never;
    }
    char name[300];
    void *a;
    size_t maplen = SHM_RING_DATA + p->cfg.ring_size;
    if (bmpi_shm_random_tag(s->out_tag) != BMPI_OK ||
        bmpi_shm_ring_name(name, sizeof name, p->my_lr, lr, s->out_tag) != BMPI_OK ||
        bmpi_shm_create(name, maplen, &a) != BMPI_OK) {
        __atomic_fetch_sub(&s->blk->fp_in, 1, __ATOMIC_ACQ_REL);
        if (bmpi_world.verbose)
            fprintf(stderr, "bmpi: shm rank %d: no fast path to rank %d: %s\n", bmpi_world.rank,
                    s->world_rank, bmpi_err_reason());
        goto never;
    }
    /* every page of the ring now: a first touch in the middle of a
     * message costs microseconds in a VM */
    bmpi_prefault(a, maplen);
    struct shm_ring_ctl *ctl = a;
    ctl->magic = SHM_RING_MAGIC;
    ctl->size = p->cfg.ring_size;
    ctl->sender = (uint32_t)p->my_lr;
    ctl->receiver = (uint32_t)lr;

    struct shm_announce ann = {.size = p->cfg.ring_size};
    memcpy(ann.tag, s->out_tag, sizeof ann.tag);
    c->owner = (uint16_t)p->my_lr;
    c->type = SHM_MSG_ANNOUNCE;
    c->am_id = 0;
    c->hdr_len = 0;
    c->len = sizeof ann;
    memcpy((uint8_t *)c + SHM_CELL_HDR, &ann, sizeof ann);
    shm_queue_push(p, s->blk, c);

    s->out = ctl;
    s->out_data = (uint8_t *)a + SHM_RING_DATA;
    s->out_mask = p->cfg.ring_size - 1;
    s->out_maplen = maplen;
    s->wr_pos = 0;
    s->cached_tail = 0;
    p->n_fp_out++;
    return BMPI_OK;

never:
    __atomic_store_n(&c->busy, 0, __ATOMIC_RELEASE);
    s->fp_state = SHM_FP_NEVER;
    return MPI_ERR_OTHER;
}

static int shm_am_send(struct bmpi_tl *tl, int peer, uint8_t am_id, const void *hdr,
                       size_t hdr_len, const struct iovec *iov, int iovcnt)
{
    struct shm_priv *p = tl->priv;
    size_t total = 0;
    for (int i = 0; i < iovcnt; i++)
        total += iov[i].iov_len;
    int lr = (unsigned)peer < (unsigned)p->world_size ? p->lr_of_world[peer] : -1;
    if (__builtin_expect(lr < 0 || hdr_len + total > p->cfg.max_am || hdr_len > UINT16_MAX, 0)) {
        if (lr < 0)
            return bmpi_err_set(MPI_ERR_INTERN, "shm: rank %d is not on this node", peer);
        return bmpi_err_set(MPI_ERR_INTERN,
                            "shm: active message of %zu + %zu bytes exceeds max_am %zu", hdr_len,
                            total, p->cfg.max_am);
    }
    struct shm_peer *s = &p->peers[lr];
    if (__builtin_expect(s->out != NULL, 1))
        return ring_send(s, am_id, hdr, hdr_len, iov, iovcnt, total);

    if (s->fp_state == SHM_FP_QUEUE && s->nsent >= p->cfg.threshold) {
        int rc = fp_setup(p, lr);
        if (rc == BMPI_OK)
            return ring_send(s, am_id, hdr, hdr_len, iov, iovcnt, total);
        if (rc == BMPI_TL_EAGAIN)
            return rc;
    }

    struct shm_cell *c = cell_alloc(p, hdr_len + total);
    if (!c)
        return BMPI_TL_EAGAIN;
    c->owner = (uint16_t)p->my_lr;
    c->type = SHM_MSG_AM;
    c->am_id = am_id;
    c->hdr_len = (uint32_t)hdr_len;
    c->len = (uint32_t)total;
    uint8_t *d = (uint8_t *)c + SHM_CELL_HDR;
    msg_copy(d, hdr, hdr_len, iov, iovcnt, 0, hdr_len + total);
    shm_queue_push(p, s->blk, c);
    s->nsent++;
    return BMPI_OK;
}

/* ---- receiving ------------------------------------------------------------------ */

/* Map the ring that local rank lr announced and start polling it. */
static int ring_accept(struct shm_priv *p, int lr, const struct shm_announce *ann)
{
    char name[300];
    void *a;
    size_t len;
    char tag[SHM_TAG_LEN + 1];
    memcpy(tag, ann->tag, SHM_TAG_LEN);
    tag[SHM_TAG_LEN] = 0; /* from another process: never trust its terminator */
    int rc = bmpi_shm_ring_name(name, sizeof name, lr, p->my_lr, tag);
    if (rc == BMPI_OK)
        rc = bmpi_shm_attach(name, &a, &len);
    if (rc != BMPI_OK)
        return rc;
    struct shm_ring_ctl *ctl = a;
    if (ctl->magic != SHM_RING_MAGIC || ctl->size != ann->size ||
        (ctl->size & (ctl->size - 1)) || len < SHM_RING_DATA + ctl->size ||
        ctl->sender != (uint32_t)lr || ctl->receiver != (uint32_t)p->my_lr) {
        munmap(a, len);
        return bmpi_err_set(MPI_ERR_INTERN, "shm: /dev/shm%s is not the ring announced", name);
    }
    bmpi_shm_unlink(name);
    __atomic_store_n(&ctl->unlinked, 1, __ATOMIC_RELEASE);
    bmpi_prefault(a, len);
    struct shm_peer *s = &p->peers[lr];
    s->in = ctl;
    s->in_data = (uint8_t *)a + SHM_RING_DATA;
    s->in_mask = ctl->size - 1;
    s->in_maplen = len;
    s->rd_pos = 0;
    p->in_active[p->n_in_active++] = lr;
    return BMPI_OK;
}

static int poll_queue(struct shm_priv *p)
{
    struct shm_rank_block *me = p->me;
    int n = 0;
    while (n < SHM_POLL_BUDGET) {
        if (p->zombie) {
            /* a producer swapped the tail but had not linked its cell yet */
            struct shm_cell *z = shm_cell_at(p, p->zombie);
            uint64_t nx = __atomic_load_n(&z->next, __ATOMIC_ACQUIRE);
            if (!nx)
                break;
            p->my_head = nx;
            p->zombie = 0;
            __atomic_store_n(&z->busy, 0, __ATOMIC_RELEASE);
        }
        if (!p->my_head) {
            uint64_t h = __atomic_load_n(&me->head, __ATOMIC_ACQUIRE);
            if (!h)
                break;
            __atomic_store_n(&me->head, 0, __ATOMIC_RELAXED);
            p->my_head = h;
        }
        struct shm_cell *c = shm_cell_at(p, p->my_head);
        const uint8_t *d = (const uint8_t *)c + SHM_CELL_HDR;
        if (c->type == SHM_MSG_ANNOUNCE) {
            struct shm_announce ann;
            memcpy(&ann, d, sizeof ann);
            if (ring_accept(p, c->owner, &ann) != BMPI_OK) {
                /* Should not happen (same user, file still there). Keep the
                 * announcement at the head and try again later: dropping
                 * it would lose every message the sender puts in the ring. */
                if (!p->accept_said) {
                    p->accept_said = true;
                    fprintf(stderr, "bmpi: shm rank %d: cannot map the fast path from rank %d: "
                                    "%s; retrying\n",
                            bmpi_world.rank, p->peers[c->owner].world_rank, bmpi_err_reason());
                }
                break;
            }
        } else {
            bmpi_am_deliver(p->peers[c->owner].world_rank, c->am_id, d, c->hdr_len,
                            d + c->hdr_len, c->len);
        }
        n++;
        uint64_t nx = __atomic_load_n(&c->next, __ATOMIC_ACQUIRE);
        if (!nx) {
            uint64_t exp = p->my_head;
            if (__atomic_compare_exchange_n(&me->tail, &exp, 0, false, __ATOMIC_ACQ_REL,
                                            __ATOMIC_ACQUIRE)) {
                p->my_head = 0;
                __atomic_store_n(&c->busy, 0, __ATOMIC_RELEASE);
                continue;
            }
            nx = __atomic_load_n(&c->next, __ATOMIC_ACQUIRE);
            if (!nx) {
                p->zombie = p->my_head;
                p->my_head = 0;
                break;
            }
        }
        p->my_head = nx;
        __atomic_store_n(&c->busy, 0, __ATOMIC_RELEASE);
    }
    return n;
}

/* Start pulling the other lines of an entry whose first line just came
 * in, so that they cross while the runtime matches the message instead of
 * after, when it copies the payload. Small entries only: from 1 KiB on it
 * was slower. */
static inline void ring_fetch_rest(const struct shm_entry *e, uint64_t need)
{
    if (need < SHM_FETCH_MAX)
        bmpi_cacheline_pull((const char *)e + SHM_LINE, need - SHM_LINE);
}

static inline int poll_ring(struct shm_peer *s)
{
    int n = 0;
    while (n < SHM_POLL_BUDGET) {
        uint64_t pos = s->rd_pos;
        const struct shm_entry *e = (const struct shm_entry *)(s->in_data + (pos & s->in_mask));
        if (__atomic_load_n(&e->flag, __ATOMIC_ACQUIRE) != pos + 1)
            break;
        if (e->type == SHM_MSG_WRAP) {
            s->rd_pos = (pos | s->in_mask) + 1;
            __atomic_store_n(&s->in->tail, s->rd_pos, __ATOMIC_RELEASE);
            continue;
        }
        uint32_t len = e->len, hdr_len = e->hdr_len;
        const uint8_t *d = (const uint8_t *)(e + 1);
        uint64_t need = SHM_ALIGN(SHM_ENTRY_HDR + hdr_len + len, SHM_LINE);
        ring_fetch_rest(e, need);
        if (!s->answering)
            ring_claim_answer(s, need);
        s->answering = true;
        bmpi_am_deliver(s->world_rank, e->am_id, d, hdr_len, d + hdr_len, len);
        s->rd_pos = pos + need;
        __atomic_store_n(&s->in->tail, s->rd_pos, __ATOMIC_RELEASE);
        n++;
    }
    return n;
}

static int shm_progress(struct bmpi_tl *tl)
{
    struct shm_priv *p = tl->priv;
    /* Re-entered from a delivery handler: delivering now would break the
     * order of the message being handled. */
    if (__builtin_expect(p->in_progress || !p->me, 0))
        return 0;
    p->in_progress = true;
    int n = 0;
    if (p->comp_head != p->comp_tail)
        n += comp_drain(p);
    for (int i = 0; i < p->n_in_active; i++)
        n += poll_ring(&p->peers[p->in_active[i]]);
    n += poll_queue(p);
    p->in_progress = false;
    return n;
}

/* ---- memory and RMA ------------------------------------------------------------- */

static int shm_mem_reg(struct bmpi_tl *tl, void *addr, size_t len, void **memh)
{
    *memh = NULL; /* CMA reads any mapped memory of the peer */
    return BMPI_OK;
}

static int shm_mem_dereg(struct bmpi_tl *tl, void *memh) { return BMPI_OK; }

static int shm_rkey_pack(struct bmpi_tl *tl, void *memh, void *buf, size_t *len)
{
    struct shm_rkey k = {.magic = SHM_RKEY_MAGIC, .pid = (int32_t)getpid()};
    memcpy(buf, &k, sizeof k);
    *len = sizeof k;
    return BMPI_OK;
}

static int rkey_pid(struct shm_priv *p, int peer, const void *rkey, size_t rkey_len, int *pid)
{
    struct shm_rkey k;
    if (!p->cma)
        return bmpi_err_set(MPI_ERR_UNSUPPORTED_OPERATION,
                            "shm: single-copy get/put is off on this node (see BMPI_SHM_CMA)");
    if (rkey_len != sizeof k)
        return bmpi_err_set(MPI_ERR_INTERN, "shm: remote key of %zu bytes, expected %zu",
                            rkey_len, sizeof k);
    memcpy(&k, rkey, sizeof k);
    if (k.magic != SHM_RKEY_MAGIC)
        return bmpi_err_set(MPI_ERR_INTERN, "shm: remote key from rank %d is not a shm key", peer);
    *pid = k.pid;
    return BMPI_OK;
}

/* get and put copy at once and report done() from the next progress(). */
static int shm_get(struct bmpi_tl *tl, int peer, void *local, void *local_memh, size_t len,
                   uint64_t remote_addr, const void *rkey, size_t rkey_len, bmpi_tl_done_fn done,
                   void *ctx)
{
    struct shm_priv *p = tl->priv;
    int pid = -1;
    int rc = rkey_pid(p, peer, rkey, rkey_len, &pid);
    if (rc)
        return rc;
    rc = bmpi_shm_peer_read(pid, local, remote_addr, len);
    return comp_push(p, done, ctx, rc);
}

static int shm_put(struct bmpi_tl *tl, int peer, const void *local, void *local_memh, size_t len,
                   uint64_t remote_addr, const void *rkey, size_t rkey_len, bmpi_tl_done_fn done,
                   void *ctx)
{
    struct shm_priv *p = tl->priv;
    int pid = -1;
    int rc = rkey_pid(p, peer, rkey, rkey_len, &pid);
    if (rc)
        return rc;
    rc = bmpi_shm_peer_write(pid, local, remote_addr, len);
    return comp_push(p, done, ctx, rc);
}

/* ---- for tests ------------------------------------------------------------------ */

size_t bmpi_shm_base_bytes(struct bmpi_tl *tl)
{
    struct shm_priv *p = tl->priv;
    return p && p->seg ? p->seg->size : 0;
}

bool bmpi_shm_has_fastpath(struct bmpi_tl *tl, int peer)
{
    struct shm_priv *p = tl->priv;
    int lr = (unsigned)peer < (unsigned)p->world_size ? p->lr_of_world[peer] : -1;
    return lr >= 0 && p->peers[lr].out != NULL;
}

const struct bmpi_tl_ops bmpi_tl_shm_ops = {
    .query = shm_query,
    .open = shm_open_tl,
    .add_peers = shm_add_peers,
    .close = shm_close,
    .query_other_jobs = bmpi_tl_unsupported_query_other_jobs,
    .card = bmpi_tl_unsupported_card,
    .add_card = bmpi_tl_unsupported_add_card,
    .am_send = shm_am_send,
    .mem_reg = shm_mem_reg,
    .mem_dereg = shm_mem_dereg,
    .rkey_pack = shm_rkey_pack,
    .get = shm_get,
    .put = shm_put,
    .amo_native = bmpi_tl_unsupported_amo_native,
    .amo = bmpi_tl_unsupported_amo,
    .flush = bmpi_tl_flush_done,
    .progress = shm_progress,
};
