/*
 * Error handler objects: the three predefined ones (MPI_ERRORS_ARE_FATAL,
 * MPI_ERRORS_RETURN, MPI_ERRORS_ABORT) and user handlers created with
 * MPI_Comm/Win/File_create_errhandler.
 */
#ifndef BMPI_RUNTIME_ERRHANDLER_H
#define BMPI_RUNTIME_ERRHANDLER_H

#include <stdbool.h>
#include <mpi.h>

#include "runtime/lang.h"

enum bmpi_errh_kind { BMPI_ERRH_COMM, BMPI_ERRH_WIN, BMPI_ERRH_FILE, BMPI_ERRH_SESSION };

struct bmpi_errhandler {
    MPI_Errhandler handle;
    int refcount;
    enum bmpi_errh_kind kind;
    enum bmpi_lang lang; /* fn's ABI */
    void (*fn)(void);    /* the user's function, called with the kind's signature */
};

/* True for a predefined handle or a live user handle. */
bool bmpi_errhandler_valid(MPI_Errhandler h);
/* True for a predefined handle or a live user handle made for objects of kind. */
bool bmpi_errhandler_valid_for(MPI_Errhandler h, enum bmpi_errh_kind kind);
struct bmpi_errhandler *bmpi_errhandler_get(MPI_Errhandler h);
void bmpi_errhandler_retain(MPI_Errhandler h);
void bmpi_errhandler_release(MPI_Errhandler h);
void bmpi_errhandler_finalize(void);
/* Run user handler eh for error code on the object whose handle is at obj. */
void bmpi_errhandler_call(const struct bmpi_errhandler *eh, void *obj, int code);

#endif
