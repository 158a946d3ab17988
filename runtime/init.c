/*
 * MPI_Init and MPI_Finalize, and the small environment queries.
 */
#include "config.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pmix.h>

#include "io/io.h"
#include "runtime/api.h"
#include "runtime/api_status.h"
#include "runtime/attr.h"
#include "runtime/comm.h"
#include "runtime/datatype.h"
#include "runtime/dpm.h"
#include "runtime/errhandler.h"
#include "runtime/group_api.h"
#include "runtime/info.h"
#include "runtime/match.h"
#include "runtime/op.h"
#include "runtime/p2p.h"
#include "runtime/pmix.h"
#include "runtime/progress.h"
#include "runtime/request.h"
#include "runtime/tl_select.h"
#include "runtime/win.h"
#include "runtime/world.h"

struct bmpi_world bmpi_world;

/* Cores this process may run on: more local ranks than that and spinning
 * only steals the CPU from the rank we wait for. */
static int usable_cores(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

static int detect_oversubscription(void)
{
    int force = bmpi_env_switch("BMPI_OVERSUBSCRIBED");
    if (force >= 0)
        return force;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    int cores = online > 0 ? (int)online : usable_cores();
    return bmpi_world.local_size > cores;
}

static int init_runtime(int required, int *provided)
{
    bmpi_world.verbose = (int)bmpi_env_uint("BMPI_VERBOSE", 0);
    bmpi_world.main_thread = pthread_self();
    /* One thread calls MPI at a time under FUNNELED and SERIALIZED; bmpi
     * has no locks yet, so MULTIPLE is not offered. */
    bmpi_world.thread_level = required > MPI_THREAD_SERIALIZED ? MPI_THREAD_SERIALIZED : required;
    if (provided)
        *provided = bmpi_world.thread_level;

    int err;
    if ((err = bmpi_pmix_init()) != BMPI_OK)
        return err;
    /* after PMIx, so that the message names the rank and host */
    if ((err = bmpi_env_check()) != BMPI_OK)
        return err;
    bmpi_world.oversubscribed = detect_oversubscription();
    if ((err = bmpi_dt_init()) != BMPI_OK)
        return err;
    if ((err = bmpi_comm_init()) != BMPI_OK)
        return err;
    if ((err = bmpi_tl_init()) != BMPI_OK)
        return err;
    bmpi_world.state = BMPI_STATE_RUNNING;
    /* a spawned job's parent: collective, so MPI must be running */
    if ((err = bmpi_dpm_init()) != BMPI_OK)
        return err;
    return BMPI_OK;
}

static int init_checked(int required, int *provided, const char *fn)
{
    if (bmpi_world.state != BMPI_STATE_NEW)
        return bmpi_err_noobj(MPI_ERR_OTHER, fn,
                              bmpi_world.state == BMPI_STATE_RUNNING ? "MPI is already initialized"
                                                                     : "MPI was finalized; it cannot be initialized again");
    int err = init_runtime(required, provided);
    if (err)
        return bmpi_err_noobj(err, fn, NULL);
    return MPI_SUCCESS;
}

BMPI_API(MPI_Init)
int PMPI_Init(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return init_checked(MPI_THREAD_SINGLE, NULL, "MPI_Init");
}

BMPI_API(MPI_Init_thread)
int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    (void)argc;
    (void)argv;
    if (required < MPI_THREAD_SINGLE || required > MPI_THREAD_MULTIPLE)
        return bmpi_err_noobj(MPI_ERR_ARG, "MPI_Init_thread", "invalid thread level %d", required);
    if (!provided)
        return bmpi_err_noobj(MPI_ERR_ARG, "MPI_Init_thread", "provided is NULL");
    return init_checked(required, provided, "MPI_Init_thread");
}

BMPI_API(MPI_Finalize)
int PMPI_Finalize(void)
{
    if (!bmpi_initialized())
        return bmpi_err_noobj(MPI_ERR_OTHER, "MPI_Finalize", "MPI is not initialized");
    /* The standard deletes MPI_COMM_SELF's attributes first, while MPI is
     * still fully usable: libraries hang their cleanup on that. */
    int self_err = bmpi_attr_finalize_self();
    /* files the program left open: their descriptors and objects */
    bmpi_io_finalize();
    /* Every rank must be done with every other rank's memory and segments
     * before any of them tears down its transports. */
    int err = bmpi_p2p_drain();
    if (!err)
        err = bmpi_pmix_fence();
    /* windows the program left hold registrations and node regions */
    bmpi_win_finalize();
    bmpi_tl_finalize();
    bmpi_dpm_finalize();
    bmpi_comm_finalize();
    bmpi_group_finalize();
    bmpi_request_finalize();
    bmpi_match_finalize();
    bmpi_dt_finalize();
    bmpi_attr_finalize();
    bmpi_op_finalize();
    bmpi_info_finalize();
    bmpi_errhandler_finalize();
    bmpi_world.state = BMPI_STATE_FINALIZED;
    int perr = bmpi_pmix_finalize();
    free(bmpi_world.local_peers);
    free(bmpi_world.peers);
    bmpi_world.local_peers = NULL;
    bmpi_world.peers = NULL;
    if (err || perr)
        return bmpi_err_noobj(err ? err : perr, "MPI_Finalize", NULL);
    return self_err;
}

BMPI_API(MPI_Initialized)
int PMPI_Initialized(int *flag)
{
    if (!flag)
        return bmpi_err_noobj(MPI_ERR_ARG, "MPI_Initialized", "flag is NULL");
    *flag = bmpi_world.state != BMPI_STATE_NEW;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Finalized)
int PMPI_Finalized(int *flag)
{
    if (!flag)
        return bmpi_err_noobj(MPI_ERR_ARG, "MPI_Finalized", "flag is NULL");
    *flag = bmpi_world.state == BMPI_STATE_FINALIZED;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Abort)
int PMPI_Abort(MPI_Comm comm, int errorcode)
{
    (void)comm; /* bmpi aborts the whole job, as most MPIs do */
    char msg[128];
    snprintf(msg, sizeof(msg), "MPI_Abort called by rank %d with error code %d", bmpi_world.rank, errorcode);
    fprintf(stderr, "bmpi: rank %d on %s: %s\n", bmpi_world.rank, bmpi_world.hostname, msg);
    fflush(stdout);
    fflush(stderr);
    bmpi_pmix_abort(errorcode, msg);
    return MPI_SUCCESS; /* not reached */
}

BMPI_API(MPI_Query_thread)
int PMPI_Query_thread(int *provided)
{
    if (!provided)
        return bmpi_err_noobj(MPI_ERR_ARG, "MPI_Query_thread", "provided is NULL");
    *provided = bmpi_world.thread_level;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Is_thread_main)
int PMPI_Is_thread_main(int *flag)
{
    if (!flag)
        return bmpi_err_noobj(MPI_ERR_ARG, "MPI_Is_thread_main", "flag is NULL");
    *flag = pthread_equal(pthread_self(), bmpi_world.main_thread);
    return MPI_SUCCESS;
}

BMPI_API(MPI_Get_processor_name)
int PMPI_Get_processor_name(char *name, int *resultlen)
{
    if (!name || !resultlen)
        return bmpi_err_noobj(MPI_ERR_ARG, "MPI_Get_processor_name", "name or resultlen is NULL");
    if (!bmpi_world.hostname[0] && gethostname(bmpi_world.hostname, sizeof(bmpi_world.hostname) - 1))
        snprintf(bmpi_world.hostname, sizeof(bmpi_world.hostname), "unknown-host");
    int n = snprintf(name, MPI_MAX_PROCESSOR_NAME, "%s", bmpi_world.hostname);
    *resultlen = n < MPI_MAX_PROCESSOR_NAME ? n : MPI_MAX_PROCESSOR_NAME - 1;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Get_version)
int PMPI_Get_version(int *version, int *subversion)
{
    if (!version || !subversion)
        return bmpi_err_noobj(MPI_ERR_ARG, "MPI_Get_version", "version or subversion is NULL");
    *version = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Get_library_version)
int PMPI_Get_library_version(char *version, int *resultlen)
{
    if (!version || !resultlen)
        return bmpi_err_noobj(MPI_ERR_ARG, "MPI_Get_library_version", "version or resultlen is NULL");
    snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING, "bmpi %s (MPI %d.%d, PMIx %s)",
             PACKAGE_VERSION, MPI_VERSION, MPI_SUBVERSION, PMIx_Get_version());
    size_t n = bmpi_api_missing(version, MPI_MAX_LIBRARY_VERSION_STRING);
    *resultlen = n < MPI_MAX_LIBRARY_VERSION_STRING ? (int)n : MPI_MAX_LIBRARY_VERSION_STRING - 1;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Wtime)
double PMPI_Wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

BMPI_API(MPI_Wtick)
double PMPI_Wtick(void)
{
    struct timespec ts;
    clock_getres(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
