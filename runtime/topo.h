/*
 * Process topologies (runtime/topo.c), hung on comm->topo, and the
 * neighbour lists the neighbourhood collectives (runtime/neighbor.c) use.
 */
#ifndef BMPI_RUNTIME_TOPO_H
#define BMPI_RUNTIME_TOPO_H

#include <mpi.h>

struct bmpi_topo {
    int kind; /* MPI_CART, MPI_GRAPH, MPI_DIST_GRAPH */
    /* cartesian */
    int ndims;
    int *dims, *periods;
    /* graph */
    int nnodes, nedges;
    int *index, *edges;
    /* distributed graph: this process's in and out edges */
    int indegree, outdegree, weighted;
    int *sources, *srcweights, *dests, *dstweights;
};

void bmpi_topo_free(void *topo);
/* A deep copy (MPI_Comm_dup); NULL when out of memory. */
struct bmpi_topo *bmpi_topo_dup(const struct bmpi_topo *t);

/*
 * Neighbours of comm rank `rank` in the order the standard gives them to
 * neighbourhood collectives (cartesian: for each dimension the -1 then the
 * +1 neighbour, MPI_PROC_NULL at open borders). Arrays are malloc'ed, the
 * caller frees them. Returns MPI_ERR_TOPOLOGY (reason recorded) without a
 * topology.
 */
int bmpi_topo_neighbors(const struct bmpi_topo *t, int rank, int *indeg, int **in, int *outdeg,
                        int **out);

#endif
