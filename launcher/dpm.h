/* Spawning (launcher/dpm.c, docs/dynamic.md): the PMIx server's spawn
 * upcall, and the new namespaces' processes, which follow the job's own
 * in job->ranks and are tracked like them. */
#ifndef BMPI_LAUNCHER_DPM_H
#define BMPI_LAUNCHER_DPM_H

#include <pmix_server.h>

struct bmpi_job;
struct bmpi_rank;

/* Processes a job may spawn over its life (room in job->ranks). */
#define BMPI_SPAWN_MAX 1024

/* Create job->dpm (before the PMIx server starts); 0, or -1 after saying
 * why. */
int bmpi_dpm_init(struct bmpi_job *job);
/* Free job->dpm (after the PMIx server has stopped). */
void bmpi_dpm_free(struct bmpi_job *job);

/* The upcall (PMIx progress thread): copies the request and hands it to
 * the main loop (BMPI_EV_SPAWN). */
pmix_status_t bmpi_dpm_spawn(const pmix_proc_t *proc, const pmix_info_t job_info[], size_t ninfo,
                             const pmix_app_t apps[], size_t napps, pmix_spawn_cbfunc_t cbfunc, void *cbdata);
/* Main thread: register the namespace, fork its processes, answer the
 * request (and free it), whatever happens. */
void bmpi_dpm_spawn_run(struct bmpi_job *job, void *request);

/* A spawn message of the launch tree (launcher/wire.h); 1 if it was one. */
struct bmpi_tree_hdr;
int bmpi_dpm_deliver(struct bmpi_job *job, const struct bmpi_tree_hdr *h, const void *payload);

/* "" for a rank of the job, " of <namespace>" for a spawned process. */
const char *bmpi_dpm_label(const struct bmpi_job *job, const struct bmpi_rank *r);

#endif
