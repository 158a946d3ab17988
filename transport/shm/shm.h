/*
 * Shared-memory transport, internal definitions (see docs/shm.md).
 *
 * Two paths carry active messages between the ranks of one node, and a
 * third moves bulk data:
 *
 *  - the base segment (one per node, created by local rank 0 at open):
 *    a header, then one block per local rank holding that rank's receive
 *    queue (MPSC, Nemesis-style: producers link cells with one atomic
 *    exchange on the tail) and that rank's pool of cells as a sender
 *    (small and large cells; the receiver hands a cell back by clearing its
 *    busy word, no atomic read-modify-write);
 *  - per-pair fast paths: after a few messages from A to B, A creates an
 *    SPSC byte ring in a segment of its own and announces it through B's
 *    queue; everything A sends to B afterwards goes through the ring, so
 *    the announcement is what keeps the two paths in order;
 *  - single-copy get/put with process_vm_readv/writev (CMA).
 *
 * Everything in shared memory is addressed by offsets (mappings differ
 * between processes), and every structure that two processes write sits
 * in cache lines of its own.
 */
#ifndef BMPI_TRANSPORT_SHM_H
#define BMPI_TRANSPORT_SHM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "transport/shm/heap.h"
#include "transport/transport.h"

#define SHM_LINE 64
/* Ring entries of this many bytes (header included) sent as an answer are
 * demoted to the shared cache (see ring_send in shm.c and docs/shm.md,
 * "Performance notes", for why not below). */
#define SHM_DEMOTE_MIN 512
#define SHM_DEMOTE_MAX (16384 + 2 * SHM_LINE)
/* After an answering entry of at least this many bytes, the sender
 * claims the lines of the next one (see ring_claim in shm.c). */
#define SHM_CLAIM_MIN 4096
/* The receiver prefetches the rest of entries smaller than this as soon as
 * it sees their first line (see ring_fetch_rest in shm.c). */
#define SHM_FETCH_MAX 1024
/* A receiver claims the lines of its answer to a message of at most this
 * many bytes (see ring_claim_answer in shm.c). */
#define SHM_ANSWER_CLAIM_MAX (16384 + 2 * SHM_LINE)
#define SHM_ALIGN(x, a) (((x) + (a) - 1) & ~((size_t)(a) - 1))

#define SHM_SEG_MAGIC 0x31676573696d7062ull  /* "bmpiseg1" */
#define SHM_RING_MAGIC 0x31676e72696d7062ull /* "bmpirng1" */
#define SHM_ADDR_MAGIC 0x626d7368u
#define SHM_RKEY_MAGIC 0x626d726bu
#define SHM_VERSION 3
/* Random hex digits that end every /dev/shm name (segment.c): 128 bits. */
#define SHM_TAG_LEN 32

/* Message types in cells and ring entries. */
enum { SHM_MSG_AM = 1, SHM_MSG_ANNOUNCE = 2, SHM_MSG_WRAP = 3 };

/* ---- the base segment ---------------------------------------------------- */

struct shm_seg_hdr {
    uint64_t magic; /* written last by the creator */
    uint32_t version;
    uint32_t local_size;
    uint64_t size;       /* bytes mapped */
    uint64_t block_off;  /* offset of rank block 0 */
    uint64_t block_size; /* stride between rank blocks */
    uint32_t nsmall, nlarge;
    uint32_t small_size, large_size; /* bytes per cell, header included */
    uint32_t fp_max_in;              /* fast paths a rank accepts */
    uint32_t attached;               /* ranks that have mapped it (atomic) */
    uint32_t unlinked;               /* name removed (atomic) */
    uint32_t cma_reported;           /* one verbose note per node (atomic) */
};

/* A cell: the unit of the queue path. Owned by its sender; on a receiver's
 * queue between send and delivery. */
struct shm_cell {
    uint64_t next; /* queue link: offset of the next cell, 0 = none */
    uint32_t busy; /* set by the owner at allocation, cleared by the receiver */
    uint16_t owner; /* local rank of the sender */
    uint8_t type;
    uint8_t am_id;
    uint32_t len;     /* payload bytes (after the am header) */
    uint32_t hdr_len; /* am header bytes */
    uint64_t pad;
    /* data: am header, then payload */
};
#define SHM_CELL_HDR 32

/* Per local rank, in the base segment. Line 0 is what an idle receiver
 * polls; line 1 is where producers collide. */
struct shm_rank_block {
    uint64_t head; /* first queued cell, written by a producer into an empty queue */
    uint8_t pad0[SHM_LINE - 8];
    uint64_t tail; /* last queued cell, swapped by producers */
    uint8_t pad1[SHM_LINE - 8];
    int32_t pid;
    uint32_t fp_in; /* fast paths set up towards this rank (atomic) */
    uint8_t pad2[SHM_LINE - 8];
    /* cells: nsmall small ones, then nlarge large ones */
};
#define SHM_BLOCK_HDR (3 * SHM_LINE)

/* ---- fast-path rings ------------------------------------------------------- */

struct shm_ring_ctl {
    uint64_t magic;
    uint64_t size; /* data bytes, a power of two */
    uint32_t sender, receiver; /* local ranks */
    uint32_t unlinked; /* the receiver removed the name (atomic) */
    uint8_t pad0[SHM_LINE - 28];
    uint64_t tail; /* bytes consumed by the receiver; the sender reads it only when full */
    uint8_t pad1[SHM_LINE - 8];
    /* data follows at SHM_RING_DATA */
};
#define SHM_RING_DATA (2 * SHM_LINE)

/* A ring entry starts on a line; the flag is the entry's ring position + 1
 * and is stored last. A stale flag from an earlier lap never matches (the
 * position is 64-bit), but an entry may start where an earlier lap had
 * payload, which can hold any value: the sender makes sure the next
 * entry's flag word does not match before it publishes one (ring_send). */
struct shm_entry {
    uint64_t flag;
    uint32_t len;
    uint16_t hdr_len;
    uint8_t am_id;
    uint8_t type;
    /* am header, then payload */
};
#define SHM_ENTRY_HDR 16

/* Announcement of a ring, carried through the queue. */
struct shm_announce {
    uint64_t size;
    char tag[SHM_TAG_LEN + 1]; /* the random part of the ring's name */
};

/* ---- what a rank publishes through PMIx (key "bmpi.shm") ------------------ */

struct shm_addr {
    uint32_t magic;
    uint32_t version;
    int32_t pid;
    int32_t local_rank;
    uint64_t probe_addr; /* address of probe word, holding cookie */
    uint64_t cookie;
    struct bmpi_shm_heap_info heap; /* its shared heap, for single copy by memcpy */
    char tag[SHM_TAG_LEN + 1]; /* local rank 0: the random part of the base segment's name */
};

struct shm_rkey {
    uint32_t magic;
    int32_t pid;
};

/* ---- private state -------------------------------------------------------- */

struct shm_peer {
    int world_rank;
    int pid;
    struct shm_rank_block *blk;

    /* sending to this peer */
    uint32_t nsent; /* messages sent through the queue */
    int fp_state;   /* SHM_FP_* */
    struct shm_ring_ctl *out;
    uint8_t *out_data;
    uint64_t out_mask;
    uint64_t wr_pos, cached_tail;
    bool answering; /* received from this peer since the last send to it */
    size_t out_maplen;
    char out_tag[SHM_TAG_LEN + 1]; /* the random part of the ring's name */

    /* receiving from this peer */
    struct shm_ring_ctl *in;
    uint8_t *in_data;
    uint64_t in_mask;
    uint64_t rd_pos;
    size_t in_maplen;
};
enum { SHM_FP_QUEUE = 0, SHM_FP_NEVER = -1 };

struct shm_completion {
    bmpi_tl_done_fn done;
    void *ctx;
    int status;
};

struct shm_config {
    size_t eager_limit;
    size_t max_am;
    uint32_t threshold;
    uint32_t fp_max;
    size_t ring_size;
    uint32_t nsmall, nlarge;
    size_t small_size;
    int cma; /* -1 auto, 0 off, 1 on */
    size_t rget_min; /* BMPI_SHM_RGET_MIN; 0: auto (shm_rget_min()) */
    bool shared_copy; /* let the runtime split a large copy between both ranks' cores */
};

struct shm_priv {
    struct shm_config cfg;

    /* the base segment */
    uint8_t *base;
    size_t base_len;
    struct shm_seg_hdr *seg;
    char name[256]; /* "/bmpi.<nspace>.<nodeid>.<tag>" */
    bool creator, attached;

    int my_lr, nlocal;
    struct shm_rank_block *me;
    int *lr_of_world; /* world rank -> local rank, -1 if not local */
    int world_size;
    struct shm_peer *peers; /* by local rank */

    /* receiving */
    uint64_t my_head; /* the consumer's private copy of the queue head */
    uint64_t zombie;  /* delivered cell whose successor is not linked yet */
    int *in_active;   /* local ranks with an incoming ring */
    int n_in_active;
    bool in_progress;
    bool accept_said; /* reported a ring that could not be mapped */

    /* sending */
    uint32_t small_cursor, large_cursor;
    uint32_t n_fp_out;

    /* CMA */
    bool cma;
    volatile uint64_t probe;
    uint64_t cookie;

    /* get/put completions, reported from progress */
    struct shm_completion *comps;
    size_t comp_head, comp_tail, comp_cap;
};

/* segment.c */
size_t bmpi_shm_block_size(const struct shm_config *cfg);
size_t bmpi_shm_segment_size(const struct shm_config *cfg, int local_size);
int bmpi_shm_name(char *buf, size_t len, const char *nspace, uint32_t nodeid, const char *suffix);
int bmpi_shm_create(const char *name, size_t len, void **addr);
int bmpi_shm_attach(const char *name, void **addr, size_t *len);
int bmpi_shm_unlink(const char *name);
int bmpi_shm_ring_name(char *buf, size_t len, int sender, int receiver, const char *tag);
/* SHM_TAG_LEN random hex digits for a name, from getrandom(). */
int bmpi_shm_random_tag(char tag[SHM_TAG_LEN + 1]);
/* fstat fd into st: 0 when it is a regular file of this user that, with
 * private_mode, nobody else may open; else -1 and why, naming path and
 * the file's owner. */
int bmpi_shm_check_owner(int fd, const char *path, bool private_mode, struct stat *st, char *why,
                         size_t why_len);

/* cma.c */
int bmpi_shm_cma_probe_self(char *why, size_t why_len);
int bmpi_shm_cma_probe_peer(int pid, uint64_t addr, uint64_t cookie, char *why, size_t why_len);
int bmpi_shm_cma_read(int pid, void *local, uint64_t remote, size_t len);
int bmpi_shm_cma_write(int pid, const void *local, uint64_t remote, size_t len);
double bmpi_shm_cma_call_usec(void);

/* shm.c, for the unit test */
size_t bmpi_shm_base_bytes(struct bmpi_tl *tl);
bool bmpi_shm_has_fastpath(struct bmpi_tl *tl, int peer);

extern const struct bmpi_tl_ops bmpi_tl_shm_ops;

/* ---- hot paths, shared by shm.c's send and progress ----------------------- */

static inline struct shm_cell *shm_cell_at(const struct shm_priv *p, uint64_t off)
{
    return (struct shm_cell *)(p->base + off);
}

static inline uint64_t shm_cell_off(const struct shm_priv *p, const struct shm_cell *c)
{
    return (uint64_t)((const uint8_t *)c - p->base);
}

static inline struct shm_rank_block *shm_block(const struct shm_priv *p, int lr)
{
    return (struct shm_rank_block *)(p->base + p->seg->block_off + (size_t)lr * p->seg->block_size);
}

/* Link cell c (filled) at the tail of the queue in block b. */
static inline void shm_queue_push(struct shm_priv *p, struct shm_rank_block *b, struct shm_cell *c)
{
    uint64_t off = shm_cell_off(p, c);
    __atomic_store_n(&c->next, 0, __ATOMIC_RELAXED);
    uint64_t prev = __atomic_exchange_n(&b->tail, off, __ATOMIC_ACQ_REL);
    if (prev == 0)
        __atomic_store_n(&b->head, off, __ATOMIC_RELEASE);
    else
        __atomic_store_n(&shm_cell_at(p, prev)->next, off, __ATOMIC_RELEASE);
}

#endif
