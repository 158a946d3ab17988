/*
 * fortran/glue.h: what the generated fortran/glue.c needs besides mpi.h:
 * the Fortran sentinels of each binding and the conversions of strings,
 * string arrays, file handles and errors (fortran/support.c).
 */
#ifndef BMPI_FORTRAN_GLUE_H
#define BMPI_FORTRAN_GLUE_H

#include <stddef.h>

#include "fortran/fortran.h"

/*
 * The addresses by which a binding tells MPI_BOTTOM, MPI_IN_PLACE,
 * MPI_STATUS_IGNORE ... from real arguments: the variables of the common
 * blocks of mpif.h (and `use mpi`), or those of mpi_f08_link_constants.
 * A generated body gets the set of the entry point that called it.
 */
struct bmpi_f_sentinels {
    const void *bottom;
    const void *in_place;
    const MPI_Fint *status_ignore;
    const MPI_Fint *statuses_ignore;
    const MPI_Fint *errcodes_ignore;
    const MPI_Fint *unweighted;
    const MPI_Fint *weights_empty;
    const char *argv_null;
    const char *argvs_null;
    /* addresses returned as TYPE(C_PTR) (mpi_f08), where mpif.h has a
     * choice buffer that gets nothing (MPI_BUFFER_DETACH's buffer_addr) */
    int c_ptr_addresses;
};

extern const struct bmpi_f_sentinels bmpi_f77_sentinels;
extern const struct bmpi_f_sentinels bmpi_f08_sentinels;

/* A choice buffer with MPI_BOTTOM and MPI_IN_PLACE translated. */
static inline void *bmpi_f_buf(const struct bmpi_f_sentinels *s, const void *buf)
{
    if (buf == s->bottom)
        return MPI_BOTTOM;
    if (buf == s->in_place)
        return MPI_IN_PLACE;
    return (void *)buf;
}

/* A status, array of statuses, array of error codes with the IGNOREs translated. */
static inline MPI_Status *bmpi_f_status(const struct bmpi_f_sentinels *s, const MPI_Fint *st)
{
    return st == s->status_ignore ? MPI_STATUS_IGNORE : (MPI_Status *)st;
}

static inline MPI_Status *bmpi_f_statuses(const struct bmpi_f_sentinels *s, const MPI_Fint *st)
{
    return st == s->statuses_ignore ? MPI_STATUSES_IGNORE : (MPI_Status *)st;
}

static inline int *bmpi_f_errcodes(const struct bmpi_f_sentinels *s, MPI_Fint *codes)
{
    return codes == s->errcodes_ignore ? MPI_ERRCODES_IGNORE : codes;
}

/* A weights array with MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY translated. */
static inline int *bmpi_f_weights(const struct bmpi_f_sentinels *s, const MPI_Fint *w)
{
    if (w == s->unweighted)
        return MPI_UNWEIGHTED;
    if (w == s->weights_empty)
        return MPI_WEIGHTS_EMPTY;
    return (int *)w;
}

/* Request indices: 0-based in C, 1-based in Fortran, MPI_UNDEFINED in both.
 * The call set them (or they are still the MPI_UNDEFINED of before it). */
static inline void bmpi_f_index_out(MPI_Fint *i, MPI_Fint nrequests)
{
    if (*i >= 0 && *i < nrequests)
        ++*i;
}

static inline void bmpi_f_indices_out(MPI_Fint *a, MPI_Fint n, MPI_Fint nrequests)
{
    for (MPI_Fint i = 0; n <= nrequests && i < n; i++)
        bmpi_f_index_out(&a[i], nrequests);
}

/* Report that the bindings could not allocate their copy of an argument. */
int bmpi_f_nomem(MPI_Comm comm, const char *fn);

/* A CHARACTER input argument as a C string: trailing and leading blanks
 * removed, as MPICH does, never truncated (the C function checks the length
 * as it does for C callers). malloc'ed; NULL when out of memory. */
char *bmpi_f_str_in(const char *s, size_t len);
/* A buffer for a C output string of at most n characters and its null. */
char *bmpi_f_str_buf(size_t n);
/* Copy C string c into the CHARACTER argument s of length len, blank-padded. */
void bmpi_f_str_out(char *s, size_t len, const char *c);
/* The C length (with the null) of a Fortran in/out string length; 0 stays 0. */
int bmpi_f_strlen_in(MPI_Fint flen, size_t len);

/* MPI_File handles: the C handle is a pointer; its Fortran integer comes
 * from MPI_File_c2f (io/file.c: the file table index + 1, 0 for
 * MPI_FILE_NULL). */
MPI_File bmpi_f_file_f2c(MPI_Fint f);
MPI_Fint bmpi_f_file_c2f(MPI_File f);

/* The string arrays of MPI_Comm_spawn (argv: blank-terminated list) and
 * MPI_Comm_spawn_multiple (commands(n); argvs(n, *): column i is the argv of
 * command i). Each returns 1 and sets *out (NULL for MPI_ARGV(S)_NULL), or 0
 * when out of memory; the _free ones take what the _in ones made. */
int bmpi_f_argv_in(const struct bmpi_f_sentinels *s, const char *f, size_t len, MPI_Fint n,
                   char ***out);
int bmpi_f_commands_in(const struct bmpi_f_sentinels *s, const char *f, size_t len, MPI_Fint n,
                       char ***out);
int bmpi_f_argvs_in(const struct bmpi_f_sentinels *s, const char *f, size_t len, MPI_Fint n,
                    char ****out);
void bmpi_f_argv_free(char **argv, MPI_Fint n);
void bmpi_f_commands_free(char **argv, MPI_Fint n);
void bmpi_f_argvs_free(char ***argvs, MPI_Fint n);

#endif
