/*
 * The PMIx client side of bootstrap. Every rank is a plain PMIx client, so
 * the same binary starts under bmpirun, Slurm's srun --mpi=pmix and Open
 * MPI's mpirun.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pmix.h>

#include "runtime/error.h"
#include "runtime/pmix.h"
#include "runtime/world.h"

/* Default for every bootstrap wait; BMPI_BOOTSTRAP_TIMEOUT overrides. */
#define BOOTSTRAP_TIMEOUT_S 120

static struct {
    pmix_proc_t me;
    pmix_proc_t wildcard;
    int timeout_s;
    uint32_t nfences; /* fences begun, FENCE_KEY's value */
    /* a singleton keeps its own puts */
    struct singleton_kv { char *key; void *data; size_t len; } *kv;
    int nkv;
} boot;

static int pmix_fail(const char *what, pmix_status_t rc)
{
    return bmpi_err_set(MPI_ERR_OTHER, "%s failed: %s", what, PMIx_Error_string(rc));
}

/* Each rank puts the number of the fence it enters under this key, local
 * scope: peers on its host see it at once, so a fence that timed out can
 * name the ranks of this host that never reached it. */
#define FENCE_KEY "bmpi.fence"

/* Get key of proc as an unsigned integer of whatever width PMIx gave it;
 * immediate: only what the local server has now, without waiting. */
static pmix_status_t get_uint_how(const pmix_proc_t *proc, const char *key, bool immediate, uint32_t *out)
{
    pmix_value_t *val = NULL;
    pmix_info_t info;
    if (immediate)
        PMIX_INFO_LOAD(&info, PMIX_IMMEDIATE, &immediate, PMIX_BOOL);
    else
        PMIX_INFO_LOAD(&info, PMIX_TIMEOUT, &boot.timeout_s, PMIX_INT);
    pmix_status_t rc = PMIx_Get(proc, key, &info, 1, &val);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS)
        return rc;
    switch (val->type) {
    case PMIX_UINT32: *out = val->data.uint32; break;
    case PMIX_UINT16: *out = val->data.uint16; break;
    case PMIX_INT: *out = (uint32_t)val->data.integer; break;
    case PMIX_UINT64: *out = (uint32_t)val->data.uint64; break;
    case PMIX_PROC_RANK: *out = val->data.rank; break;
    default: rc = PMIX_ERR_TYPE_MISMATCH; break;
    }
    PMIX_VALUE_RELEASE(val);
    return rc;
}

static pmix_status_t get_uint(const pmix_proc_t *proc, const char *key, uint32_t *out)
{
    return get_uint_how(proc, key, false, out);
}

static pmix_status_t get_string(const pmix_proc_t *proc, const char *key, char **out)
{
    pmix_value_t *val = NULL;
    pmix_status_t rc = PMIx_Get(proc, key, NULL, 0, &val);
    if (rc != PMIX_SUCCESS)
        return rc;
    if (val->type == PMIX_STRING && val->data.string)
        *out = strdup(val->data.string);
    else
        rc = PMIX_ERR_TYPE_MISMATCH;
    PMIX_VALUE_RELEASE(val);
    return rc;
}

/* PMIX_LOCAL_PEERS is "r0,r1,...": the world ranks on this node. */
static int parse_local_peers(const char *list)
{
    int n = 1;
    for (const char *p = list; *p; p++)
        n += *p == ',';
    bmpi_world.local_peers = calloc((size_t)n, sizeof(int));
    if (!bmpi_world.local_peers)
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory");
    int count = 0;
    for (const char *p = list; *p;) {
        char *end;
        long r = strtol(p, &end, 10);
        if (end == p)
            break;
        bmpi_world.local_peers[count++] = (int)r;
        p = *end == ',' ? end + 1 : end;
    }
    bmpi_world.local_size = count;
    return BMPI_OK;
}

static int init_singleton(void)
{
    bmpi_world.singleton = true;
    bmpi_world.rank = 0;
    bmpi_world.size = 1;
    bmpi_world.universe_size = 1;
    bmpi_world.local_rank = 0;
    bmpi_world.local_size = 1;
    bmpi_world.nodeid = 0;
    snprintf(bmpi_world.nspace, sizeof(bmpi_world.nspace), "singleton.%ld", (long)getpid());
    bmpi_world.local_peers = calloc(1, sizeof(int));
    bmpi_world.peers = calloc(1, sizeof(*bmpi_world.peers));
    if (!bmpi_world.local_peers || !bmpi_world.peers)
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory");
    return BMPI_OK;
}

/* Node id of every rank. Launchers that do not give PMIX_NODEID per rank
 * still give PMIX_LOCAL_PEERS: then "on my node" is all we can know, and
 * all we need (shared memory is chosen per node). */
static int fill_node_ids(void)
{
    bmpi_world.peers = calloc((size_t)bmpi_world.size, sizeof(*bmpi_world.peers));
    if (!bmpi_world.peers)
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory");
    uint32_t mine;
    bool have_mine = get_uint(&boot.me, PMIX_NODEID, &mine) == PMIX_SUCCESS;
    bool have_ids = have_mine;
    bmpi_world.nodeid = have_ids ? mine : 0;
    for (int r = 0; r < bmpi_world.size; r++) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, boot.me.nspace, (pmix_rank_t)r);
        uint32_t id;
        if (have_ids && get_uint(&p, PMIX_NODEID, &id) == PMIX_SUCCESS) {
            bmpi_world.peers[r].nodeid = id;
            continue;
        }
        have_ids = false;
        bmpi_world.peers[r].nodeid = UINT32_MAX; /* "elsewhere" until proven local */
    }
    if (!have_ids) {
        /* Open MPI 4.1 gives PMIX_NODEID of the local procs only: keep our
         * own, so that what is named after it (shm segments, in a /dev/shm
         * that simulated hosts share) differs between nodes. */
        uint32_t me_id = have_mine ? mine : 0;
        bmpi_world.nodeid = me_id;
        for (int r = 0; r < bmpi_world.size; r++)
            bmpi_world.peers[r].nodeid = me_id + 1;
        for (int i = 0; i < bmpi_world.local_size; i++)
            bmpi_world.peers[bmpi_world.local_peers[i]].nodeid = me_id;
    }
    return BMPI_OK;
}

uint64_t bmpi_job_id(const char *nspace)
{
    uint64_t h = 14695981039346656037ull; /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)nspace; *p; p++)
        h = (h ^ *p) * 1099511628211ull;
    return h;
}

/* Every world rank's entry names this job. */
static void name_world_peers(void)
{
    bmpi_world.nprocs = bmpi_world.size;
    /* A singleton's namespace is unique on its host only. */
    char id[sizeof(bmpi_world.nspace) + sizeof(bmpi_world.hostname) + 1];
    snprintf(id, sizeof(id), "%s%s%s", bmpi_world.nspace, bmpi_world.singleton ? "@" : "",
             bmpi_world.singleton ? bmpi_world.hostname : "");
    bmpi_world.job_id = bmpi_job_id(id);
    for (int r = 0; r < bmpi_world.size; r++) {
        bmpi_world.peers[r].job = bmpi_world.job_id;
        bmpi_world.peers[r].job_rank = r;
    }
}

static int init_identity(void);

int bmpi_pmix_init(void)
{
    int err = init_identity();
    if (!err)
        name_world_peers();
    return err;
}

static int init_identity(void)
{
    boot.timeout_s = (int)bmpi_env_uint("BMPI_BOOTSTRAP_TIMEOUT", BOOTSTRAP_TIMEOUT_S);
    if (gethostname(bmpi_world.hostname, sizeof(bmpi_world.hostname) - 1) != 0)
        snprintf(bmpi_world.hostname, sizeof(bmpi_world.hostname), "unknown-host");

    /* No PMIx server told us about itself: run alone, as other MPIs do. */
    if (!getenv("PMIX_NAMESPACE"))
        return init_singleton();

    pmix_status_t rc = PMIx_Init(&boot.me, NULL, 0);
    if (rc != PMIX_SUCCESS)
        return bmpi_err_set(MPI_ERR_OTHER,
                            "PMIx_Init failed (%s): the launcher's PMIx server could not be "
                            "reached; start the program with bmpirun, srun --mpi=pmix or mpirun",
                            PMIx_Error_string(rc));
    PMIX_LOAD_PROCID(&boot.wildcard, boot.me.nspace, PMIX_RANK_WILDCARD);
    snprintf(bmpi_world.nspace, sizeof(bmpi_world.nspace), "%s", boot.me.nspace);
    bmpi_world.rank = (int)boot.me.rank;

    uint32_t size, local_rank;
    if ((rc = get_uint(&boot.wildcard, PMIX_JOB_SIZE, &size)) != PMIX_SUCCESS)
        return pmix_fail("PMIx_Get(PMIX_JOB_SIZE)", rc);
    if ((rc = get_uint(&boot.me, PMIX_LOCAL_RANK, &local_rank)) != PMIX_SUCCESS)
        return pmix_fail("PMIx_Get(PMIX_LOCAL_RANK)", rc);
    bmpi_world.size = (int)size;
    bmpi_world.local_rank = (int)local_rank;
    /* The slots the launcher was given (bmpirun: its host list); a
     * launcher that does not say gets the job's size. */
    uint32_t univ;
    bool have_univ = get_uint(&boot.wildcard, PMIX_UNIV_SIZE, &univ) == PMIX_SUCCESS && univ >= size;
    bmpi_world.universe_size = have_univ && univ <= INT_MAX ? (int)univ : (int)size;
    uint32_t appnum;
    bmpi_world.appnum = get_uint(&boot.me, PMIX_APPNUM, &appnum) == PMIX_SUCCESS && appnum <= INT_MAX ? (int)appnum : 0;

    char *peers = NULL;
    if ((rc = get_string(&boot.wildcard, PMIX_LOCAL_PEERS, &peers)) != PMIX_SUCCESS)
        return pmix_fail("PMIx_Get(PMIX_LOCAL_PEERS)", rc);
    int err = parse_local_peers(peers);
    free(peers);
    if (err)
        return err;
    /* bmpi_world.hostname stays gethostname()'s, as MPI_Get_processor_name
     * is in Open MPI and MPICH: a launcher's PMIX_HOSTNAME is the name its
     * host list gave the node, which may be "localhost" or an address. */
    return fill_node_ids();
}

int bmpi_pmix_put(const char *key, const void *data, size_t len)
{
    if (bmpi_world.singleton) {
        struct singleton_kv *kv = realloc(boot.kv, (size_t)(boot.nkv + 1) * sizeof(*kv));
        if (!kv)
            return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory");
        boot.kv = kv;
        kv[boot.nkv].key = strdup(key);
        kv[boot.nkv].data = malloc(len ? len : 1);
        if (!kv[boot.nkv].key || !kv[boot.nkv].data)
            return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory");
        memcpy(kv[boot.nkv].data, data, len);
        kv[boot.nkv++].len = len;
        return BMPI_OK;
    }
    pmix_value_t val;
    PMIX_VALUE_CONSTRUCT(&val);
    val.type = PMIX_BYTE_OBJECT;
    val.data.bo.bytes = (char *)data;
    val.data.bo.size = len;
    /* PMIx_Put copies the value */
    pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, key, &val);
    if (rc != PMIX_SUCCESS)
        return pmix_fail("PMIx_Put", rc);
    return BMPI_OK;
}

/* "1, 3" of the ranks of this host that have not entered fence number
 * boot.nfences; how many there are. */
static int list_missing(char *buf, size_t size)
{
    size_t off = 0;
    int missing = 0, shown = 0;
    buf[0] = '\0';
    for (int i = 0; i < bmpi_world.local_size; i++) {
        int r = bmpi_world.local_peers[i];
        pmix_proc_t peer;
        uint32_t seq;
        PMIX_LOAD_PROCID(&peer, boot.me.nspace, (pmix_rank_t)r);
        if (r == bmpi_world.rank ||
            (get_uint_how(&peer, FENCE_KEY, true, &seq) == PMIX_SUCCESS && seq >= boot.nfences))
            continue;
        /* room for ", " and a rank, and ", ..." after them */
        if (off + 20 < size) {
            off += (size_t)snprintf(buf + off, size - off, "%s%d", shown ? ", " : "", r);
            shown++;
        }
        missing++;
    }
    if (shown < missing)
        snprintf(buf + off, size - off, ", ...");
    return missing;
}

static int fence_timed_out(void)
{
    /* MPI_Init fences before MPI is running, MPI_Finalize while it is. */
    const char *call = bmpi_initialized() ? "MPI_Finalize" : "MPI_Init";
    char missing[256];
    if (list_missing(missing, sizeof(missing)) > 0)
        return bmpi_err_set(MPI_ERR_OTHER,
                            "PMIx_Fence in %s timed out after %d s: rank(s) %s of this host never "
                            "reached it (stuck, or died before %s; BMPI_BOOTSTRAP_TIMEOUT changes the limit)",
                            call, boot.timeout_s, missing, call);
    return bmpi_err_set(MPI_ERR_OTHER,
                        "PMIx_Fence in %s timed out after %d s waiting for all %d ranks (%s is stuck or died "
                        "before %s; BMPI_BOOTSTRAP_TIMEOUT changes the limit)",
                        call, boot.timeout_s, bmpi_world.size,
                        bmpi_world.local_size < bmpi_world.size ? "every rank of this host reached it: a rank "
                                                                  "of another host"
                                                                : "a rank",
                        call);
}

int bmpi_pmix_fence(void)
{
    if (bmpi_world.singleton)
        return BMPI_OK;
    pmix_value_t seq;
    PMIX_VALUE_CONSTRUCT(&seq);
    seq.type = PMIX_UINT32;
    seq.data.uint32 = ++boot.nfences;
    pmix_status_t rc = PMIx_Put(PMIX_LOCAL, FENCE_KEY, &seq);
    if (rc != PMIX_SUCCESS)
        return pmix_fail("PMIx_Put", rc);
    rc = PMIx_Commit();
    if (rc != PMIX_SUCCESS)
        return pmix_fail("PMIx_Commit", rc);
    pmix_info_t info[2];
    bool collect = true;
    PMIX_INFO_LOAD(&info[0], PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    PMIX_INFO_LOAD(&info[1], PMIX_TIMEOUT, &boot.timeout_s, PMIX_INT);
    rc = PMIx_Fence(NULL, 0, info, 2);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    if (rc == PMIX_ERR_TIMEOUT)
        return fence_timed_out();
    if (rc != PMIX_SUCCESS)
        return pmix_fail("PMIx_Fence", rc);
    return BMPI_OK;
}

int bmpi_pmix_get(int rank, const char *key, void **data, size_t *len)
{
    if (bmpi_world.singleton) {
        for (int i = 0; i < boot.nkv; i++) {
            if (strcmp(boot.kv[i].key, key) != 0)
                continue;
            *data = malloc(boot.kv[i].len ? boot.kv[i].len : 1);
            if (!*data)
                return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory");
            memcpy(*data, boot.kv[i].data, boot.kv[i].len);
            *len = boot.kv[i].len;
            return BMPI_OK;
        }
        return bmpi_err_set(MPI_ERR_OTHER, "key %s was never published", key);
    }
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, boot.me.nspace, (pmix_rank_t)rank);
    pmix_info_t info;
    PMIX_INFO_LOAD(&info, PMIX_TIMEOUT, &boot.timeout_s, PMIX_INT);
    pmix_value_t *val = NULL;
    pmix_status_t rc = PMIx_Get(&p, key, &info, 1, &val);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS)
        return bmpi_err_set(MPI_ERR_OTHER, "PMIx_Get of %s from rank %d failed: %s", key, rank,
                            PMIx_Error_string(rc));
    if (val->type != PMIX_BYTE_OBJECT) {
        PMIX_VALUE_RELEASE(val);
        return bmpi_err_set(MPI_ERR_OTHER, "PMIx_Get of %s from rank %d: not a byte object", key, rank);
    }
    *len = val->data.bo.size;
    *data = malloc(*len ? *len : 1);
    if (*data)
        memcpy(*data, val->data.bo.bytes, *len);
    PMIX_VALUE_RELEASE(val);
    return *data ? BMPI_OK : bmpi_err_set(MPI_ERR_NO_MEM, "out of memory");
}

/* Why the name service failed with rc, as an MPI error class. */
static int name_service_fail(const char *call, const char *service, pmix_status_t rc, int not_found_class)
{
    switch (rc) {
    case PMIX_ERR_NOT_SUPPORTED:
    case PMIX_ERR_NOT_IMPLEMENTED:
        return bmpi_err_set(MPI_ERR_UNSUPPORTED_OPERATION,
                            "%s('%s'): the launcher's PMIx server has no name service (%s)", call,
                            service, PMIx_Error_string(rc));
    case PMIX_ERR_DUPLICATE_KEY:
        return bmpi_err_set(MPI_ERR_SERVICE, "%s: service name '%s' is published already", call, service);
    case PMIX_ERR_NOT_FOUND:
        return bmpi_err_set(not_found_class, "%s: service name '%s' %s", call, service,
                            not_found_class == MPI_ERR_NAME ? "is not published"
                                                            : "was not published by this process");
    default:
        return bmpi_err_set(MPI_ERR_SERVICE, "%s('%s') failed: %s", call, service, PMIx_Error_string(rc));
    }
}

/* Can service be looked for here at all? */
static int check_name_service(const char *service)
{
    if (strlen(service) > PMIX_MAX_KEYLEN)
        return bmpi_err_set(MPI_ERR_ARG, "service name of %zu characters: longer than the %d that PMIx takes",
                            strlen(service), PMIX_MAX_KEYLEN);
    if (!bmpi_world.singleton)
        return BMPI_OK;
    return bmpi_err_set(MPI_ERR_UNSUPPORTED_OPERATION,
                        "service '%s': a singleton has no name service (start the program with "
                        "bmpirun, srun --mpi=pmix or mpirun)",
                        service);
}

int bmpi_pmix_publish(const char *service, const char *value)
{
    int err = check_name_service(service);
    if (err)
        return err;
    pmix_info_t info;
    PMIX_INFO_LOAD(&info, service, value, PMIX_STRING);
    pmix_status_t rc = PMIx_Publish(&info, 1);
    PMIX_INFO_DESTRUCT(&info);
    return rc == PMIX_SUCCESS ? BMPI_OK : name_service_fail("PMIx_Publish", service, rc, MPI_ERR_SERVICE);
}

int bmpi_pmix_lookup(const char *service, char **value)
{
    int err = check_name_service(service);
    if (err)
        return err;
    pmix_pdata_t pdata;
    PMIX_PDATA_CONSTRUCT(&pdata);
    PMIX_LOAD_KEY(pdata.key, service);
    pmix_status_t rc = PMIx_Lookup(&pdata, 1, NULL, 0);
    if (rc != PMIX_SUCCESS)
        err = name_service_fail("PMIx_Lookup", service, rc, MPI_ERR_NAME);
    else if (pdata.value.type != PMIX_STRING || !pdata.value.data.string)
        err = bmpi_err_set(MPI_ERR_NAME, "service name '%s' was published with a value that is not a "
                           "port name (PMIx type %d)", service, (int)pdata.value.type);
    else if (!(*value = strdup(pdata.value.data.string)))
        err = bmpi_err_set(MPI_ERR_NO_MEM, "out of memory");
    PMIX_PDATA_DESTRUCT(&pdata);
    return err;
}

int bmpi_pmix_unpublish(const char *service)
{
    int err = check_name_service(service);
    if (err)
        return err;
    char *keys[2] = {(char *)service, NULL};
    pmix_status_t rc = PMIx_Unpublish(keys, NULL, 0);
    return rc == PMIX_SUCCESS ? BMPI_OK : name_service_fail("PMIx_Unpublish", service, rc, MPI_ERR_SERVICE);
}

/* Which launcher's PMIx server serves us, for messages. */
static const char *launcher_name(void)
{
    if (strncmp(bmpi_world.nspace, "bmpi.", 5) == 0)
        return "bmpirun";
    if (getenv("SLURM_JOB_ID") && getenv("SLURM_STEP_ID"))
        return "Slurm srun";
    if (getenv("OMPI_COMM_WORLD_SIZE") || getenv("PRTE_LAUNCHED"))
        return "Open MPI's mpirun";
    return "the launcher";
}

int bmpi_pmix_spawn(const struct bmpi_spawn_app *apps, int napps)
{
    if (bmpi_world.singleton)
        return bmpi_err_set(MPI_ERR_SPAWN, "a singleton has no launcher to spawn processes (start the program "
                            "with bmpirun)");
    pmix_app_t *papps = calloc((size_t)napps, sizeof(*papps));
    if (!papps)
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory");
    int err = BMPI_OK;
    for (int a = 0; a < napps && !err; a++) {
        pmix_app_t *p = &papps[a];
        p->cmd = (char *)apps[a].cmd;
        p->argv = apps[a].argv;
        p->env = apps[a].env;
        p->maxprocs = apps[a].maxprocs;
        PMIX_INFO_CREATE(p->info, 2);
        if (!p->info) {
            err = bmpi_err_set(MPI_ERR_NO_MEM, "out of memory");
            break;
        }
        if (apps[a].wdir)
            PMIX_INFO_LOAD(&p->info[p->ninfo++], PMIX_WDIR, apps[a].wdir, PMIX_STRING);
        if (apps[a].host)
            PMIX_INFO_LOAD(&p->info[p->ninfo++], PMIX_HOST, apps[a].host, PMIX_STRING);
        if (p->ninfo == 0) {
            /* Open MPI's server reads an empty entry as an unknown key */
            PMIX_INFO_FREE(p->info, 2);
            p->info = NULL;
        }
    }
    pmix_nspace_t child;
    pmix_status_t rc = err ? PMIX_ERROR : PMIx_Spawn(NULL, 0, papps, (size_t)napps, child);
    for (int a = 0; a < napps; a++)
        if (papps[a].info)
            PMIX_INFO_FREE(papps[a].info, 2);
    free(papps);
    if (err)
        return err;
    if (rc == PMIX_ERR_NOT_SUPPORTED || rc == PMIX_ERR_NOT_IMPLEMENTED)
        return bmpi_err_set(MPI_ERR_SPAWN, "the launcher (%s) does not support spawning processes: PMIx_Spawn "
                            "returned %s", launcher_name(), PMIx_Error_string(rc));
    if (rc != PMIX_SUCCESS)
        return bmpi_err_set(MPI_ERR_SPAWN, "%s could not start the processes: PMIx_Spawn returned %s%s",
                            launcher_name(), PMIx_Error_string(rc),
                            strcmp(launcher_name(), "bmpirun") == 0 ? " (bmpirun said why on its stderr)" : "");
    return BMPI_OK;
}

bool bmpi_pmix_spawned(void)
{
    if (bmpi_world.singleton)
        return false;
    pmix_value_t *val = NULL;
    bool spawned = false;
    if (PMIx_Get(&boot.wildcard, PMIX_SPAWNED, NULL, 0, &val) == PMIX_SUCCESS) {
        spawned = val->type == PMIX_BOOL && val->data.flag;
        PMIX_VALUE_RELEASE(val);
    }
    return spawned;
}

void bmpi_pmix_abort(int code, const char *msg)
{
    if (!bmpi_world.singleton && PMIx_Initialized())
        PMIx_Abort(code, msg, NULL, 0);
    _exit(code ? code : 1);
}

int bmpi_pmix_finalize(void)
{
    for (int i = 0; i < boot.nkv; i++) {
        free(boot.kv[i].key);
        free(boot.kv[i].data);
    }
    free(boot.kv);
    boot.kv = NULL;
    boot.nkv = 0;
    if (bmpi_world.singleton)
        return BMPI_OK;
    pmix_status_t rc = PMIx_Finalize(NULL, 0);
    return rc == PMIX_SUCCESS ? BMPI_OK : pmix_fail("PMIx_Finalize", rc);
}
