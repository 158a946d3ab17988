/*
 * The active messages of one-sided communication (runtime/rma_am.c):
 * what an origin sends a target whose memory it cannot reach itself, and
 * the answers. Ids follow the point-to-point ones (p2p_proto.h), so one
 * delivery function tells them apart.
 *
 *   PUT, ACC    segments + data; the target writes (applies), answers ACK
 *   GET         segments; the target answers RESP with the data
 *   GACC, CAS   segments + data (CAS: compare, then origin); the target
 *               answers RESP with the old values, then applies
 *   LOCK        the target grants its lock when it is free: GRANT
 *   UNLOCK      the origin's operations are all answered: release
 *   POST        PSCW: the target opened its exposure epoch to the origin
 *   COMPLETE    PSCW: the origin's access epoch to the target is over
 *   BATCH       small PUTs, ACCs and GETs gathered at the origin
 *               (rma_batch.c), served in order; the target answers
 *               BATCH_ACK once, with the GETs' data
 *   ACC_PULL    segments + where the data lies at the origin (struct
 *               bmpi_rma_pull): the target reads it with the transport's
 *               get(), applies it in arrival order, answers ACK
 *               (rma_pull.c)
 *
 * A segment is (displacement, length) in bytes at the target: from the
 * window's base, or an absolute address in a dynamic window. One message
 * carries at most RMA_AM_MAX_SEGS of them and the data they cover; or,
 * for PUT, GET, ACC and GACC of a strided target side, runs (count
 * segments of one length, a stride apart) that stand for at most
 * RMA_AM_MAX_RUN_SEGS segments, which the target expands.
 */
#ifndef BMPI_RUNTIME_RMA_PROTO_H
#define BMPI_RUNTIME_RMA_PROTO_H

#include <stdint.h>

#include "runtime/p2p_proto.h"

enum bmpi_rma_am_id {
    BMPI_AM_RMA_PUT = BMPI_AM_MAX + 1,
    BMPI_AM_RMA_GET,
    BMPI_AM_RMA_ACC,
    BMPI_AM_RMA_GACC,
    BMPI_AM_RMA_CAS,
    BMPI_AM_RMA_ACK,
    BMPI_AM_RMA_RESP,
    BMPI_AM_RMA_LOCK,
    BMPI_AM_RMA_GRANT,
    BMPI_AM_RMA_UNLOCK,
    BMPI_AM_RMA_POST,
    BMPI_AM_RMA_COMPLETE,
    BMPI_AM_RMA_BATCH,
    BMPI_AM_RMA_BATCH_ACK,
    BMPI_AM_RMA_ACC_PULL,
    BMPI_AM_RMA_LAST = BMPI_AM_RMA_ACC_PULL
};

/* Segments one message carries at most: 4 KiB of them. */
#define RMA_AM_MAX_SEGS 256
/* Segments the runs of one message stand for, at most. */
#define RMA_AM_MAX_RUN_SEGS 4096

struct bmpi_rma_seg {
    uint64_t disp, len;
};

/* count segments of len bytes, stride bytes apart from disp: a strided
 * target side (a column, a vector) in one record. */
struct bmpi_rma_run {
    uint64_t disp, len, count;
    int64_t stride;
};

/* PUT, GET, ACC, GACC, CAS: followed by nseg segments, or by `runs`
 * runs that stand for nseg segments, then the data (ACC_PULL: a struct
 * bmpi_rma_pull instead). */
struct bmpi_rma_op_hdr {
    int32_t win;         /* the window's handle at the target */
    int32_t origin_win;  /* ... and at the origin, for the answer */
    int32_t origin;      /* the origin's rank in the window */
    int32_t op;          /* MPI_Op of ACC, GACC */
    int32_t basic;       /* MPI_Datatype of the elements (ACC, GACC, CAS) */
    uint32_t nseg;
    uint64_t track;      /* the origin's tracking record, comes back */
    uint64_t offset;     /* GET, GACC, CAS: where the answer goes in the origin's stream */
    uint32_t fences;     /* PUT, ACC: fences the origin had entered (rma_sync.c, counted_fence) */
    uint32_t runs;       /* 0, or the runs that stand for the segments */
};

/* ACC_PULL: the origin's data of the message, registered for the
 * transport's get(); rkey_len bytes of rkey are sent. */
#define BMPI_RMA_PULL_RKEY_MAX 64
struct bmpi_rma_pull {
    uint64_t addr;
    uint32_t rkey_len;
    uint32_t pad;
    uint8_t rkey[BMPI_RMA_PULL_RKEY_MAX];
};

/* ACK and RESP (RESP: followed by the data). */
struct bmpi_rma_answer {
    int32_t origin_win;
    int32_t target;      /* the target's rank in the window */
    int32_t status;      /* 0 or an MPI error class */
    uint32_t pad;
    uint64_t track;
    uint64_t offset;
};

/* LOCK, GRANT, UNLOCK, POST, COMPLETE. */
struct bmpi_rma_ctl {
    int32_t win;         /* the window's handle at the receiver */
    int32_t from;        /* the sender's rank in the window */
    int32_t lock_type;   /* LOCK, UNLOCK: MPI_LOCK_SHARED or MPI_LOCK_EXCLUSIVE */
    int32_t sender_win;  /* LOCK: the window's handle at the sender, for GRANT */
};

/* BATCH: nops records, each a struct bmpi_rma_batch_rec, its nseg
 * segments (or the runs that stand for them), then its data (none for a
 * GET), padded to 8 bytes. */
struct bmpi_rma_batch_hdr {
    int32_t win;         /* the window's handle at the target */
    int32_t origin_win;  /* ... and at the origin, for the answer */
    int32_t origin;      /* the origin's rank in the window */
    uint32_t nops;
    uint32_t fences;     /* fences the origin had entered (rma_sync.c, counted_fence) */
    int32_t target;      /* the target's rank in the window, comes back */
    uint32_t flags;      /* BMPI_RMA_BATCH_* */
    uint32_t answers;    /* ANSWER: the operations the answer counts, these
                          * and those of the batches sent without ANSWER
                          * since the last one with it */
    uint32_t ngets;      /* GET records among the nops: always answered */
    uint32_t get_bytes;  /* ... the bytes they read */
};

/* BATCH flags. Without ANSWER the target answers only an error or GET
 * records (a BATCH_ACK counting 0 operations): either the batch ends an active target
 * epoch, whose end the target learns otherwise (rma_sync.c), or a later
 * batch with ANSWER counts its operations (rma_batch.c). COMPLETE: a
 * PSCW complete of the origin follows the operations. */
#define BMPI_RMA_BATCH_ANSWER 0x1u
#define BMPI_RMA_BATCH_COMPLETE 0x2u

struct bmpi_rma_batch_rec {
    uint16_t am_id;      /* BMPI_AM_RMA_PUT, BMPI_AM_RMA_ACC or BMPI_AM_RMA_GET */
    uint16_t runs;       /* 0, or the runs that stand for the segments
                          * (a strided target in a window of one region) */
    int32_t op;          /* ACC: MPI_Op */
    int32_t basic;       /* ACC: MPI_Datatype of the elements */
    uint32_t nseg;
    uint64_t bytes;      /* of data (GET: read, in the answer) */
};

/* BATCH_ACK: nops Puts and Accumulates applied (status: the first error,
 * whose operation was skipped), and the batch's ngets GET records
 * answered: their data follows, one after the other in record order
 * (none when status is an error). */
struct bmpi_rma_batch_answer {
    int32_t origin_win;
    int32_t target;      /* the target's rank in the window */
    int32_t status;
    uint32_t nops;
    uint32_t ngets;
    uint32_t pad;
};

#endif
