/* The PMIx server side of bmpirun: libpmix server init, the job's namespace
 * (sizes, node and proc maps, per-rank data), the clients, the environment
 * a rank needs to find the server, and the server-module upcalls (connect,
 * finalize, abort, fence, direct modex). */
#ifndef BMPI_LAUNCHER_PMIX_SERVER_H
#define BMPI_LAUNCHER_PMIX_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bmpi_job;

/* Print the PMIx versions bmpirun was built with and runs with. */
void bmpi_pmix_print_version(void);
/* 0 if the library bmpirun runs with speaks the PMIx it was built for;
 * otherwise says why and returns -1. */
int bmpi_pmix_check_version(void);

/* Start the server in job->tmpdir and register job->nspace with every rank
 * as a client. 0 or -1 (after saying why). */
int bmpi_pmix_start(struct bmpi_job *job);
/* Add what rank of namespace nspace needs to reach the server to *env (a
 * malloc'd, NULL-terminated array of malloc'd strings; it may be
 * realloc'd). */
int bmpi_pmix_setup_fork(const char *nspace, int rank, char ***env);
/* The job this process's server serves, for upcalls that carry no
 * context of ours (launcher/names.c, launcher/dpm.c); NULL before the
 * server starts. */
struct bmpi_job *bmpi_pmix_served_job(void);
/* Register a spawned namespace described by info, its processes being
 * job->ranks[first .. first + n); those of this host become clients. 0
 * or -1 (after saying why). */
struct pmix_info;
int bmpi_pmix_register_spawned(struct bmpi_job *job, const char *nspace, struct pmix_info *info, size_t ninfo,
                               int first, int n);
/* Another host asked (fence.c) for rank's data of nspace: the library
 * answers; the answer goes back to vertex requester through the job's
 * event pipe (BMPI_EV_DMODEX_DATA). */
void bmpi_pmix_dmodex_serve(struct bmpi_job *job, const char *nspace, int rank, uint64_t id, int requester);
/* Undo bmpi_pmix_start (whatever part of it happened), within
 * BMPI_PMIX_STOP_MS. False when the library could not be stopped (or was
 * better not: see pmix_server.c): its thread may still run and use the
 * job, so bmpirun must then _exit without freeing anything. */
bool bmpi_pmix_stop(struct bmpi_job *job);

#endif
