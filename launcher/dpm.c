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
 * One host only: a PMIX_HOST naming another host is refused, and so is
 * any spawn of a job across hosts (the head will route a spawn to its
 * daemons; docs/dynamic.md says what that needs). The
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

/* The namespaces spawned so far: labels[k - 1] is " of <namespace k>". */
struct bmpi_dpm {
    int nspawned;
    char **labels;
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

void bmpi_dpm_free(struct bmpi_job *job)
{
    if (job->dpm == NULL)
        return;
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

/* Every host of a comma-separated PMIX_HOST must be this one. */
static pmix_status_t check_hosts(const struct bmpi_job *job, const char *hosts)
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
        if (!bmpi_options_is_this_host(h)) {
            bmpi_say("MPI_Comm_spawn: host '%s' is not this host (%s): spawning on other hosts needs the "
                     "multi-host runner, not built yet",
                     h, job->hostname);
            st = PMIX_ERR_NOT_SUPPORTED;
        }
    }
    free(copy);
    return st;
}

static pmix_status_t check_app(const struct bmpi_job *job, struct spawn_app *app)
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
    pmix_status_t rc = check_hosts(job, app->host);
    return rc == PMIX_SUCCESS ? find_command(app) : rc;
}

/* ---- the namespace ------------------------------------------------------- */

/* "0,1,...,n-1" */
static char *rank_list(int n)
{
    size_t cap = (size_t)n * 12 + 1, off = 0;
    char *s = malloc(cap);
    if (s == NULL)
        return NULL;
    s[0] = '\0';
    for (int i = 0; i < n; i++)
        off += (size_t)snprintf(s + off, cap - off, i ? ",%d" : "%d", i);
    return s;
}

/* What the spawned processes learn of their job: as register_nspace in
 * pmix_server.c gives the job's own ranks, plus PMIX_SPAWNED and
 * PMIX_PARENT_ID, and each process's app number. */
static int register_ns(struct bmpi_job *job, const char *nspace, const struct spawn_req *req, int first, int n)
{
    int rc = -1;
    char *peers = rank_list(n), *nodemap = NULL, *procmap = NULL;
    size_t ninfo = 16 + (size_t)n, k = 0;
    pmix_info_t *info = NULL;
    uint32_t size = (uint32_t)n, zero = 0, one = 1;
    uint32_t univ = (uint32_t)(job->opt.universe_size > n ? job->opt.universe_size : n);
    pmix_rank_t lldr = 0;
    bool yes = true;
    pmix_proc_t parent = req->parent;
    if (peers == NULL || PMIx_generate_regex(job->hostname, &nodemap) != PMIX_SUCCESS ||
        PMIx_generate_ppn(peers, &procmap) != PMIX_SUCCESS)
        goto out;
    PMIX_INFO_CREATE(info, ninfo);
    if (info == NULL)
        goto out;
    PMIX_INFO_LOAD(&info[k++], PMIX_JOBID, nspace, PMIX_STRING);
    PMIX_INFO_LOAD(&info[k++], PMIX_UNIV_SIZE, &univ, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[k++], PMIX_JOB_SIZE, &size, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[k++], PMIX_MAX_PROCS, &size, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[k++], PMIX_NUM_NODES, &one, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[k++], PMIX_NODE_MAP, nodemap, PMIX_REGEX);
    PMIX_INFO_LOAD(&info[k++], PMIX_PROC_MAP, procmap, PMIX_REGEX);
    PMIX_INFO_LOAD(&info[k++], PMIX_LOCAL_SIZE, &size, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[k++], PMIX_LOCAL_PEERS, peers, PMIX_STRING);
    PMIX_INFO_LOAD(&info[k++], PMIX_LOCALLDR, &lldr, PMIX_PROC_RANK);
    PMIX_INFO_LOAD(&info[k++], PMIX_NODEID, &zero, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[k++], PMIX_HOSTNAME, job->hostname, PMIX_STRING);
    PMIX_INFO_LOAD(&info[k++], PMIX_SPAWNED, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&info[k++], PMIX_PARENT_ID, &parent, PMIX_PROC);
    for (int i = 0; i < n; i++) {
        const struct bmpi_rank *r = &job->ranks[first + i];
        pmix_rank_t rank = (pmix_rank_t)r->rank;
        uint16_t lrank = (uint16_t)r->local_rank;
        uint32_t appnum = (uint32_t)r->node; /* spawn_run keeps the app's number there */
        pmix_info_t *pd;
        size_t m = 0;
        PMIX_INFO_CREATE(pd, 7);
        if (pd == NULL)
            goto out;
        PMIX_INFO_LOAD(&pd[m++], PMIX_RANK, &rank, PMIX_PROC_RANK);
        PMIX_INFO_LOAD(&pd[m++], PMIX_LOCAL_RANK, &lrank, PMIX_UINT16);
        PMIX_INFO_LOAD(&pd[m++], PMIX_NODE_RANK, &lrank, PMIX_UINT16);
        PMIX_INFO_LOAD(&pd[m++], PMIX_NODEID, &zero, PMIX_UINT32);
        PMIX_INFO_LOAD(&pd[m++], PMIX_HOSTNAME, job->hostname, PMIX_STRING);
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
    free(nodemap);
    free(procmap);
    return rc;
}

/* The entries job->ranks[first ..] of namespace ns, app by app. */
static void add_ranks(struct bmpi_job *job, const struct spawn_req *req, int ns, int first)
{
    int i = first, rank = 0;
    for (size_t a = 0; a < req->napps; a++) {
        for (int p = 0; p < req->apps[a].maxprocs; p++, i++, rank++) {
            struct bmpi_rank *r = &job->ranks[i];
            memset(r, 0, sizeof(*r));
            r->job = job;
            r->rank = rank;
            r->ns = ns;
            r->local_rank = rank;
            r->node = (int)a; /* the app's number until registered, then 0 */
            r->state = BMPI_RANK_PENDING;
            atomic_init(&r->connected, false);
            atomic_init(&r->finalized, false);
            for (int s = 0; s < BMPI_NSTREAMS; s++) {
                bmpi_iof_stream_init(&r->out[s]);
                r->out[s].ns = ns;
            }
        }
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
                                     .wdir = app->wdir,
                                     .env = app->env,
                                     .nspace = nspace};
        if (bmpi_spawn_ranks(job, first, app->maxprocs, &run) != 0)
            return -1;
        first += app->maxprocs;
    }
    return 0;
}

static pmix_status_t spawn_checked(struct bmpi_job *job, struct spawn_req *req, char *nspace, size_t nspace_len)
{
    long total = 0;
    for (size_t a = 0; a < req->napps; a++) {
        pmix_status_t st = check_app(job, &req->apps[a]);
        if (st != PMIX_SUCCESS)
            return st;
        total += req->apps[a].maxprocs;
    }
    if (total > job->ranks_cap - job->nranks) {
        bmpi_say("MPI_Comm_spawn: %ld more processes asked for, room is left for %d (a job spawns at most %d "
                 "over its life)",
                 total, job->ranks_cap - job->nranks, BMPI_SPAWN_MAX);
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    struct bmpi_dpm *d = job->dpm;
    char **labels = realloc(d->labels, (size_t)(d->nspawned + 1) * sizeof(*labels));
    if (labels == NULL)
        return PMIX_ERR_NOMEM;
    d->labels = labels;
    int ns = d->nspawned + 1;
    if (snprintf(nspace, nspace_len, "%.200s.%d", job->nspace, ns) >= (int)nspace_len)
        return PMIX_ERR_BAD_PARAM; /* job->nspace is bmpi.<pid>.<hex>: never */
    if (asprintf(&labels[ns - 1], " of %s", nspace) < 0)
        return PMIX_ERR_NOMEM;
    d->nspawned = ns;
    int first = job->nranks;
    add_ranks(job, req, ns, first);
    if (register_ns(job, nspace, req, first, (int)total) != 0)
        return PMIX_ERR_OUT_OF_RESOURCE;
    for (int i = first; i < first + (int)total; i++)
        job->ranks[i].node = 0;
    /* from here they are ranks the loop watches, started or not */
    job->nranks += (int)total;
    return fork_apps(job, req, nspace, first) == 0 ? PMIX_SUCCESS : PMIX_ERR_OUT_OF_RESOURCE;
}

void bmpi_dpm_spawn_run(struct bmpi_job *job, void *request)
{
    struct spawn_req *req = request;
    char nspace[PMIX_MAX_NSLEN + 1] = "";
    pmix_status_t st = PMIX_ERR_NOT_SUPPORTED;
    if (job->opt.multi_host || job->daemon != NULL)
        bmpi_say("MPI_Comm_spawn: this job runs across hosts, and spawning from such a job is not built yet");
    else if (job->phase == BMPI_PHASE_RUN && !job->failed)
        st = spawn_checked(job, req, nspace, sizeof(nspace));
    if (req->cbfunc != NULL)
        req->cbfunc(st, nspace, req->cbdata);
    req_free(req);
}
