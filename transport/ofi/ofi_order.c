/*
 * ofi_order: per-peer delivery in send order (see ofi_order.h).
 */
#include "transport/ofi/ofi_order.h"

#include <stdlib.h>
#include <string.h>

/* Sequence numbers wrap: a comes before b when b - a is below 2^15. */
static bool seq_before(uint16_t a, uint16_t b) { return (int16_t)(uint16_t)(a - b) < 0; }

int ofi_order_init(struct ofi_order *o, int npeers)
{
    memset(o, 0, sizeof(*o));
    o->npeers = npeers;
    o->next_tx = calloc((size_t)npeers, sizeof(*o->next_tx));
    o->next_rx = calloc((size_t)npeers, sizeof(*o->next_rx));
    o->held = calloc((size_t)npeers, sizeof(*o->held));
    if (!o->next_tx || !o->next_rx || !o->held) {
        ofi_order_fini(o);
        return -1;
    }
    return 0;
}

/* arr grown from old to n elements of size each, the new ones zero; NULL
 * when out of memory (arr unchanged). */
static void *grow(void *arr, size_t each, int old, int n)
{
    char *g = realloc(arr, (size_t)n * each);
    if (g)
        memset(g + (size_t)old * each, 0, (size_t)(n - old) * each);
    return g;
}

int ofi_order_grow(struct ofi_order *o, int npeers)
{
    if (npeers <= o->npeers)
        return 0;
    uint16_t *tx = grow(o->next_tx, sizeof(*tx), o->npeers, npeers);
    if (!tx)
        return -1;
    o->next_tx = tx;
    uint16_t *rx = grow(o->next_rx, sizeof(*rx), o->npeers, npeers);
    if (!rx)
        return -1; /* next_tx is just larger */
    o->next_rx = rx;
    struct ofi_held **held = grow(o->held, sizeof(*held), o->npeers, npeers);
    if (!held)
        return -1;
    o->held = held;
    o->npeers = npeers;
    return 0;
}

void ofi_order_fini(struct ofi_order *o)
{
    for (int p = 0; o->held && p < o->npeers; p++) {
        struct ofi_held *h;
        while ((h = o->held[p])) {
            o->held[p] = h->next;
            free(h);
        }
    }
    free(o->next_tx);
    free(o->next_rx);
    free(o->held);
    memset(o, 0, sizeof(*o));
}

int ofi_order_hold(struct ofi_order *o, int src, uint16_t seq, const void *msg, size_t len)
{
    if (seq_before(seq, o->next_rx[src]))
        return -1; /* delivered already */
    struct ofi_held **link = &o->held[src];
    while (*link && seq_before((*link)->seq, seq))
        link = &(*link)->next;
    if (*link && (*link)->seq == seq)
        return -1; /* held already */
    struct ofi_held *h = malloc(sizeof(*h) + len);
    if (!h)
        return -1;
    h->seq = seq;
    h->len = len;
    memcpy(h->msg, msg, len);
    h->next = *link;
    *link = h;
    o->early++;
    return 0;
}
