/*
 * Communicators. A communicator is a group, a context id that keeps its
 * traffic apart from every other communicator's, and per-communicator
 * state (error handler, name, attributes, topology).
 *
 * Context ids: point-to-point traffic of a communicator uses context_id,
 * its collectives context_id + 1, so a user's receive never matches a
 * collective's internal message.
 */
#ifndef BMPI_RUNTIME_COMM_H
#define BMPI_RUNTIME_COMM_H

#include <stdbool.h>
#include <stdint.h>
#include <mpi.h>

#include "runtime/group.h"

struct bmpi_match_ctx;
struct bmpi_shmcoll;

struct bmpi_comm {
    MPI_Comm handle;
    int refcount;
    struct bmpi_group *group;
    int rank, size; /* shortcuts into group */
    uint32_t context_id;
    struct bmpi_match_ctx *pt2pt; /* matching state for context_id */
    struct bmpi_match_ctx *coll;  /* ... and for context_id + 1 */
    MPI_Errhandler errhandler;
    char name[MPI_MAX_OBJECT_NAME];
    void *attrs; /* owned by runtime/attr.c */
    void *topo;  /* owned by runtime/topo.c */
    void *info;
    uint32_t coll_seq; /* tags successive collectives apart */
    int sends_open;    /* started sends on it not complete (MPI_Comm_disconnect waits) */
    uint32_t nb_agree_seq; /* ... and the nonblocking agreements of its idups */
    struct bmpi_shmcoll *shmcoll; /* owned by collectives/shm_region.c; NULL until first used */

    /* Intercommunicators (runtime/intercomm.c): the group that ranks of
     * point-to-point calls name, and an intracommunicator over the local
     * group for the agreements of dup and merge. NULL on intracommunicators. */
    struct bmpi_group *remote_group;
    struct bmpi_comm *local_comm;
};

/* The communicator behind a handle, NULL for invalid handles and
 * MPI_COMM_NULL. */
struct bmpi_comm *bmpi_comm_get(MPI_Comm handle);

/* World rank of the process that comm's rank r names in point-to-point
 * (on an intercommunicator, a rank of the remote group). */
static inline int bmpi_comm_world_rank(const struct bmpi_comm *c, int r)
{
    return (c->remote_group ? c->remote_group : c->group)->world_ranks[r];
}

/* How many ranks point-to-point on comm can name. */
static inline int bmpi_comm_peer_size(const struct bmpi_comm *c)
{
    return c->remote_group ? c->remote_group->size : c->size;
}

/* For each rank r of c (an intracommunicator), the lowest rank of c on
 * r's node, from the job's node map, without messages. Returns false
 * when c holds processes of other jobs, whose nodes this process does
 * not know (the caller then agrees with MPI_Comm_split_type), or out of
 * memory. */
bool bmpi_comm_node_leaders(const struct bmpi_comm *c, int *leader);

/* Build MPI_COMM_WORLD and MPI_COMM_SELF from bmpi_world. */
int bmpi_comm_init(void);
void bmpi_comm_finalize(void);

/* Create a communicator on group g (retained) with a context id agreed by
 * all members beforehand; gives it a handle. */
int bmpi_comm_create_from_group(struct bmpi_group *g, uint32_t context_id,
                                struct bmpi_comm **out);
void bmpi_comm_release(struct bmpi_comm *c);

#endif
