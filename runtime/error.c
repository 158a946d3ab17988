/*
 * Error classes, messages and the dispatch to error handlers.
 *
 * bmpi returns error classes themselves as error codes (as Open MPI does),
 * so `rc == MPI_ERR_RANK` and MPI_Error_class both work. The detailed text
 * of the last reported error ("MPI_Send: invalid rank 7 ...") is kept per
 * thread, and MPI_Error_string(code) gives it while code is that error.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>
#include <string.h>

#include "runtime/api.h"
#include "runtime/comm.h"
#include "runtime/errhandler.h"
#include "runtime/errors_api.h"
#include "runtime/pmix.h"
#include "runtime/win.h"
#include "runtime/world.h"

static const char *const class_strings[] = {
    [MPI_SUCCESS] = "no error",
    [MPI_ERR_BUFFER] = "invalid buffer pointer",
    [MPI_ERR_COUNT] = "invalid count argument",
    [MPI_ERR_TYPE] = "invalid datatype",
    [MPI_ERR_TAG] = "invalid tag",
    [MPI_ERR_COMM] = "invalid communicator",
    [MPI_ERR_RANK] = "invalid rank",
    [MPI_ERR_ROOT] = "invalid root",
    [MPI_ERR_GROUP] = "invalid group",
    [MPI_ERR_OP] = "invalid reduction operation",
    [MPI_ERR_TOPOLOGY] = "invalid topology",
    [MPI_ERR_DIMS] = "invalid dimension argument",
    [MPI_ERR_ARG] = "invalid argument",
    [MPI_ERR_UNKNOWN] = "unknown error",
    [MPI_ERR_TRUNCATE] = "message truncated",
    [MPI_ERR_OTHER] = "other error",
    [MPI_ERR_INTERN] = "internal error",
    [MPI_ERR_IN_STATUS] = "error code is in status",
    [MPI_ERR_PENDING] = "pending request",
    [MPI_ERR_REQUEST] = "invalid request",
    [MPI_ERR_ACCESS] = "permission denied",
    [MPI_ERR_AMODE] = "invalid file access mode",
    [MPI_ERR_BAD_FILE] = "invalid file name",
    [MPI_ERR_CONVERSION] = "data conversion error",
    [MPI_ERR_DUP_DATAREP] = "data representation already defined",
    [MPI_ERR_FILE_EXISTS] = "file exists",
    [MPI_ERR_FILE_IN_USE] = "file in use",
    [MPI_ERR_FILE] = "invalid file handle",
    [MPI_ERR_INFO] = "invalid info object",
    [MPI_ERR_INFO_KEY] = "invalid info key",
    [MPI_ERR_INFO_VALUE] = "invalid info value",
    [MPI_ERR_INFO_NOKEY] = "info key not defined",
    [MPI_ERR_IO] = "I/O error",
    [MPI_ERR_NAME] = "invalid service name",
    [MPI_ERR_NO_MEM] = "out of memory",
    [MPI_ERR_NOT_SAME] = "collective argument not the same on all processes",
    [MPI_ERR_NO_SPACE] = "not enough space",
    [MPI_ERR_NO_SUCH_FILE] = "no such file",
    [MPI_ERR_PORT] = "invalid port name",
    [MPI_ERR_QUOTA] = "quota exceeded",
    [MPI_ERR_READ_ONLY] = "file is read-only",
    [MPI_ERR_SERVICE] = "invalid service",
    [MPI_ERR_SPAWN] = "spawn failed",
    [MPI_ERR_UNSUPPORTED_DATAREP] = "unsupported data representation",
    [MPI_ERR_UNSUPPORTED_OPERATION] = "operation not supported by bmpi",
    [MPI_ERR_WIN] = "invalid window",
    [MPI_ERR_BASE] = "invalid base address",
    [MPI_ERR_LOCKTYPE] = "invalid lock type",
    [MPI_ERR_KEYVAL] = "invalid attribute key",
    [MPI_ERR_RMA_CONFLICT] = "conflicting RMA accesses",
    [MPI_ERR_RMA_SYNC] = "wrong RMA synchronisation",
    [MPI_ERR_SIZE] = "invalid size",
    [MPI_ERR_DISP] = "invalid displacement",
    [MPI_ERR_ASSERT] = "invalid assert",
    [MPI_ERR_RMA_RANGE] = "RMA access outside the window",
    [MPI_ERR_RMA_ATTACH] = "cannot attach memory to the window",
    [MPI_ERR_RMA_SHARED] = "memory cannot be shared",
    [MPI_ERR_RMA_FLAVOR] = "wrong window flavor",
    [MPI_ERR_SESSION] = "invalid session",
    [MPI_ERR_PROC_ABORTED] = "peer process aborted",
    [MPI_ERR_VALUE_TOO_LARGE] = "value too large to store",
};

#define NCLASSES ((int)(sizeof(class_strings) / sizeof(class_strings[0])))

/* Per thread: the reason recorded by the detecting function, and the full
 * text of the last error reported through a handler. */
static _Thread_local char err_reason[MPI_MAX_ERROR_STRING - 128];
static _Thread_local char last_text[MPI_MAX_ERROR_STRING];
static _Thread_local int last_code;

const char *bmpi_err_class_string(int errclass)
{
    if (errclass >= 0 && errclass < NCLASSES && class_strings[errclass])
        return class_strings[errclass];
    return "unknown error class";
}

int bmpi_err_set(int errclass, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err_reason, sizeof(err_reason), fmt, ap);
    va_end(ap);
    return errclass;
}

const char *bmpi_err_reason(void) { return err_reason; }

static void format_text(int errclass, const char *fn, const char *fmt, va_list ap)
{
    char detail[MPI_MAX_ERROR_STRING - 128]; /* leaves room for fn and class */
    if (fmt)
        vsnprintf(detail, sizeof(detail), fmt, ap);
    else
        snprintf(detail, sizeof(detail), "%s", err_reason[0] ? err_reason : bmpi_err_class_string(errclass));
    snprintf(last_text, sizeof(last_text), "%s: %s (%s)", fn, detail, bmpi_err_class_string(errclass));
    last_code = errclass;
    err_reason[0] = '\0';
}

static _Noreturn void die(int errclass)
{
    fprintf(stderr, "bmpi: rank %d on %s: %s\n", bmpi_world.rank, bmpi_world.hostname, last_text);
    fflush(stderr);
    bmpi_pmix_abort(errclass, last_text);
    /* bmpi_pmix_abort returns only if the launcher could not be told */
    _exit(errclass ? errclass : 1);
}

/* Run handler h for an error on object *obj of the given kind. */
static int dispatch(MPI_Errhandler h, enum bmpi_errh_kind kind, void *obj, int errclass)
{
    if (h == MPI_ERRORS_RETURN)
        return errclass;
    if (h == MPI_ERRORS_ARE_FATAL || h == MPI_ERRORS_ABORT)
        die(errclass);
    struct bmpi_errhandler *eh = bmpi_errhandler_get(h);
    if (!eh || eh->kind != kind)
        die(errclass);
    bmpi_errhandler_call(eh, obj, errclass);
    return errclass;
}

static MPI_Errhandler comm_errhandler(MPI_Comm comm)
{
    struct bmpi_comm *c = bmpi_comm_get(comm);
    if (!c)
        c = bmpi_comm_get(MPI_COMM_SELF);
    return c ? c->errhandler : MPI_ERRORS_ARE_FATAL;
}

int bmpi_err_comm(MPI_Comm comm, int errclass, const char *fn, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    format_text(errclass, fn, fmt, ap);
    va_end(ap);
    if (!bmpi_comm_get(comm))
        comm = MPI_COMM_SELF;
    return dispatch(comm_errhandler(comm), BMPI_ERRH_COMM, &comm, errclass);
}

/* Errors on no object and on an invalid window handle go to
 * MPI_COMM_SELF's handler. */
static int report_on_self(int errclass, const char *fn, const char *fmt, va_list ap)
{
    format_text(errclass, fn, fmt, ap);
    MPI_Comm self = MPI_COMM_SELF;
    return dispatch(comm_errhandler(self), BMPI_ERRH_COMM, &self, errclass);
}

int bmpi_err_noobj(int errclass, const char *fn, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = report_on_self(errclass, fn, fmt, ap);
    va_end(ap);
    return rc;
}

/* An error on window w goes to its own handler, called with its handle;
 * with no window (an invalid handle) to MPI_COMM_SELF's. */
static int report_on_win(struct bmpi_win *w, int errclass, const char *fn, const char *fmt, va_list ap)
{
    if (!w)
        return report_on_self(errclass, fn, fmt, ap);
    format_text(errclass, fn, fmt, ap);
    MPI_Win handle = w->handle; /* the handler may overwrite what it is passed */
    return dispatch(w->errhandler, BMPI_ERRH_WIN, &handle, errclass);
}

int bmpi_err_win(MPI_Win win, int errclass, const char *fn, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = report_on_win(bmpi_win_get(win), errclass, fn, fmt, ap);
    va_end(ap);
    return rc;
}

int bmpi_err_win_obj(struct bmpi_win *w, int errclass, const char *fn, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = report_on_win(w, errclass, fn, fmt, ap);
    va_end(ap);
    return rc;
}

int bmpi_err_vfile(MPI_Errhandler h, MPI_File file, int errclass, const char *fn, const char *fmt, va_list ap)
{
    format_text(errclass, fn, fmt, ap);
    return dispatch(h, BMPI_ERRH_FILE, &file, errclass);
}

int bmpi_err_unsupported(MPI_Comm comm, const char *fn)
{
    return bmpi_err_comm(comm, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                         "%s is not implemented in bmpi yet (see docs/api-status.md)", fn);
}

BMPI_API(MPI_Error_class)
int PMPI_Error_class(int errorcode, int *errorclass)
{
    if (!errorclass)
        return bmpi_err_noobj(MPI_ERR_ARG, "MPI_Error_class", "errorclass is NULL");
    if (bmpi_err_user_lookup(errorcode, errorclass, NULL))
        return MPI_SUCCESS;
    if (errorcode < 0 || errorcode >= NCLASSES)
        return bmpi_err_noobj(MPI_ERR_ARG, "MPI_Error_class", "invalid error code %d", errorcode);
    *errorclass = errorcode;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Error_string)
int PMPI_Error_string(int errorcode, char *string, int *resultlen)
{
    if (!string || !resultlen)
        return bmpi_err_noobj(MPI_ERR_ARG, "MPI_Error_string", "string or resultlen is NULL");
    const char *text;
    int user = bmpi_err_user_lookup(errorcode, NULL, &text);
    if (!user && (errorcode < 0 || errorcode >= NCLASSES))
        return bmpi_err_noobj(MPI_ERR_ARG, "MPI_Error_string", "invalid error code %d", errorcode);
    if (!user)
        text = bmpi_err_class_string(errorcode);
    if (!user && errorcode != MPI_SUCCESS && errorcode == last_code)
        text = last_text;
    int n = snprintf(string, MPI_MAX_ERROR_STRING, "%s", text);
    *resultlen = n < MPI_MAX_ERROR_STRING ? n : MPI_MAX_ERROR_STRING - 1;
    return MPI_SUCCESS;
}
