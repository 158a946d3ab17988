/*
 * Errors on files (io/file.h): each file's error handler, MPI_FILE_NULL's
 * handler (the one MPI_File_open and MPI_File_delete report through, and
 * the one a new file inherits), MPI_File_set/get/call_errhandler, and the
 * error class of a failed system call. As the standard says, files start
 * with MPI_ERRORS_RETURN: an I/O error returns to the caller unless the
 * program asks otherwise.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "io/file.h"
#include "runtime/api.h"
#include "runtime/errhandler.h"

struct bmpi_file_errors {
    bool null_handler_set;       /* else MPI_FILE_NULL's handler is MPI_ERRORS_RETURN */
    MPI_Errhandler null_handler;
};

static struct bmpi_file_errors file_errors;

MPI_Errhandler bmpi_file_null_errhandler(void)
{
    return file_errors.null_handler_set ? file_errors.null_handler : MPI_ERRORS_RETURN;
}

void bmpi_file_errhandler_finalize(void)
{
    if (file_errors.null_handler_set)
        bmpi_errhandler_release(file_errors.null_handler);
    file_errors.null_handler_set = false;
}

int bmpi_err_file_obj(struct bmpi_file *f, int errclass, const char *fn, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = bmpi_err_vfile(f ? f->errhandler : bmpi_file_null_errhandler(), f ? f : MPI_FILE_NULL, errclass, fn,
                            fmt, ap);
    va_end(ap);
    return rc;
}

static int errno_class(int err)
{
    switch (err) {
    case ENOENT:
    case ENOTDIR:
        return MPI_ERR_NO_SUCH_FILE;
    case EACCES:
    case EPERM:
        return MPI_ERR_ACCESS;
    case EEXIST:
        return MPI_ERR_FILE_EXISTS;
    case ENOSPC:
    case EFBIG:
        return MPI_ERR_NO_SPACE;
    case EDQUOT:
        return MPI_ERR_QUOTA;
    case EROFS:
        return MPI_ERR_READ_ONLY;
    case ENAMETOOLONG:
    case EISDIR:
        return MPI_ERR_BAD_FILE;
    case ENOMEM:
        return MPI_ERR_NO_MEM;
    default:
        return MPI_ERR_IO;
    }
}

int bmpi_io_errno(int err, const char *what, const char *path)
{
    return bmpi_err_set(errno_class(err), "%s %s: %s", what, path, strerror(err));
}

/* The file fh, or NULL for MPI_FILE_NULL; MPI_ERR_FILE for anything else. */
static int file_or_null(MPI_File fh, const char *fn, struct bmpi_file **f)
{
    *f = NULL;
    if (fh == MPI_FILE_NULL)
        return MPI_SUCCESS;
    return bmpi_file_check(fh, fn, f);
}

BMPI_API(MPI_File_set_errhandler)
int PMPI_File_set_errhandler(MPI_File file, MPI_Errhandler errhandler)
{
    const char *fn = "MPI_File_set_errhandler";
    struct bmpi_file *f;
    int err = file_or_null(file, fn, &f);
    if (err)
        return err;
    if (!bmpi_errhandler_valid_for(errhandler, BMPI_ERRH_FILE))
        return bmpi_err_file_obj(f, MPI_ERR_ARG, fn, "invalid file errhandler 0x%x%s", (unsigned)errhandler,
                                 bmpi_errhandler_valid(errhandler) ? " (made for another kind of object)" : "");
    bmpi_errhandler_retain(errhandler);
    if (f) {
        bmpi_errhandler_release(f->errhandler);
        f->errhandler = errhandler;
    } else {
        bmpi_file_errhandler_finalize();
        file_errors.null_handler = errhandler;
        file_errors.null_handler_set = true;
    }
    return MPI_SUCCESS;
}

BMPI_API(MPI_File_get_errhandler)
int PMPI_File_get_errhandler(MPI_File file, MPI_Errhandler *errhandler)
{
    const char *fn = "MPI_File_get_errhandler";
    struct bmpi_file *f;
    int err = file_or_null(file, fn, &f);
    if (err)
        return err;
    if (!errhandler)
        return bmpi_err_file_obj(f, MPI_ERR_ARG, fn, "errhandler is NULL");
    /* the caller owns a reference and frees it with MPI_Errhandler_free */
    *errhandler = f ? f->errhandler : bmpi_file_null_errhandler();
    bmpi_errhandler_retain(*errhandler);
    return MPI_SUCCESS;
}

BMPI_API(MPI_File_call_errhandler)
int PMPI_File_call_errhandler(MPI_File fh, int errorcode)
{
    const char *fn = "MPI_File_call_errhandler";
    struct bmpi_file *f;
    int err = file_or_null(fh, fn, &f);
    if (err)
        return err;
    bmpi_err_file_obj(f, errorcode, fn, "error code %d raised by the application", errorcode);
    /* the standard: MPI_SUCCESS when the handler was called and returned */
    return MPI_SUCCESS;
}
