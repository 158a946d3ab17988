/* Placement: which node each rank runs on, and its local rank there, from
 * a host list and the mapping options, with Open MPI's oversubscription
 * rules. Pure: no state, no I/O. Node ids are indices into the host list
 * (in its order), never derived from host names. */
#ifndef BMPI_LAUNCHER_PLACEMENT_H
#define BMPI_LAUNCHER_PLACEMENT_H

#include <stdbool.h>

#include "launcher/hosts.h"

enum bmpi_map_by { BMPI_MAP_SLOT, BMPI_MAP_NODE };

struct bmpi_place_request {
    int nprocs;        /* 0: as many as the slots (or npernode per node) */
    int npernode;      /* -N/--npernode/-ppn; 0: not given */
    enum bmpi_map_by map_by;
    bool oversubscribe;
};

struct bmpi_placement {
    int nranks;
    int nnodes;       /* = the host list's n (1 without a host list) */
    int *node;        /* per rank: its node */
    int *local_rank;  /* per rank: its index among its node's ranks */
    int *node_nranks; /* per node: how many ranks it runs */
    int **node_ranks; /* per node: its ranks, ascending (the node map) */
    char error[512];  /* why bmpi_place failed, one line */
};

/* hosts NULL or empty: one node with as many slots as asked for (bmpirun
 * without a host list). Returns 0, or -1 with p->error set. */
int bmpi_place(const struct bmpi_hostlist *hosts, const struct bmpi_place_request *req, struct bmpi_placement *p);
void bmpi_placement_free(struct bmpi_placement *p);

#endif
