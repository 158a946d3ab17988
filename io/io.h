/*
 * What the runtime sees of the I/O layer (io/, docs/io.md): the progress of
 * nonblocking file operations, called by the progress engine, and the
 * teardown of files a program left open, called by MPI_Finalize.
 */
#ifndef BMPI_IO_IO_H
#define BMPI_IO_IO_H

#include <mpi.h>

/* Advance pending nonblocking file operations; returns the events handled.
 * Costs one load when none is pending. */
int bmpi_io_progress(void);
/* A file request (kind BMPI_REQ_IO) keeps the file it accesses in its ctx.
 * When it failed, MPI_Wait and friends report errclass for fn through that
 * file's error handler, with the reason recorded when it failed. */
int bmpi_io_report(MPI_File file, int errclass, const char *fn);
/* Close what the program left open (without collective steps) and free the
 * layer's state. */
void bmpi_io_finalize(void);

#endif
