/*
 * Connecting jobs (runtime/dpm.c, docs/dynamic.md): what MPI_Finalize
 * needs of it.
 */
#ifndef BMPI_RUNTIME_DPM_H
#define BMPI_RUNTIME_DPM_H

/* In MPI_Init, once MPI runs: a spawned job connects to its parent. */
int bmpi_dpm_init(void);
/* Close the ports the program left open. */
void bmpi_dpm_finalize(void);

#endif
