/*
 * Handing freshly written cache lines to another core.
 *
 * A line a producer has just written sits modified in its own core's
 * private cache, and a consumer on another core that reads it waits for a
 * snoop of that cache. CLDEMOTE (Intel, from Sapphire Rapids / Tremont)
 * moves such lines to the shared last-level cache ahead of time, where
 * the consumer finds them sooner. On other processors the instruction is
 * a no-op hint, so no CPU check is needed. It pays for small messages
 * only: demoting kilobytes costs the producer more than the consumer
 * saves (docs/shm.md).
 */
#ifndef BMPI_TRANSPORT_SHM_CACHELINE_H
#define BMPI_TRANSPORT_SHM_CACHELINE_H

#include <stddef.h>
#include <stdint.h>

#define BMPI_CACHELINE 64

/* Bytes up to which demoting what was written pays. */
#define BMPI_DEMOTE_MAX 1024

static inline void bmpi_cacheline_demote(const void *p, size_t len)
{
#if defined(__x86_64__) || defined(__i386__)
    const char *end = (const char *)p + len;
    for (const char *l = (const char *)((uintptr_t)p & ~(uintptr_t)(BMPI_CACHELINE - 1)); l < end;
         l += BMPI_CACHELINE)
        __asm__ volatile("cldemote %0" ::"m"(*l));
#else
    (void)p;
    (void)len;
#endif
}

#endif
