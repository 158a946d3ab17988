/*
 * fortran/cdesc.h: the choice buffers of mpi_f08 (TYPE(*), DIMENSION(..)),
 * which arrive in C as Fortran 2018 descriptors, as the buffer, count and
 * datatype of the C call.
 *
 * The generated glue recognises MPI_BOTTOM and MPI_IN_PLACE from the base
 * address first, then calls bmpi_f08_buffer_from_cdesc and, once the C call
 * has started, bmpi_f08_buffer_release (a pending nonblocking operation
 * keeps its datatype alive past MPI_Type_free).
 */
#ifndef BMPI_FORTRAN_CDESC_H
#define BMPI_FORTRAN_CDESC_H

#include <ISO_Fortran_binding.h>
#include <mpi.h>

struct bmpi_f08_buffer {
    void *buf;
    MPI_Count count;
    MPI_Datatype type;
    int owns_type;
};

/* contiguous: buf = base_addr, count/type unchanged; non-contiguous
 * section: a derived datatype describing it (owns_type = 1), count 1.
 * Each array element of the section holds elem_len / extent(type)
 * consecutive elements of type; count of them are taken in array element
 * order. Returns 0, or an MPI error class with its reason recorded, which
 * the caller reports through the right handler with
 * bmpi_lang_err_report() (runtime/lang.h). */
int bmpi_f08_buffer_from_cdesc(const CFI_cdesc_t *desc, MPI_Count count, MPI_Datatype type,
                               struct bmpi_f08_buffer *out);
/* MPI_Type_free when owned; safe after a nonblocking call has started */
void bmpi_f08_buffer_release(struct bmpi_f08_buffer *b);

#endif
