/*
 * The calls on a window as an object rather than on its memory: its name
 * (MPI_Win_set_name, MPI_Win_get_name) and its error handler
 * (MPI_Win_set/get/call_errhandler). Creating error handlers is in
 * errhandler.c, keyvals and attributes in attr.c, creation and free in
 * win.c, which gives a window MPI_ERRORS_ARE_FATAL (the standard's
 * default for windows, whatever the communicator's) and an empty name.
 */
#include "config.h"

#include <string.h>

#include "runtime/api.h"
#include "runtime/errhandler.h"
#include "runtime/win.h"

BMPI_API(MPI_Win_set_name)
int PMPI_Win_set_name(MPI_Win win, const char *win_name)
{
    struct bmpi_win *w;
    int err = bmpi_win_check(win, "MPI_Win_set_name", &w);
    if (err)
        return err;
    if (!win_name)
        return bmpi_err_win_obj(w, MPI_ERR_ARG, "MPI_Win_set_name", "win_name is NULL");
    /* longer names are truncated to MPI_MAX_OBJECT_NAME - 1 characters */
    size_t n = strnlen(win_name, MPI_MAX_OBJECT_NAME - 1);
    memcpy(w->name, win_name, n);
    w->name[n] = '\0';
    return MPI_SUCCESS;
}

BMPI_API(MPI_Win_get_name)
int PMPI_Win_get_name(MPI_Win win, char *win_name, int *resultlen)
{
    struct bmpi_win *w;
    int err = bmpi_win_check(win, "MPI_Win_get_name", &w);
    if (err)
        return err;
    if (!win_name || !resultlen)
        return bmpi_err_win_obj(w, MPI_ERR_ARG, "MPI_Win_get_name", "win_name or resultlen is NULL");
    size_t n = strlen(w->name);
    memcpy(win_name, w->name, n + 1);
    *resultlen = (int)n;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Win_set_errhandler)
int PMPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler)
{
    struct bmpi_win *w;
    int err = bmpi_win_check(win, "MPI_Win_set_errhandler", &w);
    if (err)
        return err;
    if (!bmpi_errhandler_valid_for(errhandler, BMPI_ERRH_WIN))
        return bmpi_err_win_obj(w, MPI_ERR_ARG, "MPI_Win_set_errhandler", "invalid window errhandler 0x%x%s",
                                (unsigned)errhandler,
                                bmpi_errhandler_valid(errhandler) ? " (made for another kind of object)" : "");
    bmpi_errhandler_retain(errhandler);
    bmpi_errhandler_release(w->errhandler);
    w->errhandler = errhandler;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Win_get_errhandler)
int PMPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler *errhandler)
{
    struct bmpi_win *w;
    int err = bmpi_win_check(win, "MPI_Win_get_errhandler", &w);
    if (err)
        return err;
    if (!errhandler)
        return bmpi_err_win_obj(w, MPI_ERR_ARG, "MPI_Win_get_errhandler", "errhandler is NULL");
    /* the caller owns a reference and frees it with MPI_Errhandler_free */
    bmpi_errhandler_retain(w->errhandler);
    *errhandler = w->errhandler;
    return MPI_SUCCESS;
}

/* MPI_SUCCESS once the handler has returned, as the standard says: the
 * code it was called with is the handler's business. */
BMPI_API(MPI_Win_call_errhandler)
int PMPI_Win_call_errhandler(MPI_Win win, int errorcode)
{
    struct bmpi_win *w;
    int err = bmpi_win_check(win, "MPI_Win_call_errhandler", &w);
    if (err)
        return err;
    bmpi_err_win_obj(w, errorcode, "MPI_Win_call_errhandler", "error code %d raised by the application",
                     errorcode);
    return MPI_SUCCESS;
}
