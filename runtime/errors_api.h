/*
 * User-defined error classes, codes and strings (runtime/errors_api.c),
 * consulted by MPI_Error_class and MPI_Error_string in runtime/error.c.
 */
#ifndef BMPI_RUNTIME_ERRORS_API_H
#define BMPI_RUNTIME_ERRORS_API_H

/* Is code a live user class or code? Then its class and its string ("" if
 * none was added) are stored and 1 is returned; else 0. */
int bmpi_err_user_lookup(int code, int *errclass, const char **string);

#endif
