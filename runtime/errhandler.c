#include "config.h"

#include <stdlib.h>

#include "runtime/api.h"
#include "runtime/comm.h"
#include "runtime/errhandler.h"
#include "runtime/handle.h"
#include "runtime/world.h"

static struct bmpi_handle_table errhandlers = {.type = BMPI_OBJ_ERRHANDLER};

static bool is_predefined(MPI_Errhandler h)
{
    return h == MPI_ERRORS_ARE_FATAL || h == MPI_ERRORS_RETURN || h == MPI_ERRORS_ABORT;
}

struct bmpi_errhandler *bmpi_errhandler_get(MPI_Errhandler h)
{
    return bmpi_handle_get(&errhandlers, h);
}

bool bmpi_errhandler_valid(MPI_Errhandler h)
{
    return is_predefined(h) || bmpi_errhandler_get(h) != NULL;
}

bool bmpi_errhandler_valid_for(MPI_Errhandler h, enum bmpi_errh_kind kind)
{
    struct bmpi_errhandler *eh = bmpi_errhandler_get(h);
    return is_predefined(h) || (eh && eh->kind == kind);
}

void bmpi_errhandler_retain(MPI_Errhandler h)
{
    struct bmpi_errhandler *eh = bmpi_errhandler_get(h);
    if (eh)
        eh->refcount++;
}

void bmpi_errhandler_release(MPI_Errhandler h)
{
    struct bmpi_errhandler *eh = bmpi_errhandler_get(h);
    if (eh && --eh->refcount == 0) {
        bmpi_handle_release(&errhandlers, h);
        free(eh);
    }
}

void bmpi_errhandler_finalize(void)
{
    for (int i = 0; i < errhandlers.used; i++)
        free(errhandlers.objs[i]);
    bmpi_handle_table_free(&errhandlers);
}

void bmpi_errhandler_call(const struct bmpi_errhandler *eh, void *obj, int code)
{
    if (eh->lang == BMPI_LANG_FORTRAN) {
        /* handles are MPICH-ABI ints: *obj is the Fortran handle too, but
         * for files, whose C handle is a pointer */
        MPI_Fint fcode = code;
        MPI_Fint fh = eh->kind == BMPI_ERRH_FILE ? PMPI_File_c2f(*(MPI_File *)obj) : 0;
        ((bmpi_f_errhandler_function *)eh->fn)(eh->kind == BMPI_ERRH_FILE ? &fh : obj, &fcode);
        return;
    }
    /* every *_errhandler_function takes (handle *, int *, ...) */
    ((void (*)(void *, int *, ...))eh->fn)(obj, &code);
}

static int create(enum bmpi_errh_kind kind, void (*fn)(void), enum bmpi_lang lang, MPI_Errhandler *out,
                  const char *name)
{
    if (!fn || !out)
        return bmpi_err_noobj(MPI_ERR_ARG, name, "%s is NULL", fn ? "errhandler" : "function");
    struct bmpi_errhandler *eh = calloc(1, sizeof(*eh));
    if (!eh)
        return bmpi_err_noobj(MPI_ERR_NO_MEM, name, "out of memory");
    eh->refcount = 1;
    eh->kind = kind;
    eh->lang = lang;
    eh->fn = fn;
    eh->handle = bmpi_handle_new(&errhandlers, eh);
    if (!eh->handle) {
        free(eh);
        return bmpi_err_noobj(MPI_ERR_NO_MEM, name, "out of handles");
    }
    *out = eh->handle;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Comm_create_errhandler)
int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    return create(BMPI_ERRH_COMM, (void (*)(void))fn, BMPI_LANG_C, errhandler, "MPI_Comm_create_errhandler");
}

int bmpi_lang_comm_errhandler_create(void (*fn)(void), enum bmpi_lang lang, MPI_Errhandler *errhandler)
{
    return create(BMPI_ERRH_COMM, fn, lang, errhandler, "MPI_Comm_create_errhandler");
}

BMPI_API(MPI_Win_create_errhandler)
int PMPI_Win_create_errhandler(MPI_Win_errhandler_function *win_errhandler_fn, MPI_Errhandler *errhandler)
{
    return create(BMPI_ERRH_WIN, (void (*)(void))win_errhandler_fn, BMPI_LANG_C, errhandler,
                  "MPI_Win_create_errhandler");
}

int bmpi_lang_win_errhandler_create(void (*fn)(void), enum bmpi_lang lang, MPI_Errhandler *errhandler)
{
    return create(BMPI_ERRH_WIN, fn, lang, errhandler, "MPI_Win_create_errhandler");
}

BMPI_API(MPI_File_create_errhandler)
int PMPI_File_create_errhandler(MPI_File_errhandler_function *file_errhandler_fn, MPI_Errhandler *errhandler)
{
    return create(BMPI_ERRH_FILE, (void (*)(void))file_errhandler_fn, BMPI_LANG_C, errhandler,
                  "MPI_File_create_errhandler");
}

int bmpi_lang_file_errhandler_create(void (*fn)(void), enum bmpi_lang lang, MPI_Errhandler *errhandler)
{
    return create(BMPI_ERRH_FILE, fn, lang, errhandler, "MPI_File_create_errhandler");
}

BMPI_API(MPI_Errhandler_free)
int PMPI_Errhandler_free(MPI_Errhandler *errhandler)
{
    if (!errhandler || !bmpi_errhandler_valid(*errhandler))
        return bmpi_err_noobj(MPI_ERR_ARG, "MPI_Errhandler_free", "invalid errhandler 0x%x",
                              errhandler ? (unsigned)*errhandler : 0u);
    bmpi_errhandler_release(*errhandler);
    *errhandler = MPI_ERRHANDLER_NULL;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Comm_set_errhandler)
int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler)
{
    struct bmpi_comm *c = bmpi_comm_get(comm);
    if (!c)
        return bmpi_err_comm(comm, MPI_ERR_COMM, "MPI_Comm_set_errhandler",
                             "invalid communicator 0x%x", (unsigned)comm);
    if (!bmpi_errhandler_valid_for(errhandler, BMPI_ERRH_COMM))
        return bmpi_err_comm(comm, MPI_ERR_ARG, "MPI_Comm_set_errhandler",
                             "invalid communicator errhandler 0x%x", (unsigned)errhandler);
    bmpi_errhandler_retain(errhandler);
    bmpi_errhandler_release(c->errhandler);
    c->errhandler = errhandler;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Comm_get_errhandler)
int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    struct bmpi_comm *c = bmpi_comm_get(comm);
    if (!c)
        return bmpi_err_comm(comm, MPI_ERR_COMM, "MPI_Comm_get_errhandler",
                             "invalid communicator 0x%x", (unsigned)comm);
    if (!errhandler)
        return bmpi_err_comm(comm, MPI_ERR_ARG, "MPI_Comm_get_errhandler", "errhandler is NULL");
    /* the caller owns a reference and frees it with MPI_Errhandler_free */
    bmpi_errhandler_retain(c->errhandler);
    *errhandler = c->errhandler;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Comm_call_errhandler)
int PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode)
{
    if (!bmpi_comm_get(comm))
        return bmpi_err_comm(comm, MPI_ERR_COMM, "MPI_Comm_call_errhandler",
                             "invalid communicator 0x%x", (unsigned)comm);
    bmpi_err_comm(comm, errorcode, "MPI_Comm_call_errhandler", "error code %d raised by the application",
                  errorcode);
    return MPI_SUCCESS;
}
