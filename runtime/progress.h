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

/* Progress until *flag becomes true. */
void bmpi_progress_wait(volatile bool *flag);

/* For loops that wait on something else: call once per idle iteration. */
void bmpi_progress_idle(unsigned *idle_rounds);

#endif
