/*
 * Helpers every benchmark program of bench/ shares: parsing a size
 * argument, ordering samples to take their best and median, placing a
 * buffer at a chosen offset in the page. Plain standard C, no MPI: the
 * programs build with each MPI's own compiler wrapper (bench/run-compare,
 * bench/bundle, bench/net-compare) and limits.c with cc alone; they
 * include this header by a relative name, so no -I is needed.
 */
#ifndef BMPI_BENCH_UTIL_H
#define BMPI_BENCH_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* "64", "4k", "16M", "1g": bytes (k, m and g are powers of 1024; a
 * fraction such as "1.5k" is allowed). */
static inline size_t parse_size(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (*end == 'k' || *end == 'K')
        v *= 1024;
    else if (*end == 'm' || *end == 'M')
        v *= 1024 * 1024;
    else if (*end == 'g' || *end == 'G')
        v *= 1024.0 * 1024 * 1024;
    return (size_t)v;
}

/* qsort comparison of doubles, ascending. */
static inline int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#define BENCH_PAGE 4096 /* what a buffer's -o offset counts from */

/* A buffer of bytes as malloc gives it (offset -1), or starting offset
 * bytes (0 .. BENCH_PAGE - 1) past a page boundary; *block is what to
 * free. Where a copy's source and destination sit in their pages decides
 * how fast some processors copy (docs/performance.md). */
static inline char *buffer_at_offset(size_t bytes, long offset, void **block)
{
    if (offset < 0)
        return *block = malloc(bytes);
    char *raw = *block = malloc(bytes + 2 * BENCH_PAGE);
    if (!raw)
        return NULL;
    uintptr_t page = ((uintptr_t)raw + BENCH_PAGE - 1) & ~(uintptr_t)(BENCH_PAGE - 1);
    return (char *)page + offset;
}

#endif
