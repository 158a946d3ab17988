/*
 * The callback glue of the Fortran bindings (fortran/callbacks.c) and the
 * runtime's language hooks (runtime/lang.h), driven from C: the program
 * calls the Fortran entry points as gfortran does (everything by
 * reference, LOGICAL as 0/1, hidden CHARACTER lengths last) and passes
 * callbacks with Fortran's ABI, so every path runs without the generated
 * modules. Checks that the runtime calls each callback with Fortran's
 * arguments, and the attribute rules of MPI 4.1 section 19.3.7 between C
 * and Fortran (docs/fortran-internals.md).
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test/mpi/testutil.h"

/* the entry points under test, as a Fortran compiler calls them */
void mpi_op_create_(void (*fn)(void), MPI_Fint *commute, MPI_Fint *op, MPI_Fint *ierror);
void mpi_comm_create_errhandler_(void (*fn)(void), MPI_Fint *errhandler, MPI_Fint *ierror);
void mpi_win_create_errhandler_(void (*fn)(void), MPI_Fint *errhandler, MPI_Fint *ierror);
void mpi_win_create_keyval_(void (*copy)(void), void (*del)(void), MPI_Fint *keyval, MPI_Aint *extra,
                            MPI_Fint *ierror);
void mpi_win_set_attr_(MPI_Fint *win, MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *ierror);
void mpi_win_get_attr_(MPI_Fint *win, MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *flag, MPI_Fint *ierror);
void mpi_comm_create_keyval_(void (*copy)(void), void (*del)(void), MPI_Fint *keyval, MPI_Aint *extra,
                             MPI_Fint *ierror);
void mpi_type_create_keyval_(void (*copy)(void), void (*del)(void), MPI_Fint *keyval, MPI_Aint *extra,
                             MPI_Fint *ierror);
void mpi_keyval_create_(void (*copy)(void), void (*del)(void), MPI_Fint *keyval, MPI_Fint *extra,
                        MPI_Fint *ierror);
void mpi_comm_set_attr_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *ierror);
void mpi_comm_get_attr_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *flag, MPI_Fint *ierror);
void mpi_comm_set_attr_f08_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *ierror);
void mpi_comm_get_attr_f08_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *flag, MPI_Fint *ierror);
void mpi_type_set_attr_(MPI_Fint *type, MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *ierror);
void mpi_type_get_attr_(MPI_Fint *type, MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *flag, MPI_Fint *ierror);
void mpi_attr_put_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Fint *val, MPI_Fint *ierror);
void mpi_attr_get_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Fint *val, MPI_Fint *flag, MPI_Fint *ierror);
void mpi_grequest_start_(void (*query)(void), void (*free_fn)(void), void (*cancel)(void), MPI_Aint *extra,
                         MPI_Fint *request, MPI_Fint *ierror);
void mpi_register_datarep_(const char *datarep, void (*r)(void), void (*w)(void), void (*e)(void),
                           MPI_Aint *extra, MPI_Fint *ierror, size_t datarep_len);
void mpi_comm_null_copy_fn_(void);
void mpi_comm_null_delete_fn_(void);
void mpi_comm_dup_fn_(void);
void mpi_conversion_fn_null_(void);
void __mpi_f08_callbacks_MOD_mpi_comm_null_copy_fn(void);

#define FPROC(f) ((void (*)(void))(f))
#define FCHK(call)                                                                    \
    do {                                                                              \
        MPI_Fint ierr_ = -1;                                                          \
        call;                                                                         \
        CHECK(ierr_ == MPI_SUCCESS, "%s gave ierror %d", #call, (int)ierr_);          \
    } while (0)

/* What the Fortran-ABI callbacks saw. */
static struct {
    int op_calls, op_type_ok;
    MPI_Fint errh_comm, errh_code;
    int copies, deletes;
    MPI_Aint copy_in, copy_extra, delete_val, delete_extra;
    MPI_Fint copy_obj;
    int fcopies;
    MPI_Fint fcopy_in, fcopy_extra, fdelete_val;
    MPI_Fint copy_error; /* what the next copy callback returns */
    int greq_freed;
    int extent_calls, extent_extra_ok;
    MPI_Aint greq_extra;
} seen;

/* a Fortran op, associative but not commutative: decimal concatenation
 * on MPI_INTEGER (12 op 3 = 123) */
static void f_op(void *in, void *inout, MPI_Fint *len, MPI_Fint *type)
{
    seen.op_calls++;
    seen.op_type_ok = *type == MPI_Type_c2f(MPI_INTEGER);
    for (MPI_Fint i = 0; i < *len; i++) {
        MPI_Fint *b = (MPI_Fint *)inout + i, shift = 1;
        while (shift <= *b)
            shift *= 10;
        *b += ((MPI_Fint *)in)[i] * shift;
    }
}

static void f_errh(MPI_Fint *comm, MPI_Fint *code)
{
    seen.errh_comm = *comm;
    seen.errh_code = *code;
}

static void f_copy(MPI_Fint *obj, MPI_Fint *keyval, MPI_Aint *extra, MPI_Aint *in, MPI_Aint *out, MPI_Fint *flag,
                   MPI_Fint *ierror)
{
    (void)keyval;
    seen.copies++;
    seen.copy_obj = *obj;
    seen.copy_in = *in;
    seen.copy_extra = *extra;
    *out = *in + 1;
    *flag = 1;
    *ierror = seen.copy_error;
}

static void f_delete(MPI_Fint *obj, MPI_Fint *keyval, MPI_Aint *val, MPI_Aint *extra, MPI_Fint *ierror)
{
    (void)obj, (void)keyval;
    seen.deletes++;
    seen.delete_val = *val;
    seen.delete_extra = *extra;
    *ierror = MPI_SUCCESS;
}

/* the deprecated MPI_KEYVAL_CREATE's, on INTEGERs */
static void f_copy_int(MPI_Fint *obj, MPI_Fint *keyval, MPI_Fint *extra, MPI_Fint *in, MPI_Fint *out,
                       MPI_Fint *flag, MPI_Fint *ierror)
{
    (void)obj, (void)keyval;
    seen.fcopies++;
    seen.fcopy_in = *in;
    seen.fcopy_extra = *extra;
    *out = *in * 10;
    *flag = 1;
    *ierror = MPI_SUCCESS;
}

static void f_delete_int(MPI_Fint *obj, MPI_Fint *keyval, MPI_Fint *val, MPI_Fint *extra, MPI_Fint *ierror)
{
    (void)obj, (void)keyval, (void)extra;
    seen.fdelete_val = *val;
    *ierror = MPI_SUCCESS;
}

static void f_greq_query(MPI_Aint *extra, MPI_Fint *status, MPI_Fint *ierror)
{
    seen.greq_extra = *extra;
    status[2] = 0;  /* MPI_SOURCE */
    status[3] = 77; /* MPI_TAG */
    status[4] = MPI_SUCCESS;
    *ierror = MPI_SUCCESS;
}

static void f_greq_free(MPI_Aint *extra, MPI_Fint *ierror)
{
    seen.greq_freed = *extra == 1234;
    *ierror = MPI_SUCCESS;
}

static void f_greq_cancel(MPI_Aint *extra, MPI_Fint *complete, MPI_Fint *ierror)
{
    (void)extra, (void)complete;
    *ierror = MPI_SUCCESS;
}

static void test_op(void)
{
    MPI_Fint op, commute = 0, ierr = -1;
    mpi_op_create_(FPROC(f_op), &commute, &op, &ierr);
    CHECK(ierr == MPI_SUCCESS, "ierror %d", (int)ierr);
    int c = -1;
    MPICHK(MPI_Op_commutative(MPI_Op_f2c(op), &c));
    CHECK(c == 0, "LOGICAL .false. commute gave a commutative op");
    /* in rank order: the digits 1 2 ... size */
    MPI_Fint x = tu_rank + 1, r = -1, want = 0;
    for (int i = 0; i < tu_size; i++)
        want = 10 * want + (i + 1);
    MPICHK(MPI_Allreduce(&x, &r, 1, MPI_INTEGER, MPI_Op_f2c(op), MPI_COMM_WORLD));
    CHECK(r == want, "Allreduce with a Fortran op: %d, want %d", (int)r, (int)want);
    if (tu_size > 1)
        CHECK(seen.op_calls > 0 && seen.op_type_ok, "op called %d times, datatype ok %d", seen.op_calls,
              seen.op_type_ok);
    MPI_Op h = MPI_Op_f2c(op);
    MPICHK(MPI_Op_free(&h));
}

static void test_errhandler(void)
{
    MPI_Fint eh, ierr = -1;
    mpi_comm_create_errhandler_(FPROC(f_errh), &eh, &ierr);
    CHECK(ierr == MPI_SUCCESS, "ierror %d", (int)ierr);
    MPI_Comm dup;
    MPICHK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPICHK(MPI_Comm_set_errhandler(dup, MPI_Errhandler_f2c(eh)));
    MPICHK(MPI_Comm_call_errhandler(dup, MPI_ERR_OTHER));
    CHECK(seen.errh_comm == MPI_Comm_c2f(dup) && seen.errh_code == MPI_ERR_OTHER,
          "handler saw comm 0x%x code %d", (unsigned)seen.errh_comm, (int)seen.errh_code);
    int rc = MPI_Send(&rc, 1, MPI_INT, -5, 0, dup);
    CHECK(rc == MPI_ERR_RANK && seen.errh_code == MPI_ERR_RANK, "bad rank: rc %d, handler saw %d", rc,
          (int)seen.errh_code);
    MPI_Errhandler h = MPI_Errhandler_f2c(eh);
    MPICHK(MPI_Errhandler_free(&h));
    MPICHK(MPI_Comm_free(&dup));
}

/* Fortran keyval, integer values, MPI_Comm_dup through a Fortran copy
 * callback, C's view of a Fortran value and Fortran's of a C pointer. */
static void test_comm_attr(void)
{
    MPI_Fint kv, world = MPI_Comm_c2f(MPI_COMM_WORLD), flag = -1;
    MPI_Aint extra = 77, v = -42;
    FCHK(mpi_comm_create_keyval_(FPROC(f_copy), FPROC(f_delete), &kv, &extra, &ierr_));
    MPI_Comm comm;
    MPICHK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    MPI_Fint fcomm = MPI_Comm_c2f(comm);
    FCHK(mpi_comm_set_attr_(&fcomm, &kv, &v, &ierr_));
    MPI_Aint got = 0;
    FCHK(mpi_comm_get_attr_(&fcomm, &kv, &got, &flag, &ierr_));
    CHECK(flag == 1 && got == -42, "Fortran get: flag %d value %ld", (int)flag, (long)got);
    void *p = NULL;
    int cflag = 0;
    MPICHK(MPI_Comm_get_attr(comm, kv, &p, &cflag));
    CHECK(cflag && p && *(MPI_Aint *)p == -42, "C gets a pointer to the integer set from Fortran");

    MPI_Comm copy;
    MPICHK(MPI_Comm_dup(comm, &copy));
    CHECK(seen.copies == 1 && seen.copy_in == -42 && seen.copy_extra == 77 && seen.copy_obj == fcomm,
          "copy callback: %d calls, in %ld, extra %ld, obj 0x%x", seen.copies, (long)seen.copy_in,
          (long)seen.copy_extra, (unsigned)seen.copy_obj);
    MPI_Fint fcopy = MPI_Comm_c2f(copy);
    mpi_comm_get_attr_f08_(&fcopy, &kv, &got, &flag, NULL);
    CHECK(flag == 1 && got == -41, "copy's value %ld", (long)got);
    MPICHK(MPI_Comm_free(&copy));
    CHECK(seen.deletes == 1 && seen.delete_val == -41 && seen.delete_extra == 77, "delete callback: %d, val %ld",
          seen.deletes, (long)seen.delete_val);

    /* a copy callback's error is MPI_Comm_dup's */
    seen.copy_error = MPI_ERR_OTHER;
    MPI_Comm bad = MPI_COMM_NULL;
    int rc = MPI_Comm_dup(comm, &bad);
    CHECK(rc == MPI_ERR_OTHER, "MPI_Comm_dup after a failing Fortran copy callback: %d", rc);
    seen.copy_error = MPI_SUCCESS;

    /* set from C: Fortran gets the address */
    static int cval = 5;
    MPICHK(MPI_Comm_set_attr(comm, kv, &cval));
    FCHK(mpi_comm_get_attr_(&fcomm, &kv, &got, &flag, &ierr_));
    CHECK(flag == 1 && got == (MPI_Aint)(intptr_t)&cval, "Fortran gets the address of a C attribute");
    MPICHK(MPI_Comm_get_attr(comm, kv, &p, &cflag));
    CHECK(cflag && p == &cval, "C gets its own pointer back");

    /* f08 entry with ierror absent */
    v = 9;
    mpi_comm_set_attr_f08_(&fcomm, &kv, &v, NULL);
    FCHK(mpi_comm_get_attr_(&fcomm, &kv, &got, &flag, &ierr_));
    CHECK(got == 9, "after the f08 set: %ld", (long)got);

    /* predefined: the integer itself */
    MPI_Fint tag_ub = MPI_TAG_UB;
    FCHK(mpi_comm_get_attr_(&world, &tag_ub, &got, &flag, &ierr_));
    MPICHK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &p, &cflag));
    CHECK(flag == 1 && cflag && got == *(int *)p, "MPI_TAG_UB: Fortran %ld, C %d", (long)got, *(int *)p);

    MPICHK(MPI_Comm_free(&comm));
    int k = kv;
    MPICHK(MPI_Comm_free_keyval(&k));
}

/* The predefined procedures passed from Fortran behave as C's. */
static void test_predefined_fns(void)
{
    MPI_Fint kv_null, kv_null08, kv_dup, flag = -1;
    MPI_Aint extra = 0, v = 31, got = 0;
    FCHK(mpi_comm_create_keyval_(FPROC(mpi_comm_null_copy_fn_), FPROC(mpi_comm_null_delete_fn_), &kv_null, &extra,
                                 &ierr_));
    FCHK(mpi_comm_create_keyval_(FPROC(__mpi_f08_callbacks_MOD_mpi_comm_null_copy_fn),
                                 FPROC(mpi_comm_null_delete_fn_), &kv_null08, &extra, &ierr_));
    FCHK(mpi_comm_create_keyval_(FPROC(mpi_comm_dup_fn_), FPROC(mpi_comm_null_delete_fn_), &kv_dup, &extra,
                                 &ierr_));
    MPI_Comm comm, copy;
    MPICHK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    MPI_Fint fcomm = MPI_Comm_c2f(comm);
    FCHK(mpi_comm_set_attr_(&fcomm, &kv_null, &v, &ierr_));
    FCHK(mpi_comm_set_attr_(&fcomm, &kv_null08, &v, &ierr_));
    FCHK(mpi_comm_set_attr_(&fcomm, &kv_dup, &v, &ierr_));
    static int cval = 8;
    MPI_Fint kv_cdup;
    FCHK(mpi_comm_create_keyval_(FPROC(mpi_comm_dup_fn_), FPROC(mpi_comm_null_delete_fn_), &kv_cdup, &extra,
                                 &ierr_));
    MPICHK(MPI_Comm_set_attr(comm, kv_cdup, &cval));
    MPICHK(MPI_Comm_dup(comm, &copy));
    MPI_Fint fcopy = MPI_Comm_c2f(copy);
    FCHK(mpi_comm_get_attr_(&fcopy, &kv_null, &got, &flag, &ierr_));
    CHECK(flag == 0, "MPI_COMM_NULL_COPY_FN copied the attribute");
    FCHK(mpi_comm_get_attr_(&fcopy, &kv_null08, &got, &flag, &ierr_));
    CHECK(flag == 0, "mpi_f08's MPI_COMM_NULL_COPY_FN copied the attribute");
    FCHK(mpi_comm_get_attr_(&fcopy, &kv_dup, &got, &flag, &ierr_));
    CHECK(flag == 1 && got == 31, "MPI_COMM_DUP_FN: flag %d value %ld", (int)flag, (long)got);
    /* Fortran's DUP_FN keeps a C pointer a pointer */
    void *p = NULL;
    int cflag = 0;
    MPICHK(MPI_Comm_get_attr(copy, kv_cdup, &p, &cflag));
    CHECK(cflag && p == &cval, "Fortran MPI_COMM_DUP_FN on a C pointer gave %p, want %p", p, (void *)&cval);
    MPICHK(MPI_Comm_free(&copy));
    MPICHK(MPI_Comm_free(&comm));
    int ks[] = {kv_null, kv_null08, kv_dup, kv_cdup};
    for (int i = 0; i < 4; i++)
        MPICHK(MPI_Comm_free_keyval(&ks[i]));
}

/* MPI_KEYVAL_CREATE / MPI_ATTR_PUT / MPI_ATTR_GET on INTEGERs */
static void test_deprecated(void)
{
    MPI_Fint kv, extra = 6, v = -5, got = 0, flag = -1;
    FCHK(mpi_keyval_create_(FPROC(f_copy_int), FPROC(f_delete_int), &kv, &extra, &ierr_));
    MPI_Comm comm, copy;
    MPICHK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    MPI_Fint fcomm = MPI_Comm_c2f(comm);
    FCHK(mpi_attr_put_(&fcomm, &kv, &v, &ierr_));
    FCHK(mpi_attr_get_(&fcomm, &kv, &got, &flag, &ierr_));
    CHECK(flag == 1 && got == -5, "MPI_ATTR_GET: %d", (int)got);
    MPI_Aint wide = 0;
    FCHK(mpi_comm_get_attr_(&fcomm, &kv, &wide, &flag, &ierr_));
    CHECK(wide == -5, "MPI_ATTR_PUT's INTEGER is sign-extended: %ld", (long)wide);
    MPICHK(MPI_Comm_dup(comm, &copy));
    CHECK(seen.fcopies == 1 && seen.fcopy_in == -5 && seen.fcopy_extra == 6, "INTEGER copy callback: in %d extra %d",
          (int)seen.fcopy_in, (int)seen.fcopy_extra);
    MPI_Fint fcopy = MPI_Comm_c2f(copy);
    FCHK(mpi_attr_get_(&fcopy, &kv, &got, &flag, &ierr_));
    CHECK(flag == 1 && got == -50, "copy: %d", (int)got);
    MPICHK(MPI_Comm_free(&copy));
    CHECK(seen.fdelete_val == -50, "INTEGER delete callback saw %d", (int)seen.fdelete_val);
    MPICHK(MPI_Comm_free(&comm));
    int k = kv;
    MPICHK(MPI_Comm_free_keyval(&k));
}

static void test_type_attr(void)
{
    MPI_Fint kv, flag = -1;
    MPI_Aint extra = 3, v = 1000, got = 0;
    FCHK(mpi_type_create_keyval_(FPROC(f_copy), FPROC(f_delete), &kv, &extra, &ierr_));
    MPI_Datatype t, t2;
    MPICHK(MPI_Type_contiguous(2, MPI_INTEGER, &t));
    MPI_Fint ft = MPI_Type_c2f(t);
    FCHK(mpi_type_set_attr_(&ft, &kv, &v, &ierr_));
    int before = seen.copies;
    MPICHK(MPI_Type_dup(t, &t2));
    MPI_Fint ft2 = MPI_Type_c2f(t2);
    FCHK(mpi_type_get_attr_(&ft2, &kv, &got, &flag, &ierr_));
    CHECK(seen.copies == before + 1 && flag == 1 && got == 1001, "type copy: flag %d value %ld", (int)flag,
          (long)got);
    void *p = NULL;
    int cflag = 0;
    MPICHK(MPI_Type_get_attr(t, kv, &p, &cflag));
    CHECK(cflag && *(MPI_Aint *)p == 1000, "C's view of a Fortran datatype attribute");
    MPICHK(MPI_Type_free(&t2));
    MPICHK(MPI_Type_free(&t));
    int k = kv;
    MPICHK(MPI_Type_free_keyval(&k));
}

/* Window keyvals, attributes and error handlers from Fortran: integer
 * values, the predefined attributes as integers, the delete callback at
 * MPI_Win_free and a handler called with the window. */
static void test_win(void)
{
    static int buf[16];
    MPI_Win win;
    MPICHK(MPI_Win_create(buf, sizeof buf, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_Fint fwin = MPI_Win_c2f(win), kv, flag = -1;
    MPI_Aint extra = 55, v = -7, got = 0;
    FCHK(mpi_win_create_keyval_(FPROC(f_copy), FPROC(f_delete), &kv, &extra, &ierr_));
    FCHK(mpi_win_set_attr_(&fwin, &kv, &v, &ierr_));
    FCHK(mpi_win_get_attr_(&fwin, &kv, &got, &flag, &ierr_));
    CHECK(flag == 1 && got == -7, "Fortran window attribute: flag %d value %ld", (int)flag, (long)got);
    void *p = NULL;
    int cflag = 0;
    MPICHK(MPI_Win_get_attr(win, kv, &p, &cflag));
    CHECK(cflag && p && *(MPI_Aint *)p == -7, "C gets a pointer to the integer set from Fortran");

    MPI_Fint keys[] = {MPI_WIN_BASE, MPI_WIN_SIZE, MPI_WIN_DISP_UNIT, MPI_WIN_CREATE_FLAVOR, MPI_WIN_MODEL};
    MPI_Aint want[] = {(MPI_Aint)(intptr_t)buf, sizeof buf, 4, MPI_WIN_FLAVOR_CREATE, MPI_WIN_UNIFIED};
    for (int i = 0; i < 5; i++) {
        FCHK(mpi_win_get_attr_(&fwin, &keys[i], &got, &flag, &ierr_));
        CHECK(flag == 1 && got == want[i], "predefined window attribute 0x%x: %ld, want %ld", (unsigned)keys[i],
              (long)got, (long)want[i]);
    }

    MPI_Fint eh, ierr = -1;
    mpi_win_create_errhandler_(FPROC(f_errh), &eh, &ierr);
    CHECK(ierr == MPI_SUCCESS, "MPI_WIN_CREATE_ERRHANDLER: ierror %d", (int)ierr);
    MPICHK(MPI_Win_set_errhandler(win, MPI_Errhandler_f2c(eh)));
    MPICHK(MPI_Win_call_errhandler(win, MPI_ERR_RMA_SYNC));
    CHECK(seen.errh_comm == fwin && seen.errh_code == MPI_ERR_RMA_SYNC, "window handler saw 0x%x code %d",
          (unsigned)seen.errh_comm, (int)seen.errh_code);
    MPI_Errhandler h = MPI_Errhandler_f2c(eh);
    MPICHK(MPI_Errhandler_free(&h));

    int deletes = seen.deletes;
    MPICHK(MPI_Win_free(&win));
    CHECK(seen.deletes == deletes + 1 && seen.delete_val == -7 && seen.delete_extra == 55,
          "delete callback at MPI_Win_free: %d calls, val %ld, extra %ld", seen.deletes - deletes,
          (long)seen.delete_val, (long)seen.delete_extra);
    int k = kv;
    MPICHK(MPI_Win_free_keyval(&k));
}

static void test_grequest(void)
{
    MPI_Fint req;
    MPI_Aint extra = 1234;
    FCHK(mpi_grequest_start_(FPROC(f_greq_query), FPROC(f_greq_free), FPROC(f_greq_cancel), &extra, &req, &ierr_));
    MPI_Request r = MPI_Request_f2c(req);
    MPICHK(MPI_Grequest_complete(r));
    MPI_Status st;
    MPICHK(MPI_Wait(&r, &st));
    CHECK(st.MPI_TAG == 77 && seen.greq_extra == 1234 && seen.greq_freed, "tag %d extra %ld freed %d", st.MPI_TAG,
          (long)seen.greq_extra, seen.greq_freed);
    /* a null procedure pointer is refused as in C */
    MPI_Fint ierr = -1;
    mpi_grequest_start_(FPROC(f_greq_query), NULL, FPROC(f_greq_cancel), &extra, &req, &ierr);
    CHECK(ierr == MPI_ERR_ARG, "MPI_GREQUEST_START without free_fn: %d", (int)ierr);
}

/* An extent procedure of the Fortran ABI: MPI_INTEGER is 4 bytes in the
 * file, anything else 8; counts its calls and checks the extra state. */
static void f_extent(MPI_Fint *datatype, MPI_Aint *extent, MPI_Aint *extra, MPI_Fint *ierror)
{
    seen.extent_calls++;
    seen.extent_extra_ok = *extra == 4321;
    *extent = *datatype == MPI_Type_c2f(MPI_INT) ? 4 : 8;
    *ierror = MPI_SUCCESS;
}

/* MPI_REGISTER_DATAREP with MPI_CONVERSION_FN_NULL and an extent procedure
 * written in Fortran, used through a file view (MPI_File_get_type_extent
 * calls it); a second registration of the name is MPI_ERR_DUP_DATAREP. */
static void test_datarep(void)
{
    MPI_Aint extra = 4321;
    FCHK(mpi_register_datarep_("lang_cb_rep  ", FPROC(mpi_conversion_fn_null_), FPROC(mpi_conversion_fn_null_),
                               FPROC(f_extent), &extra, &ierr_, 13));
    MPI_Fint ierr = -1;
    mpi_register_datarep_("lang_cb_rep", FPROC(mpi_conversion_fn_null_), FPROC(mpi_conversion_fn_null_),
                          FPROC(f_extent), &extra, &ierr, 11);
    int cls = -1;
    MPI_Error_class(ierr, &cls);
    CHECK(cls == MPI_ERR_DUP_DATAREP, "MPI_REGISTER_DATAREP of a name again: class %d", cls);
    char path[256];
    const char *dir = getenv("TMPDIR");
    snprintf(path, sizeof(path), "%s/bmpi-lang_cb-%d.dat", dir && *dir ? dir : "/tmp", (int)getpid());
    MPI_File fh;
    MPICHK(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                         MPI_INFO_NULL, &fh));
    MPICHK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "lang_cb_rep", MPI_INFO_NULL));
    MPI_Aint extent = 0;
    seen.extent_calls = 0;
    MPICHK(MPI_File_get_type_extent(fh, MPI_INT, &extent));
    CHECK(extent == 4 && seen.extent_calls >= 1 && seen.extent_extra_ok,
          "extent %ld from the Fortran procedure (%d calls, extra state %s)", (long)extent, seen.extent_calls,
          seen.extent_extra_ok ? "right" : "wrong");
    MPICHK(MPI_File_close(&fh));
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv, "lang_cb");
    test_op();
    test_errhandler();
    test_comm_attr();
    test_predefined_fns();
    test_deprecated();
    test_type_attr();
    test_win();
    test_grequest();
    test_datarep();
    MPICHK(MPI_Finalize());
    return 0;
}
