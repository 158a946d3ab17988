/* bmpirun's name service: the store behind PMIx_Publish, PMIx_Lookup and
 * PMIx_Unpublish (MPI_Publish_name and friends), served by the upcalls of
 * pmix_server.c. docs/dynamic.md "Name service" says what range and
 * persistence mean in one bmpirun.
 *
 * Threads: the upcalls run in the PMIx library's progress thread; the
 * store has its own lock, so that the main thread may create and free it. */
#ifndef BMPI_LAUNCHER_NAMES_H
#define BMPI_LAUNCHER_NAMES_H

#include <pmix_server.h>

struct bmpi_job;

/* Create job->names (before the PMIx server starts). 0, or -1 after
 * saying why. */
int bmpi_names_init(struct bmpi_job *job);
/* Free job->names (after the PMIx server has stopped). */
void bmpi_names_free(struct bmpi_job *job);

/* The server-module upcalls. */
pmix_status_t bmpi_names_publish(const pmix_proc_t *proc, const pmix_info_t info[], size_t ninfo,
                                 pmix_op_cbfunc_t cbfunc, void *cbdata);
pmix_status_t bmpi_names_lookup(const pmix_proc_t *proc, char **keys, const pmix_info_t info[],
                                size_t ninfo, pmix_lookup_cbfunc_t cbfunc, void *cbdata);
pmix_status_t bmpi_names_unpublish(const pmix_proc_t *proc, char **keys, const pmix_info_t info[],
                                   size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata);

/* proc has finalized or is gone: drop what it published with
 * PMIX_PERSIST_PROC. */
void bmpi_names_proc_gone(struct bmpi_job *job, const pmix_proc_t *proc);

#endif
