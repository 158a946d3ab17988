/*
 * fortran/callbacks.c: the hand-written part of the Fortran bindings, the
 * routines that take callbacks or attribute values (the generator skips
 * them, docs/fortran-internals.md), and the predefined callback procedures
 * (MPI_COMM_NULL_COPY_FN, MPI_COMM_DUP_FN, ...) under MPICH's names.
 *
 * Callbacks written in Fortran are handed to the runtime with their
 * language through runtime/lang.h, which calls them with Fortran's ABI;
 * attribute values go through it as Fortran integers. The mpif.h/`use mpi`
 * and the mpi_f08 entry points take the same arguments (a TYPE(MPI_Comm) is
 * its one integer; an absent OPTIONAL ierror arrives as NULL, which the
 * mpif.h ones accept too), so each mpi_x_f08_ is an alias of pmpi_x_.
 *
 * Routines that are stubs in C (file and session error handlers, data
 * representations) call that stub, which reports
 * MPI_ERR_UNSUPPORTED_OPERATION and calls none of the callbacks.
 */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fortran/fortran.h"
#include "runtime/lang.h"

/* mpi_x_f08_, the mpi_f08 name of pmpi_x_ */
#define BMPI_F08_NAME(lower) \
    extern __typeof__(pmpi_##lower##_) mpi_##lower##_f08_ __attribute__((alias("pmpi_" #lower "_")));

static void ret(MPI_Fint *ierror, int rc)
{
    if (ierror)
        *ierror = rc;
}

/* --- predefined callback procedures ----------------------------------------- */

/*
 * Fortran programs pass these as procedures; the keyval routines below
 * hand the NULL ones to the runtime as C's NULL (no call, attribute not
 * copied), and the DUP ones are ordinary Fortran callbacks that copy the
 * value. Their names are MPICH's lower-case ones and the mpi_f08_callbacks
 * module procedures'; the upper-case MPI_COMM_DUP_FN and friends are C
 * functions of libbmpi.
 */
#define BMPI_F_CALLBACK_NAMES(lower)                                                                  \
    BMPI_F_PRAGMA(weak mpi_##lower##_ = pmpi_##lower##_)                                              \
    BMPI_F_PRAGMA(weak mpi_##lower##__ = pmpi_##lower##_)                                             \
    BMPI_F_PRAGMA(weak mpi_##lower = pmpi_##lower##_)                                                 \
    extern __typeof__(pmpi_##lower##_) pmpi_##lower##__ __attribute__((alias("pmpi_" #lower "_")));    \
    extern __typeof__(pmpi_##lower##_) pmpi_##lower __attribute__((alias("pmpi_" #lower "_")));
/* the same procedure in module mpi_f08_callbacks */
#define BMPI_F08_CALLBACK_NAMES(lower)                                                                \
    BMPI_F_CALLBACK_NAMES(lower)                                                                      \
    extern __typeof__(pmpi_##lower##_) __mpi_f08_callbacks_MOD_mpi_##lower                            \
        __attribute__((alias("pmpi_" #lower "_")));

bmpi_f_copy_attr_function pmpi_comm_null_copy_fn_, pmpi_comm_dup_fn_;
bmpi_f_delete_attr_function pmpi_comm_null_delete_fn_;
bmpi_f_copy_function pmpi_null_copy_fn_, pmpi_dup_fn_;
bmpi_f_delete_function pmpi_null_delete_fn_;
/* the names programs pass the NULL ones by (see copy_or_null) */
bmpi_f_copy_attr_function mpi_comm_null_copy_fn_, mpi_type_null_copy_fn_, mpi_win_null_copy_fn_,
    __mpi_f08_callbacks_MOD_mpi_comm_null_copy_fn, __mpi_f08_callbacks_MOD_mpi_type_null_copy_fn,
    __mpi_f08_callbacks_MOD_mpi_win_null_copy_fn;
bmpi_f_delete_attr_function mpi_comm_null_delete_fn_, mpi_type_null_delete_fn_, mpi_win_null_delete_fn_,
    __mpi_f08_callbacks_MOD_mpi_comm_null_delete_fn, __mpi_f08_callbacks_MOD_mpi_type_null_delete_fn,
    __mpi_f08_callbacks_MOD_mpi_win_null_delete_fn;
bmpi_f_copy_function mpi_null_copy_fn_;
bmpi_f_delete_function mpi_null_delete_fn_;

void pmpi_comm_null_copy_fn_(MPI_Fint *obj, MPI_Fint *keyval, MPI_Aint *extra_state, MPI_Aint *val_in,
                             MPI_Aint *val_out, MPI_Fint *flag, MPI_Fint *ierror)
{
    (void)obj, (void)keyval, (void)extra_state, (void)val_in, (void)val_out;
    *flag = BMPI_F_FALSE;
    *ierror = MPI_SUCCESS;
}
BMPI_F08_CALLBACK_NAMES(comm_null_copy_fn)
extern __typeof__(pmpi_comm_null_copy_fn_) pmpi_type_null_copy_fn_ __attribute__((alias("pmpi_comm_null_copy_fn_")));
extern __typeof__(pmpi_comm_null_copy_fn_) pmpi_win_null_copy_fn_ __attribute__((alias("pmpi_comm_null_copy_fn_")));
BMPI_F08_CALLBACK_NAMES(type_null_copy_fn)
BMPI_F08_CALLBACK_NAMES(win_null_copy_fn)

void pmpi_comm_dup_fn_(MPI_Fint *obj, MPI_Fint *keyval, MPI_Aint *extra_state, MPI_Aint *val_in,
                       MPI_Aint *val_out, MPI_Fint *flag, MPI_Fint *ierror)
{
    (void)obj, (void)keyval, (void)extra_state;
    *val_out = *val_in;
    *flag = BMPI_F_TRUE;
    *ierror = MPI_SUCCESS;
}
BMPI_F08_CALLBACK_NAMES(comm_dup_fn)
extern __typeof__(pmpi_comm_dup_fn_) pmpi_type_dup_fn_ __attribute__((alias("pmpi_comm_dup_fn_")));
extern __typeof__(pmpi_comm_dup_fn_) pmpi_win_dup_fn_ __attribute__((alias("pmpi_comm_dup_fn_")));
BMPI_F08_CALLBACK_NAMES(type_dup_fn)
BMPI_F08_CALLBACK_NAMES(win_dup_fn)

void pmpi_comm_null_delete_fn_(MPI_Fint *obj, MPI_Fint *keyval, MPI_Aint *val, MPI_Aint *extra_state,
                               MPI_Fint *ierror)
{
    (void)obj, (void)keyval, (void)val, (void)extra_state;
    *ierror = MPI_SUCCESS;
}
BMPI_F08_CALLBACK_NAMES(comm_null_delete_fn)
extern __typeof__(pmpi_comm_null_delete_fn_) pmpi_type_null_delete_fn_
    __attribute__((alias("pmpi_comm_null_delete_fn_")));
extern __typeof__(pmpi_comm_null_delete_fn_) pmpi_win_null_delete_fn_
    __attribute__((alias("pmpi_comm_null_delete_fn_")));
BMPI_F08_CALLBACK_NAMES(type_null_delete_fn)
BMPI_F08_CALLBACK_NAMES(win_null_delete_fn)

/* the deprecated MPI_KEYVAL_CREATE's, on INTEGER values */
void pmpi_null_copy_fn_(MPI_Fint *obj, MPI_Fint *keyval, MPI_Fint *extra_state, MPI_Fint *val_in,
                        MPI_Fint *val_out, MPI_Fint *flag, MPI_Fint *ierror)
{
    (void)obj, (void)keyval, (void)extra_state, (void)val_in, (void)val_out;
    *flag = BMPI_F_FALSE;
    *ierror = MPI_SUCCESS;
}
BMPI_F_CALLBACK_NAMES(null_copy_fn)

void pmpi_dup_fn_(MPI_Fint *obj, MPI_Fint *keyval, MPI_Fint *extra_state, MPI_Fint *val_in, MPI_Fint *val_out,
                  MPI_Fint *flag, MPI_Fint *ierror)
{
    (void)obj, (void)keyval, (void)extra_state;
    *val_out = *val_in;
    *flag = BMPI_F_TRUE;
    *ierror = MPI_SUCCESS;
}
BMPI_F_CALLBACK_NAMES(dup_fn)

void pmpi_null_delete_fn_(MPI_Fint *obj, MPI_Fint *keyval, MPI_Fint *val, MPI_Fint *extra_state,
                          MPI_Fint *ierror)
{
    (void)obj, (void)keyval, (void)val, (void)extra_state;
    *ierror = MPI_SUCCESS;
}
BMPI_F_CALLBACK_NAMES(null_delete_fn)

/* MPI_CONVERSION_FN_NULL only names "no conversion" to
 * MPI_REGISTER_DATAREP, which hands it to C as NULL: nothing calls it. */
typedef void bmpi_f_conversion_function(void *userbuf, MPI_Fint *datatype, MPI_Fint *count, void *filebuf,
                                        MPI_Offset *position, MPI_Aint *extra_state, MPI_Fint *ierror);
bmpi_f_conversion_function pmpi_conversion_fn_null_, mpi_conversion_fn_null_,
    __mpi_f08_callbacks_MOD_mpi_conversion_fn_null;
void pmpi_conversion_fn_null_(void *userbuf, MPI_Fint *datatype, MPI_Fint *count, void *filebuf,
                              MPI_Offset *position, MPI_Aint *extra_state, MPI_Fint *ierror)
{
    (void)userbuf, (void)datatype, (void)count, (void)filebuf, (void)position, (void)extra_state;
    ret(ierror, MPI_ERR_UNSUPPORTED_OPERATION);
}
BMPI_F08_CALLBACK_NAMES(conversion_fn_null)
extern __typeof__(pmpi_conversion_fn_null_) __mpi_f08_callbacks_MOD_mpi_conversion_fn_null_c
    __attribute__((alias("pmpi_conversion_fn_null_")));

typedef void (*bmpi_f_proc)(void);

static bmpi_f_proc null_if_in(bmpi_f_proc fn, const bmpi_f_proc *nulls, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (fn == nulls[i])
            return NULL;
    return fn;
}

/* The runtime's "no callback" for the NULL procedures, by every name a
 * program may have taken their address by (a non-PIE program's address of
 * mpi_x_ is its own PLT entry, not pmpi_x_). */
static bmpi_f_proc copy_or_null(bmpi_f_proc fn)
{
    static const bmpi_f_proc nulls[] = {
        (bmpi_f_proc)pmpi_comm_null_copy_fn_, (bmpi_f_proc)mpi_comm_null_copy_fn_,
        (bmpi_f_proc)mpi_type_null_copy_fn_, (bmpi_f_proc)mpi_win_null_copy_fn_,
        (bmpi_f_proc)__mpi_f08_callbacks_MOD_mpi_comm_null_copy_fn,
        (bmpi_f_proc)__mpi_f08_callbacks_MOD_mpi_type_null_copy_fn,
        (bmpi_f_proc)__mpi_f08_callbacks_MOD_mpi_win_null_copy_fn,
        (bmpi_f_proc)pmpi_null_copy_fn_, (bmpi_f_proc)mpi_null_copy_fn_};
    return null_if_in(fn, nulls, sizeof(nulls) / sizeof(nulls[0]));
}

static bmpi_f_proc delete_or_null(bmpi_f_proc fn)
{
    static const bmpi_f_proc nulls[] = {
        (bmpi_f_proc)pmpi_comm_null_delete_fn_, (bmpi_f_proc)mpi_comm_null_delete_fn_,
        (bmpi_f_proc)mpi_type_null_delete_fn_, (bmpi_f_proc)mpi_win_null_delete_fn_,
        (bmpi_f_proc)__mpi_f08_callbacks_MOD_mpi_comm_null_delete_fn,
        (bmpi_f_proc)__mpi_f08_callbacks_MOD_mpi_type_null_delete_fn,
        (bmpi_f_proc)__mpi_f08_callbacks_MOD_mpi_win_null_delete_fn,
        (bmpi_f_proc)pmpi_null_delete_fn_, (bmpi_f_proc)mpi_null_delete_fn_};
    return null_if_in(fn, nulls, sizeof(nulls) / sizeof(nulls[0]));
}

/* --- reduction operations and error handlers ------------------------------- */

void pmpi_op_create_(void (*user_fn)(void), MPI_Fint *commute, MPI_Fint *op, MPI_Fint *ierror);
void pmpi_op_create_(void (*user_fn)(void), MPI_Fint *commute, MPI_Fint *op, MPI_Fint *ierror)
{
    MPI_Op h = MPI_OP_NULL;
    int rc = bmpi_lang_op_create(user_fn, *commute != BMPI_F_FALSE, BMPI_LANG_FORTRAN, &h);
    if (rc == MPI_SUCCESS)
        *op = MPI_Op_c2f(h);
    ret(ierror, rc);
}
BMPI_F77_NAMES(op_create, OP_CREATE)
BMPI_F08_NAME(op_create)

void pmpi_comm_create_errhandler_(void (*fn)(void), MPI_Fint *errhandler, MPI_Fint *ierror);
void pmpi_comm_create_errhandler_(void (*fn)(void), MPI_Fint *errhandler, MPI_Fint *ierror)
{
    MPI_Errhandler h = MPI_ERRHANDLER_NULL;
    int rc = bmpi_lang_comm_errhandler_create(fn, BMPI_LANG_FORTRAN, &h);
    if (rc == MPI_SUCCESS)
        *errhandler = MPI_Errhandler_c2f(h);
    ret(ierror, rc);
}
BMPI_F77_NAMES(comm_create_errhandler, COMM_CREATE_ERRHANDLER)
BMPI_F08_NAME(comm_create_errhandler)

void pmpi_win_create_errhandler_(void (*fn)(void), MPI_Fint *errhandler, MPI_Fint *ierror);
void pmpi_win_create_errhandler_(void (*fn)(void), MPI_Fint *errhandler, MPI_Fint *ierror)
{
    MPI_Errhandler h = MPI_ERRHANDLER_NULL;
    int rc = bmpi_lang_win_errhandler_create(fn, BMPI_LANG_FORTRAN, &h);
    if (rc == MPI_SUCCESS)
        *errhandler = MPI_Errhandler_c2f(h);
    ret(ierror, rc);
}
BMPI_F77_NAMES(win_create_errhandler, WIN_CREATE_ERRHANDLER)
BMPI_F08_NAME(win_create_errhandler)

void pmpi_file_create_errhandler_(void (*fn)(void), MPI_Fint *errhandler, MPI_Fint *ierror);
void pmpi_file_create_errhandler_(void (*fn)(void), MPI_Fint *errhandler, MPI_Fint *ierror)
{
    MPI_Errhandler h = MPI_ERRHANDLER_NULL;
    int rc = bmpi_lang_file_errhandler_create(fn, BMPI_LANG_FORTRAN, &h);
    if (rc == MPI_SUCCESS)
        *errhandler = MPI_Errhandler_c2f(h);
    ret(ierror, rc);
}
BMPI_F77_NAMES(file_create_errhandler, FILE_CREATE_ERRHANDLER)
BMPI_F08_NAME(file_create_errhandler)

/* Sessions have no error handlers in C yet: this calls the C stub, which
 * reports MPI_ERR_UNSUPPORTED_OPERATION. */
#define BMPI_F_STUB_ERRHANDLER(lower, UPPER, Name, Fn)                                                \
    void pmpi_##lower##_create_errhandler_(void (*fn)(void), MPI_Fint *errhandler, MPI_Fint *ierror); \
    void pmpi_##lower##_create_errhandler_(void (*fn)(void), MPI_Fint *errhandler, MPI_Fint *ierror)  \
    {                                                                                                  \
        MPI_Errhandler h = MPI_ERRHANDLER_NULL;                                                        \
        int rc = PMPI_##Name##_create_errhandler((Fn *)fn, &h);                                        \
        if (rc == MPI_SUCCESS)                                                                         \
            *errhandler = MPI_Errhandler_c2f(h);                                                       \
        ret(ierror, rc);                                                                               \
    }                                                                                                  \
    BMPI_F77_NAMES(lower##_create_errhandler, UPPER##_CREATE_ERRHANDLER)                               \
    BMPI_F08_NAME(lower##_create_errhandler)

BMPI_F_STUB_ERRHANDLER(session, SESSION, Session, MPI_Session_errhandler_function)

/* --- keyvals and attributes ------------------------------------------------ */

static void create_keyval(enum bmpi_attr_obj obj, void (*copy)(void), void (*del)(void), MPI_Aint extra_state,
                          enum bmpi_attr_width width, MPI_Fint *keyval, MPI_Fint *ierror, const char *fn)
{
    int k = MPI_KEYVAL_INVALID;
    int rc = bmpi_lang_keyval_create(obj, copy_or_null(copy), delete_or_null(del), extra_state,
                                     BMPI_LANG_FORTRAN, width, &k, fn);
    if (rc == MPI_SUCCESS)
        *keyval = k;
    ret(ierror, rc);
}

void pmpi_comm_create_keyval_(void (*copy)(void), void (*del)(void), MPI_Fint *keyval, MPI_Aint *extra_state,
                              MPI_Fint *ierror);
void pmpi_comm_create_keyval_(void (*copy)(void), void (*del)(void), MPI_Fint *keyval, MPI_Aint *extra_state,
                              MPI_Fint *ierror)
{
    create_keyval(BMPI_ATTR_COMM, copy, del, *extra_state, BMPI_ATTR_AINT, keyval, ierror,
                  "MPI_Comm_create_keyval");
}
BMPI_F77_NAMES(comm_create_keyval, COMM_CREATE_KEYVAL)
BMPI_F08_NAME(comm_create_keyval)

void pmpi_type_create_keyval_(void (*copy)(void), void (*del)(void), MPI_Fint *keyval, MPI_Aint *extra_state,
                              MPI_Fint *ierror);
void pmpi_type_create_keyval_(void (*copy)(void), void (*del)(void), MPI_Fint *keyval, MPI_Aint *extra_state,
                              MPI_Fint *ierror)
{
    create_keyval(BMPI_ATTR_TYPE, copy, del, *extra_state, BMPI_ATTR_AINT, keyval, ierror,
                  "MPI_Type_create_keyval");
}
BMPI_F77_NAMES(type_create_keyval, TYPE_CREATE_KEYVAL)
BMPI_F08_NAME(type_create_keyval)

void pmpi_keyval_create_(void (*copy)(void), void (*del)(void), MPI_Fint *keyval, MPI_Fint *extra_state,
                         MPI_Fint *ierror);
void pmpi_keyval_create_(void (*copy)(void), void (*del)(void), MPI_Fint *keyval, MPI_Fint *extra_state,
                         MPI_Fint *ierror)
{
    create_keyval(BMPI_ATTR_COMM, copy, del, *extra_state, BMPI_ATTR_FINT, keyval, ierror, "MPI_Keyval_create");
}
BMPI_F77_NAMES(keyval_create, KEYVAL_CREATE)

static void get_attr(enum bmpi_attr_obj obj, MPI_Fint handle, MPI_Fint keyval, MPI_Aint *val, MPI_Fint *flag,
                     MPI_Fint *ierror, const char *fn)
{
    MPI_Aint v = 0;
    int found = 0;
    int rc = bmpi_lang_attr_get_int(obj, handle, keyval, &v, &found, fn);
    if (rc == MPI_SUCCESS) {
        *flag = BMPI_F_LOGICAL(found);
        if (found)
            *val = v;
    }
    ret(ierror, rc);
}

void pmpi_comm_get_attr_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *flag, MPI_Fint *ierror);
void pmpi_comm_get_attr_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *flag, MPI_Fint *ierror)
{
    get_attr(BMPI_ATTR_COMM, *comm, *keyval, val, flag, ierror, "MPI_Comm_get_attr");
}
BMPI_F77_NAMES(comm_get_attr, COMM_GET_ATTR)
BMPI_F08_NAME(comm_get_attr)

void pmpi_type_get_attr_(MPI_Fint *type, MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *flag, MPI_Fint *ierror);
void pmpi_type_get_attr_(MPI_Fint *type, MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *flag, MPI_Fint *ierror)
{
    get_attr(BMPI_ATTR_TYPE, *type, *keyval, val, flag, ierror, "MPI_Type_get_attr");
}
BMPI_F77_NAMES(type_get_attr, TYPE_GET_ATTR)
BMPI_F08_NAME(type_get_attr)

/* MPI_ATTR_GET: the least significant part of the value (MPI 4.1, 19.3.7) */
void pmpi_attr_get_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Fint *val, MPI_Fint *flag, MPI_Fint *ierror);
void pmpi_attr_get_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Fint *val, MPI_Fint *flag, MPI_Fint *ierror)
{
    MPI_Aint v = *val;
    get_attr(BMPI_ATTR_COMM, *comm, *keyval, &v, flag, ierror, "MPI_Attr_get");
    *val = (MPI_Fint)v;
}
BMPI_F77_NAMES(attr_get, ATTR_GET)

void pmpi_comm_set_attr_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *ierror);
void pmpi_comm_set_attr_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *ierror)
{
    ret(ierror, bmpi_lang_attr_set_int(BMPI_ATTR_COMM, *comm, *keyval, *val, "MPI_Comm_set_attr"));
}
BMPI_F77_NAMES(comm_set_attr, COMM_SET_ATTR)
BMPI_F08_NAME(comm_set_attr)

void pmpi_type_set_attr_(MPI_Fint *type, MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *ierror);
void pmpi_type_set_attr_(MPI_Fint *type, MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *ierror)
{
    ret(ierror, bmpi_lang_attr_set_int(BMPI_ATTR_TYPE, *type, *keyval, *val, "MPI_Type_set_attr"));
}
BMPI_F77_NAMES(type_set_attr, TYPE_SET_ATTR)
BMPI_F08_NAME(type_set_attr)

/* MPI_ATTR_PUT: the INTEGER sign-extended to the attribute's word */
void pmpi_attr_put_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Fint *val, MPI_Fint *ierror);
void pmpi_attr_put_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Fint *val, MPI_Fint *ierror)
{
    ret(ierror, bmpi_lang_attr_set_int(BMPI_ATTR_COMM, *comm, *keyval, (MPI_Aint)*val, "MPI_Attr_put"));
}
BMPI_F77_NAMES(attr_put, ATTR_PUT)

void pmpi_win_create_keyval_(void (*copy)(void), void (*del)(void), MPI_Fint *keyval, MPI_Aint *extra_state,
                             MPI_Fint *ierror);
void pmpi_win_create_keyval_(void (*copy)(void), void (*del)(void), MPI_Fint *keyval, MPI_Aint *extra_state,
                             MPI_Fint *ierror)
{
    create_keyval(BMPI_ATTR_WIN, copy, del, *extra_state, BMPI_ATTR_AINT, keyval, ierror, "MPI_Win_create_keyval");
}
BMPI_F77_NAMES(win_create_keyval, WIN_CREATE_KEYVAL)
BMPI_F08_NAME(win_create_keyval)

void pmpi_win_get_attr_(MPI_Fint *win, MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *flag, MPI_Fint *ierror);
void pmpi_win_get_attr_(MPI_Fint *win, MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *flag, MPI_Fint *ierror)
{
    get_attr(BMPI_ATTR_WIN, *win, *keyval, val, flag, ierror, "MPI_Win_get_attr");
}
BMPI_F77_NAMES(win_get_attr, WIN_GET_ATTR)
BMPI_F08_NAME(win_get_attr)

void pmpi_win_set_attr_(MPI_Fint *win, MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *ierror);
void pmpi_win_set_attr_(MPI_Fint *win, MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *ierror)
{
    ret(ierror, bmpi_lang_attr_set_int(BMPI_ATTR_WIN, *win, *keyval, *val, "MPI_Win_set_attr"));
}
BMPI_F77_NAMES(win_set_attr, WIN_SET_ATTR)
BMPI_F08_NAME(win_set_attr)

/* --- generalized requests -------------------------------------------------- */

typedef void grequest_query_f(MPI_Aint *extra_state, MPI_Fint *status, MPI_Fint *ierror);
typedef void grequest_free_f(MPI_Aint *extra_state, MPI_Fint *ierror);
typedef void grequest_cancel_f(MPI_Aint *extra_state, MPI_Fint *complete, MPI_Fint *ierror);

/* The Fortran callbacks of one request, its C extra_state; the free
 * callback, which the runtime calls last, frees it. */
struct grequest_f {
    grequest_query_f *query;
    grequest_free_f *free;
    grequest_cancel_f *cancel;
    MPI_Aint extra_state;
};

static int grequest_query(void *extra_state, MPI_Status *status)
{
    struct grequest_f *g = extra_state;
    MPI_Fint ierror = MPI_SUCCESS;
    /* a Fortran status is the C one: MPI_STATUS_SIZE integers alike */
    g->query(&g->extra_state, (MPI_Fint *)status, &ierror);
    return ierror;
}

static int grequest_free(void *extra_state)
{
    struct grequest_f *g = extra_state;
    MPI_Fint ierror = MPI_SUCCESS;
    g->free(&g->extra_state, &ierror);
    free(g);
    return ierror;
}

static int grequest_cancel(void *extra_state, int complete)
{
    struct grequest_f *g = extra_state;
    MPI_Fint ierror = MPI_SUCCESS, fcomplete = BMPI_F_LOGICAL(complete);
    g->cancel(&g->extra_state, &fcomplete, &ierror);
    return ierror;
}

void pmpi_grequest_start_(grequest_query_f *query, grequest_free_f *free_fn, grequest_cancel_f *cancel,
                          MPI_Aint *extra_state, MPI_Fint *request, MPI_Fint *ierror);
void pmpi_grequest_start_(grequest_query_f *query, grequest_free_f *free_fn, grequest_cancel_f *cancel,
                          MPI_Aint *extra_state, MPI_Fint *request, MPI_Fint *ierror)
{
    struct grequest_f *g = malloc(sizeof(*g));
    if (!g) {
        /* through MPI_COMM_SELF's handler, where C reports errors on no object */
        PMPI_Comm_call_errhandler(MPI_COMM_SELF, MPI_ERR_NO_MEM);
        ret(ierror, MPI_ERR_NO_MEM);
        return;
    }
    *g = (struct grequest_f){.query = query, .free = free_fn, .cancel = cancel, .extra_state = *extra_state};
    MPI_Request r = MPI_REQUEST_NULL;
    /* a null procedure is refused by C, with C's message */
    int rc = PMPI_Grequest_start(query ? grequest_query : NULL, free_fn ? grequest_free : NULL,
                                 cancel ? grequest_cancel : NULL, g, &r);
    if (rc == MPI_SUCCESS)
        *request = MPI_Request_c2f(r);
    else
        free(g);
    ret(ierror, rc);
}
BMPI_F77_NAMES(grequest_start, GREQUEST_START)
BMPI_F08_NAME(grequest_start)

/* --- data representations -------------------------------------------------- */

typedef void bmpi_f_extent_function(MPI_Fint *datatype, MPI_Aint *extent, MPI_Aint *extra_state,
                                    MPI_Fint *ierror);

/* A representation registered from Fortran: its procedures and the
 * program's extra state, handed to C's registry as the extra state of the
 * C trampolines below. Representations are never unregistered, so it
 * lives as long as the process. */
struct datarep_f {
    bmpi_f_conversion_function *read, *write;
    bmpi_f_extent_function *extent;
    MPI_Aint extra_state;
};

static int datarep_convert(bmpi_f_conversion_function *fn, void *userbuf, MPI_Datatype datatype, int count,
                           void *filebuf, MPI_Offset position, struct datarep_f *d)
{
    MPI_Fint type = PMPI_Type_c2f(datatype), n = count, ierr = MPI_SUCCESS;
    fn(userbuf, &type, &n, filebuf, &position, &d->extra_state, &ierr);
    return ierr;
}

static int datarep_read(void *userbuf, MPI_Datatype datatype, int count, void *filebuf, MPI_Offset position,
                        void *extra_state)
{
    struct datarep_f *d = extra_state;
    return datarep_convert(d->read, userbuf, datatype, count, filebuf, position, d);
}

static int datarep_write(void *userbuf, MPI_Datatype datatype, int count, void *filebuf, MPI_Offset position,
                         void *extra_state)
{
    struct datarep_f *d = extra_state;
    return datarep_convert(d->write, userbuf, datatype, count, filebuf, position, d);
}

static int datarep_extent(MPI_Datatype datatype, MPI_Aint *extent, void *extra_state)
{
    struct datarep_f *d = extra_state;
    MPI_Fint type = PMPI_Type_c2f(datatype), ierr = MPI_SUCCESS;
    d->extent(&type, extent, &d->extra_state, &ierr);
    return ierr;
}

/* MPI_CONVERSION_FN_NULL by any name a program may have its address by */
static bool conversion_null(bmpi_f_proc fn)
{
    static const bmpi_f_proc nulls[] = {
        (bmpi_f_proc)pmpi_conversion_fn_null_,
        (bmpi_f_proc)mpi_conversion_fn_null_,
        (bmpi_f_proc)__mpi_f08_callbacks_MOD_mpi_conversion_fn_null,
        (bmpi_f_proc)__mpi_f08_callbacks_MOD_mpi_conversion_fn_null_c,
    };
    return null_if_in(fn, nulls, sizeof(nulls) / sizeof(nulls[0])) == NULL;
}

void pmpi_register_datarep_(const char *datarep, void (*read_fn)(void), void (*write_fn)(void),
                            void (*extent_fn)(void), MPI_Aint *extra_state, MPI_Fint *ierror, size_t datarep_len);
void pmpi_register_datarep_(const char *datarep, void (*read_fn)(void), void (*write_fn)(void),
                            void (*extent_fn)(void), MPI_Aint *extra_state, MPI_Fint *ierror, size_t datarep_len)
{
    /* the name without Fortran's trailing blanks */
    while (datarep_len > 0 && datarep[datarep_len - 1] == ' ')
        datarep_len--;
    char *name = strndup(datarep, datarep_len);
    struct datarep_f *d = malloc(sizeof(*d));
    if (!name || !d) {
        free(name);
        free(d);
        PMPI_Comm_call_errhandler(MPI_COMM_SELF, MPI_ERR_NO_MEM);
        ret(ierror, MPI_ERR_NO_MEM);
        return;
    }
    *d = (struct datarep_f){.read = (bmpi_f_conversion_function *)read_fn,
                            .write = (bmpi_f_conversion_function *)write_fn,
                            .extent = (bmpi_f_extent_function *)extent_fn,
                            .extra_state = *extra_state};
    /* a null extent procedure is refused by C, with C's message */
    int rc = PMPI_Register_datarep(name, !read_fn || conversion_null(read_fn) ? NULL : datarep_read,
                                   !write_fn || conversion_null(write_fn) ? NULL : datarep_write,
                                   extent_fn ? datarep_extent : NULL, d);
    if (rc != MPI_SUCCESS)
        free(d);
    free(name);
    ret(ierror, rc);
}
BMPI_F77_NAMES(register_datarep, REGISTER_DATAREP)
BMPI_F08_NAME(register_datarep)
