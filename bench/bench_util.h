/*
 * Helpers every benchmark program of bench/ shares: parsing a size
 * argument and ordering samples to take their best and median. Plain
 * standard C, no MPI: the programs build with each MPI's own compiler
 * wrapper (bench/run-compare, bench/bundle, bench/net-compare) and
 * limits.c with cc alone; they include this header by a relative name,
 * so no -I is needed.
 */
#ifndef BMPI_BENCH_UTIL_H
#define BMPI_BENCH_UTIL_H

#include <stddef.h>
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

#endif
