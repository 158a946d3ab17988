/*
 * Error reporting.
 *
 * Internal functions return one status type: 0 (BMPI_OK) or an MPI error
 * class (always positive, from mpi.h). The first place that detects an error
 * records why with bmpi_err_set(); MPI entry points turn a status into a call
 * of the right error handler with bmpi_err_comm() and friends, which print
 * "MPI_Send: invalid rank 7 (communicator size 4)" under MPI_ERRORS_ARE_FATAL
 * and return the code under MPI_ERRORS_RETURN.
 */
#ifndef BMPI_RUNTIME_ERROR_H
#define BMPI_RUNTIME_ERROR_H

#include <stdarg.h>

#include <mpi.h>

#define BMPI_OK 0

#if defined(__GNUC__)
#define BMPI_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define BMPI_PRINTF(f, a)
#endif

/* Remember why an internal operation failed (per process; last one wins).
 * Returns errclass so that `return bmpi_err_set(MPI_ERR_NO_MEM, ...)` reads well. */
int bmpi_err_set(int errclass, const char *fmt, ...) BMPI_PRINTF(2, 3);
/* The reason recorded by the last bmpi_err_set(), "" if none. */
const char *bmpi_err_reason(void);

/* Report errclass for MPI function fn through the error handler of comm
 * (MPI_COMM_WORLD's before init and for MPI_COMM_NULL). fmt describes the bad
 * value; NULL means "use the reason recorded by bmpi_err_set()". Returns the
 * code the MPI function must return. Under MPI_ERRORS_ARE_FATAL and
 * MPI_ERRORS_ABORT it prints one line and aborts the job; it does not return. */
int bmpi_err_comm(MPI_Comm comm, int errclass, const char *fn, const char *fmt, ...)
    BMPI_PRINTF(4, 5);
/* The same through window win's error handler (MPI_COMM_SELF's for
 * MPI_WIN_NULL and any invalid handle); runtime/win.h's bmpi_err_win_obj
 * takes the window itself. */
int bmpi_err_win(MPI_Win win, int errclass, const char *fn, const char *fmt, ...)
    BMPI_PRINTF(4, 5);
/* The same through error handler h on file `file`: the I/O layer keeps
 * files' handlers (io/file.h, bmpi_err_file_obj). */
int bmpi_err_vfile(MPI_Errhandler h, MPI_File file, int errclass, const char *fn, const char *fmt, va_list ap)
    BMPI_PRINTF(5, 0);
/* Errors not tied to an object (MPI_Init, MPI_Type_*, ...): the handler of
 * MPI_COMM_SELF applies, as the standard says. */
int bmpi_err_noobj(int errclass, const char *fn, const char *fmt, ...) BMPI_PRINTF(3, 4);

/* The generic text of an error class. */
const char *bmpi_err_class_string(int errclass);

/* An MPI function declared in mpi.h that bmpi does not implement yet. */
int bmpi_err_unsupported(MPI_Comm comm, const char *fn);

#endif
