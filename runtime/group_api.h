/*
 * Group handles (runtime/group_api.c). The group objects themselves are
 * runtime/group.h's; a handle holds one reference.
 */
#ifndef BMPI_RUNTIME_GROUP_API_H
#define BMPI_RUNTIME_GROUP_API_H

#include <mpi.h>

#include "runtime/group.h"

/* The group behind a handle (MPI_GROUP_EMPTY included), NULL if invalid. */
struct bmpi_group *bmpi_group_lookup(MPI_Group h);
/* A new handle for g, taking over the caller's reference. On failure the
 * reference is dropped. */
int bmpi_group_make_handle(struct bmpi_group *g, MPI_Group *out);
/* MPI_IDENT, MPI_SIMILAR or MPI_UNEQUAL. */
int bmpi_group_compare(const struct bmpi_group *a, const struct bmpi_group *b);
/* MPI_Finalize: drop the groups whose handles the program never freed. */
void bmpi_group_finalize(void);

#endif
