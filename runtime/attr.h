/*
 * Attribute caching (runtime/attr.c) on communicators and datatypes.
 */
#ifndef BMPI_RUNTIME_ATTR_H
#define BMPI_RUNTIME_ATTR_H

#include <mpi.h>

struct bmpi_comm;

/* MPI_Comm_dup: run the copy callbacks of old's attributes onto new_c.
 * Returns an MPI error class (a callback's failure) or 0. */
int bmpi_attr_comm_copy(struct bmpi_comm *old, struct bmpi_comm *new_c);
/* MPI_Comm_free: run every delete callback and drop the attributes. */
void bmpi_attr_comm_delete_all(struct bmpi_comm *c);

/* MPI_Finalize, first thing: the standard deletes MPI_COMM_SELF's
 * attributes then (their delete callbacks are the libraries' cleanup hook).
 * To be called from runtime/init.c. */
void bmpi_attr_finalize_self(void);

/*
 * Datatypes have no attribute slot, so their attributes live in a side
 * table keyed by handle here. The datatype code should call these:
 * bmpi_attr_type_copy from MPI_Type_dup (old -> new handle),
 * bmpi_attr_type_delete_all from MPI_Type_free before the handle dies.
 */
int bmpi_attr_type_copy(MPI_Datatype old, MPI_Datatype new_t);
void bmpi_attr_type_delete_all(MPI_Datatype t);

/* MPI_LASTUSEDCODE follows the user error codes (runtime/errors_api.c). */
void bmpi_attr_set_lastusedcode(int code);

#endif
