/*
 * Pieces shared between algorithm files (not the schedule API).
 */
#ifndef BMPI_COLLECTIVES_COLL_IMPL_H
#define BMPI_COLLECTIVES_COLL_IMPL_H

#include "collectives/coll.h"

/* Largest power of two <= p. */
int bmpi_coll_pof2_below(int p);

/* Rabenseifner's first half (allreduce.c): fold to a power of two, then
 * reduce-scatter by recursive halving. src is the input (it may be acc
 * itself); results accumulate in acc, whose other contents are scratch;
 * tmp has room for count elements. Commutative ops only. On return, ranks
 * with newrank != -1 hold the reduced blocks [send_idx, last_idx) of pof2
 * in acc, block i being elements [disps[i], disps[i+1]). */
struct bmpi_rs_state {
    int pof2, rem, newrank;
    int send_idx, last_idx;
    size_t *disps;
};
void bmpi_coll_rs_halving(struct bmpi_sched *s, const char *src, char *acc, char *tmp,
                          size_t count, MPI_Datatype type, struct bmpi_rs_state *st);

/* Rank r's place in the binomial tree of p ranks rooted at root (ranks
 * of the communicator; reduce_pipeline.c). */
struct bmpi_tree {
    int parent; /* -1 at the root */
    int nchild;
    int child[32]; /* smallest subtree first: it finishes first */
};
void bmpi_coll_binomial_tree(int p, int r, int root, struct bmpi_tree *t);

/* Elements of type per segment of about bytes (at least 1). */
size_t bmpi_coll_segment_count(MPI_Datatype type, size_t count, size_t bytes);

/* Algorithms in files of their own. Pipelined: segments of a binomial
 * tree; reduce takes commutative ops only. */
void bmpi_coll_reduce_pipeline(struct bmpi_sched *s, const void *sbuf, void *rbuf, size_t count,
                               MPI_Datatype type, int root);
void bmpi_coll_bcast_pipeline(struct bmpi_sched *s, void *buf, size_t count, MPI_Datatype type,
                              int root);
/* 2 ranks: each reduces half (others: the pipeline). Commutative only. */
void bmpi_coll_reduce_halves(struct bmpi_sched *s, const void *sbuf, void *rbuf, size_t count,
                             MPI_Datatype type, int root);
/* Everything posted at once, every receiver pulling from the owner. */
void bmpi_coll_bcast_linear(struct bmpi_sched *s, void *buf, size_t count, MPI_Datatype type,
                            int root);
void bmpi_coll_allgather_linear(struct bmpi_sched *s, const void *sbuf, size_t scount,
                                MPI_Datatype stype, void *rbuf, size_t rcount, MPI_Datatype rtype);

#endif
