/*
 * fortran/f08ts.c: the choice buffers of mpi_f08 (fortran/f08ts.h).
 */
#include <ISO_Fortran_binding.h>

#include "fortran/f08ts.h"
#include "runtime/lang.h"

/* MPI_BOTTOM or MPI_IN_PLACE of mpi_f08, by the address of its variable. */
static int sentinel(const CFI_cdesc_t *d, MPI_Count count, MPI_Datatype type,
                    struct bmpi_f08_buffer *b)
{
    void *buf = bmpi_f_buf(&bmpi_f08_sentinels, d->base_addr);
    if (buf == d->base_addr)
        return 0;
    *b = (struct bmpi_f08_buffer){.buf = buf, .count = count, .type = type};
    return 1;
}

int bmpi_f08_buffer(const CFI_cdesc_t *d, MPI_Count count, MPI_Datatype type,
                    struct bmpi_f08_buffer *b, MPI_Comm comm, const char *fn)
{
    if (sentinel(d, count, type, b))
        return MPI_SUCCESS;
    int rc = bmpi_f08_buffer_from_cdesc(d, count, type, b);
    return rc == MPI_SUCCESS ? rc : bmpi_lang_err_report(comm, rc, fn);
}

int bmpi_f08_buffer_contig(const CFI_cdesc_t *d, struct bmpi_f08_buffer *b, MPI_Comm comm,
                           const char *fn)
{
    if (sentinel(d, 0, MPI_DATATYPE_NULL, b))
        return MPI_SUCCESS;
    *b = (struct bmpi_f08_buffer){.buf = d->base_addr, .type = MPI_DATATYPE_NULL};
    if (d->rank == 0 || CFI_is_contiguous(d))
        return MPI_SUCCESS;
    return bmpi_lang_err_report(
        comm,
        bmpi_lang_err_set(MPI_ERR_BUFFER, "a non-contiguous array section, which this call "
                                          "cannot take: its counts or displacements address "
                                          "the elements of a contiguous buffer"),
        fn);
}
