/*
 * ofi: the registration cache.
 *
 * mem_reg of the runtime (a send buffer of an RGET message) and the local
 * registrations get()/put() take under FI_MR_LOCAL come here. Regions are
 * registered page-aligned and shared: a request that falls inside a live
 * registration takes a reference instead of registering again. When the
 * last reference goes, the entry stays for reuse (up to max_unused of them,
 * least recently used evicted first) — but only for providers that do not
 * pin memory: for those (no FI_MR_LOCAL: tcp, shm) a registration names
 * virtual addresses and stays correct even if the application frees and
 * reallocates the buffer. Providers that pin pages (FI_MR_LOCAL: verbs,
 * efa) get max_unused 0 here, since a stale pinned registration would read
 * old pages; they keep their own cache, with memory monitors, inside
 * libfabric (FI_MR_CACHE_MONITOR).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include "runtime/error.h"
#include "transport/ofi/ofi.h"

#define OFI_MR_ACCESS (FI_SEND | FI_RECV | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE)

void ofi_mr_cache_init(struct ofi_state *s, int max_unused)
{
    memset(&s->mrc, 0, sizeof(s->mrc));
    s->mrc.max_unused = max_unused < 0 ? 0 : max_unused;
    s->mrc.next_key = 1;
}

int ofi_mr_reg_raw(struct ofi_state *s, void *addr, size_t len, uint64_t access, uint64_t key,
                   struct fid_mr **mr)
{
    int rc = fi_mr_reg(s->domain, addr, len, access, 0, key, 0, mr, NULL);
    if (rc)
        return bmpi_err_set(MPI_ERR_OTHER, "ofi (%s): fi_mr_reg of %zu bytes at %p failed: %s", s->prov,
                            len, addr, fi_strerror(-rc));
    if (s->mr_mode & FI_MR_ENDPOINT) {
        rc = fi_mr_bind(*mr, &s->ep->fid, 0);
        if (!rc)
            rc = fi_mr_enable(*mr);
        if (rc) {
            fi_close(&(*mr)->fid);
            *mr = NULL;
            return bmpi_err_set(MPI_ERR_OTHER, "ofi (%s): binding a memory region to the endpoint failed: %s",
                                s->prov, fi_strerror(-rc));
        }
    }
    return BMPI_OK;
}

static void unlink_entry(struct ofi_mr_cache *c, struct ofi_mr_entry *e)
{
    if (e->prev)
        e->prev->next = e->next;
    else
        c->head = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else
        c->tail = e->prev;
    e->prev = e->next = NULL;
}

static void push_front(struct ofi_mr_cache *c, struct ofi_mr_entry *e)
{
    e->prev = NULL;
    e->next = c->head;
    if (c->head)
        c->head->prev = e;
    else
        c->tail = e;
    c->head = e;
}

static void destroy(struct ofi_mr_cache *c, struct ofi_mr_entry *e)
{
    unlink_entry(c, e);
    c->count--;
    if (e->mr)
        fi_close(&e->mr->fid);
    free(e);
}

/* Drop unused entries, oldest first, until at most keep remain. */
static void trim(struct ofi_mr_cache *c, int keep)
{
    for (struct ofi_mr_entry *e = c->tail; e && c->unused > keep;) {
        struct ofi_mr_entry *prev = e->prev;
        if (e->refs == 0) {
            c->unused--;
            destroy(c, e);
        }
        e = prev;
    }
}

int ofi_mr_get(struct ofi_state *s, void *addr, size_t len, struct ofi_mr_entry **out)
{
    struct ofi_mr_cache *c = &s->mrc;
    uintptr_t start = (uintptr_t)addr, end = start + (len ? len : 1);
    for (struct ofi_mr_entry *e = c->head; e; e = e->next) {
        if (e->base <= start && end <= e->base + e->len) {
            if (e->refs++ == 0)
                c->unused--;
            unlink_entry(c, e);
            push_front(c, e);
            c->hits++;
            *out = e;
            return BMPI_OK;
        }
    }
    c->misses++;
    long page = sysconf(_SC_PAGESIZE);
    uintptr_t mask = (uintptr_t)(page > 0 ? page : 4096) - 1;
    struct ofi_mr_entry *e = calloc(1, sizeof(*e));
    if (!e)
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory registering %zu bytes", len);
    e->base = start & ~mask;
    e->len = ((end + mask) & ~mask) - e->base;
    int rc = ofi_mr_reg_raw(s, (void *)e->base, e->len, OFI_MR_ACCESS, c->next_key++, &e->mr);
    if (rc) {
        free(e);
        return rc;
    }
    e->desc = fi_mr_desc(e->mr);
    e->key = fi_mr_key(e->mr);
    if (e->key == FI_KEY_NOTAVAIL) {
        fi_close(&e->mr->fid);
        free(e);
        return bmpi_err_set(MPI_ERR_OTHER, "ofi (%s): the provider gave no key for a registration", s->prov);
    }
    e->refs = 1;
    push_front(c, e);
    c->count++;
    *out = e;
    return BMPI_OK;
}

void ofi_mr_put(struct ofi_state *s, struct ofi_mr_entry *e)
{
    struct ofi_mr_cache *c = &s->mrc;
    if (!e || --e->refs > 0)
        return;
    c->unused++;
    trim(c, c->max_unused);
}

void ofi_mr_cache_fini(struct ofi_state *s)
{
    struct ofi_mr_cache *c = &s->mrc;
    while (c->head)
        destroy(c, c->head);
    c->unused = 0;
}
