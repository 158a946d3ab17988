/*
 * The point-to-point wire protocol, in the spirit of Open MPI's ob1:
 *
 *   EAGER   envelope + data inline (with BMPI_RTS_SYNC: the receiver
 *           answers ACK on match, for MPI_Ssend)
 *   RGET    envelope + the sender's registered buffer; the receiver, once
 *           matched, pulls the data with the transport's get() straight
 *           into the user buffer, then answers FIN
 *   RNDV    envelope only; the receiver answers CTS on match, the sender
 *           streams FRAGs (for transports without RMA and for
 *           non-contiguous send buffers), bounded in size and pipelined
 *
 * A large RGET over a transport whose get/put are copies made by the
 * calling CPU (BMPI_TL_RMA_CPU: shm's CMA) is shared between both sides:
 * the receiver sends PUTREQ with its buffer, the sender put()s the first
 * part into it and answers PUTFIN, while the receiver pulls the rest; FIN
 * goes once both parts are in. Two cores copy instead of one.
 *
 * Headers are host-endian: all ranks of a job share one architecture.
 */
#ifndef BMPI_RUNTIME_P2P_PROTO_H
#define BMPI_RUNTIME_P2P_PROTO_H

#include <stddef.h>
#include <stdint.h>

enum bmpi_am_id {
    BMPI_AM_EAGER = 1,
    BMPI_AM_EAGER_SYNC,
    BMPI_AM_RGET,
    BMPI_AM_RNDV,
    BMPI_AM_ACK, /* sync eager matched */
    BMPI_AM_FIN, /* RGET data pulled */
    BMPI_AM_CTS, /* RNDV matched: send the fragments */
    BMPI_AM_FRAG,
    BMPI_AM_PUTREQ, /* RGET matched: put the first part into my buffer */
    BMPI_AM_PUTFIN, /* that part is written (or failed) */
    BMPI_AM_MAX
};

/* Who sent it and for which receive: the matching envelope. */
struct bmpi_envelope {
    uint32_t context_id;
    int32_t src; /* rank in the communicator */
    int32_t tag;
};

/* EAGER_SYNC, RGET and RNDV: envelope plus what the receiver needs. */
struct bmpi_rts {
    struct bmpi_envelope env;
    uint32_t rkey_len;   /* RGET */
    uint64_t len;        /* total message bytes */
    uint64_t sreq;       /* sender's request id */
    uint64_t raddr;      /* RGET: address of the data at the sender */
    uint8_t rkey[64];    /* RGET: only rkey_len bytes travel */
};

#define BMPI_RTS_FIXED_LEN offsetof(struct bmpi_rts, rkey)

/* ACK, FIN */
struct bmpi_ctl {
    uint64_t sreq;
};

/* CTS: the receiver's request id for the fragments */
struct bmpi_cts {
    uint64_t sreq;
    uint64_t rreq;
};

/* PUTREQ: where the sender writes bytes [0, len) of its message. */
struct bmpi_putreq {
    uint64_t sreq;
    uint64_t rreq;
    uint64_t raddr;
    uint64_t len;
    uint32_t rkey_len;
    uint8_t rkey[64]; /* only rkey_len bytes travel */
};

#define BMPI_PUTREQ_FIXED_LEN offsetof(struct bmpi_putreq, rkey)

struct bmpi_putfin {
    uint64_t rreq;
    int32_t status; /* BMPI_OK or an MPI error class */
};

struct bmpi_frag {
    uint64_t rreq;
    uint64_t offset;
};

#endif
