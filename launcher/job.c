/* The job while it runs and after: one poll() loop over bmpirun's signals
 * (signalfd: SIGCHLD, the ones to forward), the PMIx thread's events, stdin
 * and the ranks' output; child tracking; teardown; cleanup.
 *
 * Children are watched directly: a rank that crashes produces no PMIx
 * upcall at all. A zombie rank still holds its pid, hence its process group
 * id, so the reaper first kills what the rank left in its group, then reaps.
 *
 * Teardown: the first failure (a rank's exit != 0, a signal, an abort, a
 * rank that vanished without PMIx_Finalize, --timeout, a signal to
 * bmpirun) is reported in one line and fixes the exit code; every running
 * rank's group then gets SIGTERM (or the forwarded signal), SIGKILL after
 * BMPI_KILL_GRACE_MS, and after BMPI_REAP_TIMEOUT_MS more bmpirun stops
 * waiting and says which ranks it could not reap.
 *
 * Cleanup, whatever happened: no rank left, the job's
 * /dev/shm/bmpi.<nspace>.* segments and its tmp directory removed; only
 * then is the PMIx server stopped (main.c), so that neither the exit
 * status nor the cleanup depends on that succeeding.
 * What a bmpirun killed by SIGKILL leaves, the next one in the same TMPDIR
 * removes (see remove_stale_jobs). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <glob.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launcher/daemon.h"
#include "launcher/dpm.h"
#include "launcher/fence.h"
#include "launcher/job.h"
#include "launcher/mpich_abi.h"
#include "launcher/pmix_server.h"
#include "launcher/remote.h"
#include "launcher/tree.h"

/* ---- time ---------------------------------------------------------------- */

void bmpi_deadline_in(struct timespec *ts, long ms)
{
    clock_gettime(CLOCK_MONOTONIC, ts);
    ts->tv_sec += ms / 1000;
    ts->tv_nsec += (ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

long bmpi_ms_until(const struct timespec *ts)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long long ns = (long long)(ts->tv_sec - now.tv_sec) * 1000000000LL + (ts->tv_nsec - now.tv_nsec);
    /* Round up: a deadline a fraction of a millisecond away must not be
     * polled for 0 ms again and again. */
    return ns <= 0 ? (long)(ns / 1000000LL) : (long)((ns + 999999LL) / 1000000LL);
}

/* ---- what a job leaves on disk ---------------------------------------------- */

/* A directory that is not empty is not reported here: the PMIx server's
 * thread may still add files while the tree goes (a client connecting as
 * the job ends), and bmpi_job_sweep() removes the tree again after it. */
static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    if (remove(path) != 0 && errno != ENOENT && errno != ENOTEMPTY && errno != EEXIST)
        bmpi_say("cannot remove %s: %m", path);
    return 0;
}

static void rm_tree(const char *dir)
{
    nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* The shm transport names its segments /dev/shm/bmpi.<nspace>.* */
static void unlink_shm(const char *nspace)
{
    char pattern[PATH_MAX];
    glob_t g;
    snprintf(pattern, sizeof(pattern), "/dev/shm/bmpi.%s.*", nspace);
    if (glob(pattern, GLOB_NOSORT, NULL, &g) != 0)
        return;
    for (size_t i = 0; i < g.gl_pathc; i++)
        if (unlink(g.gl_pathv[i]) != 0 && errno != ENOENT)
            bmpi_say("cannot remove the job's shared memory segment %s: %m", g.gl_pathv[i]);
    globfree(&g);
}

/* libfabric's shm provider names its segments /dev/shm/<pid>:<ep>:<n>; a
 * rank that died or called MPI_Abort leaves them behind. */
static void unlink_fabric_shm(pid_t pid)
{
    char pattern[64];
    glob_t g;
    snprintf(pattern, sizeof(pattern), "/dev/shm/%d:*", (int)pid);
    if (glob(pattern, GLOB_NOSORT, NULL, &g) != 0)
        return;
    for (size_t i = 0; i < g.gl_pathc; i++)
        unlink(g.gl_pathv[i]);
    globfree(&g);
}

#define LOCK_NAME "bmpirun.lock"

/* A bmpirun killed by SIGKILL cannot clean up; the next one in the same
 * TMPDIR does. Each job directory holds a lock file that its bmpirun keeps
 * flock'ed for its whole life (a lock dies with its holder, also across pid
 * namespaces), so a lock that can be taken marks leftovers: the directory
 * and the job's /dev/shm segments go. */
static void remove_stale_jobs(const char *base)
{
    char pattern[PATH_MAX + 16];
    glob_t g;
    snprintf(pattern, sizeof(pattern), "%s/bmpi.*.*", base);
    if (glob(pattern, GLOB_NOSORT | GLOB_ONLYDIR, NULL, &g) != 0)
        return;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        const char *dir = g.gl_pathv[i];
        struct stat st;
        char lock[PATH_MAX + 32];
        if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
            continue;
        snprintf(lock, sizeof(lock), "%s/" LOCK_NAME, dir);
        int fd = open(lock, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
            continue; /* not a bmpirun job directory */
        if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
            const char *nspace = strrchr(dir, '/') + 1;
            unlink_shm(nspace);
            rm_tree(dir);
        }
        close(fd);
    }
    globfree(&g);
}

/* Lock first, under a name nobody looks for, then rename: a lock file that
 * exists under LOCK_NAME is always held by a live bmpirun or stale. */
static int take_job_lock(struct bmpi_job *job)
{
    char tmp[PATH_MAX + 32], lock[PATH_MAX + 32];
    snprintf(tmp, sizeof(tmp), "%s/" LOCK_NAME ".new", job->tmpdir);
    snprintf(lock, sizeof(lock), "%s/" LOCK_NAME, job->tmpdir);
    job->lock_fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (job->lock_fd < 0 || flock(job->lock_fd, LOCK_EX | LOCK_NB) != 0 || rename(tmp, lock) != 0) {
        bmpi_say("cannot create the lock file %s: %m", lock);
        return -1;
    }
    return 0;
}

/* ---- setup ----------------------------------------------------------------- */

static int make_tmpdir(struct bmpi_job *job)
{
    const char *base = getenv("TMPDIR");
    if (base == NULL || *base == '\0')
        base = "/tmp";
    char real[PATH_MAX];
    if (realpath(base, real) == NULL) {
        bmpi_say("cannot use the temporary directory '%s': %m; set TMPDIR to a writable directory", base);
        return -1;
    }
    char name[sizeof(job->nspace) + 32];
    if (job->daemon != NULL)
        snprintf(name, sizeof(name), "%s.node%d", job->nspace, job->self_node);
    else
        snprintf(name, sizeof(name), "%s", job->nspace);
    if (snprintf(job->tmpdir, sizeof(job->tmpdir), "%s/%s", real, name) >= (int)sizeof(job->tmpdir)) {
        bmpi_say("the temporary directory path '%s' is too long; set TMPDIR to a shorter one", real);
        return -1;
    }
    remove_stale_jobs(real);
    if (mkdir(job->tmpdir, 0700) != 0) {
        bmpi_say("cannot create the job's directory %s: %m; set TMPDIR to a writable directory",
                 job->tmpdir);
        return -1;
    }
    job->tmpdir_made = true;
    return take_job_lock(job);
}

static int setup_signals(struct bmpi_job *job)
{
    sigemptyset(&job->sigmask_job);
    sigaddset(&job->sigmask_job, SIGCHLD);
    sigaddset(&job->sigmask_job, SIGINT);
    sigaddset(&job->sigmask_job, SIGTERM);
    sigaddset(&job->sigmask_job, SIGUSR1);
    sigaddset(&job->sigmask_job, SIGUSR2);
    sigaddset(&job->sigmask_job, SIGTSTP);
    sigaddset(&job->sigmask_job, SIGCONT);
    /* Under nohup, SIGHUP stays ignored. */
    struct sigaction hup;
    if (sigaction(SIGHUP, NULL, &hup) == 0 && hup.sa_handler != SIG_IGN)
        sigaddset(&job->sigmask_job, SIGHUP);

    /* Blocked before the PMIx library starts its thread, which inherits
     * the mask: the signals can then only be read from the signalfd. */
    if (sigprocmask(SIG_BLOCK, &job->sigmask_job, &job->sigmask_orig) != 0) {
        bmpi_say("cannot block signals (sigprocmask): %m");
        return -1;
    }
    job->sigfd = signalfd(-1, &job->sigmask_job, SFD_CLOEXEC | SFD_NONBLOCK);
    if (job->sigfd < 0) {
        bmpi_say("cannot watch signals (signalfd): %m");
        return -1;
    }
    /* A rank or a reader that went away shows up as EPIPE, not as death;
     * reading a terminal from the background gives EIO (rank 0's stdin
     * ends) instead of stopping bmpirun while its ranks run on. */
    struct sigaction ign = {.sa_handler = SIG_IGN};
    sigaction(SIGPIPE, &ign, &job->sigpipe_orig);
    sigaction(SIGTTIN, &ign, &job->sigttin_orig);
    return 0;
}

/* Each rank costs two pipe ends here and one socket in the PMIx server. */
static int setup_fd_limit(struct bmpi_job *job)
{
    getrlimit(RLIMIT_NOFILE, &job->nofile_orig);
    rlim_t need = (rlim_t)job->nlocal * 4 + (rlim_t)job->nvertices + 64;
    struct rlimit lim = job->nofile_orig;
    if (lim.rlim_cur >= need)
        return 0;
    if (lim.rlim_max != RLIM_INFINITY && lim.rlim_max < need) {
        bmpi_say("%d ranks on this host need about %llu open files but the limit is %llu (ulimit -Hn); "
                 "raise it or start fewer ranks",
                 job->nlocal, (unsigned long long)need, (unsigned long long)lim.rlim_max);
        return -1;
    }
    lim.rlim_cur = need;
    if (setrlimit(RLIMIT_NOFILE, &lim) != 0) {
        bmpi_say("cannot raise the open-file limit to %llu (setrlimit): %m", (unsigned long long)need);
        return -1;
    }
    return 0;
}

/* BMPI_BOOTSTRAP_TIMEOUT as the ranks will see it: the last -x of it, else
 * bmpirun's own environment; what the runtime would not take counts as the
 * default. */
static int bootstrap_timeout_s(const struct bmpi_job *job)
{
    static const char name[] = "BMPI_BOOTSTRAP_TIMEOUT=";
    const char *val = getenv("BMPI_BOOTSTRAP_TIMEOUT");
    for (int i = 0; i < job->opt.nenv; i++)
        if (strncmp(job->opt.env[i], name, sizeof(name) - 1) == 0)
            val = job->opt.env[i] + sizeof(name) - 1;
    if (val == NULL || *val < '0' || *val > '9')
        return BMPI_BOOTSTRAP_TIMEOUT_S;
    char *end;
    errno = 0;
    long s = strtol(val, &end, 10);
    if (errno != 0 || *end != '\0' || s < 1 || s > BMPI_BOOTSTRAP_TIMEOUT_MAX_S)
        return BMPI_BOOTSTRAP_TIMEOUT_S;
    return (int)s;
}

/* Node of each host that got ranks, -1 for the others. */
static int *nodes_of_hosts(const struct bmpi_options *o, int *nnodes)
{
    int n = o->place.nnodes;
    int *node = malloc((size_t)(n > 0 ? n : 1) * sizeof(*node));
    *nnodes = 0;
    for (int i = 0; node != NULL && i < n; i++)
        node[i] = o->place.node_nranks[i] > 0 ? (*nnodes)++ : -1;
    return node;
}

/* The nodes, the tree's vertices and every rank's place. One node, this
 * one, unless ranks go to other hosts: then each host with ranks is a node,
 * in host-list order; this machine's is served by the head (vertex 0), each
 * other one by a daemon, vertices 1, 2, ... in node order. A daemon gets
 * its node and vertex from the head (daemon.c) and sees the same list. */
static int place_job(struct bmpi_job *job)
{
    const struct bmpi_options *o = &job->opt;
    bool multi = o->multi_host || job->daemon != NULL;
    int *node_of_host = NULL;
    job->nnodes = 1;
    if (multi && (node_of_host = nodes_of_hosts(o, &job->nnodes)) == NULL)
        return -1;
    job->node_names = calloc((size_t)job->nnodes, sizeof(*job->node_names));
    job->node_vertex = calloc((size_t)job->nnodes, sizeof(*job->node_vertex));
    if (job->node_names == NULL || job->node_vertex == NULL) {
        free(node_of_host);
        return -1;
    }
    if (!multi) {
        job->node_names[0] = strdup(job->hostname);
        job->nvertices = 1;
    } else {
        int next_vertex = 1;
        for (int h = 0; h < o->hosts.n; h++) {
            int node = node_of_host[h];
            if (node < 0)
                continue;
            job->node_names[node] = strdup(o->hosts.hosts[h].name);
            if (h == o->local_host) {
                job->node_vertex[node] = 0;
                if (job->daemon == NULL)
                    job->self_node = node;
            } else {
                job->node_vertex[node] = next_vertex++;
            }
        }
        job->nvertices = next_vertex;
        if (job->daemon != NULL)
            job->self_vertex = job->node_vertex[node_of_host[job->self_node]];
    }
    for (int i = 0; i < job->nnodes; i++)
        if (job->node_names[i] == NULL) {
            free(node_of_host);
            return -1;
        }
    for (int i = 0; i < job->nranks; i++) {
        struct bmpi_rank *r = &job->ranks[i];
        r->node = multi ? node_of_host[o->place.node[i]] : 0;
        r->local_rank = multi ? o->place.local_rank[i] : i;
        r->vertex = job->node_vertex[r->node];
        job->nlocal += bmpi_rank_is_local(r);
    }
    free(node_of_host);
    return 0;
}

int bmpi_job_init(struct bmpi_job *job)
{
    job->sigfd = -1;
    job->lock_fd = -1;
    job->event_pipe[0] = job->event_pipe[1] = -1;
    if (job->daemon == NULL) {
        job->self_vertex = 0;
        job->self_node = job->opt.multi_host ? -1 : 0;
    }
    if (gethostname(job->hostname, sizeof(job->hostname)) != 0)
        snprintf(job->hostname, sizeof(job->hostname), "localhost");
    job->hostname[sizeof(job->hostname) - 1] = '\0';

    if (job->daemon == NULL) {
        uint32_t rnd;
        if (getrandom(&rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            rnd = (uint32_t)ts.tv_nsec ^ (uint32_t)ts.tv_sec;
        }
        snprintf(job->nspace, sizeof(job->nspace), "bmpi.%d.%08x", (int)getpid(), rnd);
    }
    snprintf(job->server_nspace, sizeof(job->server_nspace), "bmpirun.%d.%s", (int)getpid(), job->nspace);

    job->nranks = job->opt.nprocs;
    job->ranks_cap = job->nranks + BMPI_SPAWN_MAX;
    job->ranks = calloc((size_t)job->ranks_cap, sizeof(*job->ranks));
    if (job->ranks == NULL) {
        bmpi_say("out of memory for %d ranks", job->nranks);
        return -1;
    }
    for (int i = 0; i < job->nranks; i++) {
        struct bmpi_rank *r = &job->ranks[i];
        r->job = job;
        r->rank = i;
        r->state = BMPI_RANK_PENDING;
        atomic_init(&r->connected, false);
        atomic_init(&r->finalized, false);
        for (int s = 0; s < BMPI_NSTREAMS; s++) {
            bmpi_iof_stream_init(&r->out[s]);
            r->out[s].owner = i;
        }
    }
    if (place_job(job) != 0) {
        bmpi_say("out of memory for the job's nodes");
        return -1;
    }
    if ((job->rank_host = calloc((size_t)job->ranks_cap, sizeof(*job->rank_host))) == NULL) {
        bmpi_say("out of memory for %d ranks", job->nranks);
        return -1;
    }
    for (int i = 0; i < job->nranks; i++)
        job->rank_host[i] = job->node_names[job->ranks[i].node];
    bmpi_iof_init(&job->iof, job->opt.tag_output, job->opt.tag_host ? job->rank_host : NULL);

    if (setup_fd_limit(job) != 0 || setup_signals(job) != 0)
        return -1;
    if (pipe2(job->event_pipe, O_CLOEXEC) != 0) {
        bmpi_say("cannot create the event pipe (pipe2): %m");
        return -1;
    }
    fcntl(job->event_pipe[0], F_SETFL, O_NONBLOCK);
    if (make_tmpdir(job) != 0)
        return -1;
    if (job->opt.timeout > 0) {
        double ms = job->opt.timeout * 1000.0;
        bmpi_deadline_in(&job->job_deadline, ms > 1e12 ? (long)1e12 : (long)ms);
        job->have_job_deadline = true;
    }
    /* Armed before the first fork: every rank's own waits end later. */
    job->bootstrap_timeout_s = bootstrap_timeout_s(job);
    if (job->daemon != NULL)
        return 0; /* the head judges the job */
    bmpi_deadline_in(&job->connect_deadline, job->bootstrap_timeout_s * 1000L);
    job->have_connect_deadline = true;
    job->program_of_other_mpi = bmpi_program_uses_other_mpi(job->opt.program);
    return 0;
}

/* ---- the sweeper ----------------------------------------------------------- */

/* A daemon killed by SIGKILL (or lost with its host's agent) cannot remove
 * its job directory and segments, and nothing else on its host knows of
 * them: a child forked while the daemon is still single-threaded waits for
 * the daemon's end (its pipe closes) and removes them then. */
void bmpi_job_start_sweeper(struct bmpi_job *job)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        return;
    pid_t pid = fork();
    if (pid == 0) {
        close(p[1]);
        int null = open("/dev/null", O_RDWR);
        for (int fd = 0; fd <= 2; fd++)
            dup2(null, fd);
        setsid(); /* not in the agent's group: a kill of it must not stop us */
        char c;
        while (read(p[0], &c, 1) < 0 && errno == EINTR) {
        }
        unlink_shm(job->nspace);
        rm_tree(job->tmpdir);
        rmdir(job->tmpdir);
        _exit(0);
    }
    close(p[0]);
    if (pid < 0)
        close(p[1]);
    /* p[1] stays open, close-on-exec, until this process ends. */
}

/* ---- killing --------------------------------------------------------------- */

void bmpi_job_kill_all(struct bmpi_job *job, int sig)
{
    for (int i = 0; i < job->nranks; i++) {
        struct bmpi_rank *r = &job->ranks[i];
        if (r->state != BMPI_RANK_RUNNING || !bmpi_rank_is_local(r) || r->pid <= 0)
            continue;
        if (kill(-r->pid, sig) != 0)
            kill(r->pid, sig);
    }
    if (job->remote != NULL)
        bmpi_remote_signal(job, sig);
}

void bmpi_job_fail(struct bmpi_job *job, int code)
{
    if (!job->failed) {
        job->failed = true;
        job->exit_code = code;
    }
}

/* First call: first_signal to every rank, SIGKILL after the grace period.
 * Later calls: SIGKILL now. */
void bmpi_job_terminate(struct bmpi_job *job, int first_signal)
{
    if (job->phase == BMPI_PHASE_RUN && first_signal != SIGKILL) {
        bmpi_job_kill_all(job, first_signal);
        job->phase = BMPI_PHASE_TERM;
        bmpi_deadline_in(&job->phase_deadline, BMPI_KILL_GRACE_MS);
    } else if (job->phase != BMPI_PHASE_KILL) {
        bmpi_job_kill_all(job, SIGKILL);
        job->phase = BMPI_PHASE_KILL;
        bmpi_deadline_in(&job->phase_deadline, BMPI_REAP_TIMEOUT_MS);
    }
    if (job->remote != NULL)
        bmpi_remote_abandon_unjoined(job);
}

/* ---- child tracking -------------------------------------------------------- */

static struct bmpi_rank *rank_by_pid(struct bmpi_job *job, pid_t pid)
{
    for (int i = 0; i < job->nranks; i++)
        if (job->ranks[i].pid == pid && job->ranks[i].state == BMPI_RANK_RUNNING &&
            bmpi_rank_is_local(&job->ranks[i]))
            return &job->ranks[i];
    return NULL;
}

/* What ended a rank, the likeliest cause of the job's failure first: a
 * rank that loses a peer fails after it, as a consequence. */
enum failure_kind {
    FAIL_SIGNAL = 1, /* killed by a signal bmpirun did not send */
    FAIL_MIDWAY,     /* exited between PMIx_Init and PMIx_Finalize, or left
                        without PMIx_Init while peers wait in it */
    FAIL_ABORT,      /* MPI_Abort / PMIx_Abort */
    FAIL_AFTER,      /* exited != 0 after PMIx_Finalize */
    FAIL_NONE,
};

struct failure {
    enum failure_kind kind;
    struct bmpi_rank *rank;
    int code;       /* the job's exit status if it is the first */
    char what[384]; /* "exited with status 3" */
};

/* "rank 3 (pid 42)", "rank 3 (pid 42 on node2)" of a rank on another host. */
static const char *rank_text(const struct bmpi_rank *r, char *buf, size_t len)
{
    if (bmpi_rank_is_local(r) || r->job->nvertices == 1)
        snprintf(buf, len, "rank %d%s (pid %d)", r->rank, bmpi_dpm_label(r->job, r), (int)r->pid);
    else if (r->pid > 0)
        snprintf(buf, len, "rank %d%s (pid %d on %s)", r->rank, bmpi_dpm_label(r->job, r), (int)r->pid,
                 r->job->node_names[r->node]);
    else
        snprintf(buf, len, "rank %d%s (on %s)", r->rank, bmpi_dpm_label(r->job, r), r->job->node_names[r->node]);
    return buf;
}

/* Bookkeeping of a reaped rank; no judgement yet. */
static void rank_gone(struct bmpi_job *job, struct bmpi_rank *r, int wstatus)
{
    r->state = BMPI_RANK_EXITED;
    r->wstatus = wstatus;
    job->nrunning--;
    /* Its last words first, then ours. */
    for (int s = 0; s < BMPI_NSTREAMS; s++)
        bmpi_iof_stream_close(&job->iof, &r->out[s], r->rank, s);
    if (r->rank == 0 && r->ns == 0) {
        bmpi_iof_stdin_stop(&job->iof);
        if (job->remote != NULL)
            bmpi_remote_stdin_stop(job);
    }
}

/* Why an MPI program's rank never connects to bmpirun. */
#define NOT_BMPI_HINT                                                                                 \
    "is it built with bmpi (bmpicc)? a program linked with another MPI (Open MPI, a static MPICH " \
    "build) runs as a singleton under bmpirun"

/* Why no rank of a program that calls MPI_Init without libbmpi connects. */
#define OTHER_MPI_HINT                                                                                 \
    "it is not linked with bmpi but with another MPI (Open MPI, a static MPICH build), whose ranks run " \
    "as singletons, each a job of its own; rebuild it with bmpicc"

/* A rank that connected and has not finalized: it waits for its peers. */
static bool waits_for_peers(const struct bmpi_rank *r)
{
    return r->state == BMPI_RANK_RUNNING && atomic_load(&r->connected) && !atomic_load(&r->finalized);
}

static struct bmpi_rank *rank_waiting(struct bmpi_job *job)
{
    for (int i = 0; i < job->nranks; i++)
        if (waits_for_peers(&job->ranks[i]))
            return &job->ranks[i];
    return NULL;
}

/* r exited 0 without ever connecting, and rank peer waits in its fence for
 * it: the rank skipped MPI_Init, or what it ran (through a script) is
 * linked with another MPI, whose MPI_Init never talks to bmpirun. */
static void left_before_peer(struct failure *f, struct bmpi_rank *r, int peer)
{
    *f = (struct failure){.kind = FAIL_MIDWAY, .rank = r, .code = 1};
    snprintf(f->what, sizeof(f->what),
             "exited with status 0 without calling MPI_Init (PMIx_Init) or ever connecting to bmpirun, "
             "while rank %d did and would wait for it forever: did it skip MPI_Init, or %s",
             peer, NOT_BMPI_HINT);
}

/* How r ended, as a failure of the job (FAIL_NONE: not one). A rank that
 * left with status 0 before PMIx_Init while no peer waits in it yet is
 * remembered: a peer that connects later fails the job (handle_connected). */
static void judge_exit(struct bmpi_job *job, struct bmpi_rank *r, struct failure *f)
{
    int wstatus = r->wstatus;
    bool midway = !atomic_load(&r->finalized);
    *f = (struct failure){.kind = FAIL_NONE, .rank = r};
    if (WIFSIGNALED(wstatus)) {
        int sig = WTERMSIG(wstatus);
        const char *desc = sigdescr_np(sig);
        f->kind = FAIL_SIGNAL;
        f->code = 128 + sig;
        snprintf(f->what, sizeof(f->what), "was killed by signal %d (%s%s)", sig, desc ? desc : "unknown",
                 WCOREDUMP(wstatus) ? ", core dumped" : "");
    } else if (WEXITSTATUS(wstatus) != 0) {
        f->kind = midway ? FAIL_MIDWAY : FAIL_AFTER;
        f->code = WEXITSTATUS(wstatus);
        snprintf(f->what, sizeof(f->what), "exited with status %d%s", f->code,
                 !atomic_load(&r->connected) && rank_waiting(job) ? " before MPI_Init (PMIx_Init)" : "");
    } else if (atomic_load(&r->connected) && midway) {
        f->kind = FAIL_MIDWAY;
        f->code = 1;
        snprintf(f->what, sizeof(f->what),
                 "exited with status 0 after PMIx_Init but without PMIx_Finalize (MPI_Finalize)");
    } else if (!atomic_load(&r->connected)) {
        struct bmpi_rank *w = rank_waiting(job);
        if (w == NULL) {
            /* A plain program, or peers that have not come yet. */
            if (job->left_before_init == NULL)
                job->left_before_init = r;
            return;
        }
        left_before_peer(f, r, w->rank);
    }
}

/* Whether pid has begun to exit, or is a zombie (/proc/PID/stat: state, and
 * PF_EXITING in the flags, which the kernel sets before it closes the
 * process's files). */
#define BMPI_PF_EXITING 0x4
static bool is_dying(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    char state;
    unsigned long flags;
    if (p == NULL || sscanf(p + 1, " %c %*d %*d %*d %*d %*d %lu", &state, &flags) != 2)
        return false;
    return state == 'Z' || state == 'X' || (flags & BMPI_PF_EXITING) != 0;
}

/* Reap r, which is dying, waiting at most BMPI_SETTLE_MS. */
static bool reap_dying(struct bmpi_job *job, struct bmpi_rank *r)
{
    struct timespec deadline, tick = {.tv_nsec = 1000000};
    bmpi_deadline_in(&deadline, BMPI_SETTLE_MS);
    siginfo_t si;
    for (;;) {
        si.si_pid = 0;
        if (waitid(P_PID, (id_t)r->pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0)
            return false;
        if (si.si_pid == r->pid)
            break;
        if (bmpi_ms_until(&deadline) <= 0)
            return false;
        nanosleep(&tick, NULL);
    }
    kill(-r->pid, SIGKILL);
    int wstatus;
    if (waitpid(r->pid, &wstatus, 0) != r->pid)
        return false;
    rank_gone(job, r, wstatus);
    return true;
}

/* A rank that loses a peer fails after it, in PMIx (a fence reports
 * PARTIAL SUCCESS) or in MPI, and may be reaped or heard first. Any peer
 * that has begun to exit when a failure is seen began before it: the one
 * whose end is likelier the cause (FAIL_* order) is the first failure. */
static void settle(struct bmpi_job *job, struct failure *f)
{
    for (int i = 0; i < job->nranks; i++) {
        struct bmpi_rank *r = &job->ranks[i];
        if (r == f->rank)
            continue;
        if (r != job->unjudged && !(r->state == BMPI_RANK_RUNNING && bmpi_rank_is_local(r) && r->pid > 0 &&
                                    is_dying(r->pid) && reap_dying(job, r)))
            continue;
        struct failure g;
        judge_exit(job, r, &g);
        if (g.kind != FAIL_NONE && g.kind < f->kind)
            *f = g;
    }
}

/* Report the job's first failure, f or one that caused it; end the job. */
static void declare_failure(struct bmpi_job *job, struct failure *f)
{
    settle(job, f);
    bmpi_job_fail(job, f->code);
    char who[HOST_NAME_MAX + 64];
    rank_text(f->rank, who, sizeof(who));
    if (job->nrunning > 0) {
        bmpi_say("%s %s; terminating the job", who, f->what);
        bmpi_job_terminate(job, SIGTERM);
    } else {
        bmpi_say("%s %s", who, f->what);
    }
}

static void rank_exited(struct bmpi_job *job, struct bmpi_rank *r)
{
    if (job->phase != BMPI_PHASE_RUN || job->failed)
        return; /* the teardown's doing, or after the first failure */
    struct failure f;
    judge_exit(job, r, &f);
    if (f.kind != FAIL_NONE)
        declare_failure(job, &f);
}

void bmpi_job_rank_ended(struct bmpi_job *job, struct bmpi_rank *r, int wstatus)
{
    rank_gone(job, r, wstatus);
    if (job->daemon != NULL) {
        bmpi_daemon_rank_ended(job, r);
        return;
    }
    /* An aborting rank wrote its abort before it could exit: take it
     * first, so that the abort and not the exit is reported. */
    job->unjudged = r;
    bmpi_job_handle_events(job);
    job->unjudged = NULL;
    rank_exited(job, r);
}

static void reap(struct bmpi_job *job)
{
    for (;;) {
        siginfo_t si;
        si.si_pid = 0;
        if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) != 0 || si.si_pid == 0)
            return;
        pid_t pid = si.si_pid;
        struct bmpi_rank *r = rank_by_pid(job, pid);
        /* Whatever the rank left running in its group goes with it; the
         * zombie keeps the group id from being reused until waitpid. */
        if (r != NULL)
            kill(-pid, SIGKILL);
        int wstatus;
        if (waitpid(pid, &wstatus, 0) != pid)
            continue;
        if (r != NULL)
            bmpi_job_rank_ended(job, r, wstatus);
        else if (job->remote != NULL)
            bmpi_remote_reaped(job, pid, wstatus);
    }
}

/* ---- events from the PMIx thread and from signals ---------------------------- */

static void handle_abort(struct bmpi_job *job, const struct bmpi_event *ev)
{
    struct failure f = {.kind = FAIL_ABORT, .rank = &job->ranks[ev->rank]};
    char *msg = ev->msg;
    if (msg != NULL) {
        size_t len = strlen(msg);
        while (len > 0 && (msg[len - 1] == '\n' || msg[len - 1] == ' '))
            msg[--len] = '\0';
    }
    /* What exit(status) would leave, but never "success". */
    f.code = ev->status & 0xff;
    if (f.code == 0)
        f.code = 1;
    snprintf(f.what, sizeof(f.what), "called MPI_Abort/PMIx_Abort with status %d%s%s%s", ev->status,
             msg && *msg ? " (\"" : "", msg && *msg ? msg : "", msg && *msg ? "\")" : "");
    declare_failure(job, &f);
}

/* A rank connected while a peer had left without: the connected one would
 * wait for it forever. */
static void handle_connected(struct bmpi_job *job, const struct bmpi_event *ev)
{
    struct bmpi_rank *gone = job->left_before_init;
    if (gone == NULL || !waits_for_peers(&job->ranks[ev->rank]))
        return;
    struct failure f;
    left_before_peer(&f, gone, ev->rank);
    declare_failure(job, &f);
}

void bmpi_job_handle_event(struct bmpi_job *job, struct bmpi_event *ev)
{
    switch (ev->type) {
    case BMPI_EV_SPAWN:
        bmpi_dpm_spawn_run(job, ev->data); /* answers the request whatever the phase */
        return;
    case BMPI_EV_FENCE:
        bmpi_fence_local(job, ev->data);
        return;
    case BMPI_EV_DMODEX:
        bmpi_fence_dmodex_ask(job, ev->data);
        return;
    case BMPI_EV_DMODEX_DATA:
        bmpi_fence_dmodex_answer(job, ev->data);
        return;
    default:
        break;
    }
    if (job->daemon != NULL) {
        bmpi_daemon_forward_event(job, ev);
        return;
    }
    if (ev->rank >= 0 && ev->rank < job->nranks && job->phase == BMPI_PHASE_RUN && !job->failed) {
        if (ev->type == BMPI_EV_ABORT)
            handle_abort(job, ev);
        else if (ev->type == BMPI_EV_CONNECTED)
            handle_connected(job, ev);
    }
}

void bmpi_job_handle_events(struct bmpi_job *job)
{
    struct bmpi_event ev;
    while (read(job->event_pipe[0], &ev, sizeof(ev)) == (ssize_t)sizeof(ev)) {
        bmpi_job_handle_event(job, &ev);
        free(ev.msg);
    }
}

static void handle_signals(struct bmpi_job *job)
{
    struct signalfd_siginfo si;
    while (read(job->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
        int sig = (int)si.ssi_signo;
        switch (sig) {
        case SIGCHLD:
            break; /* reaped below, all at once */
        case SIGUSR1:
        case SIGUSR2:
        case SIGCONT:
            bmpi_job_kill_all(job, sig);
            break;
        case SIGTSTP:
            /* Ctrl-Z reaches only bmpirun (the ranks have their own
             * groups): stop the ranks, then ourselves; SIGCONT (fg, bg)
             * wakes us and is passed on above. */
            bmpi_job_kill_all(job, SIGSTOP);
            raise(SIGSTOP);
            break;
        default: /* SIGINT, SIGTERM, SIGHUP */
            if (job->phase == BMPI_PHASE_RUN) {
                bmpi_say("got SIG%s; forwarding it to the %d running ranks and terminating the job",
                         sigabbrev_np(sig), job->nrunning);
                if (!job->failed)
                    job->term_signal = sig;
                bmpi_job_fail(job, 128 + sig);
                bmpi_job_terminate(job, sig);
            } else if (job->phase == BMPI_PHASE_TERM) {
                bmpi_say("got SIG%s again; killing the %d remaining ranks now", sigabbrev_np(sig),
                         job->nrunning);
                bmpi_job_terminate(job, SIGKILL);
            }
            break;
        }
    }
    reap(job);
}

static void report_stuck(struct bmpi_job *job)
{
    char list[512];
    size_t off = 0;
    int shown = 0;
    list[0] = '\0';
    for (int i = 0; i < job->nranks && off < sizeof(list) - 32; i++) {
        if (job->ranks[i].state != BMPI_RANK_RUNNING)
            continue;
        char who[HOST_NAME_MAX + 64];
        rank_text(&job->ranks[i], who, sizeof(who));
        off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%s", shown ? ", " : "", who + 5);
        shown++;
    }
    bmpi_say("%d rank(s) did not exit within %d s of SIGKILL and are left behind: %s%s; they are "
             "stuck in the kernel (a hung file system or device?)",
             job->nrunning, BMPI_REAP_TIMEOUT_MS / 1000, list, shown < job->nrunning ? ", ..." : "");
}

static int count_connected(const struct bmpi_job *job)
{
    int n = 0;
    for (int i = 0; i < job->nranks; i++)
        n += atomic_load(&job->ranks[i].connected);
    return n;
}

/* "1 (pid 42), 3 (pid 44)" of the running ranks that never connected. */
static void list_unconnected(const struct bmpi_job *job, char *list, size_t size)
{
    size_t off = 0;
    list[0] = '\0';
    for (int i = 0; i < job->nranks && off + 32 < size; i++) {
        const struct bmpi_rank *r = &job->ranks[i];
        if (r->state == BMPI_RANK_RUNNING && !atomic_load(&r->connected))
        {
            char who[HOST_NAME_MAX + 64];
            rank_text(r, who, sizeof(who));
            off += (size_t)snprintf(list + off, size - off, "%s%s", off ? ", " : "", who + 5);
        }
    }
    if (off + 32 >= size)
        snprintf(list + off, size - off, ", ...");
}

/* The bootstrap timeout passed. Ranks that connected wait in MPI_Init for
 * the others, and would give up soon with a message that cannot name them:
 * name them here. When none connected, a plain program is fine, but an MPI
 * program is not bmpi's: its ranks run as singletons. */
static void check_connections(struct bmpi_job *job)
{
    job->have_connect_deadline = false;
    int connected = count_connected(job);
    char list[512];
    list_unconnected(job, list, sizeof(list));
    if (list[0] == '\0' || (connected == 0 && (!job->program_of_other_mpi || job->nranks < 2)))
        return;
    bmpi_job_fail(job, 1);
    if (connected == 0) {
        bmpi_say("none of the %d ranks of %s connected to bmpirun within the bootstrap timeout "
                 "(BMPI_BOOTSTRAP_TIMEOUT=%d s), yet it calls MPI_Init: " OTHER_MPI_HINT "; terminating the job",
                 job->nranks, job->opt.program, job->bootstrap_timeout_s);
    } else {
        struct bmpi_rank *w = rank_waiting(job);
        bmpi_say("rank(s) %s did not connect to bmpirun (MPI_Init) within the bootstrap timeout "
                 "(BMPI_BOOTSTRAP_TIMEOUT=%d s) while %d rank(s) did%s; terminating the job",
                 list, job->bootstrap_timeout_s, connected, w ? " and wait for them in MPI_Init" : "");
    }
    bmpi_job_terminate(job, SIGTERM);
}

/* Escalate the teardown or start it on --timeout; false when the loop should
 * give up waiting. */
static bool handle_timers(struct bmpi_job *job)
{
    if (job->phase == BMPI_PHASE_RUN && !job->failed && job->have_connect_deadline &&
        bmpi_ms_until(&job->connect_deadline) <= 0)
        check_connections(job);
    if (job->phase == BMPI_PHASE_RUN && job->have_job_deadline && bmpi_ms_until(&job->job_deadline) <= 0) {
        bmpi_job_fail(job, BMPI_EXIT_TIMEOUT);
        bmpi_say("the job reached its time limit (--timeout %g s); terminating the %d running ranks",
                 job->opt.timeout, job->nrunning);
        bmpi_job_terminate(job, SIGTERM);
    }
    if (job->phase != BMPI_PHASE_RUN && bmpi_ms_until(&job->phase_deadline) <= 0) {
        if (job->phase == BMPI_PHASE_TERM) {
            bmpi_job_terminate(job, SIGKILL);
        } else {
            report_stuck(job);
            return false;
        }
    }
    return true;
}

static int poll_timeout(const struct bmpi_job *job)
{
    long ms = -1;
    bool armed = job->phase != BMPI_PHASE_RUN || job->have_job_deadline || job->have_connect_deadline;
    if (job->phase != BMPI_PHASE_RUN) {
        ms = bmpi_ms_until(&job->phase_deadline);
    } else {
        if (job->have_job_deadline)
            ms = bmpi_ms_until(&job->job_deadline);
        if (job->have_connect_deadline) {
            long c = bmpi_ms_until(&job->connect_deadline);
            ms = job->have_job_deadline && ms < c ? ms : c;
        }
    }
    if (ms < 0 && armed)
        ms = 0;
    return ms > INT_MAX ? INT_MAX : (int)ms;
}

/* ---- the loop --------------------------------------------------------------- */

/* Every rank of an MPI program ended without connecting: they ran as
 * singletons of another MPI, not as one job (one rank alone is what was
 * asked for). */
static void check_none_connected(struct bmpi_job *job)
{
    if (job->daemon != NULL || job->failed || job->nrunning > 0 || job->nranks < 2 || !job->program_of_other_mpi ||
        count_connected(job) > 0)
        return;
    bmpi_job_fail(job, 1);
    bmpi_say("none of the %d ranks of %s connected to bmpirun, yet it calls MPI_Init: " OTHER_MPI_HINT,
             job->nranks, job->opt.program);
}

enum { PFD_SIG, PFD_EVENT, PFD_STDIN, PFD_RANK0_IN, PFD_RANKS };

/* The pollfd array, grown to what this round needs. */
static struct pollfd *pollfds_for(struct bmpi_job *job, struct pollfd *pfd, size_t *cap, size_t *nfds,
                                  size_t *nrole)
{
    *nrole = job->role != NULL ? job->role->npollfds(job) : 0;
    size_t need = PFD_RANKS + (size_t)job->nranks * BMPI_NSTREAMS + *nrole;
    if (need > *cap) {
        struct pollfd *grown = realloc(pfd, need * sizeof(*pfd));
        if (grown == NULL)
            return NULL;
        pfd = grown;
        *cap = need;
    }
    pfd[PFD_SIG] = (struct pollfd){.fd = job->sigfd, .events = POLLIN};
    pfd[PFD_EVENT] = (struct pollfd){.fd = job->event_pipe[0], .events = POLLIN};
    bmpi_iof_stdin_pollfds(&job->iof, &pfd[PFD_STDIN], &pfd[PFD_RANK0_IN]);
    for (int i = 0; i < job->nranks; i++)
        for (int s = 0; s < BMPI_NSTREAMS; s++)
            pfd[PFD_RANKS + (size_t)i * BMPI_NSTREAMS + (size_t)s] =
                (struct pollfd){.fd = job->ranks[i].out[s].fd, .events = POLLIN};
    size_t base = PFD_RANKS + (size_t)job->nranks * BMPI_NSTREAMS;
    if (*nrole > 0)
        *nrole = job->role->pollfds(job, pfd + base);
    *nfds = base + *nrole;
    return pfd;
}

/* The ranks' output: the first npolled ranks had fds in pfd (a spawn
 * handled since the poll may have added more). */
static void handle_output(struct bmpi_job *job, const struct pollfd *pfd, int npolled)
{
    for (int i = 0; i < npolled; i++) {
        struct bmpi_rank *r = &job->ranks[i];
        for (int s = 0; s < BMPI_NSTREAMS; s++) {
            const struct pollfd *p = &pfd[PFD_RANKS + (size_t)i * BMPI_NSTREAMS + (size_t)s];
            if (p->fd >= 0 && r->out[s].fd == p->fd && p->revents != 0 &&
                !bmpi_iof_stream_read(&job->iof, &r->out[s], r->rank, s))
                bmpi_iof_stream_close(&job->iof, &r->out[s], r->rank, s);
        }
    }
}

static int loop_timeout(struct bmpi_job *job)
{
    int ms = poll_timeout(job);
    int role_ms = job->role != NULL ? job->role->timeout_ms(job) : -1;
    if (role_ms >= 0 && (ms < 0 || role_ms < ms))
        ms = role_ms;
    return ms;
}

int bmpi_job_run(struct bmpi_job *job)
{
    struct pollfd *pfd = NULL;
    size_t cap = 0, nfds = 0, nrole = 0;

    while (job->nrunning > 0 || (job->role != NULL && job->role->busy(job))) {
        struct pollfd *p = pollfds_for(job, pfd, &cap, &nfds, &nrole);
        if (p == NULL) {
            bmpi_say("out of memory for the event loop; terminating the job");
            bmpi_job_fail(job, BMPI_EXIT_LAUNCH);
            break;
        }
        pfd = p;
        int n = poll(pfd, nfds, loop_timeout(job));
        if (n < 0 && errno != EINTR) {
            bmpi_say("the event loop failed (poll): %m; terminating the job");
            bmpi_job_fail(job, BMPI_EXIT_LAUNCH);
            break;
        }

        /* Events before exits: an abort is always written before the
         * aborting rank can exit, so it is the one reported. */
        bmpi_job_handle_events(job);
        if (n > 0) {
            bmpi_iof_stdin_handle(&job->iof, &pfd[PFD_STDIN], &pfd[PFD_RANK0_IN]);
            handle_output(job, pfd, (int)((nfds - nrole - PFD_RANKS) / BMPI_NSTREAMS));
            if (nrole > 0)
                job->role->handle(job, pfd + (nfds - nrole), nrole);
            if (pfd[PFD_SIG].revents != 0)
                handle_signals(job);
        } else if (job->role != NULL) {
            job->role->handle(job, NULL, 0); /* its timers */
        }
        if (!handle_timers(job))
            break;
    }
    free(pfd);
    check_none_connected(job);
    return job->failed ? job->exit_code : 0;
}

/* Used when the loop is not running (setup failed, or the loop gave up):
 * wait for the ranks' exits, at most timeout_ms. Returns how many remain. */
int bmpi_job_reap_all_now(struct bmpi_job *job, int timeout_ms)
{
    struct timespec deadline;
    bmpi_deadline_in(&deadline, timeout_ms);
    reap(job);
    while (job->nrunning > 0) {
        long ms = bmpi_ms_until(&deadline);
        if (ms <= 0)
            break;
        struct pollfd p = {.fd = job->sigfd, .events = POLLIN};
        if (poll(&p, 1, (int)ms) > 0) {
            struct signalfd_siginfo si;
            while (read(job->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
            }
        }
        reap(job);
    }
    return job->nrunning;
}

/* ---- cleanup ------------------------------------------------------------------ */

void bmpi_job_cleanup(struct bmpi_job *job)
{
    if (job->ranks != NULL) {
        if (job->nrunning > 0) {
            /* Setup failed, or the loop gave up on ranks SIGKILL did not
             * end (then reported already, and not waited for again). */
            bool waited = job->phase == BMPI_PHASE_KILL;
            bmpi_job_kill_all(job, SIGKILL);
            job->phase = BMPI_PHASE_KILL; /* quietly: these deaths are ours */
            if (job->sigfd >= 0 && bmpi_job_reap_all_now(job, waited ? 0 : BMPI_REAP_TIMEOUT_MS) > 0 &&
                !waited)
                report_stuck(job);
        }
        for (int i = 0; i < job->nranks; i++)
            for (int s = 0; s < BMPI_NSTREAMS; s++)
                bmpi_iof_stream_close(&job->iof, &job->ranks[i].out[s], job->ranks[i].rank, s);
    }
    bmpi_iof_fini(&job->iof);

    if (job->nspace[0] != '\0')
        unlink_shm(job->nspace);
    for (int i = 0; i < job->nranks; i++)
        if (job->ranks[i].pid > 0 && bmpi_rank_is_local(&job->ranks[i]))
            unlink_fabric_shm(job->ranks[i].pid);
    if (job->tmpdir_made)
        rm_tree(job->tmpdir);
}

void bmpi_job_sweep(struct bmpi_job *job)
{
    if (!job->tmpdir_made)
        return;
    rm_tree(job->tmpdir);
    if (rmdir(job->tmpdir) != 0 && errno != ENOENT)
        bmpi_say("cannot remove %s: %m", job->tmpdir);
    job->tmpdir_made = false;
}

/* What the PMIx server's thread may still use: after bmpi_pmix_stop. */
void bmpi_job_free(struct bmpi_job *job)
{
    if (job->lock_fd >= 0) {
        close(job->lock_fd);
        job->lock_fd = -1;
    }
    for (int i = 0; i < 2; i++)
        if (job->event_pipe[i] >= 0)
            close(job->event_pipe[i]);
    job->event_pipe[0] = job->event_pipe[1] = -1;
    if (job->sigfd >= 0) {
        close(job->sigfd);
        job->sigfd = -1;
        sigaction(SIGPIPE, &job->sigpipe_orig, NULL);
        sigaction(SIGTTIN, &job->sigttin_orig, NULL);
        sigprocmask(SIG_SETMASK, &job->sigmask_orig, NULL);
    }
    free(job->ranks);
    job->ranks = NULL;
    for (int i = 0; job->node_names != NULL && i < job->nnodes; i++)
        free(job->node_names[i]);
    free(job->node_names);
    free(job->node_vertex);
    free(job->rank_host);
    job->node_names = NULL;
    job->node_vertex = NULL;
    job->rank_host = NULL;
}
