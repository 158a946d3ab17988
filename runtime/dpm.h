/*
 * Connecting jobs (runtime/dpm.c, docs/dynamic.md): what MPI_Finalize
 * needs of it.
 */
#ifndef BMPI_RUNTIME_DPM_H
#define BMPI_RUNTIME_DPM_H

/* Close the ports the program left open. */
void bmpi_dpm_finalize(void);

#endif
