/*
 * The shared-memory path of the blocking collectives: what its files
 * share (the rest of collectives/ calls it through shm_coll.h; design and
 * measurements in docs/collectives.md, "Shared-memory path").
 *
 *   shm_region.c     the region: its geometry, mapping it through
 *                    transport/shm/node.h, and which ring or path a call
 *                    takes (path_for, direct_path)
 *   shm_ring.c       the ring engine: claiming, filling, posting and
 *                    reading slots, flow control, waiting
 *   shm_direct.c     single copy: direct calls and slots by reference
 *   shm_barrier.c, shm_bcast.c, shm_reduce.c (reduce and allreduce),
 *   shm_allgather.c, shm_alltoall.c: the collectives over these
 *
 * These files call the runtime (progress, datatypes, ops, errors), the
 * schedules of coll.h (only to set a region up), and of transport/shm
 * only its node-level service, node.h, and cacheline.h.
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
 * Waiting keeps calling bmpi_progress(), so point-to-point traffic and
 * nonblocking collectives move while a rank waits here, and it follows the
 * progress engine's idle policy (yield when oversubscribed).
 *
 * Names shared between these files start with shmc_; the small steps
 * every call takes are inline here, so that they cost no call.
 */
#ifndef BMPI_COLLECTIVES_SHM_COLL_IMPL_H
#define BMPI_COLLECTIVES_SHM_COLL_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "collectives/coll.h"
#include "collectives/shm_coll.h"
#include "runtime/error.h"
#include "transport/shm/node.h"

#define LINE 64
/* Payload bytes up to which a posted slot is demoted to the shared cache
 * (cacheline.h): 64-512 B calls at 2 ranks gained; beyond 1 KiB a bcast
 * root, which streams ahead of its readers, lost more than its readers
 * saved (docs/collectives.md, "Why the constants are what they are"). */
#define DEMOTE_MAX 1024
#define TWO_PHASE_MIN (16u << 10) /* bytes from which reductions take two phases */
#define MIN_SLOT 1024                 /* below this the path is not worth a region */

enum { SMALL, STREAM, MEDIUM, BIG, NRINGS };

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
    /* header, done lines, small and stream rings; len from the layout,
     * addr NULL: no path */
    struct bmpi_node_region near;
    /* medium and big rings; addr NULL until a call needs them */
    struct bmpi_node_region far;
    bool far_failed; /* could not be mapped: calls that need it decline */
    bool cma;   /* every rank can read every other's memory: direct calls */
    bool fsrm;  /* readers copy slots with REP MOVSB (cacheline.h) */
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

/* A rank's line of done words for one ring, written only by that rank. */
struct done_line {
    uint64_t done;   /* calls of the ring this rank has finished */
    uint64_t failed; /* number + 1 of the last direct call it failed */
};

static inline struct done_line *shmc_line_of(const struct call *k, int rank)
{
    return (struct done_line *)((char *)k->r->near.addr +
                                LINE * (size_t)(1 + k->g->id * k->p + rank));
}

static inline uint64_t *shmc_done_of(const struct call *k, int rank)
{
    return &shmc_line_of(k, rank)->done;
}

/* What a rank posts in a direct call: where its data is. pid 0: the rank
 * could not stage it (no memory), and the call fails on every rank that
 * needs it. */
struct exposed {
    uint64_t addr, bytes;
    uint64_t dst; /* reduce: where the root wants the result */
    int32_t pid;
}; /* 32 bytes: it shares the slot's first line with seq */

/* count elements of dt, times (0 or more) over: false on overflow. */
static inline bool shmc_total_bytes(const struct bmpi_datatype *dt, size_t count, size_t times,
                                    size_t *bytes)
{
    size_t b;
    if (!bmpi_dt_total(dt, count, &b) || (times && b > SIZE_MAX / times))
        return false;
    *bytes = b * (times ? times : 1);
    return true;
}

/* More data than the receive buffer holds is truncation, as on
 * point-to-point (only what fits is copied). */
static inline int shmc_check_fit(size_t len, size_t room)
{
    if (len > room)
        return bmpi_err_set(MPI_ERR_TRUNCATE, "shm collective: %zu bytes into a buffer of %zu",
                            len, room);
    return BMPI_OK;
}

/* Whether call k's writers stream ahead of their readers: a bcast root,
 * the leaves of a reduce. */
static inline bool shmc_streams(const struct call *k)
{
    return k->id == BMPI_COLL_BCAST || k->id == BMPI_COLL_REDUCE;
}

/* --- shm_region.c: which path a call takes -------------------------------- */

/* Sets k up if this call takes the shm path (k->g NULL if not), creating
 * the region on first use. bytes is what one slot must hold. */
int shmc_path_for(struct bmpi_comm *c, enum bmpi_coll_id id, size_t bytes, struct call *k);
/* Sets k up if a call moving blocks of block bytes goes direct (k->g NULL
 * if not); its slots then hold a struct exposed. Blocks need not fit a
 * slot. Depends only on values every rank shares. */
int shmc_direct_path(struct bmpi_comm *c, enum bmpi_coll_id id, size_t block, struct call *k);
/* Whether the rings that slots of bytes may take are mapped (the far
 * region is mapped on the first call that needs it). */
int shmc_rings_mapped(struct call *k, size_t bytes, bool *mapped);
/* Points k at the ring for slots of bytes. */
void shmc_use_ring(struct call *k, size_t bytes);

/* --- shm_ring.c: slots ----------------------------------------------------- */

/* Until every rank has finished the first need calls of the ring. */
void shmc_await_done(const struct call *k, uint64_t need);
/* This rank's slot for the call ahead of the current one (0: the current
 * one), once every rank is done with its previous use. */
struct slot *shmc_claim_ahead(const struct call *k, unsigned ahead);
/* Publishes the slot (ref: it holds a struct exposed, not the payload). */
void shmc_publish(const struct call *k, struct slot *s, size_t bytes, bool ref);
/* Rank w's slot of the current call once it holds at least upto bytes of
 * the payload, or all of it (s->bytes is valid then). */
const struct slot *shmc_await_bytes(const struct call *k, int w, size_t upto);
/* Writes this rank's data into its slot and posts it; _range: bytes
 * [from, from + bytes) of it; _but: a contiguous contribution to a
 * reduction in two phases, but for bytes [skip_lo, skip_hi). */
void shmc_contribute(const struct call *k, const void *buf, size_t count,
                     const struct bmpi_datatype *dt);
void shmc_contribute_range(const struct call *k, const void *buf, size_t count,
                           const struct bmpi_datatype *dt, size_t from, size_t bytes);
void shmc_contribute_but(const struct call *k, const char *own, size_t bytes, size_t skip_lo,
                         size_t skip_hi);
/* Copies len bytes of data into (buf, count, dt), truncating. */
int shmc_unpack(const struct call *k, void *buf, size_t count, const struct bmpi_datatype *dt,
                const char *data, size_t len);
/* Rank w's payload into (buf, count, dt) from byte from on, each chunk as
 * soon as w has written it. */
int shmc_unpack_chunks(const struct call *k, int w, void *buf, size_t count,
                       const struct bmpi_datatype *dt, size_t from);

/* --- shm_direct.c: single copy --------------------------------------------- */

/* Posts e, where this rank's data is, in its slot. */
void shmc_post_exposed(const struct call *k, const struct exposed *e);
/* A buffer of bytes to stage data of a direct call in (free it after). */
int shmc_staging(size_t bytes, char **buf);
/* Posts where this rank's count elements of dt are (packed into *staged
 * first if not contiguous), into *out too. */
int shmc_expose(const struct call *k, const void *buf, size_t count,
                const struct bmpi_datatype *dt, void **staged, struct exposed *out);
/* What rank w exposed in this call. */
int shmc_exposed_by(const struct call *k, int w, struct exposed *e);
/* n bytes at addr in process pid into (buf, count, dt). */
int shmc_read_into(const struct call *k, int pid, uint64_t addr, size_t n, void *buf,
                   size_t count, const struct bmpi_datatype *dt);
/* Copies block i of the nblocks equal blocks rank w exposed into
 * (buf, count, dt), truncating. */
int shmc_fetch(const struct call *k, int w, size_t i, size_t nblocks, void *buf, size_t count,
               const struct bmpi_datatype *dt);
/* The end of a direct call: this rank's part is done with result err
 * (_done), every rank's is (_wait, which frees staged and returns err or
 * another rank's failure); shmc_finish_direct does both. */
void shmc_direct_done(struct call *k, int err);
int shmc_direct_wait(struct call *k, void *staged, int err);
int shmc_finish_direct(struct call *k, void *staged, int err);
/* Posts this rank's data, by reference where it may; returns whether it
 * did (then shmc_wait_readers() after shmc_finish()). */
bool shmc_contribute_shared(const struct call *k, const void *buf, size_t count,
                            const struct bmpi_datatype *dt);
/* Part i of the nparts equal parts of rank w's payload into (buf, count,
 * dt), wherever the payload is, truncating. */
int shmc_unpack_part(const struct call *k, int w, size_t i, size_t nparts, void *buf,
                     size_t count, const struct bmpi_datatype *dt);

/* --- the steps every call takes -------------------------------------------- */

static inline struct slot *shmc_claim(const struct call *k)
{
    return shmc_claim_ahead(k, 0);
}

/* Publishes the slot, which holds the payload itself. */
static inline void shmc_post(const struct call *k, struct slot *s, size_t bytes)
{
    shmc_publish(k, s, bytes, false);
}

/* Rank w's slot of the current call, once w has posted all of it. */
static inline const struct slot *shmc_await(const struct call *k, int w)
{
    return shmc_await_bytes(k, w, SIZE_MAX);
}

/* Done reading every slot of this call: writers may reuse them. */
static inline void shmc_finish(const struct call *k)
{
    struct ring *g = k->g;
    uint64_t n = ++g->n;
    g->pos = g->pos + 1 == g->depth ? 0 : g->pos + 1;
    __atomic_store_n(shmc_done_of(k, k->me), n, __ATOMIC_RELEASE);
}

/* After shmc_finish(): until every rank has finished the call, so nobody
 * reads what this rank posted by reference any more. */
static inline void shmc_wait_readers(struct call *k)
{
    shmc_await_done(k, k->g->n);
}

#endif
