/*
 * self: a rank's messages to itself. Messages are queued and delivered
 * from progress, never from inside am_send, so a handler that answers
 * itself does not recurse. get() is a memcpy whose completion is likewise
 * reported from progress.
 */
#include "config.h"

#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "runtime/error.h"
#include "runtime/world.h"
#include "transport/copy.h"
#include "transport/transport.h"

struct self_event {
    struct self_event *next;
    uint8_t am_id;
    size_t hdr_len, len;
    bmpi_tl_done_fn done; /* a completed get when set */
    void *ctx;
    char data[]; /* header, then payload */
};

struct self_state {
    struct self_event *head, *tail;
};

static int self_query(char *why, size_t why_len)
{
    (void)why, (void)why_len;
    return BMPI_OK;
}

static int self_open(struct bmpi_tl *tl)
{
    tl->priv = calloc(1, sizeof(struct self_state));
    if (!tl->priv)
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory");
    tl->caps = (struct bmpi_tl_caps){
        .name = "self",
        .exclusivity = BMPI_TL_EXCL_SELF,
        .max_am = SIZE_MAX / 2,
        .eager_limit = 16384,
        .flags = BMPI_TL_RMA_GET | BMPI_TL_RMA_REMOTE_DONE | BMPI_TL_RMA_ORDERED,
        .latency_us = 0.01,
        .bandwidth_mbs = 10000,
    };
    return BMPI_OK;
}

static int self_add_peers(struct bmpi_tl *tl, const int *peers, int npeers, bool *reachable,
                          char (*why)[128])
{
    (void)tl;
    for (int i = 0; i < npeers; i++) {
        reachable[i] = peers[i] == bmpi_world.rank;
        if (!reachable[i] && why)
            snprintf(why[i], sizeof(why[i]), "self reaches only this process");
    }
    return BMPI_OK;
}

static void push(struct self_state *s, struct self_event *ev)
{
    ev->next = NULL;
    if (s->tail)
        s->tail->next = ev;
    else
        s->head = ev;
    s->tail = ev;
}

static int self_am_send(struct bmpi_tl *tl, int peer, uint8_t am_id, const void *hdr, size_t hdr_len,
                        const struct iovec *iov, int iovcnt)
{
    (void)peer;
    size_t len = 0;
    for (int i = 0; i < iovcnt; i++)
        len += iov[i].iov_len;
    struct self_event *ev = malloc(sizeof(*ev) + hdr_len + len);
    if (!ev)
        return BMPI_TL_EAGAIN;
    ev->am_id = am_id;
    ev->hdr_len = hdr_len;
    ev->len = len;
    ev->done = NULL;
    memcpy(ev->data, hdr, hdr_len);
    char *p = ev->data + hdr_len;
    for (int i = 0; i < iovcnt; i++) {
        bmpi_copy(p, iov[i].iov_base, iov[i].iov_len);
        p += iov[i].iov_len;
    }
    push(tl->priv, ev);
    return BMPI_OK;
}

static int self_mem_reg(struct bmpi_tl *tl, void *addr, size_t len, void **memh)
{
    (void)tl, (void)addr, (void)len;
    *memh = NULL;
    return BMPI_OK;
}

static int self_mem_dereg(struct bmpi_tl *tl, void *memh)
{
    (void)tl, (void)memh;
    return BMPI_OK;
}

static int self_rkey_pack(struct bmpi_tl *tl, void *memh, void *buf, size_t *len)
{
    (void)tl, (void)memh, (void)buf;
    *len = 0;
    return BMPI_OK;
}

static int self_get(struct bmpi_tl *tl, int peer, void *local, void *local_memh, size_t len,
                    uint64_t remote_addr, const void *rkey, size_t rkey_len, bmpi_tl_done_fn done,
                    void *ctx)
{
    (void)peer, (void)local_memh, (void)rkey, (void)rkey_len;
    struct self_event *ev = malloc(sizeof(*ev));
    if (!ev)
        return BMPI_TL_EAGAIN;
    bmpi_copy(local, (const void *)(uintptr_t)remote_addr, len);
    ev->done = done;
    ev->ctx = ctx;
    push(tl->priv, ev);
    return BMPI_OK;
}

static int self_progress(struct bmpi_tl *tl)
{
    struct self_state *s = tl->priv;
    int events = 0;
    /* Deliver only what is queued now: what handlers queue waits for the
     * next pass. */
    struct self_event *ev = s->head;
    s->head = s->tail = NULL;
    while (ev) {
        struct self_event *next = ev->next;
        if (ev->done)
            ev->done(ev->ctx, BMPI_OK);
        else
            bmpi_am_deliver(bmpi_world.rank, ev->am_id, ev->data, ev->hdr_len, ev->data + ev->hdr_len,
                            ev->len);
        free(ev);
        ev = next;
        events++;
    }
    return events;
}

static void self_close(struct bmpi_tl *tl)
{
    struct self_state *s = tl->priv;
    while (s && s->head) {
        struct self_event *ev = s->head;
        s->head = ev->next;
        free(ev);
    }
    free(s);
    tl->priv = NULL;
}

const struct bmpi_tl_ops bmpi_tl_self_ops = {
    .query = self_query,
    .open = self_open,
    .add_peers = self_add_peers,
    .close = self_close,
    .query_other_jobs = bmpi_tl_unsupported_query_other_jobs,
    .card = bmpi_tl_unsupported_card,
    .add_card = bmpi_tl_unsupported_add_card,
    .am_send = self_am_send,
    .mem_reg = self_mem_reg,
    .mem_dereg = self_mem_dereg,
    .rkey_pack = self_rkey_pack,
    .get = self_get,
    .put = bmpi_tl_unsupported_put,
    .amo_native = bmpi_tl_unsupported_amo_native,
    .amo = bmpi_tl_unsupported_amo,
    .flush = bmpi_tl_flush_done,
    .progress = self_progress,
};
