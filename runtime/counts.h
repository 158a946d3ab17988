/*
 * The per-rank counts and displacements of the v and w collectives
 * (collectives/, runtime/neighbor.c), as the int call gives them or as its
 * large-count _c twin does, read through one view so both calls go the same
 * path without copying the arrays.
 */
#ifndef BMPI_RUNTIME_COUNTS_H
#define BMPI_RUNTIME_COUNTS_H

#include <stdbool.h>
#include <mpi.h>

/* One array from the int call (i) or from the _c call (w): one is set, the
 * other NULL (both NULL: no array). */
struct bmpi_counts {
    const int *i;
    const MPI_Count *w;
};
struct bmpi_displs {
    const int *i;
    const MPI_Aint *w;
};
static inline MPI_Count bmpi_count_at(struct bmpi_counts v, int k)
{
    return v.w ? v.w[k] : v.i[k];
}
static inline MPI_Aint bmpi_displ_at(struct bmpi_displs v, int k)
{
    return v.w ? v.w[k] : (MPI_Aint)v.i[k];
}
static inline bool bmpi_counts_null(struct bmpi_counts v) { return !v.i && !v.w; }
/* The view of an int call's array or of a _c call's, by its type. */
#define BMPI_COUNTS(a)                                                                             \
    _Generic((a), const int *: (struct bmpi_counts){.i = (const int *)(a)},                        \
             default: (struct bmpi_counts){.w = (const MPI_Count *)(a)})
#define BMPI_DISPLS(a)                                                                             \
    _Generic((a), const int *: (struct bmpi_displs){.i = (const int *)(a)},                        \
             default: (struct bmpi_displs){.w = (const MPI_Aint *)(a)})

#endif
