/*
 * verbs: the rdma-core (libibverbs) transport, internal definitions
 * (see docs/verbs.md).
 *
 * One protection domain, two completion queues (sends and RDMA, receives),
 * one UD queue pair that carries connection requests, and one RC queue
 * pair per peer, created on the first am_send (or get/put) to that peer:
 *
 *   initiator                         acceptor
 *   create RC QP, INIT, post ring
 *   CONN{qpn, psn}  --- UD --->       create RC QP, INIT, post ring,
 *                                     RTR, RTS
 *                   <--- UD ---       CONN{qpn, psn, READY}
 *   RTR, RTS, "ready"
 *   HELLO           --- RC --->       "ready" (any RC message does)
 *
 * A QP sends only once the peer's QP is known to be in RTR, so no message
 * ever meets a QP that would drop it (which would cost the retry budget).
 *
 * Active messages travel with SEND into a ring of receive buffers that the
 * receiver posted once per peer; credits (one per posted buffer) keep the
 * sender from overrunning it: see verbs.c.
 *
 * RMA: get/put are one RDMA READ/WRITE each; amo() is one 8-byte IB atomic
 * (FETCH_AND_ADD, CMP_AND_SWP) per element, where the device has them
 * (docs/verbs.md, "RMA and atomics").
 *
 * Files: verbs.c (device choice, lifecycle, data path, progress),
 * verbs_qp.c (RC/UD queue pairs and the connection exchange), verbs_mr.c
 * (the registration cache behind mem_reg and the local side of get/put).
 */
#ifndef BMPI_TRANSPORT_VERBS_H
#define BMPI_TRANSPORT_VERBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <infiniband/verbs.h>

#include "transport/transport.h"

#define VERBS_PMIX_KEY "bmpi.verbs"
#define VERBS_ADDR_MAGIC 0x62766231u /* "bvb1" */
#define VERBS_CM_MAGIC 0x62636d31u   /* "bcm1" */
#define VERBS_QKEY 0x11b3b00du
#define VERBS_GRH 40 /* in front of every UD receive */
#define VERBS_CTL_RSV 2 /* receive buffers per peer for HELLO and credit messages */
#define VERBS_UD_SEND 16 /* UD send slots */

/* What a rank publishes under VERBS_PMIX_KEY. */
struct verbs_addr {
    uint32_t magic;
    int32_t rank;
    uint8_t link_layer; /* IBV_LINK_LAYER_* */
    uint8_t port;
    uint16_t lid;
    uint32_t cm_qpn; /* the UD queue pair that takes connection requests */
    uint32_t mtu;    /* enum ibv_mtu, the port's active MTU */
    uint32_t max_am; /* must agree: receive buffers are sized by it */
    uint32_t rx_depth;
    uint32_t pad;
    union ibv_gid gid;
};

/* The connection exchange, over UD. */
enum { VERBS_CM_READY = 1 }; /* the sender's RC QP is in RTR (it takes our messages) */
struct verbs_cm_msg {
    uint32_t magic;
    int32_t src;
    uint32_t qpn;
    uint32_t psn;
    uint32_t flags;
    uint32_t pad;
};

/* In front of every message on an RC queue pair; 8 bytes, so that the
 * runtime's header that follows stays 8-byte aligned in the buffer
 * (handlers read it in place). */
enum { VERBS_MSG_AM = 1, VERBS_MSG_CREDIT = 2, VERBS_MSG_HELLO = 3 };
struct verbs_wire {
    uint16_t hdr_len;
    uint8_t am_id;
    uint8_t type;
    uint16_t credits;  /* receive buffers for ordinary messages, given back */
    uint8_t ctl_credits; /* receive buffers for credit/hello messages, given back */
    uint8_t pad;
};

/* rkey blob: the key and the base of the registration (addresses are
 * virtual: the base is for checking, not for offsets). */
struct verbs_rkey {
    uint32_t rkey;
    uint32_t pad;
    uint64_t base;
    uint64_t len;
};

/* ---- registration cache (verbs_mr.c) ---------------------------------- */

struct verbs_mr_entry {
    struct verbs_mr_entry *prev, *next; /* most recently used first */
    uintptr_t base;
    size_t len;
    int access;
    struct ibv_mr *mr;
    int refs;
};

struct verbs_mr_cache {
    struct ibv_pd *pd;
    bool odp;       /* registrations follow the page tables: safe to keep */
    int max_unused; /* kept for reuse once unused (only with odp) */
    struct verbs_mr_entry *head, *tail;
    int count, unused;
    uint64_t hits, misses, regs, deregs;
};

/* keep: unused registrations may be kept (ODP, or BMPI_VERBS_LEAVE_PINNED) */
void verbs_mr_cache_init(struct verbs_mr_cache *c, struct ibv_pd *pd, bool keep, int max_unused);
/* A registration covering [addr, addr+len) with at least access, counted;
 * 0 or an MPI error class with the reason recorded. */
int verbs_mr_get(struct verbs_mr_cache *c, void *addr, size_t len, int access,
                 struct verbs_mr_entry **out);
void verbs_mr_put(struct verbs_mr_cache *c, struct verbs_mr_entry *e);
void verbs_mr_cache_fini(struct verbs_mr_cache *c);

/* ---- per peer ------------------------------------------------------------ */

enum verbs_peer_state {
    VERBS_PEER_NONE = 0,   /* no QP yet */
    VERBS_PEER_CONNECTING, /* our QP exists; the peer's RTR not yet known */
    VERBS_PEER_READY,      /* both sides in RTR/RTS */
    VERBS_PEER_BROKEN,     /* the QP failed: every operation fails */
};

enum verbs_op_kind {
    VERBS_OP_SEND,
    VERBS_OP_READ,
    VERBS_OP_WRITE,
    VERBS_OP_FADD,  /* IBV_WR_ATOMIC_FETCH_AND_ADD of operand */
    VERBS_OP_CSWAP, /* IBV_WR_ATOMIC_CMP_AND_SWP: operand where compare */
    VERBS_OP_CM
};

/* One amo() of several elements: each is its own work request; the
 * caller's done runs once, when the last completes. */
struct verbs_amo_group {
    size_t left;   /* elements not completed yet */
    int status;    /* the first failure */
    char why[400]; /* its reason */
    bmpi_tl_done_fn done;
    void *ctx;
};

/* The context (wr_id) of every send-queue work request. */
struct verbs_op {
    enum verbs_op_kind kind;
    struct verbs_op *next;
    int peer;
    int tx; /* send buffer index, -1 for inline sends */
    /* RMA */
    void *local;
    size_t len;
    uint64_t raddr;
    uint32_t rkey;
    uint32_t lkey;
    struct verbs_mr_entry *lmr; /* NULL: local is outside the cache (amo scratch) */
    uint64_t operand, compare; /* atomics */
    struct verbs_amo_group *group; /* an element of a multi-element amo() */
    bmpi_tl_done_fn done;
    void *ctx;
    int status;
    int wc_status; /* of a failed completion; -1: failed without one */
    uint32_t vendor_err;
};

struct verbs_oplist {
    struct verbs_op *head, *tail;
};

struct verbs_peer {
    int rank;
    enum verbs_peer_state state;
    bool known; /* published a usable address (add_peers) */
    struct verbs_addr addr;
    struct ibv_ah *ah; /* towards its UD queue pair */

    struct ibv_qp *qp;
    uint32_t psn;
    bool rtr;
    uint64_t cm_last_ns, cm_first_ns;
    bool hello_due;  /* HELLO not sent yet (no resources at the time) */
    bool credit_due; /* on the due list: a credit message to send */

    /* flow control: see verbs.c */
    int credits, ctl_credits;         /* we may send this many */
    unsigned to_return, ctl_to_return; /* buffers reposted, not yet told */
    int sq_free;                      /* send-queue slots */

    /* the receive ring for this peer's messages */
    char *rx_mem;
    struct ibv_mr *rx_mr;

    struct verbs_oplist rma_wait; /* get/put/atomics waiting for the connection or a slot */
    char why[200];                /* BROKEN: the first error */
};

struct verbs_config {
    size_t max_am;
    size_t eager_limit;
    int rx_depth;
    int sq_depth;
    int tx_bufs;
    int mr_cache; /* unused registrations kept, with ODP */
    int odp;      /* -1 auto, 0 off, 1 on */
    bool leave_pinned; /* keep registrations without ODP (unsafe with free) */
    int sl;
    int gid_index; /* -1: choose */
    double cm_timeout_s;
};

struct verbs_state {
    struct verbs_config cfg;
    struct ibv_device **devs;
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    struct ibv_cq *scq, *rcq;
    char devname[64];
    int port;
    struct ibv_port_attr pattr;
    struct ibv_device_attr dattr;
    union ibv_gid gid;
    int gid_index;
    bool global; /* GRH needed (RoCE) */
    size_t buf_size; /* wire header + max_am, rounded up */
    uint32_t max_inline;
    int max_rd_atomic;
    /* 8-byte IB atomics usable: the device has them (atomic_cap), and
     * with ODP its RC paging covers them */
    bool atomics;
    uint64_t *amo_scratch; /* where non-fetching atomics put the old value */
    struct ibv_mr *amo_scratch_mr;

    /* connection management */
    struct ibv_qp *ud;
    char *ud_mem; /* ud_depth receive slots, then one send slot */
    struct ibv_mr *ud_mr;
    int ud_depth;
    int ud_sq_free;
    unsigned ud_tx_next;

    /* send buffers for messages too large to go inline */
    char *tx_mem;
    struct ibv_mr *tx_mr;
    int *tx_free;
    int tx_nfree;

    struct verbs_op *op_free;
    struct verbs_oplist done; /* completed get/put: callbacks due from progress */
    int ops_busy;

    int nranks;
    struct verbs_peer *peers; /* by world rank */
    int *connecting;          /* ranks in CONNECTING, for retransmission */
    int nconnecting;
    int *due;  /* ranks owed a HELLO or a credit message */
    int ndue;
    int rma_waiting; /* get/put queued on some peer's rma_wait */

    bool in_progress;
    char async_err[400]; /* a send failed: reported from progress */
    struct verbs_mr_cache mrc;
};

/* verbs.c: device and port */
const char *verbs_link_name(uint8_t ll);
/* Open the device and port to use (BMPI_VERBS_DEVICE, else the first
 * ACTIVE port); NULL with why filled if none fits. */
struct ibv_context *verbs_choose_port(struct ibv_device **devs, int ndev, int *port_out,
                                      struct ibv_port_attr *pa_out, char *why, size_t why_len);
/* Why there is no device: devs and errno as ibv_get_device_list left them. */
void verbs_no_device_why(struct ibv_device **devs, int err, char *why, size_t why_len);

/* verbs_info.c: what bmpi_info prints about RDMA devices here. */
void bmpi_verbs_report(FILE *out);

/* verbs_qp.c */
uint64_t verbs_now_ns(void);
int verbs_ud_open(struct verbs_state *s);
void verbs_ud_close(struct verbs_state *s);
/* Start connecting to peer (create its QP, send the request). */
int verbs_connect(struct verbs_state *s, struct verbs_peer *p);
/* A connection message arrived over UD. */
void verbs_cm_handle(struct verbs_state *s, const struct verbs_cm_msg *m);
/* Retransmit requests that got no answer; give up after cm_timeout_s. */
int verbs_cm_retry(struct verbs_state *s);
void verbs_qp_destroy(struct verbs_state *s, struct verbs_peer *p);
int verbs_post_rx(struct verbs_state *s, struct verbs_peer *p, int slot);
/* The peer is now READY: tell verbs.c (send HELLO, start waiting RMA). */
void verbs_peer_ready(struct verbs_state *s, struct verbs_peer *p, bool say_hello);
void verbs_peer_broken(struct verbs_state *s, struct verbs_peer *p, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* wr_id of receives: kind in the top byte, peer and slot below. */
#define VERBS_WR_RECV_RC 0x01ull
#define VERBS_WR_RECV_UD 0x02ull
static inline uint64_t verbs_rx_wrid(uint64_t kind, int peer, int slot)
{
    return (kind << 56) | ((uint64_t)(uint32_t)peer << 24) | (uint64_t)(slot & 0xffffff);
}

#endif
