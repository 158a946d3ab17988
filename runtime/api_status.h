/*
 * What bmpi implements of the MPI API, chapter by chapter: the table that
 * tools/gen-api-status generates into runtime/api_unimplemented.c from
 * the same list as its stubs, the feature macros of mpi.h and
 * docs/api-status.md, so MPI_Get_library_version and bmpi_info tell what
 * is missing without a second list.
 */
#ifndef BMPI_RUNTIME_API_STATUS_H
#define BMPI_RUNTIME_API_STATUS_H

#include <stddef.h>

struct bmpi_api_chapter {
    const char *title; /* as mpi.h marks it: "12. One-Sided Communications" */
    int declared;      /* functions mpi.h declares in it */
    int nstubs;        /* of which stubs */
    const char *const *stubs; /* their names, NULL-terminated */
};

/* In header order, ended by an entry whose title is NULL. */
extern const struct bmpi_api_chapter bmpi_api_chapters[];

/* The title without its number: "One-Sided Communications". */
const char *bmpi_api_chapter_name(const struct bmpi_api_chapter *ch);

/* Appends to buf (a string of at most len bytes with its NUL) what is
 * missing: "; stubs (MPI_ERR_UNSUPPORTED_OPERATION): One-Sided
 * Communications 36/36, ..." or nothing when every function is there.
 * Returns the length the whole string would have, as snprintf. */
size_t bmpi_api_missing(char *buf, size_t len);

#endif
