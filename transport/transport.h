/*
 * The transport contract: byte movers behind one ops table.
 *
 * A transport knows nothing of MPI: no communicators, tags or datatypes.
 * It moves active messages (a small header plus payload) to a peer,
 * delivering them in order per peer to the handler the runtime registered
 * for the message's id, and optionally reads or writes a peer's memory
 * (RMA) for single-copy rendezvous. Peers are named by their index in the
 * runtime's peer table: the rank in the job (PMIx rank == MPI_COMM_WORLD
 * rank), then processes of other jobs from the world size up.
 *
 * The shape follows Open MPI's btl module and UCX's uct_iface: capabilities
 * are data (struct bmpi_tl_caps), behaviour is an ops table. Every op is
 * filled: an operation a transport lacks points at a "not supported" stub
 * (bmpi_tl_unsupported_*) so callers never test for NULL.
 *
 * Status codes: BMPI_OK (0), BMPI_TL_EAGAIN (out of resources right now: the
 * caller keeps the message and retries after progress, nothing was sent),
 * or a positive MPI error class with the reason recorded by bmpi_err_set().
 */
#ifndef BMPI_TRANSPORT_H
#define BMPI_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/uio.h>

#define BMPI_TL_EAGAIN (-11)

/* BMPI_* environment variables (transport/env.c holds the table of all
 * of them, docs/environment.md lists them). MPI_Init calls
 * bmpi_env_check(), which refuses any bad value of any of them with
 * MPI_ERR_ARG and a message naming it; the getters, for the readers in
 * every layer, then see only valid values. Each getter aborts when asked
 * for a variable the table lacks. */
int bmpi_env_check(void);
/* -1 unset or "auto"; 0 for 0/off/no/false, 1 for 1/on/yes/true (any case). */
int bmpi_env_switch(const char *name);
/* A number or size in the table's range; dflt when unset. */
unsigned long long bmpi_env_uint(const char *name, unsigned long long dflt);
/* The index of an algorithm name in the table; -1 unset or "auto". */
int bmpi_env_enum(const char *name);
/* A list, name or device as given; NULL when unset. */
const char *bmpi_env_string(const char *name);

/* Capability flags. */
#define BMPI_TL_RMA_GET  0x1u /* get() reads a peer's registered memory */
#define BMPI_TL_RMA_PUT  0x2u /* put() writes a peer's registered memory */
#define BMPI_TL_NEEDS_MR 0x4u /* local buffers must be registered for RMA */
/* get()/put() are copies made by the calling CPU (CMA): a transfer split
 * between both sides runs on two cores. */
#define BMPI_TL_RMA_CPU  0x8u
/* get() from a buffer in the sender's shared heap (transport/shm/heap.c)
 * is a memcpy with no fixed cost: the runtime pulls every contiguous
 * message above eager_limit from there, whatever rget_min says. */
#define BMPI_TL_RMA_HEAP 0x10u

/* The transport reaches processes of other jobs (MPI_Comm_connect/accept,
 * MPI_Comm_join, spawned jobs): card() and add_card() work, see
 * docs/dynamic.md. Transports without it point those at the stubs. */
#define BMPI_TL_OTHER_JOBS 0x20u

/* One-sided communication (runtime/rma*.c, docs/rma.md). */
/* amo() applies atomics in the peer's memory for the (op, type) pairs
 * amo_native() accepts; the runtime applies every other pair itself, at
 * the target, from an active message. */
#define BMPI_TL_RMA_AMO 0x40u
/* The done callback of put() and amo() means remote completion (the data
 * is in the peer's memory, visible to it). Without the flag done means
 * local completion (the source buffer may be reused) and flush() gives
 * remote completion. get() is always complete when done. */
#define BMPI_TL_RMA_REMOTE_DONE 0x80u
/* put() and amo() to one peer take effect in the order they were issued
 * (the standard's default accumulate ordering: rar, raw, war, waw). Without
 * it the runtime waits for one to complete before issuing a dependent
 * one. */
#define BMPI_TL_RMA_ORDERED 0x100u
/* amo() is carried out by the peer's own CPU with atomic instructions on
 * the element (a software provider applying it from its progress), so its
 * atomics are atomic also with respect to the CPU atomics that the peer
 * and the processes mapping its memory use (runtime/rma_atomic.c). Only
 * then may the runtime route accumulates to amo(): without it, a NIC's
 * atomics and the node's CPU atomics on one element would race. */
#define BMPI_TL_RMA_AMO_CPU 0x200u
/* amo()s to one peer take effect in the order they were issued (each
 * reads after the earlier ones wrote), though puts need not be ordered
 * (BMPI_TL_RMA_ORDERED implies it). Without it the runtime waits for one
 * amo() to complete before issuing the next where order matters. */
#define BMPI_TL_RMA_AMO_ORDERED 0x400u

/* Exclusivity: when several transports reach a peer, the highest wins. */
enum bmpi_tl_exclusivity {
    BMPI_TL_EXCL_NETWORK = 100,
    BMPI_TL_EXCL_SHM = 200,
    BMPI_TL_EXCL_SELF = 300,
};

struct bmpi_tl_caps {
    const char *name;
    int exclusivity;
    size_t max_am;      /* largest header + payload of one am_send */
    size_t eager_limit; /* payload size up to which the runtime sends eagerly */
    size_t rma_limit;   /* largest single get/put, 0 if unlimited */
    /* Payload bytes from which the runtime pulls a contiguous message with
     * get() (BMPI_TL_RMA_GET) instead of sending it in fragments; 0: every
     * message above eager_limit, SIZE_MAX: none. */
    size_t rget_min;
    unsigned flags;
    double latency_us;     /* nominal, for choosing between transports */
    double bandwidth_mbs;
};

struct bmpi_tl;

/* Remote atomics: the operations and element types a transport may do
 * natively (amo_native). The runtime maps MPI's predefined ops and types
 * onto these; MPI_REPLACE is SWAP, MPI_NO_OP is READ. */
enum bmpi_tl_amo_op {
    BMPI_TL_AMO_SUM,
    BMPI_TL_AMO_PROD,
    BMPI_TL_AMO_MIN,
    BMPI_TL_AMO_MAX,
    BMPI_TL_AMO_BAND,
    BMPI_TL_AMO_BOR,
    BMPI_TL_AMO_BXOR,
    BMPI_TL_AMO_LAND,
    BMPI_TL_AMO_LOR,
    BMPI_TL_AMO_LXOR,
    BMPI_TL_AMO_SWAP,  /* write operand, fetch the old value */
    BMPI_TL_AMO_READ,  /* fetch only */
    BMPI_TL_AMO_CSWAP, /* write operand where the value equals compare */
    BMPI_TL_AMO_NOPS
};

enum bmpi_tl_amo_type {
    BMPI_TL_AMO_INT8,
    BMPI_TL_AMO_UINT8,
    BMPI_TL_AMO_INT16,
    BMPI_TL_AMO_UINT16,
    BMPI_TL_AMO_INT32,
    BMPI_TL_AMO_UINT32,
    BMPI_TL_AMO_INT64,
    BMPI_TL_AMO_UINT64,
    BMPI_TL_AMO_FLOAT,
    BMPI_TL_AMO_DOUBLE,
    BMPI_TL_AMO_NTYPES
};

/* One remote atomic: count elements of type at the peer's remote_addr
 * (covered by rkey, a multiple of the element size) become (element op
 * operand[i]); with result, the old values are fetched there. operand and
 * compare are read before amo() returns; only result must stay valid
 * until done. CSWAP takes count 1 and compare; READ and CSWAP exist only
 * with a result (amo_native(READ or CSWAP, fetch false) is false). Each
 * element is atomic with respect to the transport's other atomics at that
 * peer, and to the peer CPU's atomics only with BMPI_TL_RMA_AMO_CPU. */
struct bmpi_tl_amo {
    enum bmpi_tl_amo_op op;
    enum bmpi_tl_amo_type type;
    size_t count;
    const void *operand;
    const void *compare; /* CSWAP only */
    void *result;        /* NULL: no fetch */
    uint64_t remote_addr;
    const void *rkey;
    size_t rkey_len;
};

/* Completion of a get/put: status is BMPI_OK or an MPI error class. */
typedef void (*bmpi_tl_done_fn)(void *ctx, int status);

struct bmpi_tl_ops {
    /* Lifecycle, in this order: query, open, (job-wide PMIx fence),
     * add_peers, ..., close. */

    /* Can this transport run here? 0 if so; otherwise an MPI error class
     * and why in words (e.g. "no RDMA device found"). */
    int (*query)(char *why, size_t why_len);
    /* Allocate resources, fill tl->caps and tl->priv, and publish the local
     * address through PMIx (bmpi_pmix_put) under the transport's own key. */
    int (*open)(struct bmpi_tl *tl);
    /* For each of npeers world ranks, set reachable[i]; for a peer it
     * cannot reach, write why into why[i] (may be NULL). Reads the peers'
     * addresses published at open. Called once, after the fence. */
    int (*add_peers)(struct bmpi_tl *tl, const int *peers, int npeers, bool *reachable,
                     char (*why)[128]);
    /* Release everything, shared segments and registrations included. */
    void (*close)(struct bmpi_tl *tl);

    /* Processes of other jobs (docs/dynamic.md "Transports"). Such a peer
     * has an index >= the world size in the runtime's peer table; it is
     * added from its address card, not through PMIx. */

    /* Can this transport, opened while MPI runs, reach processes of other
     * jobs? 0 if so; otherwise an MPI error class and why in words. The
     * runtime then opens it (open) if it is not open already. */
    int (*query_other_jobs)(char *why, size_t why_len);
    /* This process's address card: at most BMPI_TL_CARD_MAX bytes into
     * buf, *len gets its size. */
    int (*card)(struct bmpi_tl *tl, void *buf, size_t *len);
    /* Make peer index `peer` (of job `job`, rank `job_rank` there) reachable
     * from its card. 0, or an MPI error class with why in words. Messages
     * from that process that came before the call are delivered after it,
     * in order. */
    int (*add_card)(struct bmpi_tl *tl, int peer, uint64_t job, int job_rank, const void *card, size_t len,
                    char *why, size_t why_len);

    /* Send an active message: hdr (hdr_len bytes, copied) then the payload
     * described by iov. hdr_len + payload <= caps.max_am. Returns
     * BMPI_TL_EAGAIN when out of resources; never drops a message. Safe to
     * call from inside a delivery handler. */
    int (*am_send)(struct bmpi_tl *tl, int peer, uint8_t am_id, const void *hdr, size_t hdr_len,
                   const struct iovec *iov, int iovcnt);

    /* Memory registration for RMA. *memh is opaque; NULL is valid for
     * transports without BMPI_TL_NEEDS_MR. */
    int (*mem_reg)(struct bmpi_tl *tl, void *addr, size_t len, void **memh);
    int (*mem_dereg)(struct bmpi_tl *tl, void *memh);
    /* Serialise the remote key of a registration into buf (at most
     * BMPI_TL_RKEY_MAX bytes); *len gets its size. */
    int (*rkey_pack)(struct bmpi_tl *tl, void *memh, void *buf, size_t *len);
    /* Read len bytes at the peer's remote_addr (covered by rkey) into local
     * (covered by local_memh), then call done(ctx, status) from progress. */
    int (*get)(struct bmpi_tl *tl, int peer, void *local, void *local_memh, size_t len,
               uint64_t remote_addr, const void *rkey, size_t rkey_len, bmpi_tl_done_fn done,
               void *ctx);
    int (*put)(struct bmpi_tl *tl, int peer, const void *local, void *local_memh, size_t len,
               uint64_t remote_addr, const void *rkey, size_t rkey_len, bmpi_tl_done_fn done,
               void *ctx);

    /* Remote atomics (BMPI_TL_RMA_AMO). amo_native: whether amo() does
     * op on type natively towards peer (fetch: with a result). amo: issue
     * one; done(ctx, status) follows from progress. */
    bool (*amo_native)(struct bmpi_tl *tl, int peer, enum bmpi_tl_amo_op op, enum bmpi_tl_amo_type type,
                       bool fetch);
    int (*amo)(struct bmpi_tl *tl, int peer, const struct bmpi_tl_amo *amo, bmpi_tl_done_fn done,
               void *ctx);
    /* Remote completion of every put() and amo() to peer whose done has
     * been called: done(ctx, status) once they are in the peer's memory.
     * Transports with BMPI_TL_RMA_REMOTE_DONE point this at
     * bmpi_tl_flush_done, which calls done at once. */
    int (*flush)(struct bmpi_tl *tl, int peer, bmpi_tl_done_fn done, void *ctx);

    /* Handle pending events; returns how many (0 when idle). */
    int (*progress)(struct bmpi_tl *tl);
};

#define BMPI_TL_RKEY_MAX 64
#define BMPI_TL_CARD_MAX 96

struct bmpi_tl {
    const struct bmpi_tl_ops *ops;
    struct bmpi_tl_caps caps;
    void *priv; /* the transport's own state */
};

/* Delivery, implemented by the runtime: a transport calls this for every
 * active message, in order per peer. The pointers are valid only during the
 * call (they may point into a shared segment or a receive buffer). */
void bmpi_am_deliver(int peer, uint8_t am_id, const void *hdr, size_t hdr_len,
                     const void *payload, size_t len);

/* Stubs for operations a transport does not have. */
int bmpi_tl_unsupported_mem_reg(struct bmpi_tl *tl, void *addr, size_t len, void **memh);
int bmpi_tl_unsupported_mem_dereg(struct bmpi_tl *tl, void *memh);
int bmpi_tl_unsupported_rkey_pack(struct bmpi_tl *tl, void *memh, void *buf, size_t *len);
int bmpi_tl_unsupported_get(struct bmpi_tl *tl, int peer, void *local, void *local_memh, size_t len,
                            uint64_t remote_addr, const void *rkey, size_t rkey_len,
                            bmpi_tl_done_fn done, void *ctx);
int bmpi_tl_unsupported_put(struct bmpi_tl *tl, int peer, const void *local, void *local_memh,
                            size_t len, uint64_t remote_addr, const void *rkey, size_t rkey_len,
                            bmpi_tl_done_fn done, void *ctx);

bool bmpi_tl_unsupported_amo_native(struct bmpi_tl *tl, int peer, enum bmpi_tl_amo_op op,
                                    enum bmpi_tl_amo_type type, bool fetch);
int bmpi_tl_unsupported_amo(struct bmpi_tl *tl, int peer, const struct bmpi_tl_amo *amo,
                            bmpi_tl_done_fn done, void *ctx);
/* flush() of a transport whose put/amo done already means remote
 * completion: calls done(ctx, BMPI_OK) before it returns. */
int bmpi_tl_flush_done(struct bmpi_tl *tl, int peer, bmpi_tl_done_fn done, void *ctx);

/* ... and for transports that cannot reach processes of other jobs. */
int bmpi_tl_unsupported_query_other_jobs(char *why, size_t why_len);
int bmpi_tl_unsupported_card(struct bmpi_tl *tl, void *buf, size_t *len);
int bmpi_tl_unsupported_add_card(struct bmpi_tl *tl, int peer, uint64_t job, int job_rank, const void *card,
                                 size_t len, char *why, size_t why_len);

/* The transports compiled in, in order of preference (self, shm, verbs,
 * ofi), each with its ops table. */
struct bmpi_tl_component {
    const char *name;
    const struct bmpi_tl_ops *ops;
};
extern const struct bmpi_tl_component bmpi_tl_components[];
extern const int bmpi_tl_ncomponents;

#endif
