/*
 * runtime/lang.h: the hooks the language bindings above the runtime
 * (fortran/) use besides the MPI C API, exported from libbmpi as
 * bmpi_lang_*. Needs nothing but mpi.h.
 *
 * The runtime calls user callbacks with the ABI of the language they were
 * written in, so objects that hold callbacks are created here with a
 * language tag. Attribute values are address-sized words set as a pointer
 * (C) or as an integer (Fortran); each language gets them back as MPI 4.1
 * section 19.3.7 says (docs/fortran-internals.md):
 *
 *                       C gets                         Fortran gets
 *   set from C          the pointer                    the address as an integer
 *   set from Fortran    a pointer to the integer       the integer
 *   predefined          a pointer to the int           the int
 */
#ifndef BMPI_RUNTIME_LANG_H
#define BMPI_RUNTIME_LANG_H

#include <mpi.h>

enum bmpi_lang { BMPI_LANG_C, BMPI_LANG_FORTRAN };

/* The objects the runtime caches attributes on. */
enum bmpi_attr_obj { BMPI_ATTR_COMM, BMPI_ATTR_TYPE, BMPI_ATTR_WIN };

/* What a Fortran attribute callback's values are: INTEGER(KIND=
 * MPI_ADDRESS_KIND), or INTEGER for the deprecated MPI_KEYVAL_CREATE
 * (then truncated on the way in, sign-extended on the way out). */
enum bmpi_attr_width { BMPI_ATTR_AINT, BMPI_ATTR_FINT };

/* The Fortran callbacks as gfortran passes them: everything by reference,
 * LOGICAL as an int (0 false), the error code in the last argument. */
typedef void bmpi_f_user_function(void *in, void *inout, MPI_Fint *len, MPI_Fint *datatype);
typedef void bmpi_f_errhandler_function(MPI_Fint *handle, MPI_Fint *errcode);
typedef void bmpi_f_copy_attr_function(MPI_Fint *obj, MPI_Fint *keyval, MPI_Aint *extra_state,
                                       MPI_Aint *val_in, MPI_Aint *val_out, MPI_Fint *flag,
                                       MPI_Fint *ierror);
typedef void bmpi_f_delete_attr_function(MPI_Fint *obj, MPI_Fint *keyval, MPI_Aint *val,
                                         MPI_Aint *extra_state, MPI_Fint *ierror);
typedef void bmpi_f_copy_function(MPI_Fint *obj, MPI_Fint *keyval, MPI_Fint *extra_state,
                                  MPI_Fint *val_in, MPI_Fint *val_out, MPI_Fint *flag,
                                  MPI_Fint *ierror);
typedef void bmpi_f_delete_function(MPI_Fint *obj, MPI_Fint *keyval, MPI_Fint *val,
                                    MPI_Fint *extra_state, MPI_Fint *ierror);

/* MPI_Op_create with fn of lang's ABI (MPI_User_function or
 * bmpi_f_user_function). */
int bmpi_lang_op_create(void (*fn)(void), int commute, enum bmpi_lang lang, MPI_Op *op);

/* MPI_Comm_create_errhandler with fn of lang's ABI
 * (MPI_Comm_errhandler_function or bmpi_f_errhandler_function). */
int bmpi_lang_comm_errhandler_create(void (*fn)(void), enum bmpi_lang lang,
                                     MPI_Errhandler *errhandler);
/* MPI_Win_create_errhandler, the same way (MPI_Win_errhandler_function). */
int bmpi_lang_win_errhandler_create(void (*fn)(void), enum bmpi_lang lang,
                                    MPI_Errhandler *errhandler);
int bmpi_lang_file_errhandler_create(void (*fn)(void), enum bmpi_lang lang, MPI_Errhandler *errhandler);

/* A keyval for obj whose callbacks have lang's ABI and, for Fortran,
 * width's values; a NULL callback is the NULL_COPY_FN/NULL_DELETE_FN one.
 * fn names the MPI call in error messages. */
int bmpi_lang_keyval_create(enum bmpi_attr_obj obj, void (*copy)(void), void (*del)(void),
                            MPI_Aint extra_state, enum bmpi_lang lang, enum bmpi_attr_width width,
                            int *keyval, const char *fn);

/* Set and get an attribute of object handle as Fortran does: an integer
 * value (see the table above). */
int bmpi_lang_attr_set_int(enum bmpi_attr_obj obj, int handle, int keyval, MPI_Aint val,
                           const char *fn);
int bmpi_lang_attr_get_int(enum bmpi_attr_obj obj, int handle, int keyval, MPI_Aint *val,
                           int *flag, const char *fn);

/* The extent of a datatype usable in communication (valid and committed),
 * or MPI_ERR_TYPE without reporting it: a binding that must know it leaves
 * a bad datatype to the C call it makes, which reports it as in C. */
int bmpi_lang_type_extent(MPI_Datatype type, MPI_Aint *extent);

/* A binding's own argument check failed: record why (printf format) for
 * the report, and return errclass. */
int bmpi_lang_err_set(int errclass, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Report errclass for MPI call fn through comm's error handler (MPI_COMM_SELF's
 * for MPI_COMM_NULL), with the reason last recorded, as C's entry points do;
 * returns the code the call returns. */
int bmpi_lang_err_report(MPI_Comm comm, int errclass, const char *fn);

#endif
