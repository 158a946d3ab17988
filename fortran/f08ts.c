/*
 * fortran/f08ts.c: the choice buffers of mpi_f08 (fortran/f08ts.h).
 */
#include <ISO_Fortran_binding.h>
#include <stdlib.h>
#include <string.h>

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

void bmpi_f08_buffer_address(const CFI_cdesc_t *d, struct bmpi_f08_buffer *b)
{
    if (!sentinel(d, 0, MPI_DATATYPE_NULL, b))
        *b = (struct bmpi_f08_buffer){.buf = d->base_addr, .type = MPI_DATATYPE_NULL};
}

/* Copy between the elements of section d, in array element order, and
 * contiguous memory at flat. */
static void section_copy(const CFI_cdesc_t *d, char *flat, int to_flat)
{
    CFI_index_t idx[CFI_MAX_RANK] = {0};
    size_t n = 1;
    for (int i = 0; i < d->rank; i++)
        n *= (size_t)d->dim[i].extent;
    for (size_t k = 0; k < n; k++, flat += d->elem_len) {
        char *elem = d->base_addr;
        for (int i = 0; i < d->rank; i++)
            elem += idx[i] * d->dim[i].sm;
        if (to_flat)
            memcpy(flat, elem, d->elem_len);
        else
            memcpy(elem, flat, d->elem_len);
        for (int i = 0; i < d->rank && ++idx[i] == d->dim[i].extent; i++)
            idx[i] = 0;
    }
}

static size_t section_bytes(const CFI_cdesc_t *d)
{
    size_t n = d->elem_len;
    for (int i = 0; i < d->rank; i++)
        n *= (size_t)d->dim[i].extent;
    return n;
}

int bmpi_f08_buffer_contig(const CFI_cdesc_t *d, struct bmpi_f08_buffer *b, void **tmp,
                           MPI_Comm comm, const char *fn)
{
    if (tmp)
        *tmp = NULL;
    if (sentinel(d, 0, MPI_DATATYPE_NULL, b))
        return MPI_SUCCESS;
    *b = (struct bmpi_f08_buffer){.buf = d->base_addr, .type = MPI_DATATYPE_NULL};
    if (d->rank == 0 || CFI_is_contiguous(d))
        return MPI_SUCCESS;
    if (!tmp)
        return bmpi_lang_err_report(
            comm,
            bmpi_lang_err_set(MPI_ERR_BUFFER,
                              "a non-contiguous array section, which this nonblocking call "
                              "cannot take: its counts, displacements or shared datatype "
                              "address the elements of a contiguous buffer"),
            fn);
    /* +1: never malloc(0), whose NULL would read as out of memory */
    if (!(*tmp = malloc(section_bytes(d) + 1)))
        return bmpi_lang_err_report(
            comm, bmpi_lang_err_set(MPI_ERR_NO_MEM, "no memory to copy an array section"), fn);
    section_copy(d, *tmp, 1);
    b->buf = *tmp;
    return MPI_SUCCESS;
}

void bmpi_f08_copy_back(const CFI_cdesc_t *d, void **tmp, int out)
{
    if (*tmp && out)
        section_copy(d, *tmp, 0);
    free(*tmp);
    *tmp = NULL;
}
