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

#endif
