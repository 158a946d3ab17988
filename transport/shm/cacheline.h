/*
 * Moving cache lines between the cores of a producer and a consumer ahead
 * of time (docs/shm.md, "Performance notes").
 *
 * A line a producer has just written sits modified in its own core's
 * private cache, and a consumer on another core that reads it waits for a
 * snoop of that cache; a producer that writes a line the consumer read
 * last waits for that copy to be invalidated. Two hints take these round
 * trips off the critical path:
 *  - demote (CLDEMOTE) moves freshly written lines to the shared
 *    last-level cache, where the consumer finds them sooner. It pays when
 *    the consumer is waiting for them (a pingpong answer of 512 B-16 KiB,
 *    a collective's slot of up to 1 KiB) and costs a producer that streams
 *    ahead of its consumer about half its bandwidth, so callers choose
 *    sizes and patterns;
 *  - claim (PREFETCHW) takes a line into this core's cache for writing
 *    while the producer has nothing better to do;
 *  - pull (a read prefetch) asks for lines a consumer will read, so that
 *    a consumer spinning on a flag gets the data lines in the same round
 *    trip as the flag instead of one after it.
 * Demote and claim are no-op hints on x86 processors without them, so no
 * CPU check is needed; elsewhere they compile to nothing. Pull is the
 * compiler's portable prefetch. Last, copy_in is the consumer's copy of
 * what a producer wrote, as one stream of requests where the CPU allows,
 * and cpu_relax the pause of a consumer polling a line.
 */
#ifndef BMPI_TRANSPORT_SHM_CACHELINE_H
#define BMPI_TRANSPORT_SHM_CACHELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#define BMPI_CACHELINE 64

/* Demotes every line of [p, p + len). */
static inline void bmpi_cacheline_demote(const void *p, size_t len)
{
#if defined(__x86_64__) || defined(__i386__)
    const char *end = (const char *)p + len;
    for (const char *l = (const char *)((uintptr_t)p & ~(uintptr_t)(BMPI_CACHELINE - 1)); l < end;
         l += BMPI_CACHELINE)
        __asm__ volatile("cldemote (%0)" ::"r"(l) : "memory");
#else
    (void)p;
    (void)len;
#endif
}

/* Claims the line holding p for writing. */
static inline void bmpi_cacheline_claim(const void *p)
{
#if defined(__x86_64__) || defined(__i386__)
    __asm__ volatile("prefetchw (%0)" ::"r"(p));
#else
    (void)p;
#endif
}

/* Asks for every line of [p, p + len) for reading, without waiting. */
static inline void bmpi_cacheline_pull(const void *p, size_t len)
{
    for (size_t off = 0; off < len; off += BMPI_CACHELINE)
        __builtin_prefetch((const char *)p + off);
}

/* Tells the core this thread is spinning on a line (PAUSE, YIELD): it
 * leaves the loop without a memory-order flush when the line changes. */
static inline void bmpi_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ volatile("yield" ::: "memory");
#endif
}

/* Whether this CPU has fast short REP MOVSB (FSRM). CPUID traps to the
 * hypervisor on a VM: ask once and keep the answer. */
static inline bool bmpi_cpu_has_fsrm(void)
{
#if defined(__x86_64__)
    unsigned a, b, c, d;
    return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (d & (1u << 4));
#else
    return false;
#endif
}

/* Copies n bytes that a producer on another core has just written into
 * this core (a consumer reading a posted slot). With fsrm, REP MOVSB: it
 * asks for the source lines as one stream, where glibc's vector loop,
 * which it takes below 2112 bytes, waits on a few at a time. Between the
 * two cores of the AMD EPYC VM, a ring of 256 B or 2 KiB messages whose
 * producer runs ahead (an ad hoc program) went faster with it, most in
 * the VM's slow mode, where a line takes longest to cross. The producer's
 * side gains less, and nothing in the fast mode. In the collectives'
 * slots 512 B-1 KiB lost in the fast mode, so only above 1 KiB
 * (docs/shm.md, "Why the constants are what they are"). */
#define BMPI_COPY_IN_MOVSB_MIN 1025
static inline void bmpi_cacheline_copy_in(void *dst, const void *src, size_t n, bool fsrm)
{
#if defined(__x86_64__)
    if (fsrm && n >= BMPI_COPY_IN_MOVSB_MIN) {
        __asm__ volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(n) : : "memory");
        return;
    }
#endif
    memcpy(dst, src, n);
}

#endif
