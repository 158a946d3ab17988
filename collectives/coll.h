/*
 * collectives/: the MPI collectives, built only on the runtime's internal
 * point-to-point API (runtime/p2p.h) on the communicator's collective
 * context (context_id + 1).
 *
 * Every algorithm is written as a schedule: a list of steps (send, receive,
 * local reduction, local copy) cut into rounds by fences. Steps up to the
 * next fence are issued together; a fence waits until every send and
 * receive issued before it has completed. The blocking collectives build a
 * schedule on the stack and run it to completion; the nonblocking ones
 * build it on the heap, return a BMPI_REQ_COLL request and let
 * bmpi_coll_progress() (called from bmpi_progress()) advance it.
 *
 * Files: sched.c (engine), select.c (algorithm choice, BMPI_COLL_*
 * overrides), one file per collective family, coll_api.c (MPI_* entry
 * points and argument checks), inter.c (the collectives on
 * intercommunicators), shm_*.c (the shared-memory path that blocking
 * collectives on one node try first, see shm_coll.h). README.md maps them.
 */
#ifndef BMPI_COLLECTIVES_COLL_H
#define BMPI_COLLECTIVES_COLL_H

#include <stdbool.h>
#include <stddef.h>
#include <mpi.h>

#include "runtime/comm.h"
#include "runtime/counts.h"
#include "runtime/datatype.h"
#include "runtime/op.h"
#include "runtime/request.h"

enum bmpi_step_kind { BMPI_STEP_SEND, BMPI_STEP_RECV, BMPI_STEP_REDUCE, BMPI_STEP_COPY,
                      BMPI_STEP_FENCE };

struct bmpi_sched_step {
    enum bmpi_step_kind kind;
    int peer;
    const void *src; /* send, reduce (in), copy */
    void *dst;       /* recv, reduce (inout), copy */
    size_t count;
    MPI_Datatype type;
    int tag;                /* send, recv: s->tag and s->comm when appended (an */
    struct bmpi_comm *comm; /* intercommunicator's schedule has steps of two, inter.c) */
    size_t dcount;   /* copy: destination */
    MPI_Datatype dtype;
    struct bmpi_request *req;
};

#define BMPI_SCHED_INLINE_STEPS 32
#define BMPI_SCHED_ARENA 1024
#define BMPI_SCHED_MAX_TMP 8

struct bmpi_sched {
    struct bmpi_comm *comm;
    int tag;
    struct bmpi_op *op; /* retained while the schedule lives */
    int err;            /* first error of a step (or of building) */

    struct bmpi_sched_step *steps;
    int nsteps, cap;
    int next;       /* first step not yet issued */
    int first_open; /* first issued step that may still be pending */
    int pending;    /* issued sends/receives not yet complete */

    /* temporary memory freed with the schedule */
    size_t arena_used;
    int ntmp;
    void *tmp[BMPI_SCHED_MAX_TMP];
    void **more_tmp;
    int nmore, capmore;

    /* nonblocking: the schedule's own handles of the derived types it uses */
    MPI_Datatype *dups;
    int ndups;

    bool heap;       /* allocated by bmpi_sched_new, freed on completion */
    bool persistent; /* MPI_*_init: kept and run again by each MPI_Start */
    struct bmpi_request *req;
    struct bmpi_sched *next_active;

    struct bmpi_sched_step inline_steps[BMPI_SCHED_INLINE_STEPS];
    _Alignas(16) char arena[BMPI_SCHED_ARENA];
};

/* Blocking use: a schedule on the stack. Takes the next collective tag. */
void bmpi_sched_init(struct bmpi_sched *s, struct bmpi_comm *comm);
/* Nonblocking use: a schedule on the heap (NULL when out of memory). */
struct bmpi_sched *bmpi_sched_new(struct bmpi_comm *comm);
/* Remember the op (retained until the schedule is done). */
void bmpi_sched_set_op(struct bmpi_sched *s, struct bmpi_op *op);

/* Appending steps. Errors (out of memory) are kept in s->err. */
void bmpi_sched_send(struct bmpi_sched *s, const void *buf, size_t count, MPI_Datatype type,
                     int peer);
void bmpi_sched_recv(struct bmpi_sched *s, void *buf, size_t count, MPI_Datatype type, int peer);
/* inout = in op inout (s's op) */
void bmpi_sched_reduce(struct bmpi_sched *s, const void *in, void *inout, size_t count,
                       MPI_Datatype type);
/* Typed copy: the packed streams of both sides, the shorter length;
 * MPI_ERR_TRUNCATE when the source is the longer, as a receive reports. */
int bmpi_coll_copy(const void *sbuf, size_t scount, MPI_Datatype stype, void *dbuf,
                   size_t dcount, MPI_Datatype dtype);
/* The same as a step of the schedule. */
void bmpi_sched_copy(struct bmpi_sched *s, const void *src, size_t scount, MPI_Datatype stype,
                     void *dst, size_t dcount, MPI_Datatype dtype);
void bmpi_sched_fence(struct bmpi_sched *s);

/* Temporary memory owned by the schedule: raw bytes, or a buffer that
 * holds count elements of type laid out as type says (the returned pointer
 * is the buffer's origin, so lb != 0 types work). */
void *bmpi_sched_alloc(struct bmpi_sched *s, size_t bytes);
void *bmpi_sched_tmpbuf(struct bmpi_sched *s, size_t count, MPI_Datatype type);

/* Blocking: run to completion and release; returns the first error. */
int bmpi_sched_run(struct bmpi_sched *s);
/* Nonblocking: start, and give the request (kind BMPI_REQ_COLL). On
 * failure the schedule is released. */
int bmpi_sched_start(struct bmpi_sched *s, MPI_Request *request);
/* Persistent (MPI_*_init): keep the schedule under an inactive persistent
 * request (kind BMPI_REQ_COLL, ctx = the schedule). On failure the
 * schedule is released. */
int bmpi_sched_persist(struct bmpi_sched *s, MPI_Request *request);
/* MPI_Start of such a request: run its schedule again from the start. */
int bmpi_coll_start(struct bmpi_request *req);
/* MPI_Request_free of such a request while inactive: the schedule goes. */
void bmpi_coll_persistent_free(struct bmpi_request *req);
/* Release without running (a build failed). */
void bmpi_sched_destroy(struct bmpi_sched *s);

/* Called by bmpi_progress(): advances every active nonblocking schedule;
 * returns the events handled (0, cheaply, when none is active). */
int bmpi_coll_progress(void);

/* --- helpers -------------------------------------------------------------- */

static inline MPI_Aint bmpi_coll_extent(MPI_Datatype t) { return bmpi_dt_extent(bmpi_dt_get(t)); }
static inline size_t bmpi_coll_tsize(MPI_Datatype t) { return bmpi_dt_size(bmpi_dt_get(t)); }
static inline void *bmpi_coll_ofs(const void *buf, size_t count, MPI_Datatype t)
{
    return (char *)(uintptr_t)buf + (MPI_Aint)count * bmpi_coll_extent(t);
}
/* p + ofs in integers: with a type on absolute addresses
 * (MPI_Get_address) the true lower bound is the data's address itself, so
 * the origin of a temporary buffer, its start minus that, wraps around,
 * and so does adding the bound back, which as pointers is undefined. */
static inline char *bmpi_coll_addr(const void *p, MPI_Aint ofs)
{
    return (char *)((uintptr_t)p + (uintptr_t)ofs);
}
/* The origin of a buffer whose data starts at p, for a type whose data
 * starts lb bytes after its origin. */
static inline char *bmpi_coll_origin(const void *p, MPI_Aint lb)
{
    return bmpi_coll_addr(p, -lb);
}

/* --- algorithm selection (select.c) --------------------------------------- */

enum bmpi_coll_id {
    BMPI_COLL_BARRIER, BMPI_COLL_BCAST, BMPI_COLL_REDUCE, BMPI_COLL_ALLREDUCE,
    BMPI_COLL_ALLGATHER, BMPI_COLL_ALLTOALL, BMPI_COLL_REDUCE_SCATTER, BMPI_COLL_GATHER,
    BMPI_COLL_SCATTER, BMPI_COLL_SCAN, BMPI_COLL_NCOLLS
};
/* The algorithm for this call: the one forced by BMPI_COLL_<NAME>, else
 * the default for p ranks, bytes (see select.c for what bytes counts) and
 * count elements. An index into the collective's algorithm names. */
int bmpi_coll_select(enum bmpi_coll_id id, int p, size_t bytes, size_t count, bool commute);
/* Whether BMPI_COLL_<NAME> of this collective is set to anything but
 * "auto" (the shared-memory path then stays out of the schedules' way). */
bool bmpi_coll_overridden(enum bmpi_coll_id id);

/* --- algorithms: append the steps of one collective to s ------------------ */
/* Buffers and types as the MPI call has them, MPI_IN_PLACE already sorted
 * out (sendbuf == MPI_IN_PLACE where the standard allows it). */

int bmpi_coll_barrier(struct bmpi_sched *s);
int bmpi_coll_bcast(struct bmpi_sched *s, void *buf, size_t count, MPI_Datatype type, int root);
int bmpi_coll_reduce(struct bmpi_sched *s, const void *sbuf, void *rbuf, size_t count,
                     MPI_Datatype type, int root);
int bmpi_coll_allreduce(struct bmpi_sched *s, const void *sbuf, void *rbuf, size_t count,
                        MPI_Datatype type);
int bmpi_coll_allgather(struct bmpi_sched *s, const void *sbuf, size_t scount, MPI_Datatype stype,
                        void *rbuf, size_t rcount, MPI_Datatype rtype);
int bmpi_coll_allgatherv(struct bmpi_sched *s, const void *sbuf, size_t scount,
                         MPI_Datatype stype, void *rbuf, struct bmpi_counts rcounts,
                         struct bmpi_displs displs, MPI_Datatype rtype);
int bmpi_coll_gather(struct bmpi_sched *s, const void *sbuf, size_t scount, MPI_Datatype stype,
                     void *rbuf, size_t rcount, MPI_Datatype rtype, int root);
int bmpi_coll_gatherv(struct bmpi_sched *s, const void *sbuf, size_t scount, MPI_Datatype stype,
                      void *rbuf, struct bmpi_counts rcounts, struct bmpi_displs displs,
                      MPI_Datatype rtype, int root);
int bmpi_coll_scatter(struct bmpi_sched *s, const void *sbuf, size_t scount, MPI_Datatype stype,
                      void *rbuf, size_t rcount, MPI_Datatype rtype, int root);
int bmpi_coll_scatterv(struct bmpi_sched *s, const void *sbuf, struct bmpi_counts scounts,
                       struct bmpi_displs displs, MPI_Datatype stype, void *rbuf, size_t rcount,
                       MPI_Datatype rtype, int root);
int bmpi_coll_alltoall(struct bmpi_sched *s, const void *sbuf, size_t scount, MPI_Datatype stype,
                       void *rbuf, size_t rcount, MPI_Datatype rtype);
/* Alltoallv and alltoallw: byte displacements (sdispls in bytes), one type
 * per peer; alltoallv passes its displacements scaled by the extent. */
int bmpi_coll_alltoallw(struct bmpi_sched *s, const void *sbuf, struct bmpi_counts scounts,
                        const MPI_Aint *sdispls, const MPI_Datatype *stypes, void *rbuf,
                        struct bmpi_counts rcounts, const MPI_Aint *rdispls,
                        const MPI_Datatype *rtypes);
int bmpi_coll_reduce_scatter(struct bmpi_sched *s, const void *sbuf, void *rbuf,
                             struct bmpi_counts rcounts, MPI_Datatype type);
int bmpi_coll_scan(struct bmpi_sched *s, const void *sbuf, void *rbuf, size_t count,
                   MPI_Datatype type, bool exclusive);

#endif
