/*
 * ofi: the libfabric transport, internal definitions (see docs/ofi.md).
 *
 * One FI_EP_RDM endpoint per process with FI_MSG (active messages) and,
 * when the provider has it, FI_RMA (get/put for single-copy rendezvous).
 * Two completion queues: transmit (sends, reads, writes) and receive.
 * Keeping them apart lets am_send drive the provider's progress when it
 * pushes back (reading the transmit queue) without delivering anything:
 * deliveries happen only from progress(), one at a time, in per-peer send
 * order: FI_ORDER_SAS orders the provider's processing, ofi_order.h puts
 * completions that come out of that order back in it.
 *
 * Files: ofi.c (provider choice, lifecycle, data path, progress, get and
 * put), ofi_amo.c (remote atomics: which the provider does, amo()),
 * ofi_mr.c (the registration cache behind mem_reg/mem_dereg and the
 * local registrations FI_MR_LOCAL providers ask for), ofi_jobs.c
 * (processes of other jobs: cards, their peers, early messages),
 * ofi_dl.c (libfabric opened at first use), ofi_kallsyms.c (its kernel
 * symbol scan answered with an empty table).
 */
#ifndef BMPI_TRANSPORT_OFI_H
#define BMPI_TRANSPORT_OFI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

#include "transport/ofi/ofi_order.h"
#include "transport/transport.h"

#define OFI_API_VERSION FI_VERSION(1, 10)
#define OFI_PMIX_KEY "bmpi.ofi"
#define OFI_PROV_MAX 64 /* provider name in the published address */

/* In front of every active message on the wire. 8 bytes, so that the
 * runtime's header, which follows, stays 8-byte aligned in the receive
 * buffer (handlers read it in place), and no more: on the shm provider 8
 * more bytes made small messages measurably slower (docs/ofi.md, "Active
 * messages"). Hence the small fields, which ofi_am_send checks. */
struct ofi_wire {
    int32_t src;     /* world rank of the sender */
    uint16_t seq;    /* of the sender's messages to this rank: ofi_order.h */
    uint8_t hdr_len; /* the runtime's headers are a few dozen bytes */
    uint8_t am_pad;  /* am_id << 3 | the zero bytes after the payload (0-7) */
};
#define OFI_AM_ID_MAX 31

/* A message between processes of different jobs (docs/dynamic.md) carries
 * the sender's job after the wire header, whose src is then -1 - the
 * sender's rank in that job: the receiver knows it by another index than
 * its rank. Only that traffic pays for the 8 bytes. */
struct ofi_wire_job {
    uint64_t job;
};
#define OFI_WIRE_MAX (sizeof(struct ofi_wire) + sizeof(struct ofi_wire_job))
static inline size_t ofi_wire_len(int32_t src) { return src < 0 ? OFI_WIRE_MAX : sizeof(struct ofi_wire); }

/* A process of another job this one reaches: peer index by (job, rank). */
struct ofi_foreign {
    uint64_t job;
    int rank;
    int peer;
};

/* A message from a process of another job that is not a peer yet (its
 * card is on the way), kept until add_card makes it one. */
struct ofi_parked {
    struct ofi_parked *next;
    uint64_t job;
    int rank;
    size_t len;
    uint64_t msg[]; /* 8-byte aligned, as in a receive buffer */
};

/* What the rkey blob of a registration holds. base travels only when the
 * provider addresses RMA by offset (no FI_MR_VIRT_ADDR). */
struct ofi_rkey {
    uint64_t key;
    uint64_t base;
};

/* A registration, shared by every mem_reg that falls inside it. */
struct ofi_mr_entry {
    struct ofi_mr_entry *prev, *next; /* most recently used first */
    uintptr_t base;
    size_t len;
    struct fid_mr *mr;
    void *desc;
    uint64_t key;
    int refs;
};

struct ofi_mr_cache {
    struct ofi_mr_entry *head, *tail;
    int count;      /* entries */
    int unused;     /* entries with refs == 0 */
    int max_unused; /* kept for reuse; 0 = deregister at once */
    uint64_t next_key;
    uint64_t hits, misses; /* for BMPI_VERBOSE */
};

/* RMA: fi_read, fi_writemsg, fi_fetch_atomic, fi_compare_atomic. */
enum ofi_op_kind {
    OFI_OP_SEND,
    OFI_OP_RECV,
    OFI_OP_READ,
    OFI_OP_WRITE,
    OFI_OP_FETCH_ATOMIC,
    OFI_OP_COMPARE_ATOMIC
};

/* The context of every operation that completes (FI_CONTEXT2 space first,
 * as the FI_CONTEXT/FI_CONTEXT2 modes ask). */
struct ofi_op {
    struct fi_context2 fi;
    enum ofi_op_kind kind;
    struct ofi_op *next; /* free list, pending or completed lists */
    struct ofi_pool *pool; /* send and receive buffers: where it belongs */
    void *buf;
    void *desc; /* of buf, under FI_MR_LOCAL */
    /* RMA: a get/put of the runtime goes to the provider as pieces (one
     * fi_read/fi_write each, parent pointing at the get/put) */
    struct ofi_op *parent;
    int peer;
    void *local;
    size_t len;
    uint64_t raddr; /* as the provider wants it: address or offset */
    uint64_t key;
    size_t posted; /* bytes handed to the provider in pieces */
    int pieces;    /* pieces not completed yet */
    struct ofi_mr_entry *local_mr; /* taken by get/put under FI_MR_LOCAL */
    /* Atomics: local is the operand, copied (then compare, or a scratch
     * result) into copy; result is the runtime's, or the scratch. len,
     * posted: bytes of the operand. */
    void *copy;
    void *result;
    struct ofi_mr_entry *result_mr; /* under FI_MR_LOCAL */
    int fi_op, fi_type;             /* enum fi_op, enum fi_datatype */
    size_t elem;                    /* bytes of one element */
    size_t piece_max;               /* bytes of one fi_*atomic at most */
    bmpi_tl_done_fn done;
    void *ctx;
    int status;
};

struct ofi_list {
    struct ofi_op *head, *tail;
};

/* A peer of this transport. */
struct ofi_peer {
    fi_addr_t addr; /* FI_ADDR_NOTAVAIL until inserted */
    /* Where writes complete locally (flush_by_read): the last byte the
     * latest write to this peer wrote, and whether one was posted since
     * the last flush. */
    uint64_t last_raddr, last_key;
    bool unflushed;
};

/* n buffers of size bytes, one registration for all under FI_MR_LOCAL. */
struct ofi_pool {
    int n;
    size_t size;
    char *mem;
    struct fid_mr *mr;
    struct ofi_op *ops;
    struct ofi_op *free; /* send pools */
    int busy;
};

struct ofi_state {
    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av *av;
    struct fid_cq *txcq, *rxcq;
    struct fid_ep *ep;
    char prov[OFI_PROV_MAX];

    uint64_t mr_mode;
    bool rma;
    size_t inject_max; /* fi_inject up to this many bytes (wire header included) */
    size_t buf_size;   /* wire header + max_am */

    int nranks;             /* peers and order hold: world ranks, then other jobs' */
    struct ofi_peer *peers; /* by peer index */

    /* Processes of other jobs (ofi_jobs.c). */
    struct ofi_foreign *foreign;
    int nforeign;
    struct ofi_parked *parked; /* from processes not known yet, oldest first */
    struct ofi_parked *replay; /* ... known now: progress delivers them */

    /* Receive buffers, each always posted except while being delivered:
     * with FI_MULTI_RECV a few large ones that take many messages each
     * (released by the provider when less than buf_size is left), else
     * many of buf_size bytes. */
    bool multi_recv;
    struct ofi_pool rx;
    struct ofi_list repost; /* fi_recv said EAGAIN: post again later */

    /* Send buffers for messages larger than inject_max: small ones first,
     * large (buf_size) ones for what does not fit. */
    struct ofi_pool tx_small, tx_large;
    struct ofi_pool tx_inject; /* no buffers: contexts of injected sends */

    /* RMA operations */
    struct ofi_op *rma_free;
    struct ofi_list rma_wait; /* get/put with pieces still to post, in order */
    struct ofi_list rma_done; /* completed, callbacks due from progress */
    int rma_busy;             /* get/put not completed yet */
    size_t rma_piece;         /* largest fi_read/fi_write */
    size_t rma_bytes;         /* in pieces posted and not completed */
    size_t rma_bytes_max;     /* more waits (unless nothing is in flight) */
    /* Writes complete once their source is free; flush() is a one-byte read
     * behind them (docs/ofi.md, "Completion"); sink takes its byte. */
    bool flush_by_read;
    char flush_sink;

    /* Remote atomics the provider does (ofi_amo.c): the most elements of
     * one fi_fetch_atomic (fi_compare_atomic for CSWAP) call, 0 where it
     * has none; [op][type]. */
    size_t amo_count[BMPI_TL_AMO_NOPS][BMPI_TL_AMO_NTYPES];

    /* A send failed in the provider: reported from progress. */
    char send_err[256];

    struct ofi_order order; /* sequence numbers per peer, early arrivals */
    bool in_progress;       /* deliveries do not nest */
    struct ofi_mr_cache mrc;
};

/* ofi.c: provider choice */
extern const char *const ofi_preference[];
extern const int ofi_npreference;
/* One provider name: an info with RMA if possible, without otherwise;
 * NULL with why filled if it does not fit. */
struct fi_info *ofi_try_provider(const char *prov, char *why, size_t why_len);
/* The provider to use: BMPI_OFI_PROVIDER, else the first of the
 * preference list that fits. report: print the choice (BMPI_VERBOSE). */
struct fi_info *ofi_choose_provider(char *why, size_t why_len, bool report);

/* ofi.c: peers and the order state hold peers 0 .. n-1 (at least the
 * world's), each peer not inserted yet; 0 or MPI_ERR_NO_MEM. */
int ofi_peers_grow(struct ofi_state *s, int n);

/* ofi.c: take one received message (from a buffer or parked). */
void ofi_deliver(struct ofi_state *s, const char *buf, size_t len);

/* ofi.c: RMA operations (get, put, amo), each posted to the provider as
 * one or more pieces, all in the order they were issued. */
struct ofi_op *ofi_rma_op_new(struct ofi_state *s);
/* Where the peer's rkey and address point: *raddr as the provider wants
 * it (address or offset), *key. 0 or MPI_ERR_INTERN (a malformed rkey). */
int ofi_rkey_unpack(const struct ofi_state *s, const void *rkey, size_t rkey_len, uint64_t remote_addr,
                    uint64_t *raddr, uint64_t *key);
/* Take op (kind, peer, local, len, raddr, key, done and ctx set; its
 * local registrations taken): posted now or from progress, behind every
 * RMA operation issued before it; its done from progress. */
void ofi_rma_submit(struct ofi_state *s, struct ofi_op *op);
/* Give back an op never submitted, with its registrations and copy. */
void ofi_rma_discard(struct ofi_state *s, struct ofi_op *op);
/* The provider's call an operation of this kind makes, for messages. */
const char *ofi_op_call(enum ofi_op_kind kind);

/* ofi_amo.c: remote atomics (the transport contract's amo_native, amo). */
/* Fill amo_count from the provider's answers (fi_query_atomic); all 0
 * without FI_ATOMIC. Returns whether any pair is native. */
bool ofi_amo_init(struct ofi_state *s);
bool ofi_amo_native(struct bmpi_tl *tl, int peer, enum bmpi_tl_amo_op op, enum bmpi_tl_amo_type type, bool fetch);
int ofi_amo(struct bmpi_tl *tl, int peer, const struct bmpi_tl_amo *amo, bmpi_tl_done_fn done, void *ctx);
/* Post the next piece of an atomic operation (len bytes of its operand
 * from op->posted on); the provider's return code. */
ssize_t ofi_amo_post(struct ofi_state *s, struct ofi_op *op, size_t len, void *context);

/* ofi_jobs.c: processes of other jobs (the transport contract's
 * query_other_jobs, card and add_card; docs/dynamic.md). */
int ofi_query_other_jobs(char *why, size_t why_len);
int ofi_card(struct bmpi_tl *tl, void *buf, size_t *len);
int ofi_add_card(struct bmpi_tl *tl, int peer, uint64_t job, int job_rank, const void *card, size_t len, char *why,
                 size_t why_len);
/* The peer index of (job, rank), -1 if it is not a peer yet. */
int ofi_foreign_peer(const struct ofi_state *s, uint64_t job, int rank);
/* Keep a message from a process not known yet; 0, or -1 out of memory. */
int ofi_park(struct ofi_state *s, uint64_t job, int rank, const void *msg, size_t len);
/* Deliver what add_card made deliverable; events handled. */
int ofi_replay(struct ofi_state *s);
void ofi_jobs_fini(struct ofi_state *s);

/* ofi_info.c: what bmpi_info prints about libfabric here. */
void bmpi_ofi_report(FILE *out);

/* ofi_mr.c */
void ofi_mr_cache_init(struct ofi_state *s, int max_unused);
/* A registration covering [addr, addr+len), counted; 0 or an MPI error
 * class with the reason recorded. */
int ofi_mr_get(struct ofi_state *s, void *addr, size_t len, struct ofi_mr_entry **out);
void ofi_mr_put(struct ofi_state *s, struct ofi_mr_entry *e);
void ofi_mr_cache_fini(struct ofi_state *s);
/* Register one buffer outside the cache (pools); with FI_MR_ENDPOINT it is
 * bound to the endpoint and enabled. */
int ofi_mr_reg_raw(struct ofi_state *s, void *addr, size_t len, uint64_t access, uint64_t key,
                   struct fid_mr **mr);

/* ofi_kallsyms.c: before libfabric (the dlopen handle) first initialises,
 * make its reads of /proc/kallsyms read an empty file; 0 when done. */
int ofi_skip_kallsyms_scan(void *libfabric);

#endif
