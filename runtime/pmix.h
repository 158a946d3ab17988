/*
 * Bootstrap through the PMIx client API: who we are, where the peers are,
 * and the exchange of transport addresses (Put/Commit/Fence/Get).
 *
 * Started without any launcher (no PMIX_NAMESPACE in the environment) the
 * process runs as a singleton: size 1, and put/get work on a local store.
 */
#ifndef BMPI_RUNTIME_PMIX_H
#define BMPI_RUNTIME_PMIX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Fills the identity fields of bmpi_world (rank, size, local ranks, node
 * ids, hostname, nspace). */
int bmpi_pmix_init(void);
/* The id of a job among all that may connect (a hash of its namespace). */
uint64_t bmpi_job_id(const char *nspace);
int bmpi_pmix_finalize(void);

/* Publish a blob under key (visible to every rank after bmpi_pmix_fence). */
int bmpi_pmix_put(const char *key, const void *data, size_t len);
/* Commit and wait for every rank, collecting the published data. */
int bmpi_pmix_fence(void);
/* Fetch rank's blob for key; *data is malloc'd, the caller frees it. */
int bmpi_pmix_get(int rank, const char *key, void **data, size_t *len);

/* The launcher's name service (MPI_Publish_name and friends, docs/
 * dynamic.md): a string value under a service name, session-wide. Status:
 * BMPI_OK; MPI_ERR_SERVICE (publish: the name is taken; unpublish: this
 * process did not publish it); MPI_ERR_NAME (lookup: nobody published
 * it); MPI_ERR_UNSUPPORTED_OPERATION when the launcher has no name service
 * (a singleton, or a launcher that does not implement the upcalls). */
int bmpi_pmix_publish(const char *service, const char *value);
/* *value is malloc'd, the caller frees it. */
int bmpi_pmix_lookup(const char *service, char **value);
int bmpi_pmix_unpublish(const char *service);

/* One app of a spawn (runtime/dpm.c). */
struct bmpi_spawn_app {
    const char *cmd;
    char **argv;        /* NULL-terminated, argv[0] the command */
    int maxprocs;
    const char *wdir;   /* PMIX_WDIR, or NULL */
    const char *host;   /* PMIX_HOST, or NULL */
    char **env;         /* "VAR=value" for the new processes, NULL-terminated */
};
/* PMIx_Spawn: the processes start, or MPI_ERR_SPAWN with the launcher's
 * reason (a launcher without spawn support says so). */
int bmpi_pmix_spawn(const struct bmpi_spawn_app *apps, int napps);

/* Was this job started by PMIx_Spawn (PMIX_SPAWNED)? */
bool bmpi_pmix_spawned(void);

/* Ask the launcher to kill the whole job with exit status code. Does not
 * return under a launcher; a singleton exits. */
void bmpi_pmix_abort(int code, const char *msg);

#endif
