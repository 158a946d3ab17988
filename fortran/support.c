/*
 * fortran/support.c: the hand-written half of the generated glue
 * (fortran/glue.h): sentinels of mpif.h and the conversions of strings,
 * string arrays and file handles between Fortran and C.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fortran/glue.h"

/*
 * The common blocks of mpif.h, under the names MPICH's mpif.h gives them
 * (gfortran appends an underscore), so that programs compiled against
 * either mpif.h pass the same addresses. Their contents are never read.
 * The `mpi` module declares the same blocks; gfortran aligns them to 16.
 */
#define BMPI_F_COMMON __attribute__((aligned(16)))
struct {
    MPI_Fint bottom, in_place, status_ignore[MPI_F_STATUS_SIZE];
} mpipriv1_ BMPI_F_COMMON;
struct {
    MPI_Fint statuses_ignore[MPI_F_STATUS_SIZE], errcodes_ignore[1];
} mpipriv2_ BMPI_F_COMMON;
struct {
    char argvs_null[1], argv_null[1];
} mpiprivc_ BMPI_F_COMMON;
MPI_Fint mpifcmb5_ BMPI_F_COMMON, mpifcmb9_ BMPI_F_COMMON;

const struct bmpi_f_sentinels bmpi_f77_sentinels = {
    .bottom = &mpipriv1_.bottom,
    .in_place = &mpipriv1_.in_place,
    .status_ignore = mpipriv1_.status_ignore,
    .statuses_ignore = mpipriv2_.statuses_ignore,
    .errcodes_ignore = mpipriv2_.errcodes_ignore,
    .unweighted = &mpifcmb5_,
    .weights_empty = &mpifcmb9_,
    .argv_null = mpiprivc_.argv_null,
    .argvs_null = mpiprivc_.argvs_null,
};

int bmpi_f_nomem(MPI_Comm comm, const char *fn)
{
    /* The C API has no way to attach a message to an error class, so say
     * which call failed before a fatal handler ends the program. */
    MPI_Errhandler eh = MPI_ERRORS_ARE_FATAL;
    if (PMPI_Comm_get_errhandler(comm, &eh) == MPI_SUCCESS && eh != MPI_ERRORS_RETURN)
        fprintf(stderr, "bmpi: %s: out of memory converting the Fortran arguments\n", fn);
    (void)PMPI_Errhandler_free(&eh);
    (void)PMPI_Comm_call_errhandler(comm, MPI_ERR_NO_MEM);
    return MPI_ERR_NO_MEM;
}

static size_t trimmed(const char *s, size_t len, size_t *start)
{
    size_t b = 0;
    while (len > 0 && s[len - 1] == ' ')
        len--;
    while (b < len && s[b] == ' ')
        b++;
    *start = b;
    return len - b;
}

char *bmpi_f_str_in(const char *s, size_t len)
{
    size_t start, n = trimmed(s, len, &start);
    char *c = malloc(n + 1);
    if (c) {
        memcpy(c, s + start, n);
        c[n] = '\0';
    }
    return c;
}

char *bmpi_f_str_buf(size_t n)
{
    return calloc(n + 1, 1);
}

void bmpi_f_str_out(char *s, size_t len, const char *c)
{
    size_t n = strnlen(c, len);
    memcpy(s, c, n);
    memset(s + n, ' ', len - n);
}

int bmpi_f_strlen_in(MPI_Fint flen, size_t len)
{
    if (flen <= 0)
        return 0;
    return (size_t)flen < len ? flen + 1 : (int)len + 1;
}

/*
 * MPI_F_SYNC_REG(buf) (MPI 4.1, 19.1.17): Fortran-only, and empty on
 * purpose. Called across a library boundary the compiler cannot see into,
 * it must assume that buf is read and written here, so it neither keeps
 * buf in a register across the call nor moves accesses to buf past it.
 * mpi_f08 passes the descriptor of an assumed-rank buffer.
 */
void pmpi_f_sync_reg_(void *buf);
void pmpi_f_sync_reg_(void *buf)
{
    (void)buf;
}
BMPI_F77_NAMES(f_sync_reg, F_SYNC_REG)

void mpi_f_sync_reg_f08ts_(void *desc);
void mpi_f_sync_reg_f08ts_(void *desc)
{
    (void)desc;
}

MPI_File bmpi_f_file_f2c(MPI_Fint f)
{
    return f == 0 ? MPI_FILE_NULL : PMPI_File_f2c(f);
}

MPI_Fint bmpi_f_file_c2f(MPI_File f)
{
    return f == MPI_FILE_NULL ? 0 : PMPI_File_c2f(f);
}

/* n strings of length len at f (n < 0: up to the first blank one) as a
 * NULL-terminated argv. */
static char **strings_in(const char *f, size_t len, MPI_Fint n)
{
    MPI_Fint count = 0;
    size_t start;
    while (n >= 0 ? count < n : trimmed(f + (size_t)count * len, len, &start) > 0)
        count++;
    char **argv = calloc((size_t)count + 1, sizeof(char *));
    for (MPI_Fint i = 0; argv && i < count; i++) {
        argv[i] = bmpi_f_str_in(f + (size_t)i * len, len);
        if (!argv[i]) {
            bmpi_f_argv_free(argv, 0);
            return NULL;
        }
    }
    return argv;
}

void bmpi_f_argv_free(char **argv, MPI_Fint n)
{
    (void)n;
    for (size_t i = 0; argv && argv[i]; i++)
        free(argv[i]);
    free(argv);
}

void bmpi_f_commands_free(char **argv, MPI_Fint n)
{
    bmpi_f_argv_free(argv, n);
}

int bmpi_f_argv_in(const struct bmpi_f_sentinels *s, const char *f, size_t len, MPI_Fint n,
                   char ***out)
{
    (void)n;
    if (f == s->argv_null) {
        *out = MPI_ARGV_NULL;
        return 1;
    }
    *out = strings_in(f, len, -1);
    return *out != NULL;
}

int bmpi_f_commands_in(const struct bmpi_f_sentinels *s, const char *f, size_t len, MPI_Fint n,
                       char ***out)
{
    (void)s;
    *out = strings_in(f, len, n);
    return *out != NULL;
}

/* array_of_argv(n, *): element (i, j) is at (j * n + i) * len, and each
 * column i ends at its first blank element. */
int bmpi_f_argvs_in(const struct bmpi_f_sentinels *s, const char *f, size_t len, MPI_Fint n,
                    char ****out)
{
    if (f == s->argvs_null) {
        *out = MPI_ARGVS_NULL;
        return 1;
    }
    char ***argvs = calloc(n > 0 ? (size_t)n : 1, sizeof(char **));
    for (MPI_Fint i = 0; argvs && i < n; i++) {
        size_t start, count = 0;
        while (trimmed(f + (count * (size_t)n + (size_t)i) * len, len, &start) > 0)
            count++;
        argvs[i] = calloc(count + 1, sizeof(char *));
        for (size_t j = 0; argvs[i] && j < count; j++)
            argvs[i][j] = bmpi_f_str_in(f + (j * (size_t)n + (size_t)i) * len, len);
        if (!argvs[i] || (count && !argvs[i][count - 1])) {
            bmpi_f_argvs_free(argvs, i + 1);
            argvs = NULL;
        }
    }
    *out = argvs;
    return argvs != NULL;
}

void bmpi_f_argvs_free(char ***argvs, MPI_Fint n)
{
    for (MPI_Fint i = 0; argvs && argvs != MPI_ARGVS_NULL && i < n; i++)
        bmpi_f_argv_free(argvs[i], 0);
    if (argvs != MPI_ARGVS_NULL)
        free(argvs);
}

/* The variables of mpi_f08_link_constants (fortran/mpi_f08_link_constants.f90). */
extern MPI_Fint MPIR_F08_MPI_BOTTOM, MPIR_F08_MPI_IN_PLACE;
extern MPI_F08_status MPIR_F08_MPI_STATUS_IGNORE_OBJ, MPIR_F08_MPI_STATUSES_IGNORE_OBJ[1];
extern MPI_Fint MPIR_F08_MPI_ERRCODES_IGNORE[1], MPIR_F08_MPI_UNWEIGHTED[1],
    MPIR_F08_MPI_WEIGHTS_EMPTY[1];
extern char MPIR_F08_MPI_ARGV_NULL[1], MPIR_F08_MPI_ARGVS_NULL[1];

const struct bmpi_f_sentinels bmpi_f08_sentinels = {
    .bottom = &MPIR_F08_MPI_BOTTOM,
    .in_place = &MPIR_F08_MPI_IN_PLACE,
    .status_ignore = &MPIR_F08_MPI_STATUS_IGNORE_OBJ.count_lo,
    .statuses_ignore = &MPIR_F08_MPI_STATUSES_IGNORE_OBJ[0].count_lo,
    .errcodes_ignore = MPIR_F08_MPI_ERRCODES_IGNORE,
    .unweighted = MPIR_F08_MPI_UNWEIGHTED,
    .weights_empty = MPIR_F08_MPI_WEIGHTS_EMPTY,
    .argv_null = MPIR_F08_MPI_ARGV_NULL,
    .argvs_null = MPIR_F08_MPI_ARGVS_NULL,
    .c_ptr_addresses = 1,
};
