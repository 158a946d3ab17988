/*
 * The shared-memory path of the blocking collectives (shm_coll.h,
 * docs/collectives.md "Shared-memory path").
 *
 * A communicator whose ranks are all on this node gets, on its first
 * eligible collective, a region mapped by all of them:
 *
 *   line 0              header (geometry, checked by every rank that maps it)
 *   lines 1 .. 4p       done[ring][r]: calls of that ring rank r has finished,
 *                       and the last direct call in which rank r failed
 *   per ring, per rank  the rank's slots, written only by that rank
 *
 * The small and stream rings live there; the medium and big rings, which
 * take most of the memory, in a second region mapped on the first call
 * that needs one of them. A region's memory is reserved when it is
 * created, which costs time in proportion to its size, so a communicator
 * whose first calls are small does not pay for big slots
 * (docs/collectives.md, "First calls").
 *
 * There are three rings: a deep one of small slots (a few lines each, so
 * latency-bound calls stream far ahead and a reader's next slot is close
 * by), a deep one of medium slots (16 KiB) and a shallow one of big slots
 * (256 KiB by default). A call uses the smallest ring its data fits. On a
 * node with more ranks than cores a fourth, deeper ring of small slots
 * takes the small calls whose writers stream ahead (bcast, reduce), so
 * that they yield their core less often. The
 * medium ring is deep for the same reason as the small one, and so big
 * (4 MiB per rank at 2 ranks) that a writer running ahead of its readers,
 * as a bcast root or a reduce leaf does, has its older slots pushed out of
 * its core's cache into the shared one before the readers get to them:
 * they read from there instead of snooping the writer's core.
 *
 * Every call on a ring has a number n, the same on all ranks (they call
 * collectives in the same order and all decide alike). A rank that
 * contributes data writes it into slot n % depth of its own ring and then
 * stores the slot's seq = n + 1 with release semantics; readers spin on
 * seq (acquire), read, and finally store done = n + 1. Before reusing a
 * slot for n, a writer needs every rank's done >= n - depth + 1 (the last
 * use of that slot is over); it keeps a cached minimum and looks at the
 * counters only when the cache says the slot might still be in use. So a
 * bcast root, or a reduce leaf, writes and returns: up to depth calls run
 * ahead of the slowest rank without waiting.
 *
 * Calls that move big blocks (bcast, allgather, alltoall, and a reduce
 * at 2 ranks, from BMPI_COLL_SHM_DIRECT bytes; direct_pays() says which,
 * and never below what amortizes a system call on this machine) are
 * direct when every rank has CMA: a rank posts where its data is
 * instead of the data, the others copy it straight into their receive
 * buffers with process_vm_readv (one copy instead of two, and none
 * through lines the other core owns), and the rank returns once every
 * rank has finished the call. Below that floor, a writer of an allgather
 * or alltoall whose block lies in its shared heap (transport/shm/heap.c)
 * posts only where the block is, and its readers copy it from their
 * mapping of that heap: one copy too. Each writer decides this for
 * itself, and one that did waits for its readers before it returns.
 *
 * Reductions fold the p contributions in rank order, the same on every
 * rank, so allreduce gives identical bits everywhere and non-commutative
 * ops keep the canonical order.
 *
 * Waiting keeps calling bmpi_progress(), so point-to-point traffic and
 * nonblocking collectives move while a rank waits here, and it follows the
 * progress engine's idle policy (yield when oversubscribed).
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "collectives/coll.h"
#include "collectives/shm_coll.h"
#include "runtime/error.h"
#include "runtime/progress.h"
#include "runtime/world.h"
#include "transport/shm/cacheline.h"
#include "transport/shm/shm.h"

#define LINE 64
#define SMALL_DEPTH 256               /* slots per rank in the small ring */
/* Slots per rank in the stream ring (small slots for the calls whose
 * writers stream ahead: bcast, reduce), which only a node with more ranks
 * than cores has, and all ranks' stream slots in bytes, at most. There a
 * bcast root or a reduce leaf runs up to a ring's depth of calls ahead
 * before it yields its core, and a yield that switches costs 4.7-8 us on
 * the AMD VM, where 8 ranks on 2 cores took 0.34-0.40 us per 8-256 B
 * bcast through 256 slots, 0.20-0.26 through 1024 and 0.14-0.23 through
 * 4096 (interleaved runs in the VM's slow mode). The
 * calls where every rank waits for every other stay in the small ring:
 * through 2048 slots an 8-rank barrier took 102 us instead of 29 until
 * each rank had touched every page of the ring once. */
#define STREAM_DEPTH 2048
#define STREAM_BUDGET ((size_t)8 << 20)
/* Bytes per small slot, header included: 288 B of payload, so 256 B calls
 * take the small ring too, where readers pull a slot's lines as they wait
 * (await_bytes; 2-rank allreduce, allgather, alltoall of 256 B 0.51-0.55
 * -> 0.40-0.43 us, reduce 0.19 -> 0.12 us). */
#define SMALL_STRIDE 320
#define MEDIUM_STRIDE (16384 + LINE)  /* bytes per medium slot: 16 KiB of payload and more */
#define MEDIUM_DEPTH 256              /* medium slots per rank, at most ... */
#define MEDIUM_MIN_DEPTH 8            /* ... and at least (fewer: no medium ring) */
#define MEDIUM_BUDGET ((size_t)16 << 20) /* bytes of all ranks' medium slots, at most ... */
/* ... on a node with more ranks than cores, where only the calls that
 * stream take the medium ring (medium_suits()) and depth saves yields as
 * in the stream ring: 8 ranks on 2 cores, bcast 512 B 0.37 -> 0.24 us,
 * 8 KiB 1.18 -> 0.96-1.0 with 255 slots instead of 127. */
#define MEDIUM_BUDGET_OVERSUBSCRIBED ((size_t)32 << 20)
#define BIG_DEPTH 8                   /* ... in the big ring */
/* Payload bytes up to which a posted slot is demoted to the shared cache
 * (cacheline.h): 64-512 B calls at 2 ranks gained 10-20%; beyond 1 KiB a
 * bcast root, which streams ahead of its readers, lost up to half. */
#define DEMOTE_MAX 1024
#define TWO_PHASE_MIN (16u << 10) /* bytes from which reductions take two phases */
#define PAIR_TWO_PHASE_MIN (128u << 10) /* ... between 2 ranks (two_phases()) */
#define DEFAULT_SLOT ((256u << 10) - LINE) /* payload bytes per big slot (a slot with its
                                              * header: 256 KiB), before the cap */
#define MIN_SLOT 1024                 /* below this the path is not worth a region */
#define DEFAULT_DIRECT (8u << 10)     /* unit of direct_factor() */
/* Block bytes a direct call needs per microsecond that a single-copy
 * call costs before it copies anything (bmpi_shm_cma_call_usec()). At
 * 1.7 and 2.6 us (VMs with slow system calls) 2-rank allgather, alltoall
 * and bcast were faster through the slots at 64 KiB and direct at
 * 128 KiB: 38-49 KiB per us would do. 48 put the floor at 125-128 KiB
 * on the AMD VM, where the call cost measured at start-up is 2.6-2.7 us,
 * so 128 KiB blocks went direct in some runs and through the slots in
 * others (2 ranks, alltoall 3.3 against 14-15 us; 4 ranks 36 against
 * 57); 40 keeps 128 KiB direct up to 3.2 us. Where that cost is 0.3 us
 * the floor stays under direct_factor()'s thresholds and changes
 * nothing. */
#define DIRECT_BYTES_PER_USEC (40u << 10)
#define BIG_CAP ((size_t)16 << 20)    /* bytes of all ranks' big slots, at most */
#define REGION_MAGIC 0x326c6c6f636d7062ull /* "bmpcoll2" */

enum { SMALL, STREAM, MEDIUM, BIG, NRINGS };

struct region_hdr {
    uint64_t magic;
    uint64_t nranks, big_bytes;
    uint64_t direct_floor; /* rank 0's, so that every rank decides alike */
    uint64_t allgather_ceiling; /* rank 0's, as direct_floor */
    uint64_t oversubscribed;    /* rank 0's, as direct_floor */
};

struct slot {
    uint64_t seq;   /* number of the call that wrote it + 1; stored last */
    uint64_t bytes; /* payload bytes of the call, stored first */
    uint64_t ready; /* while a big payload is written: the call's number + 1
                     * (low 32 bits) << 32 | bytes written so far */
    uint64_t ref;   /* nonzero: data is a struct exposed, where the payload
                     * is, not the payload */
    char data[];    /* payload; small payloads share the line with seq */
};
#define SLOT_HDR 32

/* Big payloads are written and read in chunks, so that a reader copies or
 * folds one chunk while the writer fills the next. */
#define CHUNK (8u << 10)

struct ring {
    int id;            /* SMALL, STREAM, MEDIUM or BIG */
    unsigned depth;    /* slots per rank */
    size_t stride;     /* between slots */
    size_t slot_bytes; /* payload capacity of a slot */
    size_t off;        /* of rank 0's first slot in its region */
    char *at;          /* rank 0's first slot, once its region is mapped */
    uint64_t n;        /* calls on this ring so far */
    unsigned pos;      /* n % depth: the current call's slot, kept so no call divides */
    uint64_t min_done; /* every rank's done was at least this when last looked at */
};

struct bmpi_shmcoll {
    char *base; /* header, done lines, small and stream rings; NULL: no path */
    size_t len;
    char *far;  /* medium and big rings; NULL until a call needs them */
    size_t far_len;
    bool far_failed; /* could not be mapped: calls that need it decline */
    bool cma;   /* every rank can read every other's memory: direct calls */
    size_t direct_floor; /* blocks below this never go direct */
    size_t allgather_ceiling; /* 2-rank allgather blocks above this never go direct */
    bool oversubscribed; /* the node has more ranks than cores (two_phases()) */
    int pid;    /* this process, as direct calls post it: getpid() is a system call */
    struct ring ring[NRINGS];
};

/* One call on the path: the communicator's region and the ring it uses. */
struct call {
    struct bmpi_comm *c;
    struct bmpi_shmcoll *r;
    struct ring *g;
    int p, me;
    enum bmpi_coll_id id;
    size_t pull; /* bytes of a small slot past its first line, for readers to ask for */
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

/* Where everything is for p ranks and big slots of big_bytes, in the
 * first region and in the far one. */
static void layout(struct bmpi_shmcoll *r, int p, size_t big_bytes)
{
    size_t off = LINE * (size_t)(1 + NRINGS * p);
    unsigned stream = stream_depth_for(p), medium = medium_depth_for(p, big_bytes);
    ring_init(&r->ring[SMALL], SMALL, SMALL_DEPTH, SMALL_STRIDE, off);
    off += (size_t)p * SMALL_DEPTH * SMALL_STRIDE;
    ring_init(&r->ring[STREAM], STREAM, stream, SMALL_STRIDE, off);
    r->len = off + (size_t)p * stream * SMALL_STRIDE;
    off = 0;
    ring_init(&r->ring[MEDIUM], MEDIUM, medium, MEDIUM_STRIDE, off);
    if (!medium)
        r->ring[MEDIUM].slot_bytes = 0; /* never chosen */
    off += (size_t)p * medium * MEDIUM_STRIDE;
    ring_init(&r->ring[BIG], BIG, BIG_DEPTH, SHM_ALIGN(SLOT_HDR + big_bytes, LINE), off);
    r->ring[BIG].slot_bytes = big_bytes;
    r->far_len = off + (size_t)p * BIG_DEPTH * r->ring[BIG].stride;
}

/* Points the rings from first to last at their slots in base. */
static void place_rings(struct bmpi_shmcoll *r, int first, int last, char *base)
{
    for (int id = first; id <= last; id++)
        r->ring[id].at = base + r->ring[id].off;
}

/* A rank's line of done words for one ring, written only by that rank. */
struct done_line {
    uint64_t done;   /* calls of the ring this rank has finished */
    uint64_t failed; /* number + 1 of the last direct call it failed */
};

static struct done_line *line_of(const struct call *k, int rank)
{
    return (struct done_line *)(k->r->base + LINE * (size_t)(1 + k->g->id * k->p + rank));
}

static uint64_t *done_of(const struct call *k, int rank)
{
    return &line_of(k, rank)->done;
}

/* rank's slot for the call ahead calls after the current one (ahead < depth) */
static struct slot *slot_at(const struct call *k, int rank, unsigned ahead)
{
    const struct ring *g = k->g;
    unsigned pos = g->pos + ahead;
    pos -= pos >= g->depth ? g->depth : 0;
    size_t idx = (size_t)rank * g->depth + pos;
    return (struct slot *)(g->at + idx * g->stride);
}

static struct slot *slot_of(const struct call *k, int rank)
{
    return slot_at(k, rank, 0);
}

static bool all_on_this_node(const struct bmpi_comm *c)
{
    for (int i = 0; i < c->size; i++)
        if (bmpi_world.peers[bmpi_comm_world_rank(c, i)].nodeid != bmpi_world.nodeid)
            return false;
    return true;
}

/* Whether this rank reaches every rank of c with shm's single copy. */
static bool cma_to_all(const struct bmpi_comm *c)
{
    for (int i = 0; i < c->size; i++) {
        const struct bmpi_tl *tl = bmpi_world.peers[bmpi_comm_world_rank(c, i)].tl;
        if (i != c->rank && (tl->ops != &bmpi_tl_shm_ops || !(tl->caps.flags & BMPI_TL_RMA_GET)))
            return false;
    }
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
 * name before it tells the others: no rank leaves the setup while the file
 * exists. */
static int agree_and_unlink(struct bmpi_comm *c, int *ok, const char *name)
{
    struct bmpi_sched s;
    int mine = *ok;
    bmpi_sched_init(&s, c);
    bmpi_sched_set_op(&s, bmpi_op_get(MPI_MIN));
    int err = run_sched(&s, bmpi_coll_reduce(&s, c->rank == 0 ? MPI_IN_PLACE : &mine, ok, 1,
                                             MPI_INT, 0));
    if (c->rank == 0 && name[0])
        bmpi_shm_unlink(name);
    if (err)
        return err;
    bmpi_sched_init(&s, c);
    return run_sched(&s, bmpi_coll_bcast(&s, ok, 1, MPI_INT, 0));
}

/* Block bytes up to which a 2-rank allgather goes direct where
 * point-to-point sends big messages in fragments through its rings rather
 * than by single copy (shm's rget_min: a slow single-copy call). There,
 * fragments were faster from 8 MiB blocks (AMD VM, interleaved runs:
 * 16 MiB 3.1-3.2 -> 2.45-2.71 ms; at 4 MiB and less direct won, 1 MiB
 * 80-84 against 104-111 us). Alltoall, which also copies twice as much
 * of its own, came out even, so it stays direct. (Among more ranks
 * direct_span() keeps allgather blocks under this anyway.) */
#define STREAMED_ALLGATHER_DIRECT_MAX (4u << 20)

static size_t allgather_ceiling(const struct bmpi_comm *c)
{
    const struct bmpi_tl *tl = bmpi_world.peers[bmpi_comm_world_rank(c, 1)].tl;
    return tl->caps.rget_min == SIZE_MAX ? STREAMED_ALLGATHER_DIRECT_MAX : SIZE_MAX;
}

/* The block bytes below which no call goes direct on this machine. */
static size_t direct_floor(void)
{
    return cfg.direct_set ? 0 : (size_t)(bmpi_shm_cma_call_usec() * DIRECT_BYTES_PER_USEC);
}

static bool header_matches(const void *base, const struct region_hdr *want)
{
    const struct region_hdr *h = base;
    return h->magic == want->magic && h->nranks == want->nranks && h->big_bytes == want->big_bytes;
}

/* The name of a region of kind on c ends in a random tag, which the
 * members learn only from share_name's message: no other user can take
 * the name first. */
static int region_name(const struct bmpi_comm *c, const char *kind, char *name, size_t len)
{
    char tag[SHM_TAG_LEN + 1], suffix[48 + SHM_TAG_LEN];
    int err = bmpi_shm_random_tag(tag);
    if (err)
        return err;
    snprintf(suffix, sizeof suffix, ".%s%d.%u.%s", kind, bmpi_world.rank,
             (unsigned)c->context_id, tag);
    return bmpi_shm_name(name, len, bmpi_world.nspace, bmpi_world.nodeid, suffix);
}

/* Rank 0 creates a region of len bytes (hdr, if any, at its start) and
 * names it to the others, every rank maps it, rank 0 learns the smallest
 * *ok (0 from a rank that could not map it), removes the name and tells
 * the others: from there on a crash leaves no file behind (before, the
 * launcher's cleanup of /dev/shm/bmpi.<nspace>.* does). A region that
 * differs from hdr (the environment differing between ranks) counts as
 * not mapped. Every rank ends with *ok alike, and *base mapped if *ok. */
static int map_shared(struct bmpi_comm *c, const char *kind, size_t len,
                      const struct region_hdr *hdr, char **base, int *ok)
{
    char name[256] = "";
    void *a = NULL;
    size_t got = len;
    if (c->rank == 0) {
        if (region_name(c, kind, name, sizeof name) || bmpi_shm_create(name, len, &a))
            name[0] = 0;
        else if (hdr)
            *(struct region_hdr *)a = *hdr;
    }
    int err = share_name(c, name, sizeof name);
    if (!err && c->rank != 0 && name[0] && bmpi_shm_attach(name, &a, &got) == BMPI_OK &&
        (got != len || (hdr && !header_matches(a, hdr)))) {
        munmap(a, got);
        a = NULL;
        bmpi_err_set(MPI_ERR_OTHER, "shm collectives: region %s has another geometry "
                     "(BMPI_COLL_SHM_SLOT differs between ranks?)", name);
    }
    if (!a)
        *ok = 0;
    err = err ? err : agree_and_unlink(c, ok, name);
    if ((err || !*ok) && a) {
        munmap(a, got);
        a = NULL;
    }
    *base = a;
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
    int err = map_shared(c, "coll", r->len, &hdr, &r->base, &ok);
    if (!err && !ok && bmpi_world.verbose && c->rank == 0)
        fprintf(stderr, "bmpi: shared-memory collectives off on communicator %s: %s\n", c->name,
                bmpi_err_reason());
    if (err || !ok)
        return err;
    const struct region_hdr *h = (const struct region_hdr *)r->base;
    r->direct_floor = h->direct_floor;
    r->allgather_ceiling = h->allgather_ceiling;
    r->oversubscribed = h->oversubscribed;
    r->cma = ok == REGION_AND_CMA;
    place_rings(r, SMALL, STREAM, r->base);
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
    if (!err && r && r->base) {
        r->pid = getpid();
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
static int rings_mapped(struct call *k, size_t bytes, bool *mapped)
{
    struct bmpi_shmcoll *r = k->r;
    *mapped = bytes <= r->ring[SMALL].slot_bytes || r->far;
    if (*mapped || r->far_failed)
        return BMPI_OK;
    int ok = 1;
    int err = map_shared(k->c, "collfar", r->far_len, NULL, &r->far, &ok);
    if (err || !ok) {
        r->far_failed = true;
        return err;
    }
    place_rings(r, MEDIUM, BIG, r->far);
    *mapped = true;
    return BMPI_OK;
}

/* Whether call k's writers stream ahead of their readers: a bcast root,
 * the leaves of a reduce. */
static bool streams(const struct call *k)
{
    return k->id == BMPI_COLL_BCAST || k->id == BMPI_COLL_REDUCE;
}

/* Whether a slot of bytes in call k may take the medium ring (if it
 * fits there). Calls whose writers stream ahead of their readers (bcast,
 * reduce in one phase) use it for anything above a small slot. Where every
 * rank writes and reads (allreduce, allgather, alltoall, reductions in two
 * phases), only between 2 ranks and above DEMOTE_MAX, as it measured: at 2
 * ranks 2-16 KiB came out 5-20% faster (a writer's slot has left the other
 * core's cache by the time it is reused) but 512 B-1 KiB slower than
 * demoted big slots; at 8 ranks on 2 cores an allgather of 2-8 KiB took
 * 1.5 times as long and a 16 KiB reduce in two phases 21 us against 13-14,
 * where through the big ring the slots of the ranks sharing a core stay in
 * that core's cache. */
static bool medium_suits(const struct call *k, size_t bytes)
{
    if (k->p == 2)
        return streams(k) || bytes > DEMOTE_MAX;
    return k->id == BMPI_COLL_BCAST || (k->id == BMPI_COLL_REDUCE && bytes < TWO_PHASE_MIN);
}

/* The ring for slots of bytes: the smallest they fit (the stream ring for
 * a streaming call's small slots, where there is one), the medium one as
 * medium_suits() says. */
static void use_ring(struct call *k, size_t bytes)
{
    struct ring *rings = k->r->ring;
    k->pull = 0;
    if (bytes <= rings[SMALL].slot_bytes) {
        k->g = streams(k) && rings[STREAM].depth ? &rings[STREAM] : &rings[SMALL];
        if (!streams(k) && SLOT_HDR + bytes > LINE)
            k->pull = SLOT_HDR + bytes - LINE;
    } else if (bytes <= rings[MEDIUM].slot_bytes && medium_suits(k, bytes))
        k->g = &rings[MEDIUM];
    else
        k->g = &rings[BIG];
}

/* Sets k up if this call takes the shm path (k->g NULL if not), creating
 * the region on first use. bytes is what one slot must hold. */
static int path_for(struct bmpi_comm *c, enum bmpi_coll_id id, size_t bytes, struct call *k)
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
    int err = rings_mapped(k, bytes, &mapped);
    if (err || !mapped) {
        k->g = NULL;
        return err;
    }
    use_ring(k, bytes);
    return BMPI_OK;
}

void bmpi_shmcoll_free(struct bmpi_comm *c)
{
    struct bmpi_shmcoll *r = c->shmcoll;
    c->shmcoll = NULL;
    if (!r || r == &unusable)
        return;
    munmap(r->base, r->len);
    if (r->far)
        munmap(r->far, r->far_len);
    free(r);
}

/* --- slots ----------------------------------------------------------------- */

static void idle_wait(unsigned *idle)
{
    if (bmpi_progress())
        *idle = 0;
    else
        bmpi_progress_idle(idle);
}

/* Until every rank has finished the first need calls of the ring. */
static void await_done(const struct call *k, uint64_t need)
{
    struct ring *g = k->g;
    unsigned idle = 0;
    while (g->min_done < need) {
        uint64_t m = UINT64_MAX;
        for (int i = 0; i < k->p; i++) {
            uint64_t d = __atomic_load_n(done_of(k, i), __ATOMIC_ACQUIRE);
            m = d < m ? d : m;
        }
        g->min_done = m;
        if (m < need)
            idle_wait(&idle);
    }
}

/* This rank's slot for the call ahead of the current one (0: the current
 * one), once every rank is done with its previous use. */
static struct slot *claim_ahead(const struct call *k, unsigned ahead)
{
    uint64_t n = k->g->n + ahead;
    if (n >= k->g->depth)
        await_done(k, n - k->g->depth + 1);
    return slot_at(k, k->me, ahead);
}

static struct slot *claim(const struct call *k)
{
    return claim_ahead(k, 0);
}

/* Takes the first bytes of this rank's next small slot into its core's
 * cache for writing while it waits for the others: the lines are still
 * shared with the readers of its use a ring's depth ago, and otherwise
 * the next call's first store waits for them to be invalidated. On a
 * VM whose cores are 230 ns apart (AMD EPYC), in interleaved A/B runs
 * at 2 ranks: 8-32 B alltoall 0.38 -> 0.28-0.31 us, allgather 0.39 ->
 * 0.30-0.35, allreduce 0.38 -> 0.36-0.37, bcast 0.097 -> 0.066, reduce
 * 0.104 -> 0.080, bcast and reduce 128 B 0.10-0.12 -> 0.08-0.09. Where
 * every rank writes and reads slots of several lines (64 B: 0.44 ->
 * 0.50 us) it cost, and still did with the readers pulling their lines
 * (allgather 128-256 B 0.37-0.41 -> 0.42-0.46 us), so those calls do
 * without. */
static void claim_lines(const struct slot *s, size_t bytes)
{
    for (size_t l = 0; l < bytes; l += LINE)
        bmpi_cacheline_claim((const char *)s + l);
}

/* Publishes the slot; a small one is also pushed towards the readers'
 * cores, but not in the medium ring, which its size does that for
 * (demoting there cost 2-rank reduces of 256 B-1 KiB 0.16-0.23 -> 0.22-0.39
 * us). */
static void publish(const struct call *k, struct slot *s, size_t bytes, bool ref)
{
    s->bytes = bytes;
    s->ref = ref;
    __atomic_store_n(&s->seq, k->g->n + 1, __ATOMIC_RELEASE);
    if (bytes <= DEMOTE_MAX && k->g->id != MEDIUM)
        bmpi_cacheline_demote(s, SLOT_HDR + bytes);
    if ((k->g->id == SMALL || k->g->id == STREAM) && (SLOT_HDR + bytes <= LINE || streams(k)))
        claim_lines(slot_at(k, k->me, 1), SLOT_HDR + bytes);
}

/* Publishes the slot, which holds the payload itself. */
static void post(const struct call *k, struct slot *s, size_t bytes)
{
    publish(k, s, bytes, false);
}

/* The tag of the current call in a slot's ready word. A stale word is from
 * a call a multiple of the ring's depth earlier, so 32 bits tell them apart
 * whatever the count. */
static uint64_t ready_tag(const struct call *k)
{
    return (uint64_t)(uint32_t)(k->g->n + 1) << 32;
}

/* Polls of a slot's seq (asking for its other lines each time, as
 * await_bytes does) between two trips through the progress engine, which
 * take longer than a line takes to cross: 2 ranks on the AMD VM (cores
 * 225 ns apart), interleaved runs: barrier 0.34-0.35 -> 0.31-0.33 us,
 * allreduce 8-32 B 0.35-0.36 -> 0.25-0.28, allgather and alltoall 8-32 B
 * 0.29-0.34 -> 0.24-0.30, 64-256 B 0.38-0.44 -> 0.34-0.40; 8 to 512 polls
 * alike; bcast and reduce, whose readers mostly find the slot posted,
 * unchanged. */
#define SEQ_POLLS 16

/* Whether s's seq becomes want within SEQ_POLLS polls. Not on a node with
 * more ranks than cores, where the rank waited for may need this core. */
static bool seq_arrives(const struct slot *s, uint64_t want, size_t pull)
{
    if (bmpi_world.oversubscribed)
        return false;
    for (unsigned i = 0; i < SEQ_POLLS; i++) {
        bmpi_cpu_relax();
        bmpi_cacheline_pull((const char *)s + LINE, pull);
        if (__atomic_load_n(&s->seq, __ATOMIC_ACQUIRE) == want)
            return true;
    }
    return false;
}

/* Rank w's slot of the current call once it holds at least upto bytes of
 * the payload, or all of it (s->bytes is valid then). */
static const struct slot *await_bytes(const struct call *k, int w, size_t upto)
{
    const struct slot *s = slot_of(k, w);
    uint64_t want = k->g->n + 1, tag = ready_tag(k);
    unsigned idle = 0;
    /* A reader that finds the slot not yet posted asks for the rest of its
     * lines at every look at seq, so that they come over with seq's, not
     * one round trip after it (2 ranks exchanging 128 B on the AMD VM:
     * 0.52 -> 0.40 us). Not at the first look: a slot posted already, as
     * a streaming bcast root's mostly is, would only pay for the asking. */
    for (size_t pull = 0;; pull = k->pull) {
        bmpi_cacheline_pull((const char *)s + LINE, pull);
        if (__atomic_load_n(&s->seq, __ATOMIC_ACQUIRE) == want)
            return s;
        uint64_t r = __atomic_load_n(&s->ready, __ATOMIC_ACQUIRE);
        if ((r & ~(uint64_t)UINT32_MAX) == tag && (r & UINT32_MAX) >= upto)
            return s;
        if (!seq_arrives(s, want, k->pull))
            idle_wait(&idle);
    }
}

/* Rank w's slot of the current call, once w has posted all of it. */
static const struct slot *await(const struct call *k, int w)
{
    return await_bytes(k, w, SIZE_MAX);
}

/* Done reading every slot of this call: writers may reuse them. */
static void finish(const struct call *k)
{
    struct ring *g = k->g;
    uint64_t n = ++g->n;
    g->pos = g->pos + 1 == g->depth ? 0 : g->pos + 1;
    __atomic_store_n(done_of(k, k->me), n, __ATOMIC_RELEASE);
}

static void pack(void *dst, const void *buf, size_t count, const struct bmpi_datatype *dt)
{
    if (bmpi_dt_is_contig(dt))
        memcpy(dst, (const char *)buf + bmpi_dt_true_lb(dt), count * bmpi_dt_size(dt));
    else
        bmpi_dt_pack_all(buf, count, dt, dst);
}

/* Bytes [from, to) of a contiguous buffer into the same place of slot s,
 * chunk by chunk, each published in the ready word. */
static void copy_published(const struct call *k, struct slot *s, const char *src, size_t from,
                           size_t to)
{
    uint64_t tag = ready_tag(k);
    for (size_t off = from; off < to; off += CHUNK) {
        size_t len = to - off < CHUNK ? to - off : CHUNK;
        memcpy(s->data + off, src + off, len);
        __atomic_store_n(&s->ready, tag | (off + len), __ATOMIC_RELEASE);
    }
}

/* Bytes [from, from + bytes) of (buf, count, dt) into the slot, chunk by
 * chunk, each published in the ready word. */
static void pack_chunks(const struct call *k, struct slot *s, const void *buf, size_t count,
                        const struct bmpi_datatype *dt, size_t from, size_t bytes)
{
    if (bmpi_dt_is_contig(dt)) {
        copy_published(k, s, (const char *)buf + bmpi_dt_true_lb(dt) + from, 0, bytes);
        return;
    }
    uint64_t tag = ready_tag(k);
    struct bmpi_dt_cursor cur;
    bmpi_dt_cursor_init(&cur, (void *)(uintptr_t)buf, count, dt);
    bmpi_dt_cursor_seek(&cur, from);
    for (size_t off = 0; off < bytes; off += CHUNK) {
        size_t len = bytes - off < CHUNK ? bytes - off : CHUNK;
        bmpi_dt_pack(&cur, s->data + off, len);
        __atomic_store_n(&s->ready, tag | (off + len), __ATOMIC_RELEASE);
    }
}

/* Writes bytes [from, from + bytes) of this rank's data into its slot and
 * posts it. */
static void contribute_range(const struct call *k, const void *buf, size_t count,
                             const struct bmpi_datatype *dt, size_t from, size_t bytes)
{
    struct slot *s = claim(k);
    s->bytes = bytes;
    pack_chunks(k, s, buf, count, dt, from, bytes);
    post(k, s, bytes);
}

/* Writes this rank's data into its slot and posts it. */
static void contribute(const struct call *k, const void *buf, size_t count,
                       const struct bmpi_datatype *dt)
{
    size_t bytes = count * bmpi_dt_size(dt);
    if (bytes > CHUNK) {
        contribute_range(k, buf, count, dt, 0, bytes);
        return;
    }
    struct slot *s = claim(k);
    s->bytes = bytes;
    pack(s->data, buf, count, dt);
    post(k, s, bytes);
}

/* A contiguous contribution to a reduction in two phases, but for bytes
 * [skip_lo, skip_hi): the segment this rank folds itself, reading it from
 * its own buffer, so nobody reads it from the slot. */
static void contribute_but(const struct call *k, const char *own, size_t bytes, size_t skip_lo,
                           size_t skip_hi)
{
    struct slot *s = claim(k);
    s->bytes = bytes;
    copy_published(k, s, own, 0, skip_lo);
    copy_published(k, s, own, skip_hi, bytes);
    post(k, s, bytes);
}

/* More data than the receive buffer holds is truncation, as on
 * point-to-point (only what fits is copied). */
static int check_fit(size_t len, size_t room)
{
    if (len > room)
        return bmpi_err_set(MPI_ERR_TRUNCATE, "shm collective: %zu bytes into a buffer of %zu",
                            len, room);
    return BMPI_OK;
}

/* Copies len bytes of data into (buf, count, dt). */
static int unpack(void *buf, size_t count, const struct bmpi_datatype *dt, const char *data,
                  size_t len)
{
    size_t room = count * bmpi_dt_size(dt);
    size_t n = len < room ? len : room;
    if (bmpi_dt_is_contig(dt)) {
        bmpi_cacheline_copy_in((char *)buf + bmpi_dt_true_lb(dt), data, n, cfg.fsrm);
    } else {
        struct bmpi_dt_cursor cur;
        bmpi_dt_cursor_init(&cur, buf, count, dt);
        bmpi_dt_unpack(&cur, data, n);
    }
    return check_fit(len, room);
}

/* Rank w's payload into (buf, count, dt) from byte from on, each chunk as
 * soon as w has written it. */
static int unpack_chunks(const struct call *k, int w, void *buf, size_t count,
                         const struct bmpi_datatype *dt, size_t from)
{
    size_t room = count * bmpi_dt_size(dt) - from;
    /* a receiver of at most one chunk waits for the whole payload */
    const struct slot *s = room <= CHUNK ? await(k, w) : await_bytes(k, w, CHUNK);
    if (room <= CHUNK && from == 0)
        return unpack(buf, count, dt, s->data, s->bytes);
    size_t len = s->bytes, n = len < room ? len : room;
    char *dst = (char *)buf + bmpi_dt_true_lb(dt) + from;
    struct bmpi_dt_cursor cur;
    bool contig = bmpi_dt_is_contig(dt);
    if (!contig) {
        bmpi_dt_cursor_init(&cur, buf, count, dt);
        bmpi_dt_cursor_seek(&cur, from);
    }
    for (size_t off = 0; off < n; off += CHUNK) {
        size_t clen = n - off < CHUNK ? n - off : CHUNK;
        await_bytes(k, w, off + clen);
        if (contig)
            bmpi_cacheline_copy_in(dst + off, s->data + off, clen, cfg.fsrm);
        else
            bmpi_dt_unpack(&cur, s->data + off, clen);
    }
    return check_fit(len, room);
}

/* --- direct calls ----------------------------------------------------------- */

/* What a rank posts in a direct call: where its data is. pid 0: the rank
 * could not stage it (no memory), and the call fails on every rank that
 * needs it. */
struct exposed {
    uint64_t addr, bytes;
    uint64_t dst; /* reduce: where the root wants the result */
    int32_t pid;
}; /* 32 bytes: it shares the slot's first line with seq */

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
static int direct_path(struct bmpi_comm *c, enum bmpi_coll_id id, size_t block, struct call *k)
{
    k->g = NULL;
    if (!direct_pays(id, c->size, block))
        return BMPI_OK;
    int err = path_for(c, id, sizeof(struct exposed), k);
    if (!err && k->g && (!k->r->cma || block < k->r->direct_floor ||
                         (id == BMPI_COLL_ALLGATHER && block > k->r->allgather_ceiling)))
        k->g = NULL;
    return err;
}

static void post_exposed(const struct call *k, const struct exposed *e)
{
    struct slot *s = claim(k);
    memcpy(s->data, e, sizeof *e);
    publish(k, s, sizeof *e, true);
}

/* A buffer of bytes to stage data of a direct call in (free it after). */
static int staging(size_t bytes, char **buf)
{
    *buf = malloc(bytes ? bytes : 1);
    if (!*buf)
        return bmpi_err_set(MPI_ERR_NO_MEM, "shm collective: no memory to stage %zu bytes",
                            bytes);
    return BMPI_OK;
}

/* Posts where this rank's count elements of dt are, into *out too. A
 * non-contiguous type is packed into *staged first (free it once
 * finish_direct returned); without memory for that the rank posts pid 0
 * and fails the call like the others. */
static int expose(const struct call *k, const void *buf, size_t count,
                  const struct bmpi_datatype *dt, void **staged, struct exposed *out)
{
    size_t bytes = count * bmpi_dt_size(dt);
    struct exposed e = {(uintptr_t)buf + (uintptr_t)bmpi_dt_true_lb(dt), bytes, 0, k->r->pid};
    int err = BMPI_OK;
    *staged = NULL;
    if (!bmpi_dt_is_contig(dt)) {
        char *packed;
        err = staging(bytes, &packed);
        if (!err)
            bmpi_dt_pack_all(buf, count, dt, packed);
        *staged = packed; /* NULL without memory */
        e = (struct exposed){(uintptr_t)packed, bytes, 0, err ? 0 : k->r->pid};
    }
    post_exposed(k, &e);
    *out = e;
    return err;
}

/* What rank w exposed in this call. */
static int exposed_by(const struct call *k, int w, struct exposed *e)
{
    memcpy(e, await(k, w)->data, sizeof *e);
    if (!e->pid)
        return bmpi_err_set(MPI_ERR_NO_MEM, "shm collective: rank %d could not stage its data", w);
    return BMPI_OK;
}

/* n bytes at addr in process pid into (buf, count, dt). */
static int read_into(int pid, uint64_t addr, size_t n, void *buf, size_t count,
                     const struct bmpi_datatype *dt)
{
    if (bmpi_dt_is_contig(dt))
        return bmpi_shm_peer_read(pid, (char *)buf + bmpi_dt_true_lb(dt), addr, n);
    char *tmp;
    int err = staging(n, &tmp);
    if (err)
        return err;
    if (!(err = bmpi_shm_peer_read(pid, tmp, addr, n)))
        unpack(buf, count, dt, tmp, n);
    free(tmp);
    return err;
}

/* Copies block i of the nblocks equal blocks e exposes into (buf, count,
 * dt), truncating like unpack. */
static int read_block(const struct call *k, const struct exposed *e, size_t i, size_t nblocks,
                      void *buf, size_t count, const struct bmpi_datatype *dt)
{
    size_t len = e->bytes / nblocks, room = count * bmpi_dt_size(dt), n = len < room ? len : room;
    if (e->pid == k->r->pid) /* an alltoall among more than 2 ranks reads its own slot too */
        return unpack(buf, count, dt, (const char *)(uintptr_t)e->addr + i * len, len);
    int err = read_into((int)e->pid, e->addr + i * len, n, buf, count, dt);
    return err ? err : check_fit(len, room);
}

/* Copies block i of the nblocks equal blocks rank w exposed into
 * (buf, count, dt), truncating like unpack. */
static int fetch(const struct call *k, int w, size_t i, size_t nblocks, void *buf, size_t count,
                 const struct bmpi_datatype *dt)
{
    struct exposed e;
    int err = exposed_by(k, w, &e);
    return err ? err : read_block(k, &e, i, nblocks, buf, count, dt);
}

/* This rank has finished its part of a direct call, with result err. A
 * direct call writes into other ranks' buffers too (bcast, reduce), so a
 * rank that failed its part says so before it counts the call done, and
 * the call fails on every rank. */
static void direct_done(struct call *k, int err)
{
    if (err)
        __atomic_store_n(&line_of(k, k->me)->failed, k->g->n + 1, __ATOMIC_RELAXED);
    finish(k); /* its release store publishes failed too */
}

/* Waits until every rank has finished the direct call direct_done ended
 * here: then nobody reads what this rank exposed any more. Returns err, or
 * the failure of another rank. */
static int direct_wait(struct call *k, void *staged, int err)
{
    uint64_t n = k->g->n;
    await_done(k, n);
    free(staged);
    for (int i = 0; i < k->p && !err; i++)
        if (__atomic_load_n(&line_of(k, i)->failed, __ATOMIC_RELAXED) == n)
            err = bmpi_err_set(MPI_ERR_OTHER,
                               "shm collective: rank %d failed its part of the call", i);
    return err;
}

/* Ends a direct call with this rank's result err. */
static int finish_direct(struct call *k, void *staged, int err)
{
    direct_done(k, err);
    return direct_wait(k, staged, err);
}

/* count elements of dt, times (0 or more) over: false on overflow. */
static bool total_bytes(const struct bmpi_datatype *dt, size_t count, size_t times, size_t *bytes)
{
    size_t b;
    if (!bmpi_dt_total(dt, count, &b) || (times && b > SIZE_MAX / times))
        return false;
    *bytes = b * (times ? times : 1);
    return true;
}

/* --- slots by reference ------------------------------------------------------ */

/* Payload bytes from which a writer whose payload lies in its shared heap
 * posts only where it is: each reader copies it once, by memcpy from the
 * heap mapped in its process, and the writer waits until all have. Each
 * writer decides for itself, so a buffer outside the heap (static, on the
 * stack, from glibc below 64 KiB) still goes through its slot rather than
 * by process_vm_readv, as a direct call would take it. 2 ranks bound to
 * the 2 cores of the AMD VM, interleaved runs of bench/coll, allgather and
 * alltoall: in its slow mode (cores 210 ns apart) 1 KiB 0.62-0.74 ->
 * 0.68-0.79 us, 2 KiB 0.89-1.05 -> 0.74-0.81, 8 KiB 1.3-1.6 -> 0.8-0.9,
 * 64 KiB 6.9-8.5 -> 2.0-2.3; in its fast mode 2 KiB 0.20-0.27 -> 0.20-0.21,
 * 4 KiB 0.32-0.37 -> 0.24-0.26, 64 KiB 3.2-3.6 -> 1.4-2.0. */
#define REF_MIN 2048

/* Whether this rank posts (buf, count, dt) by reference. Not on a node
 * with more ranks than cores: there the writer's wait for its readers
 * costs a round of the scheduler (4 and 8 ranks on 2 cores, allgather
 * 2-16 KiB 11-16 -> 20-21 us at 4 ranks, 42-62 -> 71-85 at 8). */
static bool ref_suits(const struct call *k, const void *buf, size_t count,
                      const struct bmpi_datatype *dt)
{
    size_t bytes = count * bmpi_dt_size(dt);
    const char *at = (const char *)buf + bmpi_dt_true_lb(dt);
    return bytes >= REF_MIN && k->r->cma && !k->r->oversubscribed && bmpi_dt_is_contig(dt) &&
           bmpi_shm_heap_owns(at) && bmpi_shm_heap_owns(at + bytes - 1);
}

/* Posts this rank's data: where it is if ref_suits(), else a copy of it.
 * Returns whether by reference; the rank must then wait_readers() after
 * finish() before it returns, and must not overwrite the data till then. */
static bool contribute_shared(const struct call *k, const void *buf, size_t count,
                              const struct bmpi_datatype *dt)
{
    if (!ref_suits(k, buf, count, dt)) {
        contribute(k, buf, count, dt);
        return false;
    }
    struct exposed e = {(uintptr_t)buf + (uintptr_t)bmpi_dt_true_lb(dt),
                        count * bmpi_dt_size(dt), 0, k->r->pid};
    post_exposed(k, &e);
    return true;
}

/* Part i of the nparts equal parts of rank w's payload into (buf, count,
 * dt), wherever the payload is, truncating like unpack. */
static int unpack_part(const struct call *k, int w, size_t i, size_t nparts, void *buf,
                       size_t count, const struct bmpi_datatype *dt)
{
    const struct slot *s = await(k, w);
    if (!s->ref) {
        size_t len = s->bytes / nparts;
        return unpack(buf, count, dt, s->data + i * len, len);
    }
    struct exposed e;
    memcpy(&e, s->data, sizeof e);
    return read_block(k, &e, i, nparts, buf, count, dt);
}

/* After finish(): until every rank has finished the call, so nobody reads
 * what this rank posted by reference any more. */
static void wait_readers(struct call *k)
{
    await_done(k, k->g->n);
}

/* --- the collectives ----------------------------------------------------------- */

int bmpi_shmcoll_barrier(struct bmpi_comm *c)
{
    struct call k;
    int err = path_for(c, BMPI_COLL_BARRIER, 0, &k);
    if (err || !k.g)
        return err ? err : BMPI_SHMCOLL_DECLINED;
    post(&k, claim(&k), 0);
    for (int i = 0; i < k.p; i++)
        await(&k, i);
    finish(&k);
    return BMPI_OK;
}

/* Where the two ranks of a bcast split the copy: a page boundary near the
 * middle, so the two copies never touch the same page. */
static size_t split_point(size_t len)
{
    return (len / 2) & ~(size_t)4095;
}

/* The root of a bcast between two ranks writes the upper part of the
 * message straight into the other rank's buffer, if that is contiguous,
 * while the other rank reads the lower part: both cores copy. */
static int bcast_pair_root(struct call *k, void *buf, size_t count, const struct bmpi_datatype *dt)
{
    void *staged;
    struct exposed src, dst;
    int err = expose(k, buf, count, dt, &staged, &src);
    int e = exposed_by(k, 1 - k->me, &dst);
    size_t cut = split_point(src.bytes), end = src.bytes < dst.bytes ? src.bytes : dst.bytes;
    err = err ? err : e;
    if (!err && dst.addr && end > cut)
        err = bmpi_shm_peer_write((int)dst.pid, (const char *)(uintptr_t)src.addr + cut,
                                 dst.addr + cut, end - cut);
    return finish_direct(k, staged, err);
}

/* The other rank: posts where the message goes (0: not contiguous, the
 * root writes nothing) and reads the lower part, or all of it. */
static int bcast_pair_leaf(struct call *k, void *buf, size_t count, const struct bmpi_datatype *dt)
{
    size_t room = count * bmpi_dt_size(dt);
    struct exposed dst = {0, room, 0, k->r->pid}, src;
    if (bmpi_dt_is_contig(dt))
        dst.addr = (uintptr_t)buf + (uintptr_t)bmpi_dt_true_lb(dt);
    post_exposed(k, &dst);
    int err = exposed_by(k, 1 - k->me, &src);
    if (!err) {
        size_t n = dst.addr ? split_point(src.bytes) : src.bytes;
        err = read_into((int)src.pid, src.addr, n < room ? n : room, buf, count, dt);
    }
    err = finish_direct(k, NULL, err);
    return err ? err : check_fit(src.bytes, room);
}

int bmpi_shmcoll_bcast(struct bmpi_comm *c, void *buf, size_t count,
                       const struct bmpi_datatype *dt, int root)
{
    size_t bytes;
    struct call k = {0};
    if (!total_bytes(dt, count, 0, &bytes))
        return BMPI_SHMCOLL_DECLINED;
    int err = direct_path(c, BMPI_COLL_BCAST, bytes, &k);
    if (!err && k.g) /* only between 2 ranks (direct_factor) */
        return k.me == root ? bcast_pair_root(&k, buf, count, dt)
                            : bcast_pair_leaf(&k, buf, count, dt);
    /* a message bigger than a slot goes in rounds of a slot each */
    err = err ? err : path_for(c, BMPI_COLL_BCAST, bytes < MIN_SLOT ? bytes : MIN_SLOT, &k);
    if (err || !k.g)
        return err ? err : BMPI_SHMCOLL_DECLINED;
    if (bytes <= k.g->slot_bytes) {
        if (k.me == root)
            contribute(&k, buf, count, dt);
        else
            err = unpack_chunks(&k, root, buf, count, dt, 0);
        finish(&k);
        return err;
    }
    bool mapped;
    if ((err = rings_mapped(&k, bytes, &mapped)) || !mapped)
        return err ? err : BMPI_SHMCOLL_DECLINED;
    use_ring(&k, bytes);
    for (size_t from = 0; from < bytes; from += k.g->slot_bytes) {
        size_t len = bytes - from < k.g->slot_bytes ? bytes - from : k.g->slot_bytes;
        int e = BMPI_OK;
        if (k.me == root)
            contribute_range(&k, buf, count, dt, from, len);
        else
            e = unpack_chunks(&k, root, buf, count, dt, from);
        err = err ? err : e;
        finish(&k);
    }
    return err;
}

/* Elements [lo, lo + n) of rank i's contribution to a reduction, laid out
 * as the type says (contiguous: at the type's origin): own (this rank's
 * send buffer, MPI_IN_PLACE when its data is in rbuf) or the rank's slot,
 * once they are written. own may be MPI_BOTTOM (NULL) with a type at an
 * absolute address, so MPI_IN_PLACE, not NULL, says "none", and addresses
 * are computed in integers. */
static const char *contribution(const struct call *k, int i, const void *own, MPI_Aint lb,
                                size_t size, size_t lo, size_t n)
{
    if (i == k->me && own != MPI_IN_PLACE)
        return (const char *)((uintptr_t)own + lo * size);
    return bmpi_coll_origin(await_bytes(k, i, (lo + n) * size)->data, lb - (MPI_Aint)(lo * size));
}

/* Reductions go element range by element range of about CHUNK bytes, so
 * they start on the first chunk of a big payload while it is written. */
static size_t chunk_elems(size_t size)
{
    return size >= CHUNK ? 1 : CHUNK / size;
}

/* rbuf = x0 op (x1 op (... op x(p-1))) for elements [first, first + count)
 * (rbuf is the origin of element 0): the rank order of the standard,
 * folded from the top so the user function always gets the lower ranks'
 * data as invec, straight from their slots; every rank computes the same
 * expression, so all get the same bits. The first step starts from this
 * rank's own data when it may (it is x(p-1), or x(p-2) and the op
 * commutes: a op b == b op a exactly), which saves a pass over a slot. */
static void fold_range(const struct call *k, const void *own, void *rbuf, size_t first,
                       size_t count, const struct bmpi_datatype *dt, const struct bmpi_op *op)
{
    MPI_Aint lb = bmpi_dt_true_lb(dt);
    size_t size = bmpi_dt_size(dt), step = chunk_elems(size);
    int top = k->p - 1, next = k->p - 2;
    if (own != MPI_IN_PLACE && k->me == next && bmpi_op_commutative(op)) {
        top = next;
        next = k->p - 1;
    }
    for (size_t lo = first; lo < first + count; lo += step) {
        size_t n = first + count - lo < step ? first + count - lo : step;
        char *acc = (char *)((uintptr_t)rbuf + lo * size);
        bmpi_op_apply_into(op, contribution(k, next, own, lb, size, lo, n),
                           contribution(k, top, own, lb, size, lo, n), acc, n, dt);
        for (int i = k->p - 3; i >= 0; i--)
            bmpi_op_apply(op, contribution(k, i, own, lb, size, lo, n), acc, n, dt);
    }
}

/* Whether a reduction of count elements, bytes in all, takes two phases:
 * big enough that sharing the folding pays for a second round of slots.
 * A reduce at 2 ranks stays in one, where the leaf returns at once, and
 * so does a reduce on a node with more ranks than cores, whose ranks
 * cannot fold their segments at the same time anyway: there the second
 * round cost every rank a wait for all others on the shared cores (AMD
 * VM, 2 cores, interleaved runs: 4 ranks 16 KiB 14.6-24.5 -> 3.5-5.3 us,
 * 1 MiB 222-321 -> 145; 8 ranks 16 KiB 46-48 -> 14-15, 64 KiB 67-68 ->
 * 41). An allreduce, whose ranks would each fold everything in one
 * phase, keeps two there (8 ranks, 256 KiB: 208-283 against 565-585 us
 * in one). An allreduce at 2 ranks halves its folding only, and in one
 * phase was faster up to 64 KiB (AMD VM, interleaved runs: 16 KiB
 * 3.4-3.6 -> 2.1-2.3 us, 32 KiB 5.6-5.7 -> 4.4, 64 KiB 9.6-9.7 ->
 * 8.6-8.9; even at 128 KiB). */
static bool two_phases(const struct call *k, size_t count, size_t bytes, bool rooted)
{
    size_t min = k->p == 2 ? PAIR_TWO_PHASE_MIN : TWO_PHASE_MIN;
    return bytes >= min && count >= (size_t)k->p &&
           (!rooted || (k->p > 2 && !k->r->oversubscribed));
}

/* Elements [i * count / p, (i + 1) * count / p): rank i's segment. */
static size_t seg_lo(size_t count, int i, int p)
{
    return count * (size_t)i / (size_t)p;
}

/* A rank's data for the first phase of a reduction in two: all of it, or,
 * when it folds its own segment from its own buffer (own_folded), the
 * other ranks' segments only. */
static void contribute_segments(const struct call *k, const void *data, bool own_folded,
                                size_t count, const struct bmpi_datatype *dt)
{
    size_t size = bmpi_dt_size(dt);
    if (!own_folded) {
        contribute(k, data, count, dt);
        return;
    }
    contribute_but(k, (const char *)data + bmpi_dt_true_lb(dt), count * size,
                   seg_lo(count, k->me, k->p) * size, seg_lo(count, k->me + 1, k->p) * size);
}

/* A big reduction in two calls of the ring, so the ranks share the
 * folding instead of each doing all of it: in the first (everyone has
 * posted its contribution already) each rank folds its own segment into
 * its slot of the next call; in the second it posts that slot, and the
 * ranks that want the result (all for allreduce, the root for reduce)
 * copy every segment into rbuf. Each element is still folded once, in
 * rank order. */
static void fold_two_phases(struct call *k, const void *own, void *rbuf, size_t count,
                            const struct bmpi_datatype *dt, const struct bmpi_op *op,
                            bool want_result)
{
    MPI_Aint lb = bmpi_dt_true_lb(dt);
    size_t size = bmpi_dt_size(dt);
    size_t lo = seg_lo(count, k->me, k->p), n = seg_lo(count, k->me + 1, k->p) - lo;
    struct slot *t = claim_ahead(k, 1);
    fold_range(k, own, bmpi_coll_origin(t->data, lb + (MPI_Aint)(lo * size)), lo, n, dt, op);
    finish(k);
    post(k, t, n * size);
    for (int i = 0; i < k->p && want_result; i++) {
        size_t ilo = seg_lo(count, i, k->p), in = seg_lo(count, i + 1, k->p) - ilo;
        memcpy((char *)rbuf + lb + ilo * size, await(k, i)->data, in * size);
    }
    finish(k);
}

/* The root of a reduce with a commutative op may combine in any order:
 * it starts from its own data, already in rbuf when in place, and applies
 * each other slot once. */
static void fold_commutative(const struct call *k, const void *own, void *rbuf, size_t count,
                             const struct bmpi_datatype *dt, const struct bmpi_op *op)
{
    MPI_Aint lb = bmpi_dt_true_lb(dt);
    size_t size = bmpi_dt_size(dt), step = chunk_elems(size);
    for (size_t lo = 0; lo < count; lo += step) {
        size_t n = count - lo < step ? count - lo : step;
        char *acc = (char *)((uintptr_t)rbuf + lo * size);
        bool first = own != MPI_IN_PLACE; /* the first other slot goes into acc with own */
        for (int i = k->p - 1; i >= 0; i--) {
            if (i == k->me)
                continue;
            const char *in = contribution(k, i, MPI_IN_PLACE, lb, size, lo, n);
            if (first)
                bmpi_op_apply_into(op, in, contribution(k, k->me, own, lb, size, lo, n), acc, n,
                                   dt);
            else
                bmpi_op_apply(op, in, acc, n, dt);
            first = false;
        }
    }
}

/* Reductions bigger than a slot go in rounds of a slot each with more
 * than 2 ranks (8 ranks, 1 MiB allreduce: 1250-1320 -> 910-935 us); at
 * 2 ranks point-to-point with both sides copying is faster (1 MiB: 115-150
 * against 195 us in rounds). bytes: of the whole reduction. */
static int reduce_path(struct bmpi_comm *c, enum bmpi_coll_id id, size_t bytes, struct call *k)
{
    return path_for(c, id, c->size > 2 && bytes > MIN_SLOT ? MIN_SLOT : bytes, k);
}

/* Elements per round of a reduction: as many as fill a big slot (0: an
 * element does not fit). */
static size_t round_elems(const struct call *k, const struct bmpi_datatype *dt)
{
    size_t size = bmpi_dt_size(dt);
    return size ? k->r->ring[BIG].slot_bytes / size : SIZE_MAX;
}

/* Rounds of per elements that count takes; a count of 0 still takes one. */
static size_t rounds_for(size_t count, size_t per)
{
    return count ? (count - 1) / per + 1 : 1;
}

/* Elements the root of a pair reduce folds, from the first on; the leaf,
 * which also has to write its part into the root's buffer, folds the rest. */
static size_t root_share(size_t count)
{
    return count - count * 2 / 5;
}

/* The root's part: the leaf's elements come straight into rbuf, or
 * through a staging buffer when rbuf holds the root's own. */
static int fold_root_part(const struct exposed *leaf, const void *sbuf, void *rbuf, size_t n,
                          const struct bmpi_datatype *dt, const struct bmpi_op *op)
{
    MPI_Aint lb = bmpi_dt_true_lb(dt);
    size_t bytes = n * bmpi_dt_size(dt);
    if (sbuf != MPI_IN_PLACE) {
        int err = bmpi_shm_peer_read(leaf->pid, (char *)rbuf + lb, leaf->addr, bytes);
        if (!err)
            bmpi_op_apply(op, sbuf, rbuf, n, dt);
        return err;
    }
    char *tmp;
    int err = staging(bytes, &tmp);
    if (err)
        return err;
    if (!(err = bmpi_shm_peer_read(leaf->pid, tmp, leaf->addr, bytes)))
        bmpi_op_apply(op, bmpi_coll_origin(tmp, lb), rbuf, n, dt);
    free(tmp);
    return err;
}

/* The leaf's part, elements [first, first + n): the root's elements are
 * folded with the leaf's own and written into the root's rbuf. */
static int fold_leaf_part(const struct exposed *root, const void *sbuf, size_t first, size_t n,
                          const struct bmpi_datatype *dt, const struct bmpi_op *op)
{
    MPI_Aint lb = bmpi_dt_true_lb(dt);
    size_t size = bmpi_dt_size(dt), bytes = n * size;
    char *tmp;
    int err = staging(bytes, &tmp);
    if (err)
        return err;
    if (!(err = bmpi_shm_peer_read(root->pid, tmp, root->addr + first * size, bytes))) {
        bmpi_op_apply(op, (const char *)sbuf + first * size, bmpi_coll_origin(tmp, lb), n, dt);
        err = bmpi_shm_peer_write(root->pid, tmp, root->dst + first * size, bytes);
    }
    free(tmp);
    return err;
}

/* A reduce between two ranks with a commutative op, direct: each folds
 * part of the message reading the other's buffer, so both cores work and
 * every element crosses between them once. */
static int reduce_pair(struct call *k, const void *sbuf, void *rbuf, size_t count,
                       const struct bmpi_datatype *dt, const struct bmpi_op *op, int root)
{
    MPI_Aint lb = bmpi_dt_true_lb(dt);
    const void *own = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    struct exposed mine = {(uintptr_t)own + (uintptr_t)lb, count * bmpi_dt_size(dt),
                           k->me == root ? (uintptr_t)rbuf + (uintptr_t)lb : 0, k->r->pid};
    struct exposed other;
    size_t cut = root_share(count);
    post_exposed(k, &mine);
    int err = exposed_by(k, 1 - k->me, &other);
    if (!err)
        err = k->me == root ? fold_root_part(&other, sbuf, rbuf, cut, dt, op)
                            : fold_leaf_part(&other, sbuf, cut, count - cut, dt, op);
    return finish_direct(k, NULL, err);
}

/* One round of a reduce: count elements that fit a slot. own: this
 * rank's data, MPI_IN_PLACE when the root's is in rbuf. */
static void reduce_round(struct call *k, const void *own, void *rbuf, size_t count,
                         const struct bmpi_datatype *dt, const struct bmpi_op *op, int root)
{
    if (two_phases(k, count, count * bmpi_dt_size(dt), true)) {
        contribute_segments(k, own != MPI_IN_PLACE ? own : rbuf, own != MPI_IN_PLACE, count, dt);
        fold_two_phases(k, own, rbuf, count, dt, op, k->me == root);
        return;
    }
    if (k->me != root) {
        contribute(k, own, count, dt);
    } else if (bmpi_op_commutative(op)) {
        fold_commutative(k, own, rbuf, count, dt, op);
    } else {
        if (own == MPI_IN_PLACE) /* the fold overwrites rbuf: keep a copy */
            contribute(k, rbuf, count, dt);
        fold_range(k, own, rbuf, 0, count, dt, op);
    }
    finish(k);
}

/* One round of an allreduce, as reduce_round. */
static void allreduce_round(struct call *k, const void *own, void *rbuf, size_t count,
                            const struct bmpi_datatype *dt, const struct bmpi_op *op)
{
    if (two_phases(k, count, count * bmpi_dt_size(dt), false)) {
        contribute_segments(k, own != MPI_IN_PLACE ? own : rbuf, own != MPI_IN_PLACE, count, dt);
        fold_two_phases(k, own, rbuf, count, dt, op, true);
        return;
    }
    contribute(k, own != MPI_IN_PLACE ? own : rbuf, count, dt);
    fold_range(k, own, rbuf, 0, count, dt, op);
    finish(k);
}

/* One round of a reduce, or of an allreduce if root < 0, on the ring for
 * its bytes. */
static void reduction_round(struct call *k, const void *own, void *rbuf, size_t count,
                            const struct bmpi_datatype *dt, const struct bmpi_op *op, int root)
{
    use_ring(k, count * bmpi_dt_size(dt));
    if (root < 0)
        allreduce_round(k, own, rbuf, count, dt, op);
    else
        reduce_round(k, own, rbuf, count, dt, op, root);
}

/* A reduce (an allreduce if root < 0) of bytes in all (of a contiguous
 * dt) in rounds of as many elements as fill a big slot; one round if they
 * all fit, the common case, which takes no division. */
static int reduce_in_rounds(struct call *k, const void *sbuf, void *rbuf, size_t count,
                            size_t bytes, const struct bmpi_datatype *dt, const struct bmpi_op *op,
                            int root)
{
    bool mapped;
    int err = rings_mapped(k, bytes, &mapped);
    if (err || !mapped)
        return err ? err : BMPI_SHMCOLL_DECLINED;
    if (bytes <= k->r->ring[BIG].slot_bytes) {
        reduction_round(k, sbuf, rbuf, count, dt, op, root);
        return BMPI_OK;
    }
    size_t per = round_elems(k, dt);
    if (per == 0)
        return BMPI_SHMCOLL_DECLINED;
    for (size_t r = 0, lo = 0; r < rounds_for(count, per); r++, lo += per) {
        size_t n = count - lo < per ? count - lo : per;
        MPI_Aint ofs = (MPI_Aint)lo * bmpi_dt_extent(dt);
        const void *o = sbuf == MPI_IN_PLACE ? sbuf : (const void *)((uintptr_t)sbuf + ofs);
        reduction_round(k, o, (void *)((uintptr_t)rbuf + ofs), n, dt, op, root);
    }
    return BMPI_OK;
}

/* bytes of count elements of dt if a reduction of them may take the path
 * (contiguous, no overflow); false if not. Only contiguous types: the
 * slots then hold the data exactly as the type lays it out, and ops apply
 * to them in place. */
static bool reducible(const struct bmpi_datatype *dt, size_t count, size_t *bytes)
{
    return bmpi_dt_is_contig(dt) && total_bytes(dt, count, 0, bytes);
}

int bmpi_shmcoll_reduce(struct bmpi_comm *c, const void *sbuf, void *rbuf, size_t count,
                        const struct bmpi_datatype *dt, struct bmpi_op *op, int root)
{
    struct call k;
    size_t bytes;
    if (!reducible(dt, count, &bytes))
        return BMPI_SHMCOLL_DECLINED;
    if (c->size == 2 && bmpi_op_commutative(op)) {
        int err = direct_path(c, BMPI_COLL_REDUCE, bytes, &k);
        if (err || k.g)
            return err ? err : reduce_pair(&k, sbuf, rbuf, count, dt, op, root);
    }
    int err = reduce_path(c, BMPI_COLL_REDUCE, bytes, &k);
    if (err || !k.g)
        return err ? err : BMPI_SHMCOLL_DECLINED;
    return reduce_in_rounds(&k, sbuf, rbuf, count, bytes, dt, op, root);
}

int bmpi_shmcoll_allreduce(struct bmpi_comm *c, const void *sbuf, void *rbuf, size_t count,
                           const struct bmpi_datatype *dt, struct bmpi_op *op)
{
    struct call k;
    size_t bytes;
    if (!reducible(dt, count, &bytes))
        return BMPI_SHMCOLL_DECLINED;
    int err = reduce_path(c, BMPI_COLL_ALLREDUCE, bytes, &k);
    if (err || !k.g)
        return err ? err : BMPI_SHMCOLL_DECLINED;
    return reduce_in_rounds(&k, sbuf, rbuf, count, bytes, dt, op, -1);
}

/* Each rank exposes its block where it is (in rbuf when in place) and
 * copies every other rank's block from there. */
static int allgather_direct(struct call *k, const void *sbuf, size_t scount, MPI_Datatype stype,
                            void *rbuf, size_t rcount, MPI_Datatype rtype)
{
    struct bmpi_datatype *rdt = bmpi_dt_get(rtype);
    void *mine = bmpi_coll_ofs(rbuf, rcount * (size_t)k->me, rtype), *staged;
    struct exposed e;
    int err;
    if (sbuf == MPI_IN_PLACE) {
        err = expose(k, mine, rcount, rdt, &staged, &e);
    } else {
        err = expose(k, sbuf, scount, bmpi_dt_get(stype), &staged, &e);
    }
    for (int j = 1; j < k->p; j++) { /* from the next rank on, so readers spread out */
        int i = (k->me + j) % k->p;
        int e = fetch(k, i, 0, 1, bmpi_coll_ofs(rbuf, rcount * (size_t)i, rtype), rcount, rdt);
        err = err ? err : e;
    }
    /* the others learn this rank is done while it copies its own block */
    direct_done(k, err);
    int own = sbuf == MPI_IN_PLACE ? BMPI_OK
                                   : bmpi_coll_copy(sbuf, scount, stype, mine, rcount, rtype);
    return direct_wait(k, staged, err ? err : own);
}

int bmpi_shmcoll_allgather(struct bmpi_comm *c, const void *sbuf, size_t scount,
                           MPI_Datatype stype, void *rbuf, size_t rcount, MPI_Datatype rtype)
{
    struct bmpi_datatype *rdt = bmpi_dt_get(rtype);
    size_t block;
    struct call k = {0};
    if (!total_bytes(rdt, rcount, 0, &block))
        return BMPI_SHMCOLL_DECLINED;
    int err = direct_path(c, BMPI_COLL_ALLGATHER, block, &k);
    if (!err && k.g)
        return allgather_direct(&k, sbuf, scount, stype, rbuf, rcount, rtype);
    err = err ? err : path_for(c, BMPI_COLL_ALLGATHER, block, &k);
    if (err || !k.g)
        return err ? err : BMPI_SHMCOLL_DECLINED;
    void *mine = bmpi_coll_ofs(rbuf, rcount * (size_t)k.me, rtype);
    bool ref;
    if (sbuf == MPI_IN_PLACE) {
        ref = contribute_shared(&k, mine, rcount, rdt);
    } else {
        ref = contribute_shared(&k, sbuf, scount, bmpi_dt_get(stype));
        /* its own block straight across while the others still write */
        err = bmpi_coll_copy(sbuf, scount, stype, mine, rcount, rtype);
    }
    for (int j = 1; j < k.p; j++) {
        int i = (k.me + j) % k.p;
        int e = unpack_part(&k, i, 0, 1, bmpi_coll_ofs(rbuf, rcount * (size_t)i, rtype), rcount,
                            rdt);
        err = err ? err : e;
    }
    finish(&k);
    if (ref)
        wait_readers(&k);
    return err;
}

/* Each rank exposes its send buffer; every rank copies its block from
 * each of them. */
static int alltoall_direct(struct call *k, const void *sbuf, size_t scount, MPI_Datatype stype,
                           void *rbuf, size_t rcount, MPI_Datatype rtype)
{
    struct bmpi_datatype *rdt = bmpi_dt_get(rtype);
    size_t p = (size_t)k->p, me = (size_t)k->me;
    void *staged;
    struct exposed e;
    int err = expose(k, sbuf, scount * p, bmpi_dt_get(stype), &staged, &e);
    for (size_t j = 1; j < p; j++) { /* from the next rank on, so readers spread out */
        size_t i = (me + j) % p;
        int e = fetch(k, (int)i, me, p, bmpi_coll_ofs(rbuf, rcount * i, rtype), rcount, rdt);
        err = err ? err : e;
    }
    /* the others learn this rank is done while it copies its own block */
    direct_done(k, err);
    int own = bmpi_coll_copy(bmpi_coll_ofs(sbuf, scount * me, stype), scount, stype,
                             bmpi_coll_ofs(rbuf, rcount * me, rtype), rcount, rtype);
    return direct_wait(k, staged, err ? err : own);
}

/* Posts the blocks of an alltoall as contribute_shared() does, but in
 * place copies them: the rank overwrites them with what it receives while
 * the others may still read them. */
static bool contribute_blocks(const struct call *k, const void *buf, size_t count,
                              const struct bmpi_datatype *dt, bool in_place)
{
    if (!in_place)
        return contribute_shared(k, buf, count, dt);
    contribute(k, buf, count, dt);
    return false;
}

#define ALLTOALL_SLOT_BLOCK (64u << 10) /* largest block through slots among > 2 ranks */
/* Most rounds an alltoall among more than 2 ranks takes through the
 * slots. A round carries the blocks for only as many destinations as fit
 * a slot, and only those destinations read in it while the others wait,
 * so in r rounds the copies run r steps in a row on p / r cores. Big slots
 * shrink as ranks grow (BIG_CAP), so 64 KiB blocks took 16 rounds of one
 * reader each at 16 ranks, five times as long as point-to-point, where
 * every rank reads at once (docs/collectives.md, "Shared-memory path"). Three
 * rounds is what 64 KiB blocks take at 8 ranks, where the slots won. */
#define ALLTOALL_MAX_ROUNDS 3

/* Alltoall between two ranks through the slots: only the block for the
 * other rank crosses; this rank's own block is copied locally (in place it
 * is already there). */
static int alltoall_pair(struct call *k, const void *sbuf, size_t scount, MPI_Datatype stype,
                         void *rbuf, size_t rcount, MPI_Datatype rtype)
{
    size_t me = (size_t)k->me, other = 1 - me;
    const void *src = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    size_t scnt = sbuf == MPI_IN_PLACE ? rcount : scount;
    MPI_Datatype st = sbuf == MPI_IN_PLACE ? rtype : stype;
    bool ref = contribute_blocks(k, bmpi_coll_ofs(src, scnt * other, st), scnt, bmpi_dt_get(st),
                                 sbuf == MPI_IN_PLACE);
    int err = BMPI_OK;
    if (sbuf != MPI_IN_PLACE)
        err = bmpi_coll_copy(bmpi_coll_ofs(sbuf, scount * me, stype), scount, stype,
                             bmpi_coll_ofs(rbuf, rcount * me, rtype), rcount, rtype);
    int e = unpack_part(k, (int)other, 0, 1, bmpi_coll_ofs(rbuf, rcount * other, rtype), rcount,
                        bmpi_dt_get(rtype));
    finish(k);
    if (ref)
        wait_readers(k);
    return err ? err : e;
}

int bmpi_shmcoll_alltoall(struct bmpi_comm *c, const void *sbuf, size_t scount, MPI_Datatype stype,
                          void *rbuf, size_t rcount, MPI_Datatype rtype)
{
    struct bmpi_datatype *rdt = bmpi_dt_get(rtype);
    size_t p = (size_t)c->size, block, all;
    bool in_place = sbuf == MPI_IN_PLACE;
    struct call k = {0};
    int err = 0;
    if (!total_bytes(rdt, rcount, 0, &block) || !total_bytes(rdt, rcount, p, &all))
        return BMPI_SHMCOLL_DECLINED;
    /* In place, a rank's blocks would be overwritten while others read them. */
    err = in_place ? BMPI_OK : direct_path(c, BMPI_COLL_ALLTOALL, block, &k);
    if (!err && k.g)
        return alltoall_direct(&k, sbuf, scount, stype, rbuf, rcount, rtype);
    /* Bigger blocks among more ranks go point-to-point (all posted at once
     * up to 8 ranks, select.c): through slots, in rounds of a few
     * destinations each, 8 ranks at 128 KiB took 630-740 us against
     * 430-520. */
    if (!err && p > 2 && block > ALLTOALL_SLOT_BLOCK)
        return BMPI_SHMCOLL_DECLINED;
    /* In place, this rank's blocks go to its slot before any of them is
     * overwritten, so all p must fit one slot (at 2 ranks, only the other
     * rank's block goes through the slot). */
    err = err ? err : path_for(c, BMPI_COLL_ALLTOALL, p == 2 ? block : in_place ? all : block, &k);
    if (err || !k.g)
        return err ? err : BMPI_SHMCOLL_DECLINED;
    if (p == 2)
        return alltoall_pair(&k, sbuf, scount, stype, rbuf, rcount, rtype);
    /* When the p blocks of a rank do not fit a slot, the call goes in
     * rounds, each carrying the blocks for as many destinations as fit. */
    size_t cap = k.r->ring[BIG].slot_bytes, per = all <= cap ? p : cap / block;
    if ((p + per - 1) / per > ALLTOALL_MAX_ROUNDS) /* alike on every rank: the region's geometry */
        return BMPI_SHMCOLL_DECLINED;
    bool mapped;
    if ((err = rings_mapped(&k, per * block, &mapped)) || !mapped)
        return err ? err : BMPI_SHMCOLL_DECLINED;
    use_ring(&k, per * block);
    const void *src = in_place ? rbuf : sbuf;
    size_t scnt = in_place ? rcount : scount;
    MPI_Datatype st = in_place ? rtype : stype;
    for (size_t d0 = 0; d0 < p; d0 += per) {
        size_t nd = p - d0 < per ? p - d0 : per, me = (size_t)k.me;
        bool ref = contribute_blocks(&k, bmpi_coll_ofs(src, scnt * d0, st), scnt * nd,
                                     bmpi_dt_get(st), in_place);
        for (size_t j = 0; me >= d0 && me < d0 + nd && j < p; j++) {
            size_t i = (me + j) % p; /* own slot first, as in allgather */
            int e = unpack_part(&k, (int)i, me - d0, nd, bmpi_coll_ofs(rbuf, rcount * i, rtype),
                                rcount, rdt);
            err = err ? err : e;
        }
        finish(&k);
        if (ref)
            wait_readers(&k);
    }
    return err;
}
