/*
 * Communicator objects: the two predefined ones and the handle table of
 * those created at run time. Creation and destruction algorithms
 * (dup, split, ...) live in runtime/comm_api.c.
 */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectives/shm_coll.h"
#include "runtime/api.h"
#include "runtime/comm.h"
#include "runtime/context.h"
#include "runtime/errhandler.h"
#include "runtime/handle.h"
#include "runtime/match.h"
#include "runtime/p2p.h"
#include "runtime/world.h"

/* Context ids 0 and 2 are MPI_COMM_WORLD's and MPI_COMM_SELF's (each with
 * its collective context one above). */
#define WORLD_CONTEXT 0
#define SELF_CONTEXT 2

static struct {
    struct bmpi_comm *world, *self;
    struct bmpi_handle_table table;
} comms = {.table = {.type = BMPI_OBJ_COMM}};

struct bmpi_comm *bmpi_comm_get(MPI_Comm handle)
{
    if (handle == MPI_COMM_WORLD)
        return comms.world;
    if (handle == MPI_COMM_SELF)
        return comms.self;
    return bmpi_handle_get(&comms.table, handle);
}

static struct bmpi_comm *comm_new(struct bmpi_group *g, uint32_t context_id)
{
    struct bmpi_comm *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->refcount = 1;
    c->group = g;
    c->rank = g->rank;
    c->size = g->size;
    c->context_id = context_id;
    c->errhandler = MPI_ERRORS_ARE_FATAL;
    c->pt2pt = bmpi_match_ctx_get(context_id);
    c->coll = bmpi_match_ctx_get(context_id + 1);
    if (!c->pt2pt || !c->coll) {
        free(c);
        return NULL;
    }
    return c;
}

static void comm_free(struct bmpi_comm *c)
{
    bmpi_shmcoll_free(c);
    bmpi_match_ctx_put(c->pt2pt);
    bmpi_match_ctx_put(c->coll);
    bmpi_errhandler_release(c->errhandler);
    bmpi_group_release(c->group);
    bmpi_group_release(c->remote_group);
    if (c->local_comm)
        bmpi_comm_release(c->local_comm);
    free(c);
}

struct node_rank {
    uint32_t nodeid;
    int rank;
};

static int cmp_node_rank(const void *x, const void *y)
{
    const struct node_rank *a = x, *b = y;
    if (a->nodeid != b->nodeid)
        return a->nodeid < b->nodeid ? -1 : 1;
    return (a->rank > b->rank) - (a->rank < b->rank);
}

bool bmpi_comm_node_leaders(const struct bmpi_comm *c, int *leader)
{
    struct node_rank *v = malloc((size_t)c->size * sizeof(*v));
    if (!v)
        return false;
    for (int r = 0; r < c->size; r++) {
        const struct bmpi_peer *p = &bmpi_world.peers[c->group->world_ranks[r]];
        if (p->job != bmpi_world.job_id || p->nodeid == UINT32_MAX) {
            free(v);
            return false;
        }
        v[r] = (struct node_rank){p->nodeid, r};
    }
    qsort(v, (size_t)c->size, sizeof(*v), cmp_node_rank);
    for (int i = 0; i < c->size; i++)
        leader[v[i].rank] = i && v[i].nodeid == v[i - 1].nodeid ? leader[v[i - 1].rank] : v[i].rank;
    free(v);
    return true;
}

int bmpi_comm_init(void)
{
    int *ranks = malloc((size_t)bmpi_world.size * sizeof(int));
    if (!ranks)
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory");
    for (int i = 0; i < bmpi_world.size; i++)
        ranks[i] = i;
    struct bmpi_group *wg = bmpi_group_new(ranks, bmpi_world.size);
    struct bmpi_group *sg = bmpi_group_new(&bmpi_world.rank, 1);
    free(ranks);
    if (!wg || !sg)
        goto nomem;
    comms.world = comm_new(wg, WORLD_CONTEXT);
    if (!comms.world)
        goto nomem;
    wg = NULL;
    comms.self = comm_new(sg, SELF_CONTEXT);
    if (!comms.self)
        goto nomem;
    comms.world->handle = MPI_COMM_WORLD;
    comms.self->handle = MPI_COMM_SELF;
    snprintf(comms.world->name, sizeof(comms.world->name), "MPI_COMM_WORLD");
    snprintf(comms.self->name, sizeof(comms.self->name), "MPI_COMM_SELF");
    return BMPI_OK;
nomem:
    bmpi_group_release(wg);
    bmpi_group_release(sg);
    return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory creating MPI_COMM_WORLD");
}

/* Free, whatever references are left (the program's, those of requests
 * that will never complete), every communicator of the table for which
 * `pick` says so. */
static void release_all(bool (*pick)(const struct bmpi_comm *))
{
    /* a release clears the entries it frees, an intercommunicator's
     * hidden local one included, so each entry is read afresh */
    for (int i = 0; i < comms.table.used; i++) {
        struct bmpi_comm *c = comms.table.objs[i];
        if (c && pick(c)) {
            c->refcount = 1;
            bmpi_comm_release(c);
        }
    }
}

static bool is_inter(const struct bmpi_comm *c) { return c->remote_group != NULL; }
static bool any(const struct bmpi_comm *c) { return c != NULL; }

/* What the program left behind goes through the same teardown as
 * MPI_Comm_free. Intercommunicators go first: each holds a reference on
 * its hidden local communicator, which is in the table too and must not be
 * freed under it. */
void bmpi_comm_finalize(void)
{
    release_all(is_inter);
    release_all(any);
    bmpi_handle_table_free(&comms.table);
    if (comms.self)
        comm_free(comms.self);
    if (comms.world)
        comm_free(comms.world);
    comms.self = comms.world = NULL;
}

int bmpi_comm_create_from_group(struct bmpi_group *g, uint32_t context_id, struct bmpi_comm **out)
{
    struct bmpi_comm *c = comm_new(g, context_id);
    if (!c)
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory creating a communicator");
    bmpi_group_retain(g);
    c->handle = bmpi_handle_new(&comms.table, c);
    if (!c->handle) {
        comm_free(c);
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of communicator handles");
    }
    *out = c;
    return BMPI_OK;
}

void bmpi_comm_release(struct bmpi_comm *c)
{
    if (--c->refcount > 0)
        return;
    bmpi_comm_teardown(c);
    if (c->handle != MPI_COMM_WORLD && c->handle != MPI_COMM_SELF)
        bmpi_handle_release(&comms.table, c->handle);
    comm_free(c);
}

BMPI_API(MPI_Comm_rank)
int PMPI_Comm_rank(MPI_Comm comm, int *rank)
{
    struct bmpi_comm *c;
    int err = bmpi_check_comm(comm, "MPI_Comm_rank", &c);
    if (err)
        return err;
    if (!rank)
        return bmpi_err_comm(comm, MPI_ERR_ARG, "MPI_Comm_rank", "rank is NULL");
    *rank = c->rank;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Comm_size)
int PMPI_Comm_size(MPI_Comm comm, int *size)
{
    struct bmpi_comm *c;
    int err = bmpi_check_comm(comm, "MPI_Comm_size", &c);
    if (err)
        return err;
    if (!size)
        return bmpi_err_comm(comm, MPI_ERR_ARG, "MPI_Comm_size", "size is NULL");
    *size = c->size;
    return MPI_SUCCESS;
}
