/*
 * ofi_order: per-peer delivery in send order over providers that may
 * complete receives out of order.
 *
 * FI_ORDER_SAS orders how a provider processes messages, not the order of
 * their completions (rx_attr->comp_order, FI_ORDER_NONE on every provider
 * here): a provider that moves a large message in pieces may complete a
 * small one sent after it first. The sender numbers its messages to each
 * peer; the receiver delivers a message whose number is the next one
 * expected and holds a copy of any that comes early until the gap closes,
 * as MPICH's ch4/ofi does for its active messages. Numbers are 16 bits
 * and wrap: a completion would have to come more than 32767 messages from
 * the same peer late to be mistaken. No libfabric here, so
 * that test/unit/check_ofi_order can drive it directly.
 */
#ifndef BMPI_TRANSPORT_OFI_ORDER_H
#define BMPI_TRANSPORT_OFI_ORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A message that came early, copied out of the receive buffer. */
struct ofi_held {
    struct ofi_held *next; /* by sequence number */
    uint16_t seq;
    size_t len;
    uint64_t msg[]; /* 8-byte aligned, as in a receive buffer */
};

struct ofi_order {
    int npeers;
    uint16_t *next_tx;       /* number of the next message to each peer */
    uint16_t *next_rx;       /* number expected next from each peer */
    struct ofi_held **held;  /* per peer, lowest number first */
    uint64_t early;          /* messages that came before their turn (BMPI_VERBOSE) */
};

/* 0, or -1 when out of memory. */
int ofi_order_init(struct ofi_order *o, int npeers);
void ofi_order_fini(struct ofi_order *o);
/* Room for npeers (more than now; the new ones start at 0): 0, or -1 when
 * out of memory (o unchanged). */
int ofi_order_grow(struct ofi_order *o, int npeers);

/* The number to put on the next message to peer; ofi_order_sent once the
 * provider has taken it. */
static inline uint16_t ofi_order_tx_seq(const struct ofi_order *o, int peer) { return o->next_tx[peer]; }
static inline void ofi_order_sent(struct ofi_order *o, int peer) { o->next_tx[peer]++; }

/* Keeps a copy of a message that came before its turn: 0, or -1 when seq
 * was delivered or held already or the copy could not be made (which
 * would repeat or lose a message). */
int ofi_order_hold(struct ofi_order *o, int src, uint16_t seq, const void *msg, size_t len);

/* A message numbered seq has come from src. Returns true when it is the
 * one expected: the caller delivers it, then the held ones that are now
 * in turn (ofi_order_pop_ready). Otherwise it is held, *err as for
 * ofi_order_hold. Inline: every message passes here. */
static inline bool ofi_order_arrived(struct ofi_order *o, int src, uint16_t seq, const void *msg, size_t len,
                                     int *err)
{
    if (seq == o->next_rx[src]) {
        o->next_rx[src]++;
        *err = 0;
        return true;
    }
    *err = ofi_order_hold(o, src, seq, msg, len);
    return false;
}

/* The held message from src that is now next in turn, or NULL; the caller
 * delivers it and frees it with free(). */
static inline struct ofi_held *ofi_order_pop_ready(struct ofi_order *o, int src)
{
    struct ofi_held *h = o->held[src];
    if (!h || h->seq != o->next_rx[src])
        return NULL;
    o->held[src] = h->next;
    o->next_rx[src]++;
    return h;
}

#endif
