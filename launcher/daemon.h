/* bmpirun --daemon: one per other host of a job across hosts, started by
 * the head through the launch agent. It reads the bootstrap on stdin,
 * joins the launch tree with the job's secret, is the PMIx server of its
 * host's ranks, starts them, and reports everything they do to the head;
 * it kills its ranks and exits when the head (its parent in the tree)
 * goes away. */
#ifndef BMPI_LAUNCHER_DAEMON_H
#define BMPI_LAUNCHER_DAEMON_H

struct bmpi_job;
struct bmpi_event;
struct bmpi_rank;

/* main() of `bmpirun --daemon [--node I]`; returns the exit status. */
int bmpi_daemon_main(int argc, char **argv);
/* A local rank ended (after the reaper's bookkeeping). */
void bmpi_daemon_rank_ended(struct bmpi_job *job, struct bmpi_rank *r);
/* An event of the local PMIx server for the head. */
void bmpi_daemon_forward_event(struct bmpi_job *job, const struct bmpi_event *ev);

#endif
