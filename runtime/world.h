/*
 * The one place for process-wide runtime state (DESIGN.md, Conventions):
 * everything else is per object.
 */
#ifndef BMPI_RUNTIME_WORLD_H
#define BMPI_RUNTIME_WORLD_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <mpi.h>

#include "transport/transport.h"

enum bmpi_state { BMPI_STATE_NEW, BMPI_STATE_RUNNING, BMPI_STATE_FINALIZED };

struct bmpi_ctx_nb;

/* How this process reaches one peer. The peer table holds the ranks of
 * this job at their world rank, then the processes of other jobs this one
 * was connected to (docs/dynamic.md); groups name processes by that
 * index. */
struct bmpi_peer {
    struct bmpi_tl *tl; /* chosen transport */
    uint32_t nodeid;    /* UINT32_MAX for other jobs' processes */
    uint64_t job;       /* the job's id (bmpi_job_id of its namespace) */
    int job_rank;       /* its rank in that job */
};

struct bmpi_world {
    enum bmpi_state state;
    int thread_level;
    pthread_t main_thread;

    /* identity, from PMIx */
    int rank, size;
    int universe_size; /* MPI_UNIVERSE_SIZE: PMIX_UNIV_SIZE, else size */
    int appnum;        /* MPI_APPNUM: PMIX_APPNUM (the command of a spawn_multiple), else 0 */
    int local_rank, local_size;
    int *local_peers;   /* world ranks on this node, ascending, local_size of them */
    uint32_t nodeid;
    bool singleton;
    char nspace[256];
    char hostname[MPI_MAX_PROCESSOR_NAME];

    /* more ranks than cores on this node: yield instead of spinning */
    bool oversubscribed;

    /* transports */
    struct bmpi_tl *tls;
    int ntls;
    struct bmpi_peer *peers; /* indexed by world rank, then other jobs' processes */
    int nprocs;              /* entries of peers: size + processes of other jobs */
    uint64_t job_id;         /* bmpi_job_id(nspace) */

    int verbose; /* BMPI_VERBOSE */

    /* nonblocking context id agreements in flight (runtime/context.c) */
    struct bmpi_ctx_nb *ctx_nb;
    bool ctx_nb_busy; /* inside bmpi_ctx_progress: no re-entry */
};

extern struct bmpi_world bmpi_world;

static inline bool bmpi_initialized(void) { return bmpi_world.state == BMPI_STATE_RUNNING; }

#endif
