/* Starting the ranks: environment, pipes, process groups, binding,
 * fork/exec. In multi-host mode the per-host daemon runs the same code for
 * the ranks of its host. */
#ifndef BMPI_LAUNCHER_SPAWN_H
#define BMPI_LAUNCHER_SPAWN_H

struct bmpi_job;

/* What a set of processes runs: the job's program (from the options) or
 * an app of PMIx_Spawn (launcher/dpm.c). */
struct bmpi_app {
    const char *path;   /* resolved already */
    char *const *argv;
    const char *wdir;   /* NULL: bmpirun's */
    char *const *env;   /* VAR=value added to the ranks' environment; NULL: none */
    const char *nspace; /* the processes' PMIx namespace */
};

/* Fork every local rank of the job, without waiting for any of them.
 * 0, or -1 after saying why; ranks started before a failure keep running
 * and are the caller's to tear down. */
int bmpi_spawn_all(struct bmpi_job *job);

/* Fork the processes job->ranks[first .. first + n) (set up by the caller,
 * ranks of app->nspace registered with the PMIx server), as
 * bmpi_spawn_all does; no stdin, no binding. 0, or -1 after saying why. */
int bmpi_spawn_ranks(struct bmpi_job *job, int first, int n, const struct bmpi_app *app);

#endif
