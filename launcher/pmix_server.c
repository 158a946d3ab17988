/* bmpirun as a PMIx server, on the libpmix server API.
 *
 * What ranks learn from us, and only from us: job size, their rank and
 * local rank, the local peers, node ids and host names (PMIX_NODE_MAP and
 * PMIX_PROC_MAP as regexes: without them clients fail in PMIx_Init), plus
 * whatever they exchange with Put/Commit/Fence/Get, which the library
 * serves by itself.
 *
 * The upcalls run in the library's progress thread. They touch a rank's
 * atomic flags and write events into job->event_pipe, nothing else, and
 * call their callback before returning.
 *
 * Across hosts every host's bmpirun (the head, a daemon) is the server of
 * its own ranks and registers the whole job: every node in PMIX_NODE_MAP,
 * every node's ranks in PMIX_PROC_MAP, node ids from the head's placement.
 * fence_nb and direct_modex then go to the main thread (job->event_pipe)
 * and along the launch tree (launcher/fence.h). */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pmix.h>
#include <pmix_server.h>

#include "launcher/fence.h"
#include "launcher/job.h"
#include "launcher/dpm.h"
#include "launcher/names.h"
#include "launcher/pmix_server.h"

/* ---- versions ----------------------------------------------------------- */

void bmpi_pmix_print_version(void)
{
    printf("PMIx built with %ld.%ld.%ld, running with %s\n", (long)PMIX_VERSION_MAJOR,
           (long)PMIX_VERSION_MINOR, (long)PMIX_VERSION_RELEASE, PMIx_Get_version());
}

int bmpi_pmix_check_version(void)
{
    const char *v = PMIx_Get_version();
    const char *p = v;
    while (*p && (*p < '0' || *p > '9'))
        p++;
    long major = strtol(p, NULL, 10);
    if (major != PMIX_VERSION_MAJOR) {
        bmpi_say("bmpirun was built with PMIx %ld.%ld.%ld but runs with '%s'; the major versions "
                 "must match: rebuild bmpi against the installed PMIx, or install PMIx %ld",
                 (long)PMIX_VERSION_MAJOR, (long)PMIX_VERSION_MINOR, (long)PMIX_VERSION_RELEASE, v,
                 (long)PMIX_VERSION_MAJOR);
        return -1;
    }
    return 0;
}

/* ---- waiting for the library's callbacks ---------------------------------- */

/* Counts callbacks still to come. Heap-allocated: after a timeout the
 * library may still call back, so a latch that timed out is left behind. */
struct latch {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int pending;
    pmix_status_t status;
};

static struct latch *latch_new(int pending)
{
    struct latch *l = calloc(1, sizeof(*l));
    if (l == NULL)
        return NULL;
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&l->cond, &attr);
    pthread_condattr_destroy(&attr);
    pthread_mutex_init(&l->lock, NULL);
    l->pending = pending;
    l->status = PMIX_SUCCESS;
    return l;
}

static void latch_free(struct latch *l)
{
    pthread_cond_destroy(&l->cond);
    pthread_mutex_destroy(&l->lock);
    free(l);
}

static void latch_cb(pmix_status_t status, void *cbdata)
{
    struct latch *l = cbdata;
    pthread_mutex_lock(&l->lock);
    if (status != PMIX_SUCCESS && l->status == PMIX_SUCCESS)
        l->status = status;
    l->pending--;
    pthread_cond_broadcast(&l->cond);
    pthread_mutex_unlock(&l->lock);
}

/* A call returned rc: if it completed at once, count that as its callback. */
static void latch_account(struct latch *l, pmix_status_t rc)
{
    if (rc != PMIX_SUCCESS)
        latch_cb(rc == PMIX_OPERATION_SUCCEEDED ? PMIX_SUCCESS : rc, l);
}

/* Wait for every callback, at most ms. On timeout the latch is abandoned
 * (PMIX_ERR_TIMEOUT), otherwise freed. */
static pmix_status_t latch_wait_ms(struct latch *l, long ms)
{
    struct timespec deadline;
    bmpi_deadline_in(&deadline, ms);
    pmix_status_t st;
    int rc = 0;
    pthread_mutex_lock(&l->lock);
    while (l->pending > 0 && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&l->cond, &l->lock, &deadline);
    bool done = l->pending <= 0;
    st = l->status;
    pthread_mutex_unlock(&l->lock);
    if (!done)
        return PMIX_ERR_TIMEOUT;
    latch_free(l);
    return st;
}

/* latch_wait_ms for BMPI_PMIX_WAIT_MS; what names the operation for the
 * message on timeout. */
static pmix_status_t latch_wait(struct latch *l, const char *what)
{
    pmix_status_t st = latch_wait_ms(l, BMPI_PMIX_WAIT_MS);
    if (st == PMIX_ERR_TIMEOUT)
        bmpi_say("the PMIx server library did not finish to %s within %d s; giving up (is the "
                 "machine overloaded? run with PMIX_MCA_pmix_server_base_verbose=5 to see why)",
                 what, BMPI_PMIX_WAIT_MS / 1000);
    return st;
}

/* ---- upcalls (PMIx progress thread) ---------------------------------------- */

/* The job this process serves. libpmix gives the fence, modex, publish,
 * lookup, unpublish and spawn upcalls no context of ours (the others get
 * the rank as server_object; names.c and dpm.c ask bmpi_pmix_served_job),
 * and a process runs one server: the one piece of file-scope state here.
 * Set before the server starts, never changed while it runs. */
static struct bmpi_job *pmix_server_job;

struct bmpi_job *bmpi_pmix_served_job(void)
{
    return pmix_server_job;
}

/* Hand an event to the main loop (job->event_pipe); false if it could not
 * (the caller still owns ev->data). */
static bool post_event(struct bmpi_job *job, struct bmpi_event *ev)
{
    ssize_t n;
    do
        n = write(job->event_pipe[1], ev, sizeof(*ev));
    while (n < 0 && errno == EINTR);
    if (n != (ssize_t)sizeof(*ev)) {
        free(ev->msg);
        return false;
    }
    return true;
}

static pmix_status_t up_client_connected(const pmix_proc_t *proc, void *server_object,
                                         pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    struct bmpi_rank *r = server_object;
    if (r != NULL) {
        atomic_store(&r->connected, true);
        struct bmpi_event ev = {.type = BMPI_EV_CONNECTED, .rank = (int)(r - r->job->ranks)};
        post_event(r->job, &ev);
    }
    if (cbfunc != NULL)
        cbfunc(PMIX_SUCCESS, cbdata);
    return PMIX_SUCCESS;
}

static pmix_status_t up_client_finalized(const pmix_proc_t *proc, void *server_object,
                                         pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    struct bmpi_rank *r = server_object;
    if (r != NULL) {
        atomic_store(&r->finalized, true);
        bmpi_names_proc_gone(r->job, proc);
        if (r->job->daemon != NULL) {
            struct bmpi_event ev = {.type = BMPI_EV_FINALIZED, .rank = (int)(r - r->job->ranks)};
            post_event(r->job, &ev);
        }
    }
    if (cbfunc != NULL)
        cbfunc(PMIX_SUCCESS, cbdata);
    return PMIX_SUCCESS;
}

/* PMIx_Abort (MPI_Abort). Whatever procs it names, the whole job ends: a
 * rank killed by the abort would end it anyway. The event is written before
 * the client is released, so the main loop always sees the abort before
 * the rank's exit. */
static pmix_status_t up_abort(const pmix_proc_t *proc, void *server_object, int status,
                              const char msg[], pmix_proc_t procs[], size_t nprocs,
                              pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    struct bmpi_rank *r = server_object;
    if (r == NULL)
        return PMIX_ERR_NOT_FOUND; /* not one of our ranks: nothing to kill */
    struct bmpi_event ev = {
        .type = BMPI_EV_ABORT,
        .rank = (int)(r - r->job->ranks),
        .status = status,
        .msg = msg != NULL ? strdup(msg) : NULL,
    };
    post_event(r->job, &ev);
    if (cbfunc != NULL)
        cbfunc(PMIX_SUCCESS, cbdata);
    return PMIX_SUCCESS;
}

static void release_blob(void *cbdata)
{
    free(cbdata);
}

/* The library's callback and its argument, for fence.c's completion. */
struct modex_cb {
    pmix_modex_cbfunc_t cbfunc;
    void *cbdata;
};

static void modex_done(void *arg, int status, const char *data, size_t len)
{
    struct modex_cb *cb = arg;
    char *copy = NULL;
    if (status == 0 && len > 0 && (copy = malloc(len)) == NULL)
        status = PMIX_ERR_NOMEM;
    if (copy != NULL)
        memcpy(copy, data, len);
    cb->cbfunc(status == 0 ? PMIX_SUCCESS : status, copy, copy ? len : 0, cb->cbdata, release_blob, copy);
    free(cb);
}

/* "nspace:rank,nspace:*": the procs a fence names. */
static char *fence_signature(const pmix_proc_t procs[], size_t nprocs)
{
    size_t cap = nprocs * (PMIX_MAX_NSLEN + 16) + 1, off = 0;
    char *sig = malloc(cap);
    if (sig == NULL)
        return NULL;
    sig[0] = '\0';
    for (size_t i = 0; i < nprocs; i++) {
        if (PMIX_RANK_WILDCARD == procs[i].rank)
            off += (size_t)snprintf(sig + off, cap - off, "%s%s:*", i ? "," : "", procs[i].nspace);
        else
            off += (size_t)snprintf(sig + off, cap - off, "%s%s:%u", i ? "," : "", procs[i].nspace,
                                    (unsigned)procs[i].rank);
    }
    return sig;
}

/* Across hosts: the fence goes along the launch tree (launcher/fence.h)
 * and the main thread calls cbfunc with every server's data. On one host
 * the library short-circuits local fences and rarely calls this (it does
 * after a client is lost); what it hands us is then all there is: give it
 * straight back. The copy outlives this call because the library reads it
 * from its own thread later. */
static pmix_status_t up_fence_nb(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                                 size_t ninfo, char *data, size_t ndata, pmix_modex_cbfunc_t cbfunc,
                                 void *cbdata)
{
    struct bmpi_job *job = pmix_server_job;
    char *copy = NULL;
    if (ndata > 0) {
        if ((copy = malloc(ndata)) == NULL)
            return PMIX_ERR_NOMEM;
        memcpy(copy, data, ndata);
    }
    if (job == NULL || job->nvertices == 1) {
        cbfunc(PMIX_SUCCESS, copy, ndata, cbdata, release_blob, copy);
        return PMIX_SUCCESS;
    }
    struct bmpi_fence_req *req = calloc(1, sizeof(*req));
    struct modex_cb *cb = calloc(1, sizeof(*cb));
    if (req == NULL || cb == NULL || (req->sig = fence_signature(procs, nprocs)) == NULL) {
        free(req);
        free(cb);
        free(copy);
        return PMIX_ERR_NOMEM;
    }
    *cb = (struct modex_cb){.cbfunc = cbfunc, .cbdata = cbdata};
    req->data = copy;
    req->len = ndata;
    req->done = modex_done;
    req->arg = cb;
    struct bmpi_event ev = {.type = BMPI_EV_FENCE, .rank = -1, .data = req};
    if (!post_event(job, &ev)) {
        free(req->sig);
        free(req);
        free(cb);
        free(copy);
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    return PMIX_SUCCESS;
}

/* The library asks the host only for procs on other hosts: across hosts
 * the daemon of the rank's host answers (launcher/fence.h). With one host
 * there are none: answer "not found" through the callback (some library
 * versions ignore the return value and would wait forever). */
static pmix_status_t up_direct_modex(const pmix_proc_t *proc, const pmix_info_t info[], size_t ninfo,
                                     pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
    struct bmpi_job *job = pmix_server_job;
    if (cbfunc == NULL)
        return PMIX_SUCCESS;
    struct bmpi_dmodex_req *req = job != NULL && job->nvertices > 1 ? calloc(1, sizeof(*req)) : NULL;
    struct modex_cb *cb = req != NULL ? calloc(1, sizeof(*cb)) : NULL;
    if (cb == NULL) {
        free(req);
        cbfunc(PMIX_ERR_NOT_FOUND, NULL, 0, cbdata, NULL, NULL);
        return PMIX_SUCCESS;
    }
    *cb = (struct modex_cb){.cbfunc = cbfunc, .cbdata = cbdata};
    snprintf(req->nspace, sizeof(req->nspace), "%s", proc->nspace);
    req->rank = (int)proc->rank;
    req->done = modex_done;
    req->arg = cb;
    struct bmpi_event ev = {.type = BMPI_EV_DMODEX, .rank = -1, .data = req};
    if (!post_event(job, &ev)) {
        free(req);
        free(cb);
        cbfunc(PMIX_ERR_NOT_FOUND, NULL, 0, cbdata, NULL, NULL);
    }
    return PMIX_SUCCESS;
}

/* Another host wants a rank of ours: the library answers in its thread. */
struct dmodex_serve {
    struct bmpi_job *job;
    uint64_t id;
    int requester;
};

static void dmodex_served(pmix_status_t status, char *data, size_t size, void *cbdata)
{
    struct dmodex_serve *sv = cbdata;
    struct bmpi_dmodex_data *d = calloc(1, sizeof(*d));
    if (d != NULL) {
        *d = (struct bmpi_dmodex_data){.id = sv->id, .requester = sv->requester, .status = status};
        if (status == PMIX_SUCCESS && size > 0 && (d->data = malloc(size)) != NULL) {
            memcpy(d->data, data, size);
            d->len = size;
        } else if (status == PMIX_SUCCESS && size > 0) {
            d->status = PMIX_ERR_NOMEM;
        }
        struct bmpi_event ev = {.type = BMPI_EV_DMODEX_DATA, .rank = -1, .data = d};
        if (!post_event(sv->job, &ev)) {
            free(d->data);
            free(d);
        }
    }
    free(sv);
}

void bmpi_pmix_dmodex_serve(struct bmpi_job *job, const char *nspace, int rank, uint64_t id, int requester)
{
    struct dmodex_serve *sv = calloc(1, sizeof(*sv));
    pmix_proc_t proc;
    pmix_status_t st = PMIX_ERR_NOMEM;
    if (sv != NULL) {
        *sv = (struct dmodex_serve){.job = job, .id = id, .requester = requester};
        PMIX_LOAD_PROCID(&proc, nspace, (pmix_rank_t)rank);
        st = PMIx_server_dmodex_request(&proc, dmodex_served, sv);
        if (st == PMIX_SUCCESS)
            return;
        free(sv);
    }
    struct bmpi_dmodex_data *d = calloc(1, sizeof(*d));
    if (d != NULL) {
        *d = (struct bmpi_dmodex_data){.id = id, .requester = requester, .status = st};
        bmpi_fence_dmodex_answer(job, d);
    }
}

/* ---- namespace ------------------------------------------------------------ */

/* "0,1,2,..." of the ranks of node. */
static char *node_ranks(const struct bmpi_job *job, int node)
{
    size_t cap = (size_t)job->nranks * 12 + 1, off = 0;
    char *s = malloc(cap);
    if (s == NULL)
        return NULL;
    s[0] = '\0';
    for (int i = 0; i < job->nranks; i++)
        if (job->ranks[i].node == node)
            off += (size_t)snprintf(s + off, cap - off, off ? ",%d" : "%d", job->ranks[i].rank);
    return s;
}

/* PMIx_generate_regex's and _ppn's inputs: "h1,h2" and "0,1;2,3" (a list
 * of ranks per node, not a range: the library counts the entries to find
 * PMIX_LOCAL_SIZE). */
static int job_maps(const struct bmpi_job *job, char **nodes, char **ppn)
{
    size_t ncap = 1, pcap = 1;
    for (int n = 0; n < job->nnodes; n++)
        ncap += strlen(job->node_names[n]) + 1;
    pcap += (size_t)job->nranks * 12 + (size_t)job->nnodes;
    *nodes = calloc(ncap, 1);
    *ppn = calloc(pcap, 1);
    if (*nodes == NULL || *ppn == NULL)
        return -1;
    for (int n = 0; n < job->nnodes; n++) {
        char *ranks = node_ranks(job, n);
        if (ranks == NULL)
            return -1;
        if (n > 0) {
            strcat(*nodes, ",");
            strcat(*ppn, ";");
        }
        strcat(*nodes, job->node_names[n]);
        strcat(*ppn, ranks);
        free(ranks);
    }
    return 0;
}

/* What the library needs to know of every rank (PMIX_RANK first: it files
 * the rest under it). */
static void load_rank_data(const struct bmpi_job *job, const struct bmpi_rank *r, pmix_info_t *info)
{
    pmix_rank_t rank = (pmix_rank_t)r->rank;
    uint16_t lrank = (uint16_t)r->local_rank;
    uint32_t nodeid = (uint32_t)r->node, zero = 0;
    pmix_data_array_t darray;
    pmix_info_t *pd;
    size_t k = 0;
    PMIX_INFO_CREATE(pd, 7);
    if (pd == NULL)
        return;
    PMIX_INFO_LOAD(&pd[k++], PMIX_RANK, &rank, PMIX_PROC_RANK);
    PMIX_INFO_LOAD(&pd[k++], PMIX_LOCAL_RANK, &lrank, PMIX_UINT16);
    PMIX_INFO_LOAD(&pd[k++], PMIX_NODE_RANK, &lrank, PMIX_UINT16);
    PMIX_INFO_LOAD(&pd[k++], PMIX_NODEID, &nodeid, PMIX_UINT32);
    PMIX_INFO_LOAD(&pd[k++], PMIX_HOSTNAME, job->rank_host[r->rank], PMIX_STRING);
    PMIX_INFO_LOAD(&pd[k++], PMIX_APPNUM, &zero, PMIX_UINT32);
    PMIX_INFO_LOAD(&pd[k++], PMIX_GLOBAL_RANK, &rank, PMIX_PROC_RANK);
    darray.type = PMIX_INFO;
    darray.size = k;
    darray.array = pd;
    PMIX_INFO_LOAD(info, PMIX_PROC_DATA, &darray, PMIX_DATA_ARRAY);
    PMIX_INFO_FREE(pd, 7);
}

static int register_nspace(struct bmpi_job *job)
{
    int rc = -1;
    char *nodemap = NULL, *procmap = NULL, *peers = NULL, *nodes_in = NULL, *ppn_in = NULL;
    pmix_info_t *info = NULL;
    size_t ninfo = 0, n = 0;
    int self_node = job->self_node;
    uint32_t size = (uint32_t)job->nranks, nlocal = (uint32_t)job->nlocal, zero = 0;
    uint32_t nnodes = (uint32_t)job->nnodes, nodeid = (uint32_t)(self_node >= 0 ? self_node : 0);
    uint32_t univ = (uint32_t)(job->opt.universe_size > job->nranks ? job->opt.universe_size : job->nranks);
    pmix_rank_t lldr = 0;
    pmix_status_t st;

    if ((peers = node_ranks(job, self_node)) == NULL || job_maps(job, &nodes_in, &ppn_in) != 0)
        goto nomem;
    for (int i = 0; i < job->nranks; i++)
        if (job->ranks[i].node == self_node) {
            lldr = (pmix_rank_t)i;
            break;
        }
    if ((st = PMIx_generate_regex(nodes_in, &nodemap)) != PMIX_SUCCESS ||
        (st = PMIx_generate_ppn(ppn_in, &procmap)) != PMIX_SUCCESS) {
        bmpi_say("PMIx cannot encode the node map of the job (hosts %s, ranks %s): %s", nodes_in, ppn_in,
                 PMIx_Error_string(st));
        goto out;
    }
    ninfo = 13 + (size_t)job->nranks;
    PMIX_INFO_CREATE(info, ninfo);
    if (info == NULL)
        goto nomem;
    PMIX_INFO_LOAD(&info[n++], PMIX_JOBID, job->nspace, PMIX_STRING);
    PMIX_INFO_LOAD(&info[n++], PMIX_UNIV_SIZE, &univ, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[n++], PMIX_JOB_SIZE, &size, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[n++], PMIX_MAX_PROCS, &size, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[n++], PMIX_APPNUM, &zero, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[n++], PMIX_NUM_NODES, &nnodes, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[n++], PMIX_NODE_MAP, nodemap, PMIX_REGEX);
    PMIX_INFO_LOAD(&info[n++], PMIX_PROC_MAP, procmap, PMIX_REGEX);
    /* This host's view. */
    PMIX_INFO_LOAD(&info[n++], PMIX_LOCAL_SIZE, &nlocal, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[n++], PMIX_LOCAL_PEERS, peers, PMIX_STRING);
    PMIX_INFO_LOAD(&info[n++], PMIX_LOCALLDR, &lldr, PMIX_PROC_RANK);
    PMIX_INFO_LOAD(&info[n++], PMIX_NODEID, &nodeid, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[n++], PMIX_HOSTNAME, self_node >= 0 ? job->node_names[self_node] : job->hostname,
                   PMIX_STRING);
    for (int i = 0; i < job->nranks; i++)
        load_rank_data(job, &job->ranks[i], &info[n++]);

    struct latch *l = latch_new(1);
    if (l == NULL)
        goto nomem;
    latch_account(l, PMIx_server_register_nspace(job->nspace, (int)nlocal, info, n, latch_cb, l));
    char what[300];
    snprintf(what, sizeof(what), "register namespace %s", job->nspace);
    if ((st = latch_wait(l, what)) != PMIX_SUCCESS) {
        if (st != PMIX_ERR_TIMEOUT)
            bmpi_say("PMIx cannot register namespace %s: %s", job->nspace, PMIx_Error_string(st));
        goto out;
    }
    job->nspace_registered = true;

    /* Every rank of this host is a client; its struct comes back in every
     * upcall. */
    l = latch_new(job->nlocal);
    if (l == NULL)
        goto nomem;
    for (int i = 0; i < job->nranks; i++) {
        if (!bmpi_rank_is_local(&job->ranks[i]))
            continue;
        pmix_proc_t proc;
        PMIX_LOAD_PROCID(&proc, job->nspace, (pmix_rank_t)job->ranks[i].rank);
        latch_account(l, PMIx_server_register_client(&proc, geteuid(), getegid(), &job->ranks[i],
                                                     latch_cb, l));
    }
    snprintf(what, sizeof(what), "register the %d ranks of namespace %s", job->nlocal, job->nspace);
    if ((st = latch_wait(l, what)) != PMIX_SUCCESS) {
        if (st != PMIX_ERR_TIMEOUT)
            bmpi_say("PMIx cannot register the ranks of namespace %s: %s", job->nspace,
                     PMIx_Error_string(st));
        goto out;
    }
    rc = 0;
    goto out;

nomem:
    bmpi_say("out of memory while registering the job with PMIx");
out:
    if (info != NULL)
        PMIX_INFO_FREE(info, ninfo);
    free(peers);
    free(procmap);
    free(nodemap);
    free(nodes_in);
    free(ppn_in);
    return rc;
}

/* A namespace that PMIx_Spawn asked for (launcher/dpm.c): info describes
 * it, job->ranks[first .. first + n) are its processes. */
int bmpi_pmix_register_spawned(struct bmpi_job *job, const char *nspace, struct pmix_info *info, size_t ninfo,
                               int first, int n)
{
    struct latch *l = latch_new(1);
    if (l == NULL)
        return -1;
    int nlocal = 0;
    for (int i = first; i < first + n; i++)
        nlocal += bmpi_rank_is_local(&job->ranks[i]);
    latch_account(l, PMIx_server_register_nspace(nspace, nlocal, info, ninfo, latch_cb, l));
    char what[300];
    snprintf(what, sizeof(what), "register namespace %s", nspace);
    pmix_status_t st = latch_wait(l, what);
    if (st != PMIX_SUCCESS) {
        if (st != PMIX_ERR_TIMEOUT)
            bmpi_say("PMIx cannot register namespace %s: %s", nspace, PMIx_Error_string(st));
        return -1;
    }
    if ((l = latch_new(nlocal)) == NULL)
        return -1;
    for (int i = first; i < first + n; i++) {
        if (!bmpi_rank_is_local(&job->ranks[i]))
            continue;
        pmix_proc_t proc;
        PMIX_LOAD_PROCID(&proc, nspace, (pmix_rank_t)job->ranks[i].rank);
        latch_account(l, PMIx_server_register_client(&proc, geteuid(), getegid(), &job->ranks[i], latch_cb, l));
    }
    snprintf(what, sizeof(what), "register the %d processes of namespace %s here", nlocal, nspace);
    if ((st = latch_wait(l, what)) != PMIX_SUCCESS) {
        if (st != PMIX_ERR_TIMEOUT)
            bmpi_say("PMIx cannot register the processes of namespace %s: %s", nspace, PMIx_Error_string(st));
        return -1;
    }
    return 0;
}

/* ---- server lifecycle ------------------------------------------------------ */

int bmpi_pmix_start(struct bmpi_job *job)
{
    pmix_info_t info[6];
    size_t n = 0;
    pmix_rank_t srank = 0;
    bool no = false;
    /* The library copies the module. */
    pmix_server_module_t module = {
        .client_connected = up_client_connected,
        .client_finalized = up_client_finalized,
        .abort = up_abort,
        .fence_nb = up_fence_nb,
        .direct_modex = up_direct_modex,
        .publish = bmpi_names_publish,
        .lookup = bmpi_names_lookup,
        .unpublish = bmpi_names_unpublish,
        .spawn = bmpi_dpm_spawn,
    };

    if (bmpi_names_init(job) != 0 || bmpi_dpm_init(job) != 0)
        return -1;
    pmix_server_job = job;
    PMIX_INFO_LOAD(&info[n++], PMIX_SERVER_TMPDIR, job->tmpdir, PMIX_STRING);
    PMIX_INFO_LOAD(&info[n++], PMIX_SYSTEM_TMPDIR, job->tmpdir, PMIX_STRING);
    PMIX_INFO_LOAD(&info[n++], PMIX_SERVER_NSPACE, job->server_nspace, PMIX_STRING);
    PMIX_INFO_LOAD(&info[n++], PMIX_SERVER_RANK, &srank, PMIX_PROC_RANK);
    PMIX_INFO_LOAD(&info[n++], PMIX_SERVER_TOOL_SUPPORT, &no, PMIX_BOOL);
    /* Loopback only. libpmix 4.2.2 has nothing narrower: no per-user
     * socket; it refuses clients whose credentials were not registered. */
    PMIX_INFO_LOAD(&info[n++], PMIX_SERVER_REMOTE_CONNECTIONS, &no, PMIX_BOOL);
    pmix_status_t st = PMIx_server_init(&module, info, n);
    for (size_t i = 0; i < n; i++)
        PMIX_INFO_DESTRUCT(&info[i]);
    if (st != PMIX_SUCCESS) {
        bmpi_say("cannot start the PMIx server (PMIx_server_init in %s): %s; check that %s is "
                 "writable and that loopback TCP works",
                 job->tmpdir, PMIx_Error_string(st), job->tmpdir);
        return -1;
    }
    job->pmix_up = true;
    return register_nspace(job);
}

int bmpi_pmix_setup_fork(const char *nspace, int rank, char ***env)
{
    pmix_proc_t proc;
    PMIX_LOAD_PROCID(&proc, nspace, (pmix_rank_t)rank);
    pmix_status_t st = PMIx_server_setup_fork(&proc, env);
    if (st != PMIX_SUCCESS) {
        bmpi_say("cannot prepare the environment of rank %d of %s (PMIx_server_setup_fork): %s", rank, nspace,
                 PMIx_Error_string(st));
        return -1;
    }
    return 0;
}

/* Deregister the namespace, stop the library. */
static void teardown(struct bmpi_job *job)
{
    if (job->nspace_registered) {
        struct latch *l = latch_new(1);
        if (l != NULL) {
            PMIx_server_deregister_nspace(job->nspace, latch_cb, l);
            char what[300];
            snprintf(what, sizeof(what), "deregister namespace %s", job->nspace);
            (void)latch_wait(l, what);
        }
        job->nspace_registered = false;
    }
    pmix_status_t st = PMIx_server_finalize();
    if (st != PMIX_SUCCESS)
        bmpi_say("stopping the PMIx server failed (PMIx_server_finalize): %s", PMIx_Error_string(st));
}

/* The teardown runs in a thread of its own so that bmpirun can stop
 * waiting for it. Heap-allocated: a teardown that overran is left behind. */
struct stopper {
    struct latch *done;
    struct bmpi_job *job;
};

static void *stopper_main(void *arg)
{
    struct stopper *s = arg;
    teardown(s->job);
    latch_cb(PMIX_SUCCESS, s->done);
    return NULL;
}

/* A rank that ended between PMIx_Init and PMIx_Finalize. */
static bool lost_a_client(const struct bmpi_job *job)
{
    for (int i = 0; i < job->nranks; i++)
        if (atomic_load(&job->ranks[i].connected) && !atomic_load(&job->ranks[i].finalized))
            return true;
    return false;
}

bool bmpi_pmix_stop(struct bmpi_job *job)
{
    if (!job->pmix_up) {
        bmpi_names_free(job);
        bmpi_dpm_free(job);
        return true;
    }
    /* libpmix 4.2.2 handles a lost client in its progress thread for about
     * a second after the loss (its LOST_CONNECTION event comes that late);
     * PMIx_server_finalize meanwhile crashed bmpirun in 1 run of 7 (a rank
     * segfaulting while the others were in a fence). Nothing is lost by
     * not stopping the library then: bmpirun exits next, and all it made
     * is in the job's directory, removed already. */
    if (lost_a_client(job))
        return false;
    struct stopper *s = calloc(1, sizeof(*s));
    pthread_t tid;
    if (s == NULL || (s->done = latch_new(1)) == NULL) {
        free(s);
        return false;
    }
    s->job = job;
    if (pthread_create(&tid, NULL, stopper_main, s) != 0) {
        latch_free(s->done);
        free(s);
        return false;
    }
    /* A local user who connects to the server's port and is refused
     * leaves PMIx_server_finalize hanging (libpmix 4.2.2; Open MPI's mpirun
     * too): give it BMPI_PMIX_STOP_MS, then leave without it. */
    if (latch_wait_ms(s->done, BMPI_PMIX_STOP_MS) != PMIX_SUCCESS) {
        bmpi_say("the PMIx server library did not stop within %d s (PMIx_server_finalize); the job "
                 "is over and cleaned up, so bmpirun exits without it",
                 BMPI_PMIX_STOP_MS / 1000);
        return false;
    }
    pthread_join(tid, NULL);
    free(s);
    job->pmix_up = false;
    bmpi_names_free(job);
    bmpi_dpm_free(job);
    return true;
}
