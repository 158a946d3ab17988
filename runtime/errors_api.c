/*
 * User-defined error classes, codes and strings (MPI_Add_error_class,
 * _code, _string and the MPI 4.1 MPI_Remove_error_*).
 *
 * Predefined classes are their own codes, all at most MPI_ERR_LASTCODE
 * (0x3fffffff, as in the MPICH ABI); user classes and codes share one
 * number space above it, so a user value never collides with a
 * predefined one and MPI_LASTUSEDCODE >= MPI_ERR_LASTCODE always holds.
 *
 * MPI_ERRORS_ABORT: runtime/error.c treats it like MPI_ERRORS_ARE_FATAL and
 * aborts the whole job, which the standard allows (it asks only that the
 * processes of the communicator be aborted; bmpi cannot abort fewer).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/api.h"
#include "runtime/attr.h"
#include "runtime/errors_api.h"

struct user_err {
    int value;
    int errclass; /* == value for a class */
    int ncodes;   /* a class: its live codes other than itself */
    char *string;
};

static struct {
    struct user_err *v; /* sorted by value: values only grow */
    int n, cap;
    int next; /* the next value to hand out */
} errs = {.next = MPI_ERR_LASTCODE + 1};

static struct user_err *lookup(int code)
{
    int lo = 0, hi = errs.n - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (errs.v[mid].value == code)
            return &errs.v[mid];
        if (errs.v[mid].value < code)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return NULL;
}

int bmpi_err_user_lookup(int code, int *errclass, const char **string)
{
    struct user_err *e = code > MPI_ERR_LASTCODE ? lookup(code) : NULL;
    if (!e)
        return 0;
    if (errclass)
        *errclass = e->errclass;
    if (string)
        *string = e->string ? e->string : "";
    return 1;
}

static void update_lastused(void)
{
    bmpi_attr_set_lastusedcode(errs.n ? errs.v[errs.n - 1].value : MPI_ERR_LASTCODE);
}

static int add(int errclass, int *out, const char *fn)
{
    if (errs.next == 0x7fffffff)
        return bmpi_err_noobj(MPI_ERR_OTHER, fn, "no error codes left");
    if (errs.n == errs.cap) {
        int cap = errs.cap ? 2 * errs.cap : 16;
        struct user_err *v = realloc(errs.v, (size_t)cap * sizeof(*v));
        if (!v)
            return bmpi_err_noobj(MPI_ERR_NO_MEM, fn, "out of memory");
        errs.v = v;
        errs.cap = cap;
    }
    int value = errs.next++;
    errs.v[errs.n++] = (struct user_err){value, errclass < 0 ? value : errclass, 0, NULL};
    update_lastused();
    *out = value;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Add_error_class)
int PMPI_Add_error_class(int *errorclass)
{
    if (!errorclass)
        return bmpi_err_noobj(MPI_ERR_ARG, "MPI_Add_error_class", "errorclass is NULL");
    return add(-1, errorclass, "MPI_Add_error_class");
}

BMPI_API(MPI_Add_error_code)
int PMPI_Add_error_code(int errorclass, int *errorcode)
{
    if (!errorcode)
        return bmpi_err_noobj(MPI_ERR_ARG, "MPI_Add_error_code", "errorcode is NULL");
    struct user_err *cls = NULL;
    int predefined = errorclass >= 0 && errorclass < MPI_ERR_LASTCODE &&
                     strcmp(bmpi_err_class_string(errorclass), "unknown error class") != 0;
    if (!predefined) {
        cls = errorclass > MPI_ERR_LASTCODE ? lookup(errorclass) : NULL;
        if (!cls || cls->errclass != cls->value)
            return bmpi_err_noobj(MPI_ERR_ARG, "MPI_Add_error_code", "invalid error class %d", errorclass);
    }
    if (errorclass == MPI_SUCCESS)
        return bmpi_err_noobj(MPI_ERR_ARG, "MPI_Add_error_code", "cannot add codes to MPI_SUCCESS");
    int err = add(errorclass, errorcode, "MPI_Add_error_code");
    if (!err && cls)
        lookup(errorclass)->ncodes++; /* add() may have moved the table */
    return err;
}

BMPI_API(MPI_Add_error_string)
int PMPI_Add_error_string(int errorcode, const char *string)
{
    if (!string)
        return bmpi_err_noobj(MPI_ERR_ARG, "MPI_Add_error_string", "string is NULL");
    if (strnlen(string, MPI_MAX_ERROR_STRING) >= MPI_MAX_ERROR_STRING)
        return bmpi_err_noobj(MPI_ERR_ARG, "MPI_Add_error_string", "string longer than MPI_MAX_ERROR_STRING - 1");
    struct user_err *e = errorcode > MPI_ERR_LASTCODE ? lookup(errorcode) : NULL;
    if (!e)
        return bmpi_err_noobj(MPI_ERR_ARG, "MPI_Add_error_string",
                              "error code %d is not a user-defined class or code", errorcode);
    char *s = strdup(string);
    if (!s)
        return bmpi_err_noobj(MPI_ERR_NO_MEM, "MPI_Add_error_string", "out of memory");
    free(e->string);
    e->string = s;
    return MPI_SUCCESS;
}

static void drop(struct user_err *e)
{
    free(e->string);
    int at = (int)(e - errs.v);
    memmove(e, e + 1, (size_t)(errs.n - at - 1) * sizeof(*e));
    errs.n--;
    update_lastused();
}

BMPI_API(MPI_Remove_error_class)
int PMPI_Remove_error_class(int errorclass)
{
    struct user_err *e = errorclass > MPI_ERR_LASTCODE ? lookup(errorclass) : NULL;
    if (!e || e->errclass != e->value)
        return bmpi_err_noobj(MPI_ERR_ARG, "MPI_Remove_error_class", "%d is not a user-defined error class",
                              errorclass);
    if (e->ncodes)
        return bmpi_err_noobj(MPI_ERR_ARG, "MPI_Remove_error_class",
                              "error class %d still has %d error codes; remove them first", errorclass, e->ncodes);
    drop(e);
    return MPI_SUCCESS;
}

BMPI_API(MPI_Remove_error_code)
int PMPI_Remove_error_code(int errorcode)
{
    struct user_err *e = errorcode > MPI_ERR_LASTCODE ? lookup(errorcode) : NULL;
    if (!e || e->errclass == e->value)
        return bmpi_err_noobj(MPI_ERR_ARG, "MPI_Remove_error_code", "%d is not a user-defined error code",
                              errorcode);
    int cls = e->errclass;
    drop(e);
    struct user_err *c = lookup(cls);
    if (c)
        c->ncodes--;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Remove_error_string)
int PMPI_Remove_error_string(int errorcode)
{
    struct user_err *e = errorcode > MPI_ERR_LASTCODE ? lookup(errorcode) : NULL;
    if (!e || !e->string)
        return bmpi_err_noobj(MPI_ERR_ARG, "MPI_Remove_error_string", "error code %d has no user-defined string",
                              errorcode);
    free(e->string);
    e->string = NULL;
    return MPI_SUCCESS;
}
