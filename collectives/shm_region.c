/*
 * The region of the shared-memory collectives (shm_coll_impl.h): its
 * geometry, mapping it on every rank of a communicator through the
 * node-level service (transport/shm/node.h), and which path a call takes:
 * a ring of slots (path_for), a direct call (direct_path), or none, when
 * it goes to the schedules.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collectives/shm_coll_impl.h"
#include "runtime/world.h"
#include "transport/shm/cacheline.h"

#define SMALL_DEPTH 256               /* slots per rank in the small ring */
/* Slots per rank in the stream ring (small slots for the calls whose
 * writers stream ahead: bcast, reduce), which only a node with more ranks
 * than cores has, and all ranks' stream slots in bytes, at most. There a
 * bcast root or a reduce leaf runs up to a ring's depth of calls ahead
 * before it yields its core, and a yield that switches costs as much as
 * many small calls: 8 ranks on 2 cores ran 8-256 B bcasts faster through
 * 1024 slots than through 256, and faster still through 4096. The calls
 * where every rank waits for every other stay in the small ring: through
 * 2048 slots an 8-rank barrier took several times as long until each
 * rank had touched every page of the ring once (docs/collectives.md,
 * "Rings" and "Why the constants are what they are"). */
#define STREAM_DEPTH 2048
#define STREAM_BUDGET ((size_t)8 << 20)
/* Bytes per small slot, header included: 288 B of payload, so 256 B calls
 * take the small ring too, where readers pull a slot's lines as they wait
 * (shmc_await_bytes; faster for 2-rank allreduce, allgather, alltoall and
 * reduce of 256 B: docs/collectives.md, "Rings"). */
#define SMALL_STRIDE 320
#define MEDIUM_STRIDE (16384 + LINE)  /* bytes per medium slot: 16 KiB of payload and more */
#define MEDIUM_DEPTH 256              /* medium slots per rank, at most ... */
#define MEDIUM_MIN_DEPTH 8            /* ... and at least (fewer: no medium ring) */
#define MEDIUM_BUDGET ((size_t)16 << 20) /* bytes of all ranks' medium slots, at most ... */
/* ... on a node with more ranks than cores, where only the calls that
 * stream take the medium ring (medium_suits()) and depth saves yields as
 * in the stream ring: with 255 slots instead of 127, 8 ranks on 2 cores
 * ran bcasts of 512 B-8 KiB faster (docs/collectives.md, "Rings"). */
#define MEDIUM_BUDGET_OVERSUBSCRIBED ((size_t)32 << 20)
#define BIG_DEPTH 8                   /* ... in the big ring */
#define DEFAULT_SLOT ((256u << 10) - LINE) /* payload bytes per big slot (a slot with its
                                              * header: 256 KiB), before the cap */
#define DEFAULT_DIRECT (8u << 10)     /* unit of direct_factor() */
/* Block bytes a direct call needs per microsecond that a single-copy
 * call costs before it copies anything (bmpi_node_copy_call_usec()). On
 * two VMs with slow system calls 2-rank allgather, alltoall and bcast
 * were faster through the slots at 64 KiB and direct at 128 KiB, as any
 * value from 38 to 49 KiB per microsecond of their call costs has it.
 * 48 put the floor at 125-128 KiB on the AMD VM, whose call cost varies
 * a little from one start to the next, so 128 KiB blocks went direct in
 * some runs and through the slots in others; 40 keeps 128 KiB direct
 * wherever the call costs up to 3.2 us (128 KiB / 40). Where the call is
 * cheap (the Intel VM's) the floor stays under direct_factor()'s
 * thresholds and changes nothing (docs/collectives.md, "Direct calls"
 * and "Why the constants are what they are"). */
#define DIRECT_BYTES_PER_USEC (40u << 10)
#define BIG_CAP ((size_t)16 << 20)    /* bytes of all ranks' big slots, at most */
#define REGION_MAGIC 0x326c6c6f636d7062ull /* "bmpcoll2" */

struct region_hdr {
    uint64_t magic;
    uint64_t nranks, big_bytes;
    uint64_t direct_floor; /* rank 0's, so that every rank decides alike */
    uint64_t allgather_ceiling; /* rank 0's, as direct_floor */
    uint64_t oversubscribed;    /* rank 0's, as direct_floor */
};

/* Communicators that tried and cannot use the path point here. */
static struct bmpi_shmcoll unusable;

static struct {
    bool read;
    bool on;
    size_t slot;
    size_t direct_min; /* 0: never direct */
    bool direct_set;   /* by BMPI_COLL_SHM_DIRECT: then no floor from the machine */
    bool fsrm;         /* readers copy slots with REP MOVSB (cacheline.h) */
    bool forced[BMPI_COLL_NCOLLS];
} cfg;

static void read_config(void)
{
    if (cfg.read)
        return;
    cfg.read = true;
    cfg.on = bmpi_env_switch("BMPI_COLL_SHM") != 0;
    cfg.slot = bmpi_env_uint("BMPI_COLL_SHM_SLOT", DEFAULT_SLOT);
    cfg.direct_set = bmpi_env_string("BMPI_COLL_SHM_DIRECT") != NULL;
    cfg.direct_min = bmpi_env_uint("BMPI_COLL_SHM_DIRECT", DEFAULT_DIRECT);
    for (int id = 0; id < BMPI_COLL_NCOLLS; id++)
        cfg.forced[id] = bmpi_coll_overridden(id); /* a forced algorithm is a schedule's */
    cfg.fsrm = bmpi_cpu_has_fsrm();
}

/* Payload bytes per big slot for p ranks: the configured size, lowered so
 * all ranks' big slots stay under BIG_CAP; 0 if that leaves too little. */
static size_t big_bytes_for(int p)
{
    size_t cap = BIG_CAP / ((size_t)p * BIG_DEPTH) - SLOT_HDR;
    size_t s = cfg.slot < cap ? cfg.slot : cap;
    s &= ~(size_t)(LINE - 1);
    return s >= MIN_SLOT ? s : 0;
}

/* --- the region ------------------------------------------------------------ */

static void ring_init(struct ring *g, int id, unsigned depth, size_t stride, size_t off)
{
    *g = (struct ring){.id = id, .depth = depth, .stride = stride, .off = off,
                       .slot_bytes = stride - SLOT_HDR};
}

/* Slots of stride bytes per rank that budget holds for p ranks, up to
 * most; 0 (no such ring) when that is fewer than fewest. */
static unsigned depth_within(size_t budget, int p, size_t stride, size_t fewest, unsigned most)
{
    size_t d = budget / ((size_t)p * stride);
    if (d < fewest)
        return 0;
    return d < most ? (unsigned)d : most;
}

/* Medium slots per rank for p ranks and big slots of big_bytes, within the
 * node's budget; 0 (no medium ring) when a big slot is no bigger. */
static unsigned medium_depth_for(int p, size_t big_bytes)
{
    size_t budget = bmpi_world.oversubscribed ? MEDIUM_BUDGET_OVERSUBSCRIBED : MEDIUM_BUDGET;
    if (big_bytes <= MEDIUM_STRIDE - SLOT_HDR)
        return 0;
    return depth_within(budget, p, MEDIUM_STRIDE, MEDIUM_MIN_DEPTH, MEDIUM_DEPTH);
}

/* Stream slots per rank for p ranks: 0 (no stream ring) unless the node
 * has more ranks than cores, and more than the small ring has. */
static unsigned stream_depth_for(int p)
{
    if (!bmpi_world.oversubscribed)
        return 0;
    return depth_within(STREAM_BUDGET, p, SMALL_STRIDE, SMALL_DEPTH + 1, STREAM_DEPTH);
}

static size_t line_up(size_t n)
{
    return (n + LINE - 1) & ~(size_t)(LINE - 1);
}

/* Where everything is for p ranks and big slots of big_bytes, in the
 * first region and in the far one. */
static void layout(struct bmpi_shmcoll *r, int p, size_t big_bytes)
{
    size_t off = LINE * (size_t)(1 + NRINGS * p);
    unsigned stream = stream_depth_for(p), medium = medium_depth_for(p, big_bytes);
    ring_init(&r->ring[SMALL], SMALL, SMALL_DEPTH, SMALL_STRIDE, off);
    off += (size_t)p * SMALL_DEPTH * SMALL_STRIDE;
    ring_init(&r->ring[STREAM], STREAM, stream, SMALL_STRIDE, off);
    r->near.len = off + (size_t)p * stream * SMALL_STRIDE;
    off = 0;
    ring_init(&r->ring[MEDIUM], MEDIUM, medium, MEDIUM_STRIDE, off);
    if (!medium)
        r->ring[MEDIUM].slot_bytes = 0; /* never chosen */
    off += (size_t)p * medium * MEDIUM_STRIDE;
    ring_init(&r->ring[BIG], BIG, BIG_DEPTH, line_up(SLOT_HDR + big_bytes), off);
    r->ring[BIG].slot_bytes = big_bytes;
    r->far.len = off + (size_t)p * BIG_DEPTH * r->ring[BIG].stride;
}

/* Points the rings from first to last at their slots in base. */
static void place_rings(struct bmpi_shmcoll *r, int first, int last, void *base)
{
    for (int id = first; id <= last; id++)
        r->ring[id].at = (char *)base + r->ring[id].off;
}

static bool all_on_this_node(const struct bmpi_comm *c)
{
    for (int i = 0; i < c->size; i++)
        if (bmpi_world.peers[bmpi_comm_world_rank(c, i)].nodeid != bmpi_world.nodeid)
            return false;
    return true;
}

/* Whether this rank reaches every rank of c with the node's single copy. */
static bool cma_to_all(const struct bmpi_comm *c)
{
    for (int i = 0; i < c->size; i++)
        if (i != c->rank && !bmpi_node_copy_reaches(bmpi_comm_world_rank(c, i)))
            return false;
    return true;
}

/* A point-to-point schedule run to completion (setup only). */
static int run_sched(struct bmpi_sched *s, int err)
{
    if (err) {
        bmpi_sched_destroy(s);
        return err;
    }
    return bmpi_sched_run(s);
}

static int share_name(struct bmpi_comm *c, char *name, size_t len)
{
    struct bmpi_sched s;
    bmpi_sched_init(&s, c);
    return run_sched(&s, bmpi_coll_bcast(&s, name, len, MPI_CHAR, 0));
}

/* Every rank's ok, combined (the smallest wins) at rank 0, which removes the
 * name of the region it created (m->addr set) before it tells the others:
 * no rank leaves the setup while the file exists. */
static int agree_and_unlink(struct bmpi_comm *c, int *ok, struct bmpi_node_region *m)
{
    struct bmpi_sched s;
    int mine = *ok;
    bmpi_sched_init(&s, c);
    bmpi_sched_set_op(&s, bmpi_op_get(MPI_MIN));
    int err = run_sched(&s, bmpi_coll_reduce(&s, c->rank == 0 ? MPI_IN_PLACE : &mine, ok, 1,
                                             MPI_INT, 0));
    if (c->rank == 0 && m->addr)
        bmpi_node_region_unlink(m);
    if (err)
        return err;
    bmpi_sched_init(&s, c);
    return run_sched(&s, bmpi_coll_bcast(&s, ok, 1, MPI_INT, 0));
}

/* Block bytes up to which a 2-rank allgather goes direct where
 * point-to-point sends big messages in fragments through its rings rather
 * than by single copy (shm's rget_min: a slow single-copy call). There,
 * fragments were faster from 8 MiB blocks and direct won at 4 MiB and
 * less (docs/collectives.md, "Direct calls"). Alltoall, which also copies
 * twice as much of its own, came out even, so it stays direct. (Among
 * more ranks direct_span() keeps allgather blocks under this anyway.) */
#define STREAMED_ALLGATHER_DIRECT_MAX (4u << 20)

static size_t allgather_ceiling(const struct bmpi_comm *c)
{
    const struct bmpi_tl *tl = bmpi_world.peers[bmpi_comm_world_rank(c, 1)].tl;
    return tl->caps.rget_min == SIZE_MAX ? STREAMED_ALLGATHER_DIRECT_MAX : SIZE_MAX;
}

/* The block bytes below which no call goes direct on this machine. */
static size_t direct_floor(void)
{
    return cfg.direct_set ? 0 : (size_t)(bmpi_node_copy_call_usec() * DIRECT_BYTES_PER_USEC);
}

static bool header_matches(const void *base, const struct region_hdr *want)
{
    const struct region_hdr *h = base;
    return h->magic == want->magic && h->nranks == want->nranks && h->big_bytes == want->big_bytes;
}

/* What a region of c is called, before the random tag that
 * bmpi_node_region_create() adds and the members learn only from
 * share_name's message (no other user can take the name first): what it
 * is for, and for a reader of /dev/shm the world rank that creates it and
 * the communicator's context id. */
static void region_kind(const struct bmpi_comm *c, const char *what, char *kind, size_t len)
{
    snprintf(kind, len, "%s%d.%u", what, bmpi_world.rank, (unsigned)c->context_id);
}

/* Rank 0 creates a region of m->len bytes (hdr, if any, at its start) and
 * names it to the others, every rank maps it, rank 0 learns the smallest
 * *ok (0 from a rank that could not map it), removes the name and tells
 * the others: from there on a crash leaves no file behind (before, the
 * launcher's cleanup of /dev/shm/bmpi.<nspace>.* does). A region that
 * differs from hdr (the environment differing between ranks) counts as
 * not mapped. Every rank ends with *ok alike, and m mapped if *ok (else
 * m->addr NULL). */
static int map_shared(struct bmpi_comm *c, const char *what, const struct region_hdr *hdr,
                      struct bmpi_node_region *m, int *ok)
{
    char name[sizeof m->name] = "", kind[64];
    struct bmpi_node_region got = {0};
    if (c->rank == 0) {
        region_kind(c, what, kind, sizeof kind);
        if (bmpi_node_region_create(kind, m->len, &got) == BMPI_OK) {
            strcpy(name, got.name);
            if (hdr)
                *(struct region_hdr *)got.addr = *hdr;
        }
    }
    int err = share_name(c, name, sizeof name);
    if (!err && c->rank != 0 && name[0] && bmpi_node_region_attach(name, &got) == BMPI_OK &&
        (got.len != m->len || (hdr && !header_matches(got.addr, hdr)))) {
        bmpi_node_region_detach(&got);
        bmpi_err_set(MPI_ERR_OTHER, "shm collectives: region %s has another geometry "
                     "(BMPI_COLL_SHM_SLOT differs between ranks?)", name);
    }
    if (!got.addr)
        *ok = 0;
    err = err ? err : agree_and_unlink(c, ok, &got);
    if (err || !*ok)
        bmpi_node_region_detach(&got);
    if (got.addr)
        *m = got;
    return err;
}

/* Maps the first region; what rank 0 measured of this machine comes in
 * its header. */
static int map_region(struct bmpi_comm *c, struct bmpi_shmcoll *r, bool usable)
{
    const struct region_hdr hdr = {REGION_MAGIC, (uint64_t)c->size, r->ring[BIG].slot_bytes,
                                   c->rank == 0 ? direct_floor() : 0,
                                   c->rank == 0 ? allgather_ceiling(c) : 0,
                                   bmpi_world.oversubscribed};
    enum { NO_REGION, REGION, REGION_AND_CMA };
    int ok = !usable ? NO_REGION : cma_to_all(c) ? REGION_AND_CMA : REGION;
    int err = map_shared(c, "coll", &hdr, &r->near, &ok);
    if (!err && !ok && bmpi_world.verbose && c->rank == 0)
        fprintf(stderr, "bmpi: shared-memory collectives off on communicator %s: %s\n", c->name,
                bmpi_err_reason());
    if (err || !ok)
        return err;
    const struct region_hdr *h = r->near.addr;
    r->direct_floor = h->direct_floor;
    r->allgather_ceiling = h->allgather_ceiling;
    r->oversubscribed = h->oversubscribed;
    r->cma = ok == REGION_AND_CMA;
    place_rings(r, SMALL, STREAM, r->near.addr);
    return BMPI_OK;
}

static int setup(struct bmpi_comm *c, size_t big_bytes)
{
    c->shmcoll = &unusable;
    if (!all_on_this_node(c))
        return BMPI_OK;
    struct bmpi_shmcoll *r = calloc(1, sizeof(*r));
    struct bmpi_shmcoll tmp = {0};
    struct bmpi_shmcoll *use = r ? r : &tmp; /* out of memory: take part in the agreement, saying no */
    layout(use, c->size, big_bytes);
    int err = map_region(c, use, r != NULL);
    if (!err && r && r->near.addr) {
        r->pid = getpid();
        r->fsrm = cfg.fsrm;
        c->shmcoll = r;
    } else {
        free(r);
    }
    return err;
}

/* Whether the rings that slots of bytes may take are mapped; the far
 * region is mapped on the first call that needs it (every rank of the
 * communicator gets here with the same bytes). A region that cannot be
 * mapped is not tried again. */
int shmc_rings_mapped(struct call *k, size_t bytes, bool *mapped)
{
    struct bmpi_shmcoll *r = k->r;
    *mapped = bytes <= r->ring[SMALL].slot_bytes || r->far.addr;
    if (*mapped || r->far_failed)
        return BMPI_OK;
    int ok = 1;
    int err = map_shared(k->c, "collfar", NULL, &r->far, &ok);
    if (err || !ok) {
        r->far_failed = true;
        return err;
    }
    place_rings(r, MEDIUM, BIG, r->far.addr);
    *mapped = true;
    return BMPI_OK;
}

/* --- which path a call takes ---------------------------------------------- */

/* Whether a slot of bytes in call k may take the medium ring (if it
 * fits there). Calls whose writers stream ahead of their readers (bcast,
 * reduce in one phase) use it for anything above a small slot. Where every
 * rank writes and reads (allreduce, allgather, alltoall, reductions in two
 * phases), only between 2 ranks and above DEMOTE_MAX, as it measured: at 2
 * ranks 2-16 KiB came out faster (a writer's slot has left the other
 * core's cache by the time it is reused) but 512 B-1 KiB slower than
 * demoted big slots; at 8 ranks on 2 cores allgathers of 2-8 KiB and
 * 16 KiB reduces in two phases were slower than through the big ring,
 * where the slots of the ranks sharing a core stay in that core's cache
 * (docs/collectives.md, "Rings"). */
static bool medium_suits(const struct call *k, size_t bytes)
{
    if (k->p == 2)
        return shmc_streams(k) || bytes > DEMOTE_MAX;
    return k->id == BMPI_COLL_BCAST || (k->id == BMPI_COLL_REDUCE && bytes < TWO_PHASE_MIN);
}

/* The ring for slots of bytes: the smallest they fit (the stream ring for
 * a streaming call's small slots, where there is one), the medium one as
 * medium_suits() says. */
void shmc_use_ring(struct call *k, size_t bytes)
{
    struct ring *rings = k->r->ring;
    k->pull = 0;
    if (bytes <= rings[SMALL].slot_bytes) {
        k->g = shmc_streams(k) && rings[STREAM].depth ? &rings[STREAM] : &rings[SMALL];
        if (!shmc_streams(k) && SLOT_HDR + bytes > LINE)
            k->pull = SLOT_HDR + bytes - LINE;
    } else if (bytes <= rings[MEDIUM].slot_bytes && medium_suits(k, bytes))
        k->g = &rings[MEDIUM];
    else
        k->g = &rings[BIG];
}

/* Sets k up if this call takes the shm path (k->g NULL if not), creating
 * the region on first use. bytes is what one slot must hold. */
int shmc_path_for(struct bmpi_comm *c, enum bmpi_coll_id id, size_t bytes, struct call *k)
{
    k->g = NULL;
    read_config();
    if (c->size < 2 || !cfg.on || cfg.forced[id] || c->shmcoll == &unusable)
        return BMPI_OK;
    struct bmpi_shmcoll *r = c->shmcoll;
    if (!r) {
        size_t big_bytes = big_bytes_for(c->size);
        if (big_bytes == 0 || bytes > big_bytes)
            return BMPI_OK; /* set up on the first call that fits */
        int err = setup(c, big_bytes);
        if (err || c->shmcoll == &unusable)
            return err;
        r = c->shmcoll;
    }
    if (bytes > r->ring[BIG].slot_bytes)
        return BMPI_OK;
    *k = (struct call){.c = c, .r = r, .p = c->size, .me = c->rank, .id = id};
    bool mapped;
    int err = shmc_rings_mapped(k, bytes, &mapped);
    if (err || !mapped) {
        k->g = NULL;
        return err;
    }
    shmc_use_ring(k, bytes);
    return BMPI_OK;
}

/* The block bytes from which a call between p ranks goes direct, in
 * multiples of the threshold (0: never), as measured on 2 cores
 * (docs/collectives.md). Below, slots are faster: a direct call costs a
 * system call and a wait for every reader, while through the slots a
 * bcast root or a reduce leaf writes and returns, so calls in a row
 * overlap. With more than 2 ranks a bcast in rounds of slots beats a root
 * waiting for p - 1 readers at every size. */
static size_t direct_factor(enum bmpi_coll_id id, int p)
{
    switch (id) {
    case BMPI_COLL_ALLGATHER: return p == 2 ? 2 : 16;
    case BMPI_COLL_ALLTOALL: return p == 2 ? 4 : 2;
    case BMPI_COLL_BCAST: return p == 2 ? 8 : 0;
    case BMPI_COLL_REDUCE: return p == 2 ? 16 : 0;
    default: return 0;
    }
}

/* A direct call among more than 2 ranks only while a rank reads at most
 * this much in all (p blocks); beyond, point-to-point is faster: with both
 * sides copying for alltoall, and for allgather at 8 ranks from 1 MiB
 * blocks, where all ranks reading all others at once thrash the caches. */
static size_t direct_span(enum bmpi_coll_id id)
{
    return id == BMPI_COLL_ALLTOALL ? 512u << 10 : 4u << 20;
}

static bool direct_pays(enum bmpi_coll_id id, int p, size_t block)
{
    read_config(); /* this may be the process's first collective */
    if (!cfg.direct_min || block < cfg.direct_min) /* most calls: no division */
        return false;
    size_t f = direct_factor(id, p);
    if (!f || block / f < cfg.direct_min)
        return false;
    return p == 2 || block <= direct_span(id) / (size_t)p;
}

/* Sets k up if a call moving blocks of block bytes goes direct (k->g NULL
 * if not); its slots then hold a struct exposed. Blocks need not fit a
 * slot. Depends only on values every rank shares. */
int shmc_direct_path(struct bmpi_comm *c, enum bmpi_coll_id id, size_t block,
                     struct call *k)
{
    k->g = NULL;
    if (!direct_pays(id, c->size, block))
        return BMPI_OK;
    int err = shmc_path_for(c, id, sizeof(struct exposed), k);
    if (!err && k->g && (!k->r->cma || block < k->r->direct_floor ||
                         (id == BMPI_COLL_ALLGATHER && block > k->r->allgather_ceiling)))
        k->g = NULL;
    return err;
}

void bmpi_shmcoll_free(struct bmpi_comm *c)
{
    struct bmpi_shmcoll *r = c->shmcoll;
    c->shmcoll = NULL;
    if (!r || r == &unusable)
        return;
    bmpi_node_region_detach(&r->near);
    bmpi_node_region_detach(&r->far);
    free(r);
}
