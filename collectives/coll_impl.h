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

/* In an entry point: return the error of x, if any. */
#define CHECK(x)                                                                                   \
    do {                                                                                           \
        int e_ = (x);                                                                              \
        if (e_)                                                                                    \
            return e_;                                                                             \
    } while (0)

/* Lent by coll_api.c to inter.c: run, start or keep (MPI_*_init) a built
 * schedule and report its outcome; check an op on a type; an array of one
 * count (and displacement) per rank point-to-point on c names. */
int bmpi_coll_launch(struct bmpi_sched *s, int err, MPI_Request *request, struct bmpi_comm *c,
                     const char *fn);
int bmpi_coll_check_op(struct bmpi_comm *c, const char *fn, MPI_Op op,
                       const struct bmpi_datatype *dt, struct bmpi_op **o);
int bmpi_coll_check_counts(struct bmpi_comm *c, const char *fn, struct bmpi_counts counts,
                           struct bmpi_displs displs, bool want_displs, const char *what);

/* Intercommunicators (inter.c): the entry points' work from their checks
 * on, for c with a remote group; request NULL for the blocking call. */
int bmpi_inter_barrier(struct bmpi_comm *c, MPI_Request *request, const char *fn);
int bmpi_inter_bcast(struct bmpi_comm *c, void *buf, MPI_Count count, MPI_Datatype type, int root,
                     MPI_Request *request, const char *fn);
int bmpi_inter_reduce(struct bmpi_comm *c, const void *sbuf, void *rbuf, MPI_Count count,
                      MPI_Datatype type, MPI_Op op, int root, MPI_Request *request,
                      const char *fn);
int bmpi_inter_allreduce(struct bmpi_comm *c, const void *sbuf, void *rbuf, MPI_Count count,
                         MPI_Datatype type, MPI_Op op, MPI_Request *request, const char *fn);
/* rcounts null: Reduce_scatter_block with rcount */
int bmpi_inter_reduce_scatter(struct bmpi_comm *c, const void *sbuf, void *rbuf,
                              struct bmpi_counts rcounts, MPI_Count rcount, MPI_Datatype type,
                              MPI_Op op, MPI_Request *request, const char *fn);
/* Scan and Exscan: refused (MPI_ERR_COMM). */
int bmpi_inter_scan(struct bmpi_comm *c, const char *fn);
int bmpi_inter_gather(struct bmpi_comm *c, const void *sbuf, MPI_Count scount, MPI_Datatype stype,
                      void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int root,
                      MPI_Request *request, const char *fn);
int bmpi_inter_gatherv(struct bmpi_comm *c, const void *sbuf, MPI_Count scount, MPI_Datatype stype,
                       void *rbuf, struct bmpi_counts rcounts, struct bmpi_displs displs,
                       MPI_Datatype rtype, int root, MPI_Request *request, const char *fn);
int bmpi_inter_scatter(struct bmpi_comm *c, const void *sbuf, MPI_Count scount, MPI_Datatype stype,
                       void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int root,
                       MPI_Request *request, const char *fn);
int bmpi_inter_scatterv(struct bmpi_comm *c, const void *sbuf, struct bmpi_counts scounts,
                        struct bmpi_displs displs, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                        MPI_Datatype rtype, int root, MPI_Request *request, const char *fn);
int bmpi_inter_allgather(struct bmpi_comm *c, const void *sbuf, MPI_Count scount,
                         MPI_Datatype stype, void *rbuf, MPI_Count rcount, MPI_Datatype rtype,
                         MPI_Request *request, const char *fn);
int bmpi_inter_allgatherv(struct bmpi_comm *c, const void *sbuf, MPI_Count scount,
                          MPI_Datatype stype, void *rbuf, struct bmpi_counts rcounts,
                          struct bmpi_displs displs, MPI_Datatype rtype, MPI_Request *request,
                          const char *fn);
int bmpi_inter_alltoall(struct bmpi_comm *c, const void *sbuf, MPI_Count scount, MPI_Datatype stype,
                        void *rbuf, MPI_Count rcount, MPI_Datatype rtype, MPI_Request *request,
                        const char *fn);
/* The schedule of Alltoall(v,w) on s's intercommunicator, as coll_api.c
 * checked and converted the arguments (byte displacements, a type per
 * remote rank). */
int bmpi_inter_alltoallw(struct bmpi_sched *s, const void *sbuf, struct bmpi_counts scounts,
                         const MPI_Aint *sdispls, const MPI_Datatype *stypes, void *rbuf,
                         struct bmpi_counts rcounts, const MPI_Aint *rdispls,
                         const MPI_Datatype *rtypes);

#endif
