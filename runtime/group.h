/*
 * Groups: an ordered set of processes, stored as the world rank of each
 * member. Shared by reference between communicators and group handles.
 */
#ifndef BMPI_RUNTIME_GROUP_H
#define BMPI_RUNTIME_GROUP_H

#include <mpi.h>

struct bmpi_group {
    MPI_Group handle;
    int refcount;
    int size;
    int rank;         /* of this process in the group, MPI_UNDEFINED if absent */
    int *world_ranks; /* world_ranks[i]: world rank of member i */
};

/* A new group of size members (world_ranks copied); refcount 1, no handle. */
struct bmpi_group *bmpi_group_new(const int *world_ranks, int size);
void bmpi_group_retain(struct bmpi_group *g);
void bmpi_group_release(struct bmpi_group *g);

#endif
