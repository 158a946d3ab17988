/*
 * fortran/f08ts.h: what the generated fortran/glue_f08ts.c needs: the
 * bodies' sentinels (fortran/glue.h) and mpi_f08's choice buffers as C
 * buffers (fortran/cdesc.h), with MPI_BOTTOM and MPI_IN_PLACE recognised
 * first and errors reported as C's entry points report them.
 */
#ifndef BMPI_FORTRAN_F08TS_H
#define BMPI_FORTRAN_F08TS_H

#include "fortran/cdesc.h"
#include "fortran/glue.h"

/* Buffer d of count elements of type for MPI call fn: a non-contiguous
 * section becomes a datatype (b->count 1). Errors go through comm's handler. */
int bmpi_f08_buffer(const CFI_cdesc_t *d, MPI_Count count, MPI_Datatype type,
                    struct bmpi_f08_buffer *b, MPI_Comm comm, const char *fn);
/* A buffer whose elements the call addresses by counts and displacements,
 * or that shares its count and datatype with another (v and w collectives,
 * reductions, windows ...): the call needs it contiguous. A non-contiguous
 * section is refused when tmp is NULL (a nonblocking call, which would use
 * a copy after it returns), else copied into *tmp (malloc'ed), which
 * bmpi_f08_copy_back returns to it after the call. */
int bmpi_f08_buffer_contig(const CFI_cdesc_t *d, struct bmpi_f08_buffer *b, void **tmp,
                           MPI_Comm comm, const char *fn);
/* A buffer of which the call takes the address only (MPI_Get_address ...). */
void bmpi_f08_buffer_address(const CFI_cdesc_t *d, struct bmpi_f08_buffer *b);
/* Copy *tmp back into section d when out, and free it. */
void bmpi_f08_copy_back(const CFI_cdesc_t *d, void **tmp, int out);

#endif
