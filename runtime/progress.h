/*
 * The progress engine: polls every open transport and the runtime's own
 * queues. Waiting loops spin while ranks <= cores and yield (then sleep
 * briefly) when the node is oversubscribed, so 8 ranks on 2 cores do not
 * crawl.
 */
#ifndef BMPI_RUNTIME_PROGRESS_H
#define BMPI_RUNTIME_PROGRESS_H

#include <stdbool.h>

/* One pass over everything; returns the number of events handled. */
int bmpi_progress(void);

/* A call a program polls with (MPI_Test, MPI_Iprobe, MPI_Win_sync, ...)
 * found nothing ready after a pass that handled `events`: on an
 * oversubscribed node, when the pass handled none, yield the CPU, since a
 * program polling in a loop would otherwise hold it for a whole time
 * slice while the rank it waits for cannot run (Open MPI's progress does
 * the same). */
void bmpi_progress_missed(int events);

/* One pass of such a call whose result the pass cannot change unless it
 * handles events (the call checked before it): bmpi_progress(), then
 * bmpi_progress_missed(). Returns the events. */
int bmpi_progress_poll(void);

/* Progress until *flag becomes true. */
void bmpi_progress_wait(volatile bool *flag);

/* For loops that wait on something else: call once per idle iteration. */
void bmpi_progress_idle(unsigned *idle_rounds);

#endif
