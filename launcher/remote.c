/* The head of a job across hosts (launcher/remote.h).
 *
 * Daemons start through the launch agent, one process per host (`AGENT
 * HOST BMPIRUN --daemon --node I`), or, inside a Slurm allocation without
 * a host list, through one srun for all of them. Each gets the bootstrap
 * on its stdin and keeps that pipe: its end tells the daemon the head is
 * gone. What an agent writes on stderr before its daemon joins (ssh's
 * complaints) is passed on, and its last line names the cause if the
 * agent ends first.
 *
 * Ranks on other hosts count as running from the moment their daemon is
 * started: the job cannot end before every daemon reported every rank's
 * end, or was lost with it. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launcher/bootstrap.h"
#include "launcher/dpm.h"
#include "launcher/fence.h"
#include "launcher/job.h"
#include "launcher/remote.h"
#include "launcher/spawn.h"
#include "launcher/tree.h"
#include "launcher/wire.h"

#define STDIN_CHUNK 65536
/* How long the head waits for the daemons to clean up and exit. */
#define FINISH_MS 5000

struct agent {
    pid_t pid;      /* 0 once reaped */
    int vertex;     /* the vertex it starts; -1: srun, all of them */
    int stdin_fd;   /* the bootstrap's pipe, kept open while the job runs */
    int stderr_fd;  /* what the agent and its daemon say */
    char *err;      /* a partial stderr line */
    size_t errlen;
    char last[512]; /* its last whole line */
    char cmd[256];  /* how it was started, for messages */
};

struct vertex_state {
    int node;
    bool joined;
    bool lost;
};

struct bmpi_remote {
    struct bmpi_tree tree;
    uint8_t secret[BMPI_TREE_SECRET_LEN];
    struct agent *agents;
    int nagents;
    struct vertex_state *vx;
    int njoined;
    struct timespec join_deadline;
    bool local_started; /* the head's own ranks, once every daemon joined */
    /* stdin for rank 0 on another host */
    int rank0_vertex;
    bool stdin_open;
    bool stdin_unacked;
};

static const struct bmpi_role_ops head_role;

/* ---- where the head listens ------------------------------------------------------ */

/* Every address of this host but link-local ones, loopback last:
 * "192.0.2.254:40123 [2001:db8::1]:40123 127.0.0.1:40123". */
static char *head_addresses(const char *port)
{
    struct ifaddrs *ifs = NULL;
    size_t cap = 4096, off = 0;
    char *list = calloc(cap, 1);
    if (list == NULL || getifaddrs(&ifs) != 0) {
        free(list);
        return NULL;
    }
    for (int pass = 0; pass < 2; pass++) {
        for (const struct ifaddrs *i = ifs; i != NULL; i = i->ifa_next) {
            if (i->ifa_addr == NULL || !(i->ifa_flags & IFF_UP))
                continue;
            bool loop = (i->ifa_flags & IFF_LOOPBACK) != 0;
            if (loop != (pass == 1))
                continue;
            char host[INET6_ADDRSTRLEN];
            if (i->ifa_addr->sa_family == AF_INET) {
                inet_ntop(AF_INET, &((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr, host, sizeof(host));
                off += (size_t)snprintf(list + off, cap - off, "%s%s:%s", off ? " " : "", host, port);
            } else if (i->ifa_addr->sa_family == AF_INET6) {
                const struct in6_addr *a = &((struct sockaddr_in6 *)(void *)i->ifa_addr)->sin6_addr;
                if (IN6_IS_ADDR_LINKLOCAL(a))
                    continue;
                inet_ntop(AF_INET6, a, host, sizeof(host));
                off += (size_t)snprintf(list + off, cap - off, "%s[%s]:%s", off ? " " : "", host, port);
            }
            if (off + 64 >= cap)
                break;
        }
    }
    freeifaddrs(ifs);
    return list;
}

/* ---- starting the agents ----------------------------------------------------------- */

/* argv of the agent command: the words of agent, then the rest. */
static char **agent_argv(const char *agent, char **rest, int nrest)
{
    int nwords = 0;
    char *copy = strdup(agent), *save = NULL;
    if (copy == NULL)
        return NULL;
    char **argv = calloc(strlen(agent) / 2 + 2 + (size_t)nrest + 1, sizeof(*argv));
    if (argv == NULL) {
        free(copy);
        return NULL;
    }
    for (char *w = strtok_r(copy, " \t", &save); w != NULL; w = strtok_r(NULL, " \t", &save))
        argv[nwords++] = strdup(w);
    free(copy);
    for (int i = 0; i < nrest; i++)
        argv[nwords++] = strdup(rest[i]);
    argv[nwords] = NULL;
    return argv;
}

static void argv_free(char **argv)
{
    for (char **a = argv; a != NULL && *a != NULL; a++)
        free(*a);
    free(argv);
}

static void describe(char *buf, size_t len, char **argv)
{
    size_t off = 0;
    buf[0] = '\0';
    for (char **a = argv; *a != NULL && off + 1 < len; a++)
        off += (size_t)snprintf(buf + off, len - off, "%s%s", a == argv ? "" : " ", *a);
}

static int fork_agent(struct bmpi_job *job, struct agent *a, char **argv, const char *boot, size_t bootlen)
{
    int in[2], err[2];
    if (pipe2(in, O_CLOEXEC) != 0)
        return -1;
    if (pipe2(err, O_CLOEXEC) != 0) {
        close(in[0]);
        close(in[1]);
        return -1;
    }
    describe(a->cmd, sizeof(a->cmd), argv);
    fcntl(in[1], F_SETPIPE_SZ, (int)(bootlen + 4096 > 1048576 ? 1048576 : bootlen + 4096));
    pid_t pid = fork();
    if (pid < 0) {
        close(in[0]);
        close(in[1]);
        close(err[0]);
        close(err[1]);
        return -1;
    }
    if (pid == 0) {
        /* Its own group, so that the terminal's Ctrl-C reaches only the
         * head; killed with the head. */
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        sigaction(SIGPIPE, &job->sigpipe_orig, NULL);
        sigprocmask(SIG_SETMASK, &job->sigmask_orig, NULL);
        dup2(in[0], STDIN_FILENO);
        dup2(err[1], STDOUT_FILENO);
        dup2(err[1], STDERR_FILENO);
        execvp(argv[0], argv);
        dprintf(STDERR_FILENO, "cannot run the launch agent '%s': %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    setpgid(pid, pid);
    close(in[0]);
    close(err[1]);
    a->pid = pid;
    a->stdin_fd = in[1];
    a->stderr_fd = err[0];
    fcntl(err[0], F_SETFL, O_NONBLOCK);
    fcntl(in[1], F_SETFL, O_NONBLOCK);
    ssize_t n = write(in[1], boot, bootlen);
    if (n < 0 && errno == EPIPE)
        return 0; /* the agent ended already: its exit says why */
    if (n != (ssize_t)bootlen) {
        bmpi_say("cannot hand the bootstrap to '%s' (%zd of %zu bytes written)", a->cmd, n, bootlen);
        return -1;
    }
    return 0;
}

static const char *self_exe(char *buf, size_t len)
{
    ssize_t n = readlink("/proc/self/exe", buf, len - 1);
    if (n <= 0)
        return "bmpirun";
    buf[n] = '\0';
    return buf;
}

/* One agent a host: AGENT HOST BMPIRUN --daemon --node I. */
static int start_agents(struct bmpi_job *job, struct bmpi_remote *rm, const char *boot, size_t bootlen)
{
    char exe[4096], node[16];
    const char *agent = job->opt.launch_agent ? job->opt.launch_agent : "ssh";
    self_exe(exe, sizeof(exe));
    for (int v = 1; v < job->nvertices; v++) {
        struct agent *a = &rm->agents[rm->nagents];
        snprintf(node, sizeof(node), "%d", rm->vx[v].node);
        char *rest[] = {job->node_names[rm->vx[v].node], exe, "--daemon", "--node", node};
        char **argv = agent_argv(agent, rest, 5);
        *a = (struct agent){.vertex = v, .stdin_fd = -1, .stderr_fd = -1};
        int rc = argv != NULL ? fork_agent(job, a, argv, boot, bootlen) : -1;
        if (argv != NULL && a->pid > 0)
            rm->nagents++;
        if (rc != 0) {
            bmpi_say("cannot start bmpirun's daemon on host %s with '%s': %m", job->node_names[rm->vx[v].node],
                     a->cmd[0] ? a->cmd : agent);
            argv_free(argv);
            return -1;
        }
        argv_free(argv);
    }
    return 0;
}

/* Inside a Slurm allocation: one srun, one daemon a node. */
static int start_srun(struct bmpi_job *job, struct bmpi_remote *rm, const char *boot, size_t bootlen)
{
    char exe[4096], nodes[16], *list;
    size_t cap = 1, off = 0;
    for (int v = 1; v < job->nvertices; v++)
        cap += strlen(job->node_names[rm->vx[v].node]) + 1;
    if ((list = calloc(cap, 1)) == NULL)
        return -1;
    for (int v = 1; v < job->nvertices; v++)
        off += (size_t)snprintf(list + off, cap - off, "%s%s", v > 1 ? "," : "", job->node_names[rm->vx[v].node]);
    snprintf(nodes, sizeof(nodes), "%d", job->nvertices - 1);
    char nodelist[cap + 16], nn[32], nt[32];
    snprintf(nodelist, sizeof(nodelist), "--nodelist=%s", list);
    snprintf(nn, sizeof(nn), "--nodes=%s", nodes);
    snprintf(nt, sizeof(nt), "--ntasks=%s", nodes);
    free(list);
    char *argv[] = {"srun", nodelist, nn, nt, "--ntasks-per-node=1", "--input=all", "--kill-on-bad-exit=1",
                    "--cpu-bind=none", "--overlap", "--mpi=none", (char *)self_exe(exe, sizeof(exe)), "--daemon",
                    NULL};
    struct agent *a = &rm->agents[0];
    *a = (struct agent){.vertex = -1, .stdin_fd = -1, .stderr_fd = -1};
    int rc = fork_agent(job, a, argv, boot, bootlen);
    if (a->pid > 0)
        rm->nagents = 1;
    if (rc != 0)
        bmpi_say("cannot start bmpirun's daemons with '%s': %m", a->cmd);
    return rc;
}

/* ---- losing hosts -------------------------------------------------------------------- */

static const char *vertex_host(const struct bmpi_job *job, int v)
{
    return job->node_names[job->remote->vx[v].node];
}

/* A rank of another host still counted as running, on v or below it. */
static bool runs_below(const struct bmpi_job *job, int v, const struct bmpi_rank *r)
{
    return r->vertex > 0 && r->state == BMPI_RANK_RUNNING && bmpi_tree_in_subtree(&job->remote->tree, v, r->vertex);
}

/* The ranks of vertex v and of every vertex below it are gone with it. */
static void lose_subtree(struct bmpi_job *job, int v, const char *why)
{
    struct bmpi_remote *rm = job->remote;
    int lost_ranks = 0;
    for (int i = 0; i < job->nranks; i++)
        lost_ranks += runs_below(job, v, &job->ranks[i]);
    if (rm->vx[v].lost)
        return;
    for (int u = v; u < job->nvertices; u++)
        if (bmpi_tree_in_subtree(&rm->tree, v, u))
            rm->vx[u].lost = true;
    if (lost_ranks > 0 && job->phase == BMPI_PHASE_RUN && !job->failed) {
        bmpi_job_fail(job, BMPI_EXIT_LAUNCH);
        bmpi_say("host %s: %s; %d rank(s) there are lost; terminating the job", vertex_host(job, v), why,
                 lost_ranks);
        bmpi_job_terminate(job, SIGTERM);
    }
    for (int i = 0; i < job->nranks; i++)
        if (runs_below(job, v, &job->ranks[i]))
            bmpi_job_rank_ended(job, &job->ranks[i], SIGKILL);
}

static void agent_gone_text(const struct agent *a, int wstatus, char *buf, size_t len)
{
    char how[64];
    if (WIFSIGNALED(wstatus))
        snprintf(how, sizeof(how), "was killed by signal %d", WTERMSIG(wstatus));
    else
        snprintf(how, sizeof(how), "exited with status %d", WEXITSTATUS(wstatus));
    snprintf(buf, len, "'%s' %s%s%s%s", a->cmd, how, a->last[0] ? " (its last words: \"" : "", a->last,
             a->last[0] ? "\")" : "");
}

static void drain_agent(struct bmpi_job *job, struct agent *a);

void bmpi_remote_reaped(struct bmpi_job *job, pid_t pid, int wstatus)
{
    struct bmpi_remote *rm = job->remote;
    for (int i = 0; i < rm->nagents; i++) {
        struct agent *a = &rm->agents[i];
        if (a->pid != pid)
            continue;
        a->pid = 0;
        drain_agent(job, a);
        char text[1024], why[1200];
        agent_gone_text(a, wstatus, text, sizeof(text));
        for (int v = 1; v < job->nvertices; v++) {
            if (a->vertex >= 0 && a->vertex != v)
                continue;
            snprintf(why, sizeof(why), "%s %s", rm->vx[v].joined ? "bmpirun's daemon ended:" :
                     "could not start bmpirun's daemon:", text);
            lose_subtree(job, v, why);
        }
    }
}

/* ---- what daemons say --------------------------------------------------------------- */

static struct bmpi_rank *rank_of(struct bmpi_job *job, int src, const void *payload, size_t len)
{
    int32_t rank;
    if (len < sizeof(rank))
        return NULL;
    memcpy(&rank, payload, sizeof(rank));
    if (rank < 0 || rank >= job->nranks || job->ranks[rank].vertex != src)
        return NULL;
    return &job->ranks[rank];
}

/* A daemon joined: the daemons below it can connect to it now. */
static void on_joined(struct bmpi_job *job, int v, const char *addr, size_t len)
{
    struct bmpi_remote *rm = job->remote;
    if (v <= 0 || v >= job->nvertices || rm->vx[v].joined)
        return;
    rm->vx[v].joined = true;
    rm->njoined++;
    if (!bmpi_tree_has_children(&rm->tree, v) || len == 0)
        return;
    char line[256], a[128];
    snprintf(a, sizeof(a), "%.*s", (int)(len < sizeof(a) ? len : sizeof(a) - 1), addr);
    int n = bmpi_bootstrap_parent_line(line, sizeof(line), v, a);
    for (int i = 0; i < rm->nagents; i++)
        if (rm->agents[i].stdin_fd >= 0 && write(rm->agents[i].stdin_fd, line, (size_t)n) != n)
            bmpi_say("cannot tell '%s' where its parent daemon listens", rm->agents[i].cmd);
}

static void on_started(struct bmpi_job *job, int src, const char *payload, size_t len)
{
    for (size_t off = 0; off + sizeof(struct bmpi_wire_rank_pid) <= len; off += sizeof(struct bmpi_wire_rank_pid)) {
        struct bmpi_wire_rank_pid rp;
        memcpy(&rp, payload + off, sizeof(rp));
        if (rp.rank >= 0 && rp.rank < job->nranks && job->ranks[rp.rank].vertex == src)
            job->ranks[rp.rank].pid = rp.pid;
    }
}

static void on_exited(struct bmpi_job *job, int src, const void *payload, size_t len)
{
    struct bmpi_wire_exited m;
    struct bmpi_rank *r = rank_of(job, src, payload, len);
    if (r == NULL || len < sizeof(m) || r->state != BMPI_RANK_RUNNING)
        return;
    memcpy(&m, payload, sizeof(m));
    atomic_store(&r->connected, m.connected != 0);
    atomic_store(&r->finalized, m.finalized != 0);
    bmpi_job_rank_ended(job, r, m.wstatus);
}

static void on_rank_event(struct bmpi_job *job, int type, struct bmpi_rank *r, const char *payload, size_t len)
{
    struct bmpi_event ev = {.rank = (int)(r - job->ranks)};
    if (type == BMPI_WIRE_CONNECTED) {
        atomic_store(&r->connected, true);
        ev.type = BMPI_EV_CONNECTED;
    } else if (type == BMPI_WIRE_FINALIZED) {
        atomic_store(&r->finalized, true);
        return;
    } else {
        struct bmpi_wire_abort m;
        if (len < sizeof(m))
            return;
        memcpy(&m, payload, sizeof(m));
        ev.type = BMPI_EV_ABORT;
        ev.status = m.status;
        ev.msg = strndup(payload + sizeof(m), len - sizeof(m));
    }
    bmpi_job_handle_event(job, &ev);
    free(ev.msg);
}

static void on_output(struct bmpi_job *job, int src, const char *payload, size_t len)
{
    struct bmpi_wire_output m;
    struct bmpi_rank *r = rank_of(job, src, payload, len);
    if (r == NULL || len < sizeof(m))
        return;
    memcpy(&m, payload, sizeof(m));
    if (m.stream == BMPI_STDOUT || m.stream == BMPI_STDERR)
        bmpi_iof_stream_feed(&job->iof, &r->out[m.stream], r->rank, m.stream, payload + sizeof(m), len - sizeof(m));
}

static void deliver(void *ctx, const struct bmpi_tree_hdr *h, const void *payload)
{
    struct bmpi_job *job = ctx;
    const char *p = payload;
    int src = h->src;
    if (src <= 0 || src >= job->nvertices || bmpi_fence_deliver(job, h, payload) || bmpi_dpm_deliver(job, h, payload))
        return;
    struct bmpi_rank *r;
    switch (h->type) {
    case BMPI_WIRE_JOINED:
        on_joined(job, src, p, h->len);
        break;
    case BMPI_WIRE_STARTED:
        on_started(job, src, p, h->len);
        break;
    case BMPI_WIRE_FAILED: {
        char why[1024];
        snprintf(why, sizeof(why), "bmpirun's daemon failed: %.*s", (int)(h->len < 900 ? h->len : 900), p);
        lose_subtree(job, src, why);
        break;
    }
    case BMPI_WIRE_CONNECTED:
    case BMPI_WIRE_FINALIZED:
    case BMPI_WIRE_ABORT:
        if ((r = rank_of(job, src, p, h->len)) != NULL)
            on_rank_event(job, h->type, r, p, h->len);
        break;
    case BMPI_WIRE_EXITED:
        on_exited(job, src, p, h->len);
        break;
    case BMPI_WIRE_OUTPUT:
        on_output(job, src, p, h->len);
        break;
    case BMPI_WIRE_STDIN_ACK:
        job->remote->stdin_unacked = false;
        break;
    case BMPI_WIRE_LOST: {
        int32_t v;
        if (h->len >= sizeof(v) && (memcpy(&v, p, sizeof(v)), v > src) && v < job->nvertices)
            lose_subtree(job, v, "the connection to bmpirun's daemon broke (the daemon died?)");
        break;
    }
    default:
        break;
    }
}

static void lost(void *ctx, int vertex)
{
    struct bmpi_job *job = ctx;
    if (vertex > 0 && vertex < job->nvertices)
        lose_subtree(job, vertex, "the connection to bmpirun's daemon broke (the daemon died?)");
}

/* ---- agents' stderr, stdin ------------------------------------------------------------ */

/* Whole lines of an agent's stderr: kept as its last words, and passed on
 * once its daemon has joined (before, they make the one line that says why
 * the host could not be reached). */
static void agent_lines(struct bmpi_job *job, struct agent *a, const char *buf, size_t n)
{
    struct bmpi_remote *rm = job->remote;
    bool pass_on = a->vertex > 0 ? rm->vx[a->vertex].joined : rm->njoined > 0;
    char *grown = realloc(a->err, a->errlen + n);
    if (grown == NULL)
        return;
    a->err = grown;
    memcpy(a->err + a->errlen, buf, n);
    a->errlen += n;
    char *nl;
    while ((nl = memchr(a->err, '\n', a->errlen)) != NULL) {
        size_t len = (size_t)(nl - a->err);
        snprintf(a->last, sizeof(a->last), "%.*s", (int)len, a->err);
        if (pass_on)
            dprintf(STDERR_FILENO, "%.*s\n", (int)len, a->err);
        memmove(a->err, nl + 1, a->errlen - len - 1);
        a->errlen -= len + 1;
    }
}

static void read_agent(struct bmpi_job *job, struct agent *a)
{
    char buf[4096];
    ssize_t n = read(a->stderr_fd, buf, sizeof(buf));
    if (n > 0) {
        agent_lines(job, a, buf, (size_t)n);
        return;
    }
    if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        if (a->errlen > 0)
            agent_lines(job, a, "\n", 1);
        close(a->stderr_fd);
        a->stderr_fd = -1;
    }
}

/* What a dead agent left in its pipe (a process it left may hold the
 * pipe open: read what is there, no more). */
static void drain_agent(struct bmpi_job *job, struct agent *a)
{
    char buf[4096];
    ssize_t n;
    while (a->stderr_fd >= 0 && (n = read(a->stderr_fd, buf, sizeof(buf))) > 0)
        agent_lines(job, a, buf, (size_t)n);
    if (a->errlen > 0)
        agent_lines(job, a, "\n", 1);
}

static void read_stdin(struct bmpi_job *job)
{
    struct bmpi_remote *rm = job->remote;
    char buf[STDIN_CHUNK];
    ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    n = n < 0 ? 0 : n;
    bmpi_tree_send(&rm->tree, rm->rank0_vertex, BMPI_WIRE_STDIN, buf, (size_t)n);
    rm->stdin_unacked = n > 0;
    if (n == 0)
        rm->stdin_open = false;
}

void bmpi_remote_stdin_stop(struct bmpi_job *job)
{
    job->remote->stdin_open = false;
}

/* ---- the role in the job's loop ------------------------------------------------------- */

static size_t head_npollfds(struct bmpi_job *job)
{
    return bmpi_tree_npollfds(&job->remote->tree) + (size_t)job->remote->nagents + 1;
}

static size_t head_pollfds(struct bmpi_job *job, struct pollfd *pfd)
{
    struct bmpi_remote *rm = job->remote;
    size_t n = bmpi_tree_pollfds(&rm->tree, pfd);
    for (int i = 0; i < rm->nagents; i++)
        pfd[n++] = (struct pollfd){.fd = rm->agents[i].stderr_fd, .events = POLLIN};
    /* Rank 0's input waits until its daemon has joined: the tree has no
     * way to it before. */
    bool want_stdin = rm->stdin_open && !rm->stdin_unacked && rm->vx[rm->rank0_vertex].joined;
    pfd[n++] = (struct pollfd){.fd = want_stdin ? STDIN_FILENO : -1, .events = POLLIN};
    return n;
}

/* The head's own ranks start once every other host has: a host that
 * cannot be reached then leaves nothing started here. */
static void start_local(struct bmpi_job *job)
{
    struct bmpi_remote *rm = job->remote;
    if (rm->local_started || rm->njoined < job->nvertices - 1 || job->phase != BMPI_PHASE_RUN || job->failed)
        return;
    rm->local_started = true;
    if (bmpi_spawn_all(job) != 0) {
        bmpi_job_fail(job, BMPI_EXIT_LAUNCH);
        bmpi_say("terminating the job: the ranks of this host could not start");
        bmpi_job_terminate(job, SIGTERM);
    }
}

static void check_joins(struct bmpi_job *job)
{
    struct bmpi_remote *rm = job->remote;
    start_local(job);
    if (rm->njoined == job->nvertices - 1 || bmpi_ms_until(&rm->join_deadline) > 0)
        return;
    for (int v = 1; v < job->nvertices; v++) {
        if (rm->vx[v].joined || rm->vx[v].lost)
            continue;
        char why[256];
        snprintf(why, sizeof(why), "bmpirun's daemon did not join the job within %d s (BMPI_BOOTSTRAP_TIMEOUT): "
                 "the host never answered", job->bootstrap_timeout_s);
        lose_subtree(job, v, why);
    }
    rm->njoined = job->nvertices - 1; /* checked */
}

static void head_handle(struct bmpi_job *job, const struct pollfd *pfd, size_t n)
{
    struct bmpi_remote *rm = job->remote;
    if (pfd == NULL) {
        struct pollfd none[1] = {{.fd = -1}};
        bmpi_tree_handle(&rm->tree, none, 0); /* its timers */
    } else {
        size_t nt = bmpi_tree_npollfds(&rm->tree);
        bmpi_tree_handle(&rm->tree, pfd, nt);
        for (int i = 0; i < rm->nagents && nt + (size_t)i < n; i++)
            if (pfd[nt + (size_t)i].fd >= 0 && pfd[nt + (size_t)i].revents != 0)
                read_agent(job, &rm->agents[i]);
        const struct pollfd *in = &pfd[n - 1];
        if (in->fd >= 0 && in->revents != 0)
            read_stdin(job);
    }
    check_joins(job);
}

static bool head_busy(struct bmpi_job *job)
{
    (void)job;
    return false;
}

static int head_timeout_ms(struct bmpi_job *job)
{
    struct bmpi_remote *rm = job->remote;
    int tree_ms = bmpi_tree_timeout_ms(&rm->tree);
    if (rm->njoined == job->nvertices - 1)
        return tree_ms;
    long ms = bmpi_ms_until(&rm->join_deadline);
    ms = ms < 0 ? 0 : ms > 60000 ? 60000 : ms;
    return tree_ms >= 0 && tree_ms < ms ? tree_ms : (int)ms;
}

static const struct bmpi_role_ops head_role = {
    .npollfds = head_npollfds,
    .pollfds = head_pollfds,
    .handle = head_handle,
    .busy = head_busy,
    .timeout_ms = head_timeout_ms,
};

/* ---- start and finish ------------------------------------------------------------------ */

static int remote_setup(struct bmpi_job *job, struct bmpi_remote *rm)
{
    if (getrandom(rm->secret, sizeof(rm->secret), 0) != (ssize_t)sizeof(rm->secret)) {
        bmpi_say("cannot make the job's secret (getrandom): %m");
        return -1;
    }
    struct bmpi_tree_events ev = {.ctx = job, .deliver = deliver, .lost = lost};
    bmpi_tree_init(&rm->tree, 0, job->nvertices, job->opt.tree_fanout, rm->secret, &ev);
    job->tree = &rm->tree;
    if ((rm->vx = calloc((size_t)job->nvertices, sizeof(*rm->vx))) == NULL ||
        (rm->agents = calloc((size_t)job->nvertices, sizeof(*rm->agents))) == NULL || bmpi_fences_init(job) != 0) {
        bmpi_say("out of memory for the job's hosts");
        return -1;
    }
    for (int n = 0; n < job->nnodes; n++)
        rm->vx[job->node_vertex[n]].node = n;
    rm->rank0_vertex = job->ranks[0].vertex;
    rm->stdin_open = rm->rank0_vertex != 0 && fcntl(STDIN_FILENO, F_GETFL) != -1;
    bmpi_deadline_in(&rm->join_deadline, job->bootstrap_timeout_s * 1000L);
    return bmpi_tree_listen(&rm->tree);
}

int bmpi_remote_start(struct bmpi_job *job)
{
    struct bmpi_remote *rm = calloc(1, sizeof(*rm));
    if (rm == NULL)
        return -1;
    job->remote = rm;
    job->role = &head_role;
    if (remote_setup(job, rm) != 0)
        return -1;
    char *addrs = head_addresses(rm->tree.listen_addr);
    size_t bootlen = 0;
    char *boot = addrs != NULL ? bmpi_bootstrap_text(job, rm->secret, addrs, &bootlen) : NULL;
    free(addrs);
    if (boot == NULL) {
        bmpi_say("out of memory for the daemons' bootstrap");
        return -1;
    }
    /* Counted as running from now on: they end only through their daemon
     * (or when their host is given up). */
    for (int i = 0; i < job->nranks; i++) {
        if (bmpi_rank_is_local(&job->ranks[i]))
            continue;
        job->ranks[i].state = BMPI_RANK_RUNNING;
        job->nrunning++;
    }
    if (job->self_node < 0)
        rm->local_started = true; /* none here */
    int rc = job->opt.from_slurm && job->opt.launch_agent == NULL ? start_srun(job, rm, boot, bootlen)
                                                                  : start_agents(job, rm, boot, bootlen);
    explicit_bzero(boot, bootlen);
    free(boot);
    return rc;
}

void bmpi_remote_abandon_unjoined(struct bmpi_job *job)
{
    struct bmpi_remote *rm = job->remote;
    for (int v = 1; v < job->nvertices; v++) {
        if (rm->vx[v].joined || rm->vx[v].lost)
            continue;
        for (int i = 0; i < rm->nagents; i++)
            if (rm->agents[i].pid > 0 && (rm->agents[i].vertex == v || rm->agents[i].vertex < 0))
                kill(-rm->agents[i].pid, SIGTERM);
        lose_subtree(job, v, "bmpirun's daemon had not joined the job yet");
    }
}

void bmpi_remote_signal(struct bmpi_job *job, int sig)
{
    int32_t s = sig;
    bmpi_tree_send(&job->remote->tree, BMPI_TREE_ALL, BMPI_WIRE_SIGNAL, &s, sizeof(s));
}

static int agents_left(struct bmpi_remote *rm)
{
    int left = 0;
    for (int i = 0; i < rm->nagents; i++) {
        struct agent *a = &rm->agents[i];
        if (a->pid > 0 && waitpid(a->pid, NULL, WNOHANG) == a->pid)
            a->pid = 0;
        left += a->pid > 0;
    }
    return left;
}

void bmpi_remote_finish(struct bmpi_job *job)
{
    struct bmpi_remote *rm = job->remote;
    if (rm == NULL)
        return;
    bmpi_tree_send(&rm->tree, BMPI_TREE_ALL, BMPI_WIRE_SHUTDOWN, NULL, 0);
    struct timespec deadline;
    bmpi_deadline_in(&deadline, FINISH_MS);
    while (agents_left(rm) > 0 && bmpi_ms_until(&deadline) > 0) {
        size_t n = head_npollfds(job);
        struct pollfd pfd[n];
        head_pollfds(job, pfd);
        pfd[n - 1].fd = -1; /* no more stdin */
        if (poll(pfd, n, 50) > 0)
            head_handle(job, pfd, n);
    }
    for (int i = 0; i < rm->nagents; i++) {
        struct agent *a = &rm->agents[i];
        if (a->pid > 0) {
            kill(-a->pid, SIGKILL);
            waitpid(a->pid, NULL, 0);
            a->pid = 0;
        }
        drain_agent(job, a);
    }
    /* What no daemon reported is gone with it (the job failed already:
     * nothing is judged). */
    for (int i = 0; i < job->nranks; i++) {
        if (bmpi_rank_is_local(&job->ranks[i]) || job->ranks[i].state != BMPI_RANK_RUNNING)
            continue;
        bmpi_job_fail(job, BMPI_EXIT_LAUNCH);
        bmpi_job_rank_ended(job, &job->ranks[i], SIGKILL);
    }
    bmpi_fences_fini(job); /* before the server stops: they call into it */
}

void bmpi_remote_free(struct bmpi_job *job)
{
    struct bmpi_remote *rm = job->remote;
    if (rm == NULL)
        return;
    bmpi_tree_close(&rm->tree);
    for (int i = 0; i < rm->nagents; i++) {
        if (rm->agents[i].stdin_fd >= 0)
            close(rm->agents[i].stdin_fd);
        if (rm->agents[i].stderr_fd >= 0)
            close(rm->agents[i].stderr_fd);
        free(rm->agents[i].err);
    }
    free(rm->agents);
    free(rm->vx);
    free(rm);
    job->remote = NULL;
    job->tree = NULL;
    job->role = NULL;
}
