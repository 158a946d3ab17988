/*
 * Info objects (runtime/info.c): ordered (key, value) string pairs. Other
 * runtime code holds them by pointer (a communicator's hints), the user by
 * handle.
 */
#ifndef BMPI_RUNTIME_INFO_H
#define BMPI_RUNTIME_INFO_H

#include <mpi.h>

struct bmpi_info;

/* The object behind a handle: a user info or MPI_INFO_ENV; NULL for
 * MPI_INFO_NULL and invalid handles. */
struct bmpi_info *bmpi_info_lookup(MPI_Info h);
/* A copy of src (NULL: an empty info); NULL when out of memory. */
struct bmpi_info *bmpi_info_clone(const struct bmpi_info *src);
void bmpi_info_destroy(struct bmpi_info *info);
/* Frees the info objects the program left (MPI_Finalize). */
void bmpi_info_finalize(void);
/* Give info (now owned by the handle) a new user handle. */
int bmpi_info_make_handle(struct bmpi_info *info, MPI_Info *out);
/* The value of key, NULL if unset. */
const char *bmpi_info_value(const struct bmpi_info *info, const char *key);

#endif
