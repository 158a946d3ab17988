/* The one job struct of bmpirun: everything the launcher knows about the job
 * it runs lives here (no other mutable global state), plus the job-level
 * operations of job.c (event loop, child tracking, teardown, cleanup).
 *
 * Threads: the main thread owns every field. The PMIx server library calls
 * the upcalls of pmix_server.c from its own progress thread; those touch only
 * the atomic flags of a rank and write events into job->event_pipe, which
 * the main loop reads. */
#ifndef BMPI_LAUNCHER_JOB_H
#define BMPI_LAUNCHER_JOB_H

#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <time.h>

#include "launcher/options.h"
#include "launcher/iof.h"

/* Exit codes of bmpirun itself (a rank's own failure passes its code on). */
enum {
    BMPI_EXIT_LAUNCH = 1,    /* the launcher could not set the job up */
    BMPI_EXIT_USAGE = 2,     /* bad command line */
    BMPI_EXIT_TIMEOUT = 124, /* --timeout expired (as timeout(1)) */
};

/* How long the teardown waits: SIGTERM (or the forwarded signal) first, then
 * SIGKILL after the grace period, then give up waiting for the kernel. */
#define BMPI_KILL_GRACE_MS 1000
#define BMPI_REAP_TIMEOUT_MS 10000
/* Upper bound for any wait on the PMIx server library. */
#define BMPI_PMIX_WAIT_MS 30000
/* How long a failure's report waits for a peer that is exiting already
 * (job.c: settle). */
#define BMPI_SETTLE_MS 1000
/* How long the job's end waits for the library to stop. */
#define BMPI_PMIX_STOP_MS 2000
/* The ranks' limit of every PMIx wait at start-up (BMPI_BOOTSTRAP_TIMEOUT,
 * runtime/pmix.c); bmpirun waits as long for every rank to connect. */
#define BMPI_BOOTSTRAP_TIMEOUT_S 120
#define BMPI_BOOTSTRAP_TIMEOUT_MAX_S 86400

enum bmpi_rank_state {
    BMPI_RANK_PENDING, /* not started (yet) */
    BMPI_RANK_RUNNING,
    BMPI_RANK_EXITED, /* reaped */
};

struct bmpi_job;
struct bmpi_names;
struct bmpi_dpm;

struct bmpi_rank {
    struct bmpi_job *job;
    int rank;       /* in its namespace */
    int ns;         /* 0: the job's namespace; k: the k-th spawned one (launcher/dpm.c) */
    int local_rank;
    int node;   /* index in job->node_names; always 0 in single-node mode */
    int vertex; /* launch-tree vertex that runs it (launcher/tree.h); 0: the head */
    pid_t pid;  /* on its own host; 0 until its daemon says */
    enum bmpi_rank_state state;
    int wstatus;
    /* Set by the PMIx progress thread, read by the main thread. */
    atomic_bool connected;
    atomic_bool finalized;
    struct bmpi_iof_stream out[BMPI_NSTREAMS];
};

/* What the PMIx progress thread tells the main loop through event_pipe.
 * Small enough for one atomic pipe write. */
enum bmpi_event_type {
    BMPI_EV_ABORT = 1,
    BMPI_EV_CONNECTED,
    BMPI_EV_FINALIZED,
    BMPI_EV_FENCE,       /* multi-host: a fence's local part (launcher/fence.h) */
    BMPI_EV_DMODEX,      /* multi-host: the library wants a remote rank's data */
    BMPI_EV_DMODEX_DATA, /* multi-host: a local rank's data for another host */
    BMPI_EV_SPAWN,       /* PMIx_Spawn's request (launcher/dpm.c) */
};
struct bmpi_event {
    int type;
    int rank; /* index in job->ranks */
    int status;
    char *msg;  /* malloc'd, freed by the reader */
    void *data; /* the type's own malloc'd struct, handed to its handler */
};

enum bmpi_phase {
    BMPI_PHASE_RUN,       /* ranks run; nothing failed */
    BMPI_PHASE_TERM,      /* first signal (SIGTERM/forwarded) sent */
    BMPI_PHASE_KILL,      /* SIGKILL sent, waiting for the reaper */
};

/* What a role across hosts (remote.c on the head, daemon.c on a daemon)
 * adds to the job's event loop. */
struct bmpi_role_ops {
    size_t (*npollfds)(struct bmpi_job *job);
    /* Fill at most npollfds; returns how many. */
    size_t (*pollfds)(struct bmpi_job *job, struct pollfd *pfd);
    /* What poll found on them (NULL, 0: nothing; a chance for timers). */
    void (*handle)(struct bmpi_job *job, const struct pollfd *pfd, size_t n);
    /* The loop goes on while this says so, even without running ranks. */
    bool (*busy)(struct bmpi_job *job);
    /* Milliseconds until the role's next deadline, -1 for none. */
    int (*timeout_ms)(struct bmpi_job *job);
};

struct bmpi_job {
    struct bmpi_options opt;
    const struct bmpi_role_ops *role; /* NULL on a single host */

    /* Identity of the job. */
    char nspace[256];
    char server_nspace[300];
    char tmpdir[PATH_MAX];
    char hostname[HOST_NAME_MAX + 1];

    /* Nodes: the hosts that run ranks, in host-list order (node ids come
     * from here, never from host names). One node, this one, without a
     * host list or when every listed host is this machine. */
    int nnodes;
    char **node_names;  /* malloc'd; the host list's names, or hostname */
    int *node_vertex;   /* per node: the launch-tree vertex serving it */
    const char **rank_host; /* per rank: its node's name (not owned) */
    int self_vertex;    /* 0 on the head */
    int self_node;      /* the node this process serves; -1: none */
    int nvertices;      /* 1: single-host mode, no tree */
    struct bmpi_tree *tree;       /* launcher/tree.h; NULL on one host */
    struct bmpi_fences *fences;   /* launcher/fence.h; NULL on one host */
    struct bmpi_remote *remote;   /* head of a multi-host job (remote.c) */
    struct bmpi_daemon *daemon;   /* a daemon (daemon.c) */

    int nranks;
    struct bmpi_rank *ranks;
    /* Room in ranks for spawned processes, which follow the job's own
     * (launcher/dpm.c); never reallocated: the PMIx library holds
     * pointers to the entries. */
    int ranks_cap;
    int nlocal;   /* ranks this process starts */
    int nrunning; /* ranks not known to have ended (the head: all hosts') */

    /* Event sources of the main loop. */
    int sigfd;
    int event_pipe[2];
    sigset_t sigmask_orig;  /* restored in every rank */
    sigset_t sigmask_job;   /* what signalfd reads */
    struct sigaction sigpipe_orig;  /* restored in every rank, */
    struct sigaction sigttin_orig;  /* with this one */
    struct rlimit nofile_orig;
    struct bmpi_iof iof;

    /* Outcome. */
    bool failed;        /* the first failure has been reported */
    struct bmpi_rank *left_before_init; /* exited 0 without PMIx_Init */
    struct bmpi_rank *unjudged;         /* reaped, its exit not judged yet */
    int exit_code;
    int term_signal;    /* bmpirun was asked to stop by this signal */
    enum bmpi_phase phase;
    struct timespec phase_deadline; /* when to escalate (TERM -> KILL -> give up) */
    struct timespec job_deadline;   /* --timeout, if given */
    bool have_job_deadline;
    /* Every rank must have connected by then, or the job fails (job.c:
     * check_connections); cleared once they have or the check is done. */
    struct timespec connect_deadline;
    bool have_connect_deadline;
    int bootstrap_timeout_s;
    bool program_of_other_mpi; /* launcher/mpich_abi.h */
    struct bmpi_names *names;  /* MPI_Publish_name's store (launcher/names.c) */
    struct bmpi_dpm *dpm;      /* spawned namespaces (launcher/dpm.c) */

    /* What has been set up, so that cleanup undoes exactly that. */
    bool tmpdir_made;
    int lock_fd; /* flock'ed while bmpirun lives: marks tmpdir as in use */
    bool pmix_up;
    bool nspace_registered;
};

static inline bool bmpi_rank_is_local(const struct bmpi_rank *r)
{
    return r->vertex == r->job->self_vertex;
}

/* job.c */
int bmpi_job_init(struct bmpi_job *job);
/* The rank's end, learnt by the reaper or from its host's daemon:
 * bookkeeping, then (on the head) judgement of the exit. */
void bmpi_job_rank_ended(struct bmpi_job *job, struct bmpi_rank *r, int wstatus);
/* Read what the PMIx thread posted and act on it. */
void bmpi_job_handle_events(struct bmpi_job *job);
/* An event from a daemon's ranks, as if the head's own PMIx thread had
 * posted it. */
void bmpi_job_handle_event(struct bmpi_job *job, struct bmpi_event *ev);
int bmpi_job_run(struct bmpi_job *job);
/* A daemon: remove the job directory and segments of this host when this
 * process ends, however it ends (call before any thread starts). */
void bmpi_job_start_sweeper(struct bmpi_job *job);
void bmpi_job_kill_all(struct bmpi_job *job, int sig);
void bmpi_job_fail(struct bmpi_job *job, int code);
void bmpi_job_terminate(struct bmpi_job *job, int first_signal);
void bmpi_job_cleanup(struct bmpi_job *job);
/* After bmpi_pmix_stop (or its deadline): the job directory once more,
 * with what the PMIx server's thread added during the cleanup. */
void bmpi_job_sweep(struct bmpi_job *job);
void bmpi_job_free(struct bmpi_job *job);
int bmpi_job_reap_all_now(struct bmpi_job *job, int timeout_ms);
/* Milliseconds from now until *ts (negative when past). */
long bmpi_ms_until(const struct timespec *ts);
void bmpi_deadline_in(struct timespec *ts, long ms);

#endif
