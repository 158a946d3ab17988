/*
 * Transport lifecycle and per-peer selection: self for oneself, shm for a
 * peer on the same node (same PMIx node id), then the network transports.
 * BMPI_TRANSPORT (a comma-separated list) restricts the candidates.
 */
#ifndef BMPI_RUNTIME_TL_SELECT_H
#define BMPI_RUNTIME_TL_SELECT_H

int bmpi_tl_init(void);
void bmpi_tl_finalize(void);
/* Progress every open transport; returns events handled. */
int bmpi_tl_progress(void);

/*
 * Processes of other jobs (docs/dynamic.md "Transports"): they join the
 * peer table at indices from the world size up, reached through a
 * transport with BMPI_TL_OTHER_JOBS, from their card.
 */
#include <stddef.h>
#include <stdint.h>

#include "transport/transport.h"

/* A process card: the transport's name and its card. */
#define BMPI_CARD_MAX (2 + 16 + BMPI_TL_CARD_MAX)

/* Open a transport that reaches other jobs unless one is open; the error
 * names every transport and why it cannot. */
int bmpi_tl_open_other_jobs(void);
/* This process's card (at most BMPI_CARD_MAX bytes); after
 * bmpi_tl_open_other_jobs. */
int bmpi_tl_card(void *buf, size_t *len);
/* The peer index of rank job_rank of job `job`: a world rank for this
 * job, else the index it has or now gets from its card. */
int bmpi_tl_add_process(uint64_t job, int job_rank, const void *card, size_t len, int *index);
/* The peer index of (job, job_rank), -1 if it is not a peer. */
int bmpi_proc_index(uint64_t job, int job_rank);
/* Does process index a come before b in an order every job agrees on
 * (job id, then rank)? */
int bmpi_proc_before(int a, int b);

#endif
