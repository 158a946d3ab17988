/* The head's side of a job across hosts: starting one daemon per other
 * host through the launch agent (or srun inside a Slurm allocation),
 * handing each the bootstrap on its stdin, the launch tree's root, and
 * what the daemons report (their ranks' starts, output, exits, aborts,
 * connections) fed into the job as if the ranks were local. */
#ifndef BMPI_LAUNCHER_REMOTE_H
#define BMPI_LAUNCHER_REMOTE_H

#include <sys/types.h>

struct bmpi_job;

/* Start the daemons (after the head's own PMIx server). 0, or -1 after
 * saying why. */
int bmpi_remote_start(struct bmpi_job *job);
/* Every rank has ended: tell the daemons to clean up and wait (bounded)
 * for them to exit. */
void bmpi_remote_finish(struct bmpi_job *job);
void bmpi_remote_free(struct bmpi_job *job);

/* The job ends: hosts whose daemon has not joined yet are given up (their
 * agents stopped, their ranks counted as gone). */
void bmpi_remote_abandon_unjoined(struct bmpi_job *job);
/* A signal for every rank on the other hosts. */
void bmpi_remote_signal(struct bmpi_job *job, int sig);
/* Rank 0 (on another host) is gone: stop reading stdin for it. */
void bmpi_remote_stdin_stop(struct bmpi_job *job);
/* A child of the head that is not a rank ended: a launch agent. */
void bmpi_remote_reaped(struct bmpi_job *job, pid_t pid, int wstatus);

#endif
