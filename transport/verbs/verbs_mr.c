/*
 * verbs: the registration cache (docs/verbs.md, "Registrations").
 *
 * ibv_reg_mr pins the pages behind a virtual range. If the application
 * frees that memory and gets the same addresses back later (malloc does
 * this all the time), a registration kept from before still names the old
 * pages: an RDMA READ through it would return stale bytes, silently. We
 * have no hook on free/munmap (libbmpi exports only MPI names, and glibc's
 * malloc calls munmap internally, out of reach of interposition), so:
 *
 *  - without ODP, a registration lives only while an operation uses it:
 *    mem_reg..mem_dereg of the runtime (one rendezvous send), get()/put()
 *    for their local buffer until completion. Concurrent users of the same
 *    range share one entry (refs); the last one deregisters. Nothing about
 *    user memory survives between MPI calls, so free-and-reuse is safe.
 *  - with ODP (IBV_ACCESS_ON_DEMAND, when the device reports RC support),
 *    the registration follows the process's page tables (the kernel
 *    invalidates it through MMU notifiers when the range is unmapped), so
 *    unused entries are kept, up to max_unused, least recently used
 *    evicted first.
 *
 * The receive rings and send buffers are registered once at their
 * creation, outside this cache.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/error.h"
#include "transport/verbs/verbs.h"

void verbs_mr_cache_init(struct verbs_mr_cache *c, struct ibv_pd *pd, bool keep, int max_unused)
{
    memset(c, 0, sizeof(*c));
    c->pd = pd;
    c->max_unused = keep && max_unused > 0 ? max_unused : 0;
}

static void unlink_entry(struct verbs_mr_cache *c, struct verbs_mr_entry *e)
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

static void push_front(struct verbs_mr_cache *c, struct verbs_mr_entry *e)
{
    e->prev = NULL;
    e->next = c->head;
    if (c->head)
        c->head->prev = e;
    else
        c->tail = e;
    c->head = e;
}

static void destroy(struct verbs_mr_cache *c, struct verbs_mr_entry *e)
{
    unlink_entry(c, e);
    c->count--;
    if (e->mr && ibv_dereg_mr(e->mr) == 0)
        c->deregs++;
    free(e);
}

static void trim(struct verbs_mr_cache *c, int keep)
{
    for (struct verbs_mr_entry *e = c->tail; e && c->unused > keep;) {
        struct verbs_mr_entry *prev = e->prev;
        if (e->refs == 0) {
            c->unused--;
            destroy(c, e);
        }
        e = prev;
    }
}

int verbs_mr_get(struct verbs_mr_cache *c, void *addr, size_t len, int access,
                 struct verbs_mr_entry **out)
{
    uintptr_t start = (uintptr_t)addr, end = start + (len ? len : 1);
    for (struct verbs_mr_entry *e = c->head; e; e = e->next) {
        if (e->base <= start && end <= e->base + e->len && (e->access & access) == access) {
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
    struct verbs_mr_entry *e = calloc(1, sizeof(*e));
    if (!e)
        return bmpi_err_set(MPI_ERR_NO_MEM, "verbs: out of memory registering %zu bytes", len);
    e->base = start & ~mask;
    e->len = ((end + mask) & ~mask) - e->base;
    e->access = access | (c->odp ? IBV_ACCESS_ON_DEMAND : 0);
    e->mr = ibv_reg_mr(c->pd, (void *)e->base, e->len, e->access);
    if (!e->mr && (access & IBV_ACCESS_REMOTE_READ) && (access & IBV_ACCESS_REMOTE_WRITE)) {
        /* Read-only memory (a send buffer in .rodata) cannot be registered
         * for writing: a rendezvous source needs remote read only. */
        int ro = IBV_ACCESS_REMOTE_READ | (c->odp ? IBV_ACCESS_ON_DEMAND : 0);
        e->mr = ibv_reg_mr(c->pd, (void *)e->base, e->len, ro);
        if (e->mr)
            e->access = ro;
    }
    if (!e->mr) {
        int err = errno;
        free(e);
        return bmpi_err_set(MPI_ERR_OTHER,
                            "verbs: ibv_reg_mr of %zu bytes at %p failed: %s%s", len, addr,
                            strerror(err),
                            err == ENOMEM || err == EAGAIN
                                ? " (locked-memory limit? raise 'ulimit -l' or memlock in "
                                  "/etc/security/limits.conf)"
                                : "");
    }
    c->regs++;
    e->refs = 1;
    push_front(c, e);
    c->count++;
    *out = e;
    return BMPI_OK;
}

void verbs_mr_put(struct verbs_mr_cache *c, struct verbs_mr_entry *e)
{
    if (!e || --e->refs > 0)
        return;
    c->unused++;
    trim(c, c->max_unused);
}

void verbs_mr_cache_fini(struct verbs_mr_cache *c)
{
    while (c->head)
        destroy(c, c->head);
    c->unused = 0;
}
