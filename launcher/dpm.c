/* PMIx_Spawn in bmpirun (docs/dynamic.md "Spawning").
 *
 * The upcall runs in the PMIx library's thread: it copies the request and
 * writes it into the job's event pipe. The main loop then checks the apps
 * (command found, working directory there, every host this one), names
 * the namespace "<job's namespace>.<k>" for the k-th spawn, appends its
 * processes to job->ranks (ns = k), registers the namespace (sizes, maps,
 * PMIX_SPAWNED, PMIX_PARENT_ID, an app number per process), forks them
 * (spawn.c) and answers the request. From then on they are ranks like the
 * job's own: their output is forwarded (tagged "[k.rank]"), their exits
 * judged, a failure fails the job, and the job ends when all have ended.
 *
 * Across hosts the head decides: a daemon's spawn goes to it
 * (BMPI_WIRE_SPAWN_REQ), it checks the apps and places the processes (the
 * nodes PMIX_HOST names, else the job's free slots in node order, then
 * round robin), and sends the new namespace to every vertex
 * (BMPI_WIRE_SPAWN_NS); each one adds the processes to job->ranks at the
 * same index, registers the namespace where it has processes of it, forks
 * them and says so (SPAWN_ACK); the head then answers the request, at
 * home or through the asking daemon (SPAWN_DONE). On the wire a process
 * is named by its index in job->ranks, the same on every vertex. The
 * connect and disconnect upcalls are not implemented: MPI_Comm_spawn
 * connects parent and children through a port (runtime/dpm.c), not
 * through PMIx_Connect.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pmix.h>

#include "launcher/dpm.h"
#include "launcher/job.h"
#include "launcher/options.h"
#include "launcher/pmix_server.h"
#include "launcher/spawn.h"
#include "launcher/tree.h"
#include "launcher/wire.h"

struct spawn_req;

/* A spawn the head has sent out, waiting for its vertices' SPAWN_ACKs. */
struct spawn_wait {
    struct spawn_wait *next;
    int ns;
    int acks_missing;
    int status;
    int from_vertex;        /* who asked: 0, or the daemon to answer */
    uint64_t id;            /* the daemon's number for its request */
    struct spawn_req *req;  /* from_vertex 0: the request to answer */
    char nspace[PMIX_MAX_NSLEN + 1];
};

/* The namespaces spawned so far: labels[k - 1] is " of <namespace k>". */
struct bmpi_dpm {
    int nspawned;
    char **labels;
    struct spawn_wait *waits;    /* the head's spawns in flight */
    struct spawn_req *forwarded; /* a daemon's requests at the head */
    uint64_t next_id;
};

/* One app of a request, copied out of the library's memory. */
struct spawn_app {
    char *cmd;
    char **argv, **env;
    int maxprocs;
    char *wdir, *host; /* NULL: not given */
    char *path;        /* the command found, by spawn_run */
};

struct spawn_req {
    pmix_proc_t parent;
    struct spawn_app *apps;
    size_t napps;
    pmix_spawn_cbfunc_t cbfunc;
    void *cbdata;
    struct spawn_req *next; /* a daemon: in job->dpm->forwarded */
    uint64_t id;
    int home_node; /* the asking process's node ("localhost" in PMIX_HOST) */
};

int bmpi_dpm_init(struct bmpi_job *job)
{
    job->dpm = calloc(1, sizeof(*job->dpm));
    if (job->dpm == NULL) {
        bmpi_say("out of memory for spawning");
        return -1;
    }
    return 0;
}

static void req_free(struct spawn_req *req);

void bmpi_dpm_free(struct bmpi_job *job)
{
    if (job->dpm == NULL)
        return;
    while (job->dpm->waits != NULL) {
        struct spawn_wait *w = job->dpm->waits;
        job->dpm->waits = w->next;
        if (w->req != NULL)
            req_free(w->req);
        free(w);
    }
    while (job->dpm->forwarded != NULL) {
        struct spawn_req *r = job->dpm->forwarded;
        job->dpm->forwarded = r->next;
        req_free(r);
    }
    for (int i = 0; i < job->dpm->nspawned; i++)
        free(job->dpm->labels[i]);
    free(job->dpm->labels);
    free(job->dpm);
    job->dpm = NULL;
}

const char *bmpi_dpm_label(const struct bmpi_job *job, const struct bmpi_rank *r)
{
    if (r->ns <= 0 || job->dpm == NULL || r->ns > job->dpm->nspawned)
        return "";
    return job->dpm->labels[r->ns - 1];
}

/* ---- the request, copied ------------------------------------------------ */

static void strv_free(char **v)
{
    for (size_t i = 0; v != NULL && v[i] != NULL; i++)
        free(v[i]);
    free(v);
}

static char **strv_dup(char **v)
{
    size_t n = 0;
    while (v != NULL && v[n] != NULL)
        n++;
    char **d = calloc(n + 1, sizeof(*d));
    for (size_t i = 0; d != NULL && i < n; i++) {
        if ((d[i] = strdup(v[i])) == NULL) {
            strv_free(d);
            return NULL;
        }
    }
    return d;
}

static void req_free(struct spawn_req *req)
{
    for (size_t a = 0; a < req->napps; a++) {
        struct spawn_app *app = &req->apps[a];
        free(app->cmd);
        strv_free(app->argv);
        strv_free(app->env);
        free(app->wdir);
        free(app->host);
        free(app->path);
    }
    free(req->apps);
    free(req);
}

static char *info_string(const pmix_info_t *info, size_t ninfo, const char *key)
{
    for (size_t i = 0; i < ninfo; i++)
        if (PMIX_CHECK_KEY(&info[i], key) && info[i].value.type == PMIX_STRING && info[i].value.data.string)
            return strdup(info[i].value.data.string);
    return NULL;
}

static int copy_app(struct spawn_app *to, const pmix_app_t *from)
{
    to->maxprocs = from->maxprocs;
    to->cmd = from->cmd ? strdup(from->cmd) : NULL;
    to->argv = strv_dup(from->argv);
    to->env = strv_dup(from->env);
    to->wdir = info_string(from->info, from->ninfo, PMIX_WDIR);
    to->host = info_string(from->info, from->ninfo, PMIX_HOST);
    if (from->cwd != NULL && to->wdir == NULL)
        to->wdir = strdup(from->cwd);
    return (from->cmd && !to->cmd) || !to->argv || !to->env ? -1 : 0;
}

pmix_status_t bmpi_dpm_spawn(const pmix_proc_t *proc, const pmix_info_t job_info[], size_t ninfo,
                             const pmix_app_t apps[], size_t napps, pmix_spawn_cbfunc_t cbfunc, void *cbdata)
{
    (void)job_info;
    (void)ninfo;
    struct bmpi_job *job = bmpi_pmix_served_job();
    if (job == NULL || napps == 0)
        return job == NULL ? PMIX_ERR_NOT_SUPPORTED : PMIX_ERR_BAD_PARAM;
    struct spawn_req *req = calloc(1, sizeof(*req));
    if (req == NULL || (req->apps = calloc(napps, sizeof(*req->apps))) == NULL) {
        free(req);
        return PMIX_ERR_NOMEM;
    }
    req->parent = *proc;
    req->cbfunc = cbfunc;
    req->cbdata = cbdata;
    req->napps = napps;
    for (size_t a = 0; a < napps; a++) {
        if (copy_app(&req->apps[a], &apps[a]) != 0) {
            req_free(req);
            return PMIX_ERR_NOMEM;
        }
    }
    struct bmpi_event ev = {.type = BMPI_EV_SPAWN, .rank = -1, .data = req};
    ssize_t n;
    do
        n = write(job->event_pipe[1], &ev, sizeof(ev));
    while (n < 0 && errno == EINTR);
    if (n != (ssize_t)sizeof(ev)) {
        req_free(req);
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    return PMIX_SUCCESS;
}

/* ---- checking the apps (main thread) ------------------------------------ */

static bool executable(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* The app's PATH if it brings one, else bmpirun's. */
static const char *search_path(const struct spawn_app *app)
{
    for (size_t i = 0; app->env[i] != NULL; i++)
        if (strncmp(app->env[i], "PATH=", 5) == 0)
            return app->env[i] + 5;
    const char *p = getenv("PATH");
    return p != NULL && *p ? p : "/usr/local/bin:/usr/bin:/bin";
}

/* app->path: the command as a path, relative ones with a '/' taken from
 * the working directory, bare names looked up in the search path. */
static pmix_status_t find_command(struct spawn_app *app)
{
    if (app->cmd == NULL || app->cmd[0] == '\0') {
        bmpi_say("MPI_Comm_spawn: no command given");
        return PMIX_ERR_BAD_PARAM;
    }
    if (strchr(app->cmd, '/') != NULL) {
        if (app->cmd[0] != '/' && app->wdir != NULL) {
            if (asprintf(&app->path, "%s/%s", app->wdir, app->cmd) < 0)
                return PMIX_ERR_NOMEM;
        } else if ((app->path = strdup(app->cmd)) == NULL) {
            return PMIX_ERR_NOMEM;
        }
        if (executable(app->path))
            return PMIX_SUCCESS;
    } else {
        for (const char *p = search_path(app); app->path == NULL;) {
            size_t len = strcspn(p, ":");
            char *cand;
            if (asprintf(&cand, "%.*s/%s", len ? (int)len : 1, len ? p : ".", app->cmd) < 0)
                return PMIX_ERR_NOMEM;
            if (executable(cand))
                app->path = cand;
            else
                free(cand);
            if (p[len] == '\0')
                break;
            p += len + 1;
        }
        if (app->path != NULL)
            return PMIX_SUCCESS;
    }
    bmpi_say("MPI_Comm_spawn: cannot run '%s': no such executable file%s", app->cmd,
             strchr(app->cmd, '/') ? "" : " in the search path");
    return PMIX_ERR_NOT_FOUND;
}

/* The node a PMIX_HOST name means: one of the job's by its host-list
 * name; "localhost" the asking process's; else this machine's node by any
 * of its names. -1: not in the job. */
static int node_named(const struct bmpi_job *job, const char *name, int home_node)
{
    for (int n = 0; n < job->nnodes; n++)
        if (strcmp(job->node_names[n], name) == 0)
            return n;
    if (strcmp(name, "localhost") == 0)
        return home_node;
    return job->self_node >= 0 && bmpi_options_is_this_host(name) ? job->self_node : -1;
}

/* Every host of a comma-separated PMIX_HOST ("h1,h2:2") must be a node of
 * the job: the processes go to them in turn. */
static pmix_status_t check_hosts(const struct bmpi_job *job, const char *hosts, int home_node)
{
    char *copy = hosts ? strdup(hosts) : NULL, *save = NULL;
    if (hosts != NULL && copy == NULL)
        return PMIX_ERR_NOMEM;
    pmix_status_t st = PMIX_SUCCESS;
    for (char *h = copy ? strtok_r(copy, ",", &save) : NULL; h != NULL && st == PMIX_SUCCESS;
         h = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(h, ':'); /* "host:slots" */
        if (colon != NULL)
            *colon = '\0';
        if (node_named(job, h, home_node) < 0) {
            bmpi_say("MPI_Comm_spawn: host '%s' is not one of the job's (%s%s): bmpirun spawns only on the hosts "
                     "it was given",
                     h, job->node_names[0], job->nnodes > 1 ? ", ..." : "");
            st = PMIX_ERR_NOT_SUPPORTED;
        }
    }
    free(copy);
    return st;
}

/* Slots of node n: its host's in the host list, or (one host without a
 * list) the universe. */
static int node_slots(const struct bmpi_job *job, int n)
{
    for (int h = 0; h < job->opt.hosts.n; h++)
        if (strcmp(job->opt.hosts.hosts[h].name, job->node_names[n]) == 0)
            return job->opt.hosts.hosts[h].slots;
    return job->opt.universe_size;
}

/* Where each of the app's processes goes (node[0 .. maxprocs)): the
 * PMIX_HOST nodes in turn, else the job's free slots in node order, then
 * round robin over the nodes (oversubscribed). used[] counts what runs
 * on each node, the processes placed so far included. */
static void place_app(const struct bmpi_job *job, const struct spawn_app *app, int home_node, int *used, int *node)
{
    int hosts[256], nhosts = 0;
    char *copy = app->host ? strdup(app->host) : NULL, *save = NULL;
    for (char *h = copy ? strtok_r(copy, ",", &save) : NULL; h != NULL && nhosts < 256; h = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(h, ':');
        if (colon != NULL)
            *colon = '\0';
        hosts[nhosts++] = node_named(job, h, home_node);
    }
    free(copy);
    int rr = 0;
    for (int p = 0; p < app->maxprocs; p++) {
        int n = -1;
        if (nhosts > 0) {
            n = hosts[p % nhosts];
        } else {
            for (int k = 0; k < job->nnodes && n < 0; k++)
                if (used[k] < node_slots(job, k))
                    n = k;
            if (n < 0)
                n = rr++ % job->nnodes;
        }
        node[p] = n;
        used[n]++;
    }
}

static void place_procs(const struct bmpi_job *job, const struct spawn_req *req, int *node)
{
    int *used = calloc((size_t)job->nnodes, sizeof(*used));
    if (used == NULL)
        return; /* node[] stays 0: all on the first node */
    for (int i = 0; i < job->nranks; i++)
        if (job->ranks[i].state != BMPI_RANK_EXITED)
            used[job->ranks[i].node]++;
    for (size_t a = 0, first = 0; a < req->napps; first += (size_t)req->apps[a].maxprocs, a++)
        place_app(job, &req->apps[a], req->home_node, used, node + first);
    free(used);
}

static pmix_status_t check_app(const struct bmpi_job *job, struct spawn_app *app, int home_node)
{
    if (app->maxprocs < 1) {
        bmpi_say("MPI_Comm_spawn: %d processes of '%s' asked for", app->maxprocs, app->cmd ? app->cmd : "");
        return PMIX_ERR_BAD_PARAM;
    }
    struct stat st;
    if (app->wdir != NULL) {
        const char *why = stat(app->wdir, &st) != 0 ? strerror(errno) : !S_ISDIR(st.st_mode) ? "not a directory" : NULL;
        if (why != NULL) {
            bmpi_say("MPI_Comm_spawn: working directory '%s' of '%s': %s", app->wdir, app->cmd ? app->cmd : "", why);
            return PMIX_ERR_NOT_FOUND;
        }
    }
    pmix_status_t rc = check_hosts(job, app->host, home_node);
    return rc == PMIX_SUCCESS ? find_command(app) : rc;
}

/* ---- the namespace ------------------------------------------------------- */

/* The app of the namespace's i-th process. */
static uint32_t app_of(const struct spawn_req *req, int i)
{
    uint32_t a = 0;
    while (a + 1 < req->napps && i >= req->apps[a].maxprocs) {
        i -= req->apps[a].maxprocs;
        a++;
    }
    return a;
}

/* "0,3" of the namespace's processes on node, and the nodes' names and
 * per-node lists for PMIx's maps ("h1,h2", "0,1;2"). */
static int ns_maps(const struct bmpi_job *job, int first, int n, char **peers, char **nodes, char **ppn)
{
    size_t cap = (size_t)n * 12 + (size_t)job->nnodes * 2 + 2, ncap = 2;
    for (int k = 0; k < job->nnodes; k++)
        ncap += strlen(job->node_names[k]) + 1;
    *peers = calloc(cap, 1);
    *ppn = calloc(cap, 1);
    *nodes = calloc(ncap, 1);
    if (*peers == NULL || *ppn == NULL || *nodes == NULL)
        return -1;
    size_t po = 0, qo = 0, no = 0;
    for (int k = 0; k < job->nnodes; k++) {
        bool any = false;
        for (int i = 0; i < n; i++) {
            const struct bmpi_rank *r = &job->ranks[first + i];
            if (r->node != k)
                continue;
            if (!any)
                no += (size_t)snprintf(*nodes + no, ncap - no, "%s%s", no ? "," : "", job->node_names[k]);
            qo += (size_t)snprintf(*ppn + qo, cap - qo, "%s%d", any ? "," : qo ? ";" : "", r->rank);
            if (k == job->self_node)
                po += (size_t)snprintf(*peers + po, cap - po, "%s%d", po ? "," : "", r->rank);
            any = true;
        }
    }
    return 0;
}

/* What the spawned processes learn of their job: as register_nspace in
 * pmix_server.c gives the job's own ranks (the nodes that run some of
 * them, this host's view), plus PMIX_SPAWNED and PMIX_PARENT_ID, and each
 * process's app number. */
static int register_ns(struct bmpi_job *job, const char *nspace, const struct spawn_req *req, int first, int n)
{
    int rc = -1, nlocal = 0, nnodes = 0;
    char *peers = NULL, *nodes = NULL, *ppn = NULL, *nodemap = NULL, *procmap = NULL;
    size_t ninfo = 16 + (size_t)n, k = 0;
    pmix_info_t *info = NULL;
    uint32_t size = (uint32_t)n, selfnode = (uint32_t)(job->self_node >= 0 ? job->self_node : 0);
    uint32_t univ = (uint32_t)(job->opt.universe_size > n ? job->opt.universe_size : n);
    pmix_rank_t lldr = 0;
    bool yes = true, seen_lldr = false;
    pmix_proc_t parent = req->parent;
    for (int i = 0; i < n; i++) {
        const struct bmpi_rank *r = &job->ranks[first + i];
        if (r->node == job->self_node) {
            nlocal++;
            if (!seen_lldr)
                lldr = (pmix_rank_t)r->rank;
            seen_lldr = true;
        }
    }
    if (ns_maps(job, first, n, &peers, &nodes, &ppn) != 0 || PMIx_generate_regex(nodes, &nodemap) != PMIX_SUCCESS ||
        PMIx_generate_ppn(ppn, &procmap) != PMIX_SUCCESS)
        goto out;
    for (const char *c = nodes; *c; c++)
        nnodes += *c == ',';
    nnodes++;
    uint32_t nn = (uint32_t)nnodes, nl = (uint32_t)nlocal;
    PMIX_INFO_CREATE(info, ninfo);
    if (info == NULL)
        goto out;
    PMIX_INFO_LOAD(&info[k++], PMIX_JOBID, nspace, PMIX_STRING);
    PMIX_INFO_LOAD(&info[k++], PMIX_UNIV_SIZE, &univ, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[k++], PMIX_JOB_SIZE, &size, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[k++], PMIX_MAX_PROCS, &size, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[k++], PMIX_NUM_NODES, &nn, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[k++], PMIX_NODE_MAP, nodemap, PMIX_REGEX);
    PMIX_INFO_LOAD(&info[k++], PMIX_PROC_MAP, procmap, PMIX_REGEX);
    PMIX_INFO_LOAD(&info[k++], PMIX_LOCAL_SIZE, &nl, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[k++], PMIX_LOCAL_PEERS, peers, PMIX_STRING);
    PMIX_INFO_LOAD(&info[k++], PMIX_LOCALLDR, &lldr, PMIX_PROC_RANK);
    PMIX_INFO_LOAD(&info[k++], PMIX_NODEID, &selfnode, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[k++], PMIX_HOSTNAME, job->node_names[selfnode], PMIX_STRING);
    PMIX_INFO_LOAD(&info[k++], PMIX_SPAWNED, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&info[k++], PMIX_PARENT_ID, &parent, PMIX_PROC);
    for (int i = 0; i < n; i++) {
        const struct bmpi_rank *r = &job->ranks[first + i];
        pmix_rank_t rank = (pmix_rank_t)r->rank;
        uint16_t lrank = (uint16_t)r->local_rank;
        uint32_t appnum = app_of(req, i), nodeid = (uint32_t)r->node;
        pmix_info_t *pd;
        size_t m = 0;
        PMIX_INFO_CREATE(pd, 7);
        if (pd == NULL)
            goto out;
        PMIX_INFO_LOAD(&pd[m++], PMIX_RANK, &rank, PMIX_PROC_RANK);
        PMIX_INFO_LOAD(&pd[m++], PMIX_LOCAL_RANK, &lrank, PMIX_UINT16);
        PMIX_INFO_LOAD(&pd[m++], PMIX_NODE_RANK, &lrank, PMIX_UINT16);
        PMIX_INFO_LOAD(&pd[m++], PMIX_NODEID, &nodeid, PMIX_UINT32);
        PMIX_INFO_LOAD(&pd[m++], PMIX_HOSTNAME, job->node_names[r->node], PMIX_STRING);
        PMIX_INFO_LOAD(&pd[m++], PMIX_APPNUM, &appnum, PMIX_UINT32);
        PMIX_INFO_LOAD(&pd[m++], PMIX_GLOBAL_RANK, &rank, PMIX_PROC_RANK);
        pmix_data_array_t darray = {.type = PMIX_INFO, .size = m, .array = pd};
        PMIX_INFO_LOAD(&info[k++], PMIX_PROC_DATA, &darray, PMIX_DATA_ARRAY);
        PMIX_INFO_FREE(pd, 7);
    }
    rc = bmpi_pmix_register_spawned(job, nspace, info, k, first, n);
out:
    if (rc != 0 && info == NULL)
        bmpi_say("MPI_Comm_spawn: out of memory describing namespace %s", nspace);
    if (info != NULL)
        PMIX_INFO_FREE(info, ninfo);
    free(peers);
    free(nodes);
    free(ppn);
    free(nodemap);
    free(procmap);
    return rc;
}

/* The entries job->ranks[first ..] of namespace ns, on the nodes placed. */
static void add_ranks(struct bmpi_job *job, int ns, int first, int total, const int *node)
{
    for (int i = 0; i < total; i++) {
        struct bmpi_rank *r = &job->ranks[first + i];
        memset(r, 0, sizeof(*r));
        r->job = job;
        r->rank = i;
        r->ns = ns;
        r->node = node[i];
        r->vertex = job->node_vertex[node[i]];
        for (int j = 0; j < i; j++)
            r->local_rank += node[j] == node[i];
        r->state = BMPI_RANK_PENDING;
        atomic_init(&r->connected, false);
        atomic_init(&r->finalized, false);
        for (int s = 0; s < BMPI_NSTREAMS; s++) {
            bmpi_iof_stream_init(&r->out[s]);
            r->out[s].ns = ns;
            r->out[s].owner = first + i;
        }
        job->rank_host[first + i] = job->node_names[node[i]];
    }
}

static int fork_apps(struct bmpi_job *job, const struct spawn_req *req, const char *nspace, int first)
{
    for (size_t a = 0; a < req->napps; a++) {
        const struct spawn_app *app = &req->apps[a];
        /* argv[0] as the program sees it: PMIx's argv starts with it */
        char *fallback[] = {app->path, NULL};
        const struct bmpi_app run = {.path = app->path,
                                     .argv = app->argv[0] ? app->argv : fallback,
                                     .wdir = app->wdir ? app->wdir : job->opt.wdir,
                                     .env = app->env,
                                     .nspace = nspace};
        if (bmpi_spawn_ranks(job, first, app->maxprocs, &run) != 0)
            return -1;
        first += app->maxprocs;
    }
    return 0;
}

static int total_procs(const struct spawn_req *req)
{
    int total = 0;
    for (size_t a = 0; a < req->napps; a++)
        total += req->apps[a].maxprocs;
    return total;
}

static pmix_status_t check_apps(struct bmpi_job *job, struct spawn_req *req)
{
    for (size_t a = 0; a < req->napps; a++) {
        pmix_status_t st = check_app(job, &req->apps[a], req->home_node);
        if (st != PMIX_SUCCESS)
            return st;
    }
    int total = total_procs(req);
    if (total > job->ranks_cap - job->nranks) {
        bmpi_say("MPI_Comm_spawn: %d more processes asked for, room is left for %d (a job spawns at most %d "
                 "over its life)",
                 total, job->ranks_cap - job->nranks, BMPI_SPAWN_MAX);
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    return PMIX_SUCCESS;
}

/* Namespace k's name and label ("<job's namespace>.<k>"). */
static pmix_status_t name_namespace(struct bmpi_job *job, int ns, char *nspace, size_t nspace_len)
{
    struct bmpi_dpm *d = job->dpm;
    if (ns != d->nspawned + 1)
        return PMIX_ERR_BAD_PARAM; /* every vertex names them in the head's order */
    char **labels = realloc(d->labels, (size_t)ns * sizeof(*labels));
    if (labels == NULL)
        return PMIX_ERR_NOMEM;
    d->labels = labels;
    if (snprintf(nspace, nspace_len, "%.200s.%d", job->nspace, ns) >= (int)nspace_len)
        return PMIX_ERR_BAD_PARAM; /* job->nspace is bmpi.<pid>.<hex>: never */
    if (asprintf(&labels[ns - 1], " of %s", nspace) < 0)
        return PMIX_ERR_NOMEM;
    d->nspawned = ns;
    return PMIX_SUCCESS;
}

/* Namespace ns with its processes on node[]: registered where some run
 * here, counted (the head counts those of other hosts as running until
 * their daemon says), this host's forked. *nlocal: how many run here. */
static pmix_status_t start_namespace(struct bmpi_job *job, struct spawn_req *req, int ns, const int *node,
                                     char *nspace, size_t nspace_len, int *nlocal)
{
    pmix_status_t st = name_namespace(job, ns, nspace, nspace_len);
    if (st != PMIX_SUCCESS)
        return st;
    int first = job->nranks, total = total_procs(req);
    add_ranks(job, ns, first, total, node);
    *nlocal = 0;
    for (int i = first; i < first + total; i++)
        *nlocal += bmpi_rank_is_local(&job->ranks[i]);
    if (*nlocal > 0 && register_ns(job, nspace, req, first, total) != 0)
        return PMIX_ERR_OUT_OF_RESOURCE;
    /* from here they are ranks the loop watches, started or not */
    job->nranks += total;
    if (job->remote != NULL) {
        for (int i = first; i < first + total; i++) {
            if (bmpi_rank_is_local(&job->ranks[i]))
                continue;
            job->ranks[i].state = BMPI_RANK_RUNNING;
            job->nrunning++;
        }
    }
    if (*nlocal > 0 && fork_apps(job, req, nspace, first) != 0)
        return PMIX_ERR_OUT_OF_RESOURCE;
    return PMIX_SUCCESS;
}

/* ---- the request on the wire -------------------------------------------- */

struct buf {
    char *p;
    size_t len, cap, off;
    bool bad;
};

static void put(struct buf *b, const void *v, size_t n)
{
    if (b->bad || b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->len + n)
            cap *= 2;
        char *grown = b->bad ? NULL : realloc(b->p, cap);
        if (grown == NULL) {
            b->bad = true;
            return;
        }
        b->p = grown;
        b->cap = cap;
    }
    memcpy(b->p + b->len, v, n);
    b->len += n;
}

static void put_i32(struct buf *b, int32_t v) { put(b, &v, sizeof(v)); }

static void put_str(struct buf *b, const char *str)
{
    int32_t n = str ? (int32_t)strlen(str) : -1;
    put_i32(b, n);
    if (n > 0)
        put(b, str, (size_t)n);
}

static void put_strv(struct buf *b, char **v)
{
    int32_t n = 0;
    while (v != NULL && v[n] != NULL)
        n++;
    put_i32(b, n);
    for (int32_t i = 0; i < n; i++)
        put_str(b, v[i]);
}

static void get(struct buf *b, void *v, size_t n)
{
    if (b->bad || b->len - b->off < n) {
        b->bad = true;
        memset(v, 0, n);
        return;
    }
    memcpy(v, b->p + b->off, n);
    b->off += n;
}

static int32_t get_i32(struct buf *b)
{
    int32_t v;
    get(b, &v, sizeof(v));
    return v;
}

static char *get_str(struct buf *b)
{
    int32_t n = get_i32(b);
    if (n < 0 || b->bad)
        return NULL;
    if ((size_t)n > b->len - b->off) {
        b->bad = true;
        return NULL;
    }
    char *str = strndup(b->p + b->off, (size_t)n);
    b->off += (size_t)n;
    b->bad = b->bad || str == NULL;
    return str;
}

static char **get_strv(struct buf *b)
{
    int32_t n = get_i32(b);
    if (n < 0 || n > 1 << 20 || b->bad) {
        b->bad = true;
        return NULL;
    }
    char **v = calloc((size_t)n + 1, sizeof(*v));
    for (int32_t i = 0; v != NULL && i < n && !b->bad; i++)
        v[i] = get_str(b);
    b->bad = b->bad || v == NULL;
    return v;
}

static void put_req(struct buf *b, const struct spawn_req *req)
{
    put_str(b, req->parent.nspace);
    put_i32(b, (int32_t)req->parent.rank);
    put_i32(b, (int32_t)req->napps);
    for (size_t a = 0; a < req->napps; a++) {
        const struct spawn_app *app = &req->apps[a];
        put_i32(b, app->maxprocs);
        put_str(b, app->cmd);
        put_str(b, app->wdir);
        put_str(b, app->host);
        put_str(b, app->path);
        put_strv(b, app->argv);
        put_strv(b, app->env);
    }
}

/* A request as put_req wrote it; NULL when malformed. */
static struct spawn_req *get_req(struct buf *b)
{
    struct spawn_req *req = calloc(1, sizeof(*req));
    char *parent = get_str(b);
    int32_t prank = get_i32(b), napps = get_i32(b);
    if (req == NULL || parent == NULL || napps < 1 || napps > 4096 ||
        (req->apps = calloc((size_t)napps, sizeof(*req->apps))) == NULL) {
        free(parent);
        free(req);
        return NULL;
    }
    PMIX_LOAD_PROCID(&req->parent, parent, (pmix_rank_t)prank);
    free(parent);
    req->napps = (size_t)napps;
    for (int32_t a = 0; a < napps && !b->bad; a++) {
        struct spawn_app *app = &req->apps[a];
        app->maxprocs = get_i32(b);
        app->cmd = get_str(b);
        app->wdir = get_str(b);
        app->host = get_str(b);
        app->path = get_str(b);
        app->argv = get_strv(b);
        app->env = get_strv(b);
        b->bad = b->bad || app->maxprocs < 1 || app->argv == NULL || app->env == NULL;
    }
    if (b->bad) {
        req_free(req);
        return NULL;
    }
    return req;
}

/* ---- across hosts: the head -------------------------------------------------- */

static void answer(struct bmpi_job *job, struct spawn_wait *w)
{
    if (w->from_vertex == 0) {
        if (w->req->cbfunc != NULL)
            w->req->cbfunc(w->status, w->status == PMIX_SUCCESS ? w->nspace : NULL, w->req->cbdata);
        req_free(w->req);
    } else {
        struct buf b = {0};
        put(&b, &w->id, sizeof(w->id));
        put_i32(&b, w->status);
        put_str(&b, w->nspace);
        if (!b.bad)
            bmpi_tree_send(job->tree, w->from_vertex, BMPI_WIRE_SPAWN_DONE, b.p, b.len);
        free(b.p);
    }
    free(w);
}

/* The head spawns for a rank of its own (from 0) or of a daemon's host. */
static void head_spawn(struct bmpi_job *job, struct spawn_req *req, int from, uint64_t id)
{
    req->home_node = job->self_node;
    for (int n = 0; n < job->nnodes && from != 0; n++)
        if (job->node_vertex[n] == from)
            req->home_node = n;
    struct spawn_wait *w = calloc(1, sizeof(*w));
    int total = total_procs(req), *node = calloc((size_t)(total > 0 ? total : 1), sizeof(*node));
    struct buf b = {0};
    pmix_status_t st = w == NULL || node == NULL ? PMIX_ERR_NOMEM
                       : job->phase != BMPI_PHASE_RUN || job->failed ? PMIX_ERR_NOT_SUPPORTED
                                                                      : check_apps(job, req);
    if (st == PMIX_SUCCESS) {
        place_procs(job, req, node);
        int ns = job->dpm->nspawned + 1;
        put_i32(&b, ns);
        put_req(&b, req);
        put_i32(&b, total);
        for (int i = 0; i < total; i++)
            put_i32(&b, node[i]);
        if (b.bad)
            st = PMIX_ERR_NOMEM;
        else
            bmpi_tree_send(job->tree, BMPI_TREE_ALL, BMPI_WIRE_SPAWN_NS, b.p, b.len);
        int nlocal = 0;
        if (st == PMIX_SUCCESS)
            st = start_namespace(job, req, ns, node, w->nspace, sizeof(w->nspace), &nlocal);
        bool *acked = calloc((size_t)job->nvertices, sizeof(*acked));
        for (int i = 0; acked != NULL && i < total; i++)
            acked[job->node_vertex[node[i]]] = true;
        for (int v = 1; acked != NULL && v < job->nvertices; v++)
            w->acks_missing += acked[v];
        free(acked);
        w->ns = ns;
    }
    free(b.p);
    free(node);
    if (w == NULL) {
        if (from == 0 && req->cbfunc != NULL)
            req->cbfunc(st, NULL, req->cbdata);
        req_free(req);
        return;
    }
    *w = (struct spawn_wait){.next = job->dpm->waits, .ns = w->ns, .acks_missing = w->acks_missing, .status = st,
                             .from_vertex = from, .id = id, .req = from == 0 ? req : NULL};
    snprintf(w->nspace, sizeof(w->nspace), "%.200s.%d", job->nspace, w->ns);
    if (from != 0)
        req_free(req);
    if (st != PMIX_SUCCESS || w->acks_missing == 0) {
        answer(job, w);
        return;
    }
    job->dpm->waits = w;
}

static void on_spawn_req(struct bmpi_job *job, int from, const void *payload, size_t len)
{
    struct buf b = {.p = (char *)payload, .len = len};
    uint64_t id;
    get(&b, &id, sizeof(id));
    struct spawn_req *req = get_req(&b);
    if (req == NULL) {
        bmpi_say("a malformed spawn request from vertex %d", from);
        return;
    }
    head_spawn(job, req, from, id);
}

static void on_spawn_ack(struct bmpi_job *job, const void *payload, size_t len)
{
    struct buf b = {.p = (char *)payload, .len = len};
    int32_t ns = get_i32(&b), status = get_i32(&b);
    for (struct spawn_wait **p = &job->dpm->waits; !b.bad && *p != NULL; p = &(*p)->next) {
        struct spawn_wait *w = *p;
        if (w->ns != ns)
            continue;
        if (status != PMIX_SUCCESS)
            w->status = status;
        if (--w->acks_missing == 0) {
            *p = w->next;
            answer(job, w);
        }
        return;
    }
}

/* ---- across hosts: a daemon --------------------------------------------------- */

static void daemon_forward(struct bmpi_job *job, struct spawn_req *req)
{
    struct buf b = {0};
    req->id = ++job->dpm->next_id;
    put(&b, &req->id, sizeof(req->id));
    put_req(&b, req);
    if (b.bad || bmpi_tree_send(job->tree, 0, BMPI_WIRE_SPAWN_REQ, b.p, b.len) != 0) {
        if (req->cbfunc != NULL)
            req->cbfunc(PMIX_ERR_UNREACH, NULL, req->cbdata);
        req_free(req);
    } else {
        req->next = job->dpm->forwarded;
        job->dpm->forwarded = req;
    }
    free(b.p);
}

static void on_spawn_ns(struct bmpi_job *job, const void *payload, size_t len)
{
    struct buf b = {.p = (char *)payload, .len = len};
    int32_t ns = get_i32(&b);
    struct spawn_req *req = get_req(&b);
    int32_t total = req != NULL ? get_i32(&b) : -1;
    int *node = total > 0 && total <= BMPI_SPAWN_MAX ? calloc((size_t)total, sizeof(*node)) : NULL;
    for (int32_t i = 0; node != NULL && i < total; i++) {
        node[i] = get_i32(&b);
        b.bad = b.bad || node[i] < 0 || node[i] >= job->nnodes;
    }
    pmix_status_t st = PMIX_ERR_BAD_PARAM;
    int nlocal = 0;
    char nspace[PMIX_MAX_NSLEN + 1];
    if (req != NULL && node != NULL && !b.bad && total == total_procs(req) && total <= job->ranks_cap - job->nranks)
        st = start_namespace(job, req, ns, node, nspace, sizeof(nspace), &nlocal);
    else
        bmpi_say("a malformed spawn from the head: namespace %d not started", (int)ns);
    if (nlocal > 0 || st != PMIX_SUCCESS) {
        struct buf a = {0};
        put_i32(&a, ns);
        put_i32(&a, st);
        if (!a.bad)
            bmpi_tree_send(job->tree, 0, BMPI_WIRE_SPAWN_ACK, a.p, a.len);
        free(a.p);
    }
    free(node);
    if (req != NULL)
        req_free(req);
}

static void on_spawn_done(struct bmpi_job *job, const void *payload, size_t len)
{
    struct buf b = {.p = (char *)payload, .len = len};
    uint64_t id;
    get(&b, &id, sizeof(id));
    int32_t status = get_i32(&b);
    char *nspace = get_str(&b);
    for (struct spawn_req **p = &job->dpm->forwarded; !b.bad && *p != NULL; p = &(*p)->next) {
        struct spawn_req *req = *p;
        if (req->id != id)
            continue;
        *p = req->next;
        if (req->cbfunc != NULL)
            req->cbfunc(status, status == PMIX_SUCCESS ? nspace : NULL, req->cbdata);
        req_free(req);
        break;
    }
    free(nspace);
}

int bmpi_dpm_deliver(struct bmpi_job *job, const struct bmpi_tree_hdr *h, const void *payload)
{
    if (job->dpm == NULL)
        return 0;
    switch (h->type) {
    case BMPI_WIRE_SPAWN_REQ:
        if (job->remote != NULL)
            on_spawn_req(job, h->src, payload, h->len);
        return 1;
    case BMPI_WIRE_SPAWN_NS:
        if (job->daemon != NULL)
            on_spawn_ns(job, payload, h->len);
        return 1;
    case BMPI_WIRE_SPAWN_ACK:
        if (job->remote != NULL)
            on_spawn_ack(job, payload, h->len);
        return 1;
    case BMPI_WIRE_SPAWN_DONE:
        if (job->daemon != NULL)
            on_spawn_done(job, payload, h->len);
        return 1;
    default:
        return 0;
    }
}

/* ---- one host, or where the request arrives ------------------------------------- */

static pmix_status_t spawn_here(struct bmpi_job *job, struct spawn_req *req, char *nspace, size_t nspace_len)
{
    req->home_node = 0;
    pmix_status_t st = check_apps(job, req);
    if (st != PMIX_SUCCESS)
        return st;
    int total = total_procs(req), nlocal;
    int *node = calloc((size_t)total, sizeof(*node)); /* all on node 0 */
    if (node == NULL)
        return PMIX_ERR_NOMEM;
    st = start_namespace(job, req, job->dpm->nspawned + 1, node, nspace, nspace_len, &nlocal);
    free(node);
    return st;
}

void bmpi_dpm_spawn_run(struct bmpi_job *job, void *request)
{
    struct spawn_req *req = request;
    if (job->remote != NULL) {
        head_spawn(job, req, 0, 0);
        return;
    }
    if (job->daemon != NULL) {
        daemon_forward(job, req);
        return;
    }
    char nspace[PMIX_MAX_NSLEN + 1] = "";
    pmix_status_t st = PMIX_ERR_NOT_SUPPORTED;
    if (job->phase == BMPI_PHASE_RUN && !job->failed)
        st = spawn_here(job, req, nspace, sizeof(nspace));
    if (req->cbfunc != NULL)
        req->cbfunc(st, nspace, req->cbdata);
    req_free(req);
}
