/* Starting the ranks: environment, pipes, process groups, binding,
 * fork/exec. In multi-host mode the per-host daemon runs the same code for
 * the ranks of its host. */
#ifndef BMPI_LAUNCHER_SPAWN_H
#define BMPI_LAUNCHER_SPAWN_H

struct bmpi_job;

/* Fork every local rank of the job, without waiting for any of them.
 * 0, or -1 after saying why; ranks started before a failure keep running
 * and are the caller's to tear down. */
int bmpi_spawn_all(struct bmpi_job *job);

#endif
