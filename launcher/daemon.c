/* bmpirun --daemon (launcher/daemon.h).
 *
 * The same job, PMIx server, spawn and event loop as the head, in another
 * role: the daemon judges nothing. Every rank's start, connection, abort,
 * output and exit goes to the head as it happens, and the head decides.
 * The daemon ends when the head says the job is over (SHUTDOWN), or, with
 * its ranks killed first, when its parent in the tree or its stdin (the
 * launch agent's pipe from the head) goes away. */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launcher/bootstrap.h"
#include "launcher/daemon.h"
#include "launcher/dpm.h"
#include "launcher/fence.h"
#include "launcher/job.h"
#include "launcher/pmix_server.h"
#include "launcher/spawn.h"
#include "launcher/tree.h"
#include "launcher/wire.h"

/* How long a daemon tries each of its parent's addresses. */
#define CONNECT_MS 3000

struct bmpi_daemon {
    struct bmpi_tree tree;
    struct bmpi_linebuf in; /* the agent's stdin: bootstrap, parent lines, EOF */
    struct bmpi_boot_info boot;
    char parent_addr[256];
    bool shutdown; /* the head said the job is over */
    bool orphaned; /* the head (or our parent) is gone */
    bool stdin_ack_owed;
};

static const struct bmpi_role_ops daemon_role;

static void send_head(struct bmpi_job *job, int type, const void *a, size_t alen, const void *b, size_t blen)
{
    bmpi_tree_sendv(&job->daemon->tree, 0, (uint16_t)type, a, alen, b, blen);
}

/* ---- to the head --------------------------------------------------------------------- */

void bmpi_daemon_rank_ended(struct bmpi_job *job, struct bmpi_rank *r)
{
    struct bmpi_wire_exited m = {.rank = (int32_t)(r - job->ranks),
                                 .wstatus = r->wstatus,
                                 .connected = atomic_load(&r->connected),
                                 .finalized = atomic_load(&r->finalized)};
    send_head(job, BMPI_WIRE_EXITED, &m, sizeof(m), NULL, 0);
}

void bmpi_daemon_forward_event(struct bmpi_job *job, const struct bmpi_event *ev)
{
    int32_t rank = ev->rank;
    if (ev->type == BMPI_EV_CONNECTED) {
        send_head(job, BMPI_WIRE_CONNECTED, &rank, sizeof(rank), NULL, 0);
    } else if (ev->type == BMPI_EV_FINALIZED) {
        send_head(job, BMPI_WIRE_FINALIZED, &rank, sizeof(rank), NULL, 0);
    } else if (ev->type == BMPI_EV_ABORT) {
        struct bmpi_wire_abort m = {.rank = rank, .status = ev->status};
        send_head(job, BMPI_WIRE_ABORT, &m, sizeof(m), ev->msg, ev->msg ? strlen(ev->msg) : 0);
    }
}

static void forward_output(void *ctx, int owner, int which, const char *buf, size_t len)
{
    struct bmpi_wire_output m = {.rank = owner, .stream = which};
    send_head(ctx, BMPI_WIRE_OUTPUT, &m, sizeof(m), buf, len);
}

static void report_started(struct bmpi_job *job)
{
    struct bmpi_wire_rank_pid *rp = calloc((size_t)job->nlocal + 1, sizeof(*rp));
    size_t n = 0;
    if (rp == NULL)
        return;
    for (int i = 0; i < job->nranks; i++)
        if (bmpi_rank_is_local(&job->ranks[i]) && job->ranks[i].pid > 0)
            rp[n++] = (struct bmpi_wire_rank_pid){.rank = i, .pid = job->ranks[i].pid};
    send_head(job, BMPI_WIRE_STARTED, rp, n * sizeof(*rp), NULL, 0);
    free(rp);
}

/* ---- from the tree ------------------------------------------------------------------- */

static void orphan(struct bmpi_job *job, const char *why)
{
    struct bmpi_daemon *d = job->daemon;
    if (d->orphaned)
        return;
    d->orphaned = true;
    if (job->nrunning > 0)
        bmpi_say("%s; killing the %d rank(s) of this host", why, job->nrunning);
    bmpi_job_kill_all(job, SIGKILL);
}

static void deliver(void *ctx, const struct bmpi_tree_hdr *h, const void *payload)
{
    struct bmpi_job *job = ctx;
    struct bmpi_daemon *d = job->daemon;
    if (bmpi_fence_deliver(job, h, payload) || bmpi_dpm_deliver(job, h, payload))
        return;
    switch (h->type) {
    case BMPI_WIRE_STDIN:
        bmpi_iof_stdin_feed(&job->iof, payload, h->len);
        d->stdin_ack_owed = h->len > 0;
        break;
    case BMPI_WIRE_SIGNAL: {
        int32_t sig;
        if (h->len >= sizeof(sig)) {
            memcpy(&sig, payload, sizeof(sig));
            bmpi_job_kill_all(job, sig);
        }
        break;
    }
    case BMPI_WIRE_SHUTDOWN:
        d->shutdown = true;
        bmpi_job_kill_all(job, SIGKILL); /* none should be left */
        break;
    default:
        break;
    }
}

static void lost(void *ctx, int vertex)
{
    struct bmpi_job *job = ctx;
    if (vertex == bmpi_tree_parent(&job->daemon->tree, job->self_vertex)) {
        orphan(job, "lost the connection to the head bmpirun");
        return;
    }
    int32_t v = vertex; /* a daemon below: the head decides */
    send_head(job, BMPI_WIRE_LOST, &v, sizeof(v), NULL, 0);
}

/* ---- the role in the job's loop --------------------------------------------------------- */

static size_t daemon_npollfds(struct bmpi_job *job)
{
    return bmpi_tree_npollfds(&job->daemon->tree) + 1;
}

static size_t daemon_pollfds(struct bmpi_job *job, struct pollfd *pfd)
{
    struct bmpi_daemon *d = job->daemon;
    size_t n = bmpi_tree_pollfds(&d->tree, pfd);
    pfd[n++] = (struct pollfd){.fd = d->in.eof ? -1 : d->in.fd, .events = POLLIN};
    return n;
}

/* Later lines on stdin are for other daemons; its end is the head's. */
static void read_stdin(struct bmpi_job *job)
{
    struct bmpi_daemon *d = job->daemon;
    if (bmpi_linebuf_fill(&d->in) <= 0) {
        d->in.eof = 1;
        if (!d->shutdown)
            orphan(job, "the launch agent's connection to the head bmpirun ended");
        return;
    }
    char *line;
    while ((line = bmpi_linebuf_next(&d->in)) != NULL)
        free(line);
}

static void daemon_handle(struct bmpi_job *job, const struct pollfd *pfd, size_t n)
{
    struct bmpi_daemon *d = job->daemon;
    if (pfd == NULL) {
        struct pollfd none[1] = {{.fd = -1}};
        bmpi_tree_handle(&d->tree, none, 0); /* its timers */
    } else {
        bmpi_tree_handle(&d->tree, pfd, n - 1);
        if (pfd[n - 1].fd >= 0 && pfd[n - 1].revents != 0)
            read_stdin(job);
    }
    if (d->stdin_ack_owed && bmpi_iof_stdin_idle(&job->iof)) {
        d->stdin_ack_owed = false;
        send_head(job, BMPI_WIRE_STDIN_ACK, NULL, 0, NULL, 0);
    }
}

static bool daemon_busy(struct bmpi_job *job)
{
    return !job->daemon->shutdown && !job->daemon->orphaned;
}

static int daemon_timeout_ms(struct bmpi_job *job)
{
    return bmpi_tree_timeout_ms(&job->daemon->tree);
}

static const struct bmpi_role_ops daemon_role = {
    .npollfds = daemon_npollfds,
    .pollfds = daemon_pollfds,
    .handle = daemon_handle,
    .busy = daemon_busy,
    .timeout_ms = daemon_timeout_ms,
};

/* ---- joining the tree ---------------------------------------------------------------------- */

/* Where our parent listens: the head's addresses, or a "parent" line the
 * head sends once that daemon has joined. */
static int parent_addresses(struct bmpi_job *job, char *buf, size_t len, char *why, size_t why_len)
{
    struct bmpi_daemon *d = job->daemon;
    int parent = bmpi_tree_parent(&d->tree, job->self_vertex);
    if (parent == 0) {
        snprintf(buf, len, "%s", d->boot.head_addrs);
        return 0;
    }
    struct timespec deadline;
    bmpi_deadline_in(&deadline, job->bootstrap_timeout_s * 1000L);
    for (;;) {
        char *line;
        while ((line = bmpi_linebuf_next(&d->in)) != NULL) {
            int v, off = 0;
            bool mine = sscanf(line, "parent %d %n", &v, &off) == 1 && v == parent && off > 0;
            if (mine)
                snprintf(buf, len, "%s", line + off);
            free(line);
            if (mine)
                return 0;
        }
        long ms = bmpi_ms_until(&deadline);
        struct pollfd p = {.fd = d->in.fd, .events = POLLIN};
        if (ms <= 0 || poll(&p, 1, (int)ms) <= 0 || bmpi_linebuf_fill(&d->in) <= 0) {
            snprintf(why, why_len, "never learnt where its parent daemon (vertex %d, host %s) listens", parent,
                     job->node_names[0]);
            return -1;
        }
    }
}

static int join_tree(struct bmpi_job *job, char *why, size_t why_len)
{
    struct bmpi_daemon *d = job->daemon;
    struct bmpi_tree_events ev = {.ctx = job, .deliver = deliver, .lost = lost};
    if (d->boot.nvertices != job->nvertices) {
        snprintf(why, why_len, "the bootstrap says %d vertices but its nodes make %d", d->boot.nvertices,
                 job->nvertices);
        return -1;
    }
    bmpi_tree_init(&d->tree, job->self_vertex, job->nvertices, d->boot.fanout, d->boot.secret, &ev);
    explicit_bzero(d->boot.secret, sizeof(d->boot.secret));
    if (bmpi_tree_has_children(&d->tree, job->self_vertex) && bmpi_tree_listen(&d->tree) != 0) {
        snprintf(why, why_len, "cannot listen for the daemons below it");
        return -1;
    }
    char addrs[4096], failed[1024];
    if (parent_addresses(job, addrs, sizeof(addrs), why, why_len) != 0)
        return -1;
    if (bmpi_tree_connect(&d->tree, addrs, CONNECT_MS, failed, sizeof(failed)) != 0) {
        snprintf(why, why_len, "cannot reach the %s at any of its addresses: %s",
                 bmpi_tree_parent(&d->tree, job->self_vertex) == 0 ? "head bmpirun" : "parent daemon", failed);
        return -1;
    }
    char me[160] = "";
    if (d->tree.listen_fd >= 0)
        bmpi_tree_local_addr(&d->tree, me, sizeof(me));
    send_head(job, BMPI_WIRE_JOINED, me, strlen(me), NULL, 0);
    job->tree = &d->tree;
    return bmpi_fences_init(job);
}

/* ---- main ------------------------------------------------------------------------------------- */

static int parse_args(int argc, char **argv, int *node)
{
    *node = -1;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--node") == 0 && i + 1 < argc)
            *node = atoi(argv[++i]);
        else
            return -1;
    }
    return 0;
}

static void set_prefix(const char *host)
{
    char who[300];
    snprintf(who, sizeof(who), "bmpirun (daemon on %s)", host);
    bmpi_say_set_prefix(who);
}

/* Set up, join, serve, start the ranks; -1 after saying why (the head
 * hears it through the agent's stderr, or as FAILED once joined). */
static int daemon_start(struct bmpi_job *job, int node)
{
    char why[2048];
    struct bmpi_daemon *d = job->daemon;
    if (bmpi_bootstrap_read(&d->in, job, node, &d->boot, why, sizeof(why)) != 0) {
        bmpi_say("%s", why);
        return -1;
    }
    set_prefix(job->opt.hosts.hosts[job->self_node].name);
    if (bmpi_job_init(job) != 0)
        return -1;
    bmpi_job_start_sweeper(job);
    if (join_tree(job, why, sizeof(why)) != 0) {
        bmpi_say("%s", why);
        return -1;
    }
    job->role = &daemon_role;
    job->iof.forward = forward_output;
    job->iof.forward_ctx = job;
    job->iof.stdin_remote = true;
    if (bmpi_pmix_start(job) != 0 || bmpi_spawn_all(job) != 0) {
        static const char msg[] = "could not start its ranks (its reasons are above)";
        send_head(job, BMPI_WIRE_FAILED, msg, sizeof(msg) - 1, NULL, 0);
        bmpi_job_kill_all(job, SIGKILL);
        return -1;
    }
    report_started(job);
    return 0;
}

int bmpi_daemon_main(int argc, char **argv)
{
    struct bmpi_daemon d = {.in = {.fd = STDIN_FILENO}};
    struct bmpi_job job = {.daemon = &d};
    int node, rc = 0;
    char host[256];
    gethostname(host, sizeof(host));
    host[sizeof(host) - 1] = '\0';
    set_prefix(host);
    if (parse_args(argc, argv, &node) != 0) {
        bmpi_say("usage: bmpirun --daemon [--node I] (started by bmpirun through the launch agent, not by hand)");
        return BMPI_EXIT_USAGE;
    }
    if (daemon_start(&job, node) != 0)
        rc = BMPI_EXIT_LAUNCH;
    else
        bmpi_job_run(&job);
    if (d.orphaned)
        rc = BMPI_EXIT_LAUNCH;
    bmpi_job_cleanup(&job);
    if (job.tree != NULL)
        bmpi_tree_flush(&d.tree, 1000);
    bmpi_fences_fini(&job); /* before the server stops: they call into it */
    bool stopped = bmpi_pmix_stop(&job);
    bmpi_job_sweep(&job);
    if (!stopped) {
        fflush(NULL);
        _exit(rc);
    }
    bmpi_tree_close(&d.tree);
    bmpi_job_free(&job);
    for (char **a = job.opt.argv; a != NULL && *a != NULL; a++)
        free(*a);
    free(job.opt.argv);
    job.opt.argv = NULL;
    bmpi_options_free(&job.opt);
    free(d.boot.head_addrs);
    free(d.in.buf);
    return rc;
}
