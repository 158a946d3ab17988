/*
 * Matching, once, in the runtime, above all transports (as Open MPI's ob1
 * does): per context id a queue of posted receives and a queue of
 * unexpected messages, both in order. A transport delivers a peer's
 * messages in order, so arrival order is the sender's order and MPI's
 * non-overtaking rule holds without sequence numbers.
 */
#ifndef BMPI_RUNTIME_MATCH_H
#define BMPI_RUNTIME_MATCH_H

#include <stddef.h>
#include <stdint.h>
#include <mpi.h>

#include "runtime/p2p_proto.h"

struct bmpi_request;

/* A message that arrived before its receive was posted. */
struct bmpi_unexpected {
    struct bmpi_unexpected *next, *prev;
    int world_src;
    uint8_t am_id;
    struct bmpi_rts rts; /* envelope and rendezvous details */
    size_t len;          /* eager bytes held in data */
    void *data;          /* right after this struct, in the same allocation */
};

struct bmpi_match_ctx {
    uint32_t context_id;
    int refcount;
    struct bmpi_request *posted_head, *posted_tail;
    struct bmpi_unexpected *unexp_head, *unexp_tail;
    struct bmpi_match_ctx *hash_next;
};

/* The matching state of a context id, created on first use (messages may
 * arrive for a communicator this rank has not created yet). */
struct bmpi_match_ctx *bmpi_match_ctx_get(uint32_t context_id);
struct bmpi_match_ctx *bmpi_match_ctx_lookup(uint32_t context_id);
void bmpi_match_ctx_put(struct bmpi_match_ctx *m);

static inline int bmpi_match_envelope(int want_src, int want_tag, int src, int tag)
{
    return (want_src == src || want_src == MPI_ANY_SOURCE) &&
           (want_tag == tag || want_tag == MPI_ANY_TAG);
}

/* Remove and return the first posted receive matching (src, tag). */
struct bmpi_request *bmpi_match_posted(struct bmpi_match_ctx *m, int src, int tag);
void bmpi_match_post(struct bmpi_match_ctx *m, struct bmpi_request *req);
int bmpi_match_unpost(struct bmpi_match_ctx *m, struct bmpi_request *req);

/* First unexpected message matching (src, tag); remove it when take. */
struct bmpi_unexpected *bmpi_match_unexpected(struct bmpi_match_ctx *m, int src, int tag, int take);
void bmpi_match_add_unexpected(struct bmpi_match_ctx *m, struct bmpi_unexpected *u);

void bmpi_match_finalize(void);

#endif
