/*
 * Attribute caching (runtime/attr.c) on communicators, windows and datatypes.
 */
#ifndef BMPI_RUNTIME_ATTR_H
#define BMPI_RUNTIME_ATTR_H

#include <mpi.h>

struct bmpi_comm;
struct bmpi_win;

/* MPI_Comm_dup: run the copy callbacks of old's attributes onto new_c.
 * Returns the code a copy callback failed with (new_c is then left
 * without attributes) or 0. */
int bmpi_attr_comm_copy(struct bmpi_comm *old, struct bmpi_comm *new_c);
/* MPI_Comm_free, before the communicator goes: delete every attribute, the
 * last set first. Returns the code of a failing delete callback (then that
 * attribute and the older ones stay and the communicator must stay too) or
 * 0. */
int bmpi_attr_comm_free(struct bmpi_comm *c);
/* The communicator goes whatever happens (its last reference dropped):
 * every attribute is deleted, failing callbacks notwithstanding. */
void bmpi_attr_comm_delete_all(struct bmpi_comm *c);

/* MPI_Finalize, first thing: the standard deletes MPI_COMM_SELF's
 * attributes then, the last set first (their delete callbacks are the
 * libraries' cleanup hook). All go; a failing callback is reported through
 * MPI_COMM_SELF's error handler and its code returned, else 0. */
int bmpi_attr_finalize_self(void);
/* Frees what is left (MPI_Finalize, after communicators and datatypes). */
void bmpi_attr_finalize(void);

/*
 * Datatypes have no attribute slot, so their attributes live in a side
 * table keyed by handle here. MPI_Type_dup calls bmpi_attr_type_copy (old
 * -> new handle; on failure new_t is left without attributes), MPI_Type_free
 * calls bmpi_attr_type_delete_all before the handle dies; it fails as
 * bmpi_attr_comm_free does, and the type must then stay.
 */
int bmpi_attr_type_copy(MPI_Datatype old, MPI_Datatype new_t);
int bmpi_attr_type_delete_all(MPI_Datatype t);

/* MPI_Win_free, before the window goes: delete every attribute, the last
 * set first. Fails as bmpi_attr_comm_free does, and the window must then
 * stay. */
int bmpi_attr_win_delete_all(struct bmpi_win *w);
/* The window goes whatever happens (MPI_Finalize): every attribute is
 * deleted, failing delete callbacks notwithstanding. Call it before
 * bmpi_attr_finalize. */
void bmpi_attr_win_force_delete_all(struct bmpi_win *w);

/* MPI_LASTUSEDCODE follows the user error codes (runtime/errors_api.c). */
void bmpi_attr_set_lastusedcode(int code);

#endif
