#include "config.h"

#include <stdlib.h>

#include "runtime/match.h"
#include "runtime/request.h"

#define HASH_SIZE 256

static struct {
    struct bmpi_match_ctx *buckets[HASH_SIZE];
} contexts;

static struct bmpi_match_ctx **bucket(uint32_t context_id)
{
    return &contexts.buckets[(context_id >> 1) % HASH_SIZE];
}

struct bmpi_match_ctx *bmpi_match_ctx_lookup(uint32_t context_id)
{
    for (struct bmpi_match_ctx *m = *bucket(context_id); m; m = m->hash_next)
        if (m->context_id == context_id)
            return m;
    return NULL;
}

struct bmpi_match_ctx *bmpi_match_ctx_get(uint32_t context_id)
{
    struct bmpi_match_ctx *m = bmpi_match_ctx_lookup(context_id);
    if (!m) {
        m = calloc(1, sizeof(*m));
        if (!m)
            return NULL;
        m->context_id = context_id;
        m->hash_next = *bucket(context_id);
        *bucket(context_id) = m;
    }
    m->refcount++;
    return m;
}

/* The state goes when nobody refers to it and no message waits in it. */
void bmpi_match_ctx_put(struct bmpi_match_ctx *m)
{
    if (!m || --m->refcount > 0 || m->unexp_head || m->posted_head)
        return;
    for (struct bmpi_match_ctx **link = bucket(m->context_id); *link; link = &(*link)->hash_next) {
        if (*link == m) {
            *link = m->hash_next;
            free(m);
            return;
        }
    }
}

void bmpi_match_post(struct bmpi_match_ctx *m, struct bmpi_request *req)
{
    req->next = NULL;
    req->prev = m->posted_tail;
    if (m->posted_tail)
        m->posted_tail->next = req;
    else
        m->posted_head = req;
    m->posted_tail = req;
}

static void unlink_posted(struct bmpi_match_ctx *m, struct bmpi_request *req)
{
    if (req->prev)
        req->prev->next = req->next;
    else
        m->posted_head = req->next;
    if (req->next)
        req->next->prev = req->prev;
    else
        m->posted_tail = req->prev;
    req->next = req->prev = NULL;
}

struct bmpi_request *bmpi_match_posted(struct bmpi_match_ctx *m, int src, int tag)
{
    for (struct bmpi_request *req = m->posted_head; req; req = req->next) {
        if (bmpi_match_envelope(req->peer, req->tag, src, tag)) {
            unlink_posted(m, req);
            return req;
        }
    }
    return NULL;
}

int bmpi_match_unpost(struct bmpi_match_ctx *m, struct bmpi_request *req)
{
    for (struct bmpi_request *r = m->posted_head; r; r = r->next) {
        if (r == req) {
            unlink_posted(m, req);
            return 1;
        }
    }
    return 0;
}

struct bmpi_unexpected *bmpi_match_unexpected(struct bmpi_match_ctx *m, int src, int tag, int take)
{
    for (struct bmpi_unexpected *u = m->unexp_head; u; u = u->next) {
        if (!bmpi_match_envelope(src, tag, u->rts.env.src, u->rts.env.tag))
            continue;
        if (take) {
            if (u->prev)
                u->prev->next = u->next;
            else
                m->unexp_head = u->next;
            if (u->next)
                u->next->prev = u->prev;
            else
                m->unexp_tail = u->prev;
        }
        return u;
    }
    return NULL;
}

void bmpi_match_add_unexpected(struct bmpi_match_ctx *m, struct bmpi_unexpected *u)
{
    u->next = NULL;
    u->prev = m->unexp_tail;
    if (m->unexp_tail)
        m->unexp_tail->next = u;
    else
        m->unexp_head = u;
    m->unexp_tail = u;
}

void bmpi_match_finalize(void)
{
    for (int b = 0; b < HASH_SIZE; b++) {
        while (contexts.buckets[b]) {
            struct bmpi_match_ctx *m = contexts.buckets[b];
            contexts.buckets[b] = m->hash_next;
            while (m->unexp_head) {
                struct bmpi_unexpected *u = m->unexp_head;
                m->unexp_head = u->next;
                free(u);
            }
            free(m);
        }
    }
}
