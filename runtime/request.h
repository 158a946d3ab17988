/*
 * Requests: the handle a nonblocking operation returns, and its
 * completion. Point-to-point, persistent, generalized and collective
 * requests share this one structure; kind-specific state hangs off it.
 */
#ifndef BMPI_RUNTIME_REQUEST_H
#define BMPI_RUNTIME_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <mpi.h>

#include "runtime/datatype.h"

struct bmpi_comm;

enum bmpi_req_kind {
    BMPI_REQ_SEND,
    BMPI_REQ_RECV,
    BMPI_REQ_GREQ, /* generalized */
    BMPI_REQ_COLL, /* nonblocking collective schedule */
    BMPI_REQ_COMPOSITE, /* done when its parts are (MPI_Isendrecv, neighbourhood collectives) */
    BMPI_REQ_RMA,       /* MPI_Rput and friends: done when every piece is answered */
    BMPI_REQ_IO,        /* nonblocking file access: advanced by io/ (io/file.h) */
};

enum bmpi_send_mode { BMPI_SEND_STANDARD, BMPI_SEND_SYNC, BMPI_SEND_READY, BMPI_SEND_BUFFERED };

/* Who copies a large receive over a transport whose RMA is a CPU copy
 * (runtime/p2p.h, bmpi_irecv_copied_by). */
enum bmpi_recv_copy { BMPI_RECV_COPY_SHARED, BMPI_RECV_COPY_SENDER, BMPI_RECV_COPY_RECEIVER };

/* How a receive or send is moving its bytes. */
enum bmpi_proto {
    BMPI_PROTO_NONE,
    BMPI_PROTO_EAGER,
    BMPI_PROTO_RGET, /* receiver pulls with get() */
    BMPI_PROTO_RNDV, /* handshake, then FRAG active messages */
};

struct bmpi_request {
    MPI_Request handle;
    enum bmpi_req_kind kind;
    volatile bool complete;
    bool persistent;   /* MPI_Send_init / MPI_Recv_init / persistent collectives */
    bool active;       /* persistent: started and not yet completed */
    bool user_freed;   /* MPI_Request_free on a pending request */
    bool cancelled;
    bool probe_only;   /* internal: matching of MPI_Mprobe */
    bool status_to_whole; /* a part of a composite request that gives it its status */
    MPI_Status status;

    /* operation */
    struct bmpi_comm *comm;
    uint32_t context_id;
    void *buf;
    size_t count;
    MPI_Datatype type;
    struct bmpi_datatype *dt;
    int peer; /* rank in comm (or MPI_ANY_SOURCE) */
    int world_peer;
    int tag;
    enum bmpi_send_mode mode;

    /* protocol */
    enum bmpi_proto proto;
    size_t bytes;     /* packed size of the message (receive: of the sender's) */
    size_t capacity;  /* receive: packed size of the buffer */
    size_t done_bytes;
    uint64_t remote_req; /* the peer's request id for CTS/FRAG/FIN */
    void *memh;          /* registration of a RGET send */
    void *bounce;        /* bounded staging buffer for non-contiguous data */
    size_t staged;       /* bytes of the chunk being pulled into bounce */
    int pending_ops;     /* outstanding gets */
    bool put_pending;    /* RGET receive: the sender still writes its part */
    enum bmpi_recv_copy copy; /* receive: who copies a large message (bmpi_irecv_copied_by) */
    uint64_t rget_raddr;
    size_t rkey_len;

    /* queues (posted receives, pending sends) */
    struct bmpi_request *next, *prev;

    /* a hook run at completion (collective schedules, buffered sends) */
    void (*on_complete)(struct bmpi_request *req);
    void *ctx;

    /* generalized requests */
    MPI_Grequest_query_function *gq;
    MPI_Grequest_free_function *gf;
    MPI_Grequest_cancel_function *gc;
    void *gstate;

    /* Large and written before they are read (the cursor by
     * bmpi_dt_cursor_init, rkey with rkey_len), so bmpi_request_new leaves
     * them alone: zeroing them cost more than the rest of a small send. */
    uint8_t rkey[64];
    struct bmpi_dt_cursor cursor;
};

struct bmpi_request *bmpi_request_new(enum bmpi_req_kind kind);
/* Release the runtime's reference: frees at once, or when the request is
 * both complete and no longer referenced by the user. */
void bmpi_request_free(struct bmpi_request *req);
struct bmpi_request *bmpi_request_get(MPI_Request handle);
/* The user-visible handle of req, allocated on first use. */
MPI_Request bmpi_request_handle(struct bmpi_request *req);
/* Mark complete and run the completion hook. */
void bmpi_request_complete(struct bmpi_request *req);
/* Composite requests: part completes into whole (its error, and with
 * take_status its whole status, become whole's). whole->pending_ops counts
 * the parts still open; the caller holds one count of its own while it
 * adds parts and drops it with bmpi_request_part_done_all. A part already
 * complete is accounted for and freed at once. */
void bmpi_request_adopt(struct bmpi_request *whole, struct bmpi_request *part, bool take_status);
/* Drop the caller's count: completes whole if no part is open. */
void bmpi_request_part_done_all(struct bmpi_request *whole);
/* A 64-bit id that travels in protocol headers and comes back. */
static inline uint64_t bmpi_request_id(const struct bmpi_request *req) { return (uint64_t)(uintptr_t)req; }
static inline struct bmpi_request *bmpi_request_from_id(uint64_t id) { return (struct bmpi_request *)(uintptr_t)id; }

/* Block (progressing) until req completes; then copy its status out
 * (status may be MPI_STATUS_IGNORE) and free non-persistent requests. */
int bmpi_request_wait(struct bmpi_request *req, MPI_Status *status);

void bmpi_request_finalize(void);

/* Status helpers: the byte count lives in count_lo/count_hi_and_cancelled. */
void bmpi_status_set(MPI_Status *st, int source, int tag, int error, size_t bytes);
static inline void bmpi_status_set_cancelled(MPI_Status *st, bool c)
{
    st->count_hi_and_cancelled = (st->count_hi_and_cancelled & ~1) | (c ? 1 : 0);
}
void bmpi_status_empty(MPI_Status *st);
/* Hand st to the user of a single-completion call (MPI_Recv, MPI_Wait,
 * MPI_Probe ...): every field but MPI_ERROR, which MPI leaves as the user
 * set it there, the return code being the error. out may be
 * MPI_STATUS_IGNORE. */
void bmpi_status_out(MPI_Status *out, const MPI_Status *st);

#endif
