/*
 * Attribute caching: keyvals, attributes on communicators (in comm->attrs),
 * on windows (in win->attrs) and on datatypes (in a side table keyed by the
 * handle, since datatypes have no slot), the predefined attributes, and the
 * deprecated MPI-1 spellings (MPI_Keyval_create, MPI_Attr_get, ...).
 * Windows are never duplicated, so window keyvals' copy callbacks are kept
 * but never run.
 *
 * Callbacks written in Fortran (runtime/lang.h) are called with Fortran's
 * ABI, and attribute values set from Fortran are integers that C gets a
 * pointer to (MPI 4.1, 19.3.7; docs/fortran-internals.md).
 *
 * A keyval lives while its handle is not freed or any attribute uses it,
 * so callbacks still run after MPI_Comm_free_keyval; its handle is taken
 * until then, so a second free is told from a later keyval.
 *
 * Callbacks may call back in on the same object: an attribute whose delete
 * callback runs stays in its list, marked, and only that caller unlinks it;
 * copies look each attribute up again before its callback. A callback's
 * error code is the calling function's, and the object keeps its state.
 */
#include "config.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "runtime/api.h"
#include "runtime/attr.h"
#include "runtime/comm.h"
#include "runtime/datatype.h"
#include "runtime/handle.h"
#include "runtime/lang.h"
#include "runtime/p2p.h"
#include "runtime/win.h"
#include "runtime/world.h"

enum kv_kind { KV_COMM, KV_TYPE, KV_WIN };

struct keyval {
    enum kv_kind kind;
    int handle;
    int refs;  /* the handle (until freed) and each attribute */
    int freed; /* the user freed the handle */
    enum bmpi_lang lang;        /* the callbacks' ABI */
    enum bmpi_attr_width width; /* a Fortran callback's values */
    void (*copy)(void);
    void (*del)(void);
    void *extra;
};

/* A value as set: a pointer (from C) or an integer (from Fortran). */
struct attr_val {
    void *ptr;
    MPI_Aint num;
    int is_int;
};

struct attr {
    struct attr *next;
    struct keyval *kv;
    void *val; /* what C gets: the pointer set, or &num for an integer */
    MPI_Aint num;
    int is_int;
    /* its delete callback is running: only that caller removes it */
    int deleting;
};

struct type_attrs {
    struct type_attrs *next;
    MPI_Datatype type;
    struct attr *head;
};

static struct {
    struct bmpi_handle_table keyvals;
    struct type_attrs *types;
    /* values the predefined attributes point to */
    int tag_ub, host, io, wtime_is_global, universe_size, appnum, lastusedcode;
} attrs = {.keyvals = {.type = BMPI_OBJ_KEYVAL}, .lastusedcode = MPI_ERR_LASTCODE};

void bmpi_attr_set_lastusedcode(int code) { attrs.lastusedcode = code; }

/* The handle stays taken until the last reference goes, so a freed keyval
 * is told apart from any later one (a second free is MPI_ERR_KEYVAL). */
static void kv_release(struct keyval *kv)
{
    if (--kv->refs > 0)
        return;
    bmpi_handle_release(&attrs.keyvals, kv->handle);
    free(kv);
}

static const char *kind_name(enum kv_kind k)
{
    static const char *const names[] = {[KV_COMM] = "communicator", [KV_TYPE] = "datatype", [KV_WIN] = "window"};
    return names[k];
}

/* The keyval of a handle of the given kind, or NULL. One the user freed
 * still serves the attributes that use it, as the standard says. */
static struct keyval *kv_get(int keyval, enum kv_kind kind)
{
    struct keyval *kv = bmpi_handle_get(&attrs.keyvals, keyval);
    return kv && kv->kind == kind ? kv : NULL;
}

/* A keyval like proto (kind, language, callbacks, extra state). */
static int create_keyval(const struct keyval *proto, int *keyval, const char *fn)
{
    if (!keyval)
        return bmpi_err_noobj(MPI_ERR_ARG, fn, "keyval is NULL");
    struct keyval *kv = calloc(1, sizeof(*kv));
    if (!kv)
        return bmpi_err_noobj(MPI_ERR_NO_MEM, fn, "out of memory");
    *kv = *proto;
    kv->refs = 1;
    kv->handle = bmpi_handle_new(&attrs.keyvals, kv);
    if (!kv->handle) {
        free(kv);
        return bmpi_err_noobj(MPI_ERR_NO_MEM, fn, "out of keyval handles");
    }
    *keyval = kv->handle;
    return MPI_SUCCESS;
}

static int free_keyval(enum kv_kind kind, int *keyval, const char *fn)
{
    if (!keyval)
        return bmpi_err_noobj(MPI_ERR_ARG, fn, "keyval is NULL");
    struct keyval *kv = kv_get(*keyval, kind);
    if (!kv || kv->freed)
        return bmpi_err_noobj(MPI_ERR_KEYVAL, fn, "invalid %s keyval 0x%x%s", kind_name(kind), (unsigned)*keyval,
                              kv ? " (already freed)" : "");
    kv->freed = 1;
    *keyval = MPI_KEYVAL_INVALID;
    kv_release(kv);
    return MPI_SUCCESS;
}

static void store(struct attr *a, struct attr_val v)
{
    a->num = v.num;
    a->is_int = v.is_int;
    a->val = v.is_int ? &a->num : v.ptr;
}

static struct attr_val value_of(const struct attr *a)
{
    return (struct attr_val){.ptr = a->is_int ? NULL : a->val, .num = a->num, .is_int = a->is_int};
}

/* What Fortran gets: the integer, or the pointer's address. */
static MPI_Aint fortran_word(struct attr_val v) { return v.is_int ? v.num : (MPI_Aint)(intptr_t)v.ptr; }

static int fortran_delete(const struct keyval *kv, int obj, struct attr_val v)
{
    MPI_Fint o = obj, k = kv->handle, ierr = MPI_SUCCESS;
    MPI_Aint val = fortran_word(v), extra = (MPI_Aint)(intptr_t)kv->extra;
    if (kv->width == BMPI_ATTR_FINT) {
        MPI_Fint fval = (MPI_Fint)val, fextra = (MPI_Fint)extra;
        ((bmpi_f_delete_function *)kv->del)(&o, &k, &fval, &fextra, &ierr);
    } else {
        ((bmpi_f_delete_attr_function *)kv->del)(&o, &k, &val, &extra, &ierr);
    }
    return ierr;
}

/* A Fortran copy callback sets an integer; one that hands back what it got
 * (MPI_COMM_DUP_FN) copies the value as it was, pointer or integer. */
static int fortran_copy(const struct keyval *kv, int obj, struct attr_val in, struct attr_val *out, int *flag)
{
    MPI_Fint o = obj, k = kv->handle, fflag = 0 /* .false. */, ierr = MPI_SUCCESS;
    MPI_Aint val = fortran_word(in), extra = (MPI_Aint)(intptr_t)kv->extra, got;
    int same;
    if (kv->width == BMPI_ATTR_FINT) {
        MPI_Fint fin = (MPI_Fint)val, fout = 0, fextra = (MPI_Fint)extra;
        ((bmpi_f_copy_function *)kv->copy)(&o, &k, &fextra, &fin, &fout, &fflag, &ierr);
        got = fout;
        same = fout == (MPI_Fint)val;
    } else {
        MPI_Aint vin = val, vout = 0;
        ((bmpi_f_copy_attr_function *)kv->copy)(&o, &k, &extra, &vin, &vout, &fflag, &ierr);
        got = vout;
        same = vout == val;
    }
    *flag = fflag != 0;
    *out = same ? in : (struct attr_val){.num = got, .is_int = 1};
    return ierr;
}

/* A C copy callback sets a pointer; the DUP functions hand back the
 * pointer to an integer they got, and that copies the integer. */
static int c_copy(const struct keyval *kv, int obj, struct attr_val in, struct attr_val *out, int *flag)
{
    MPI_Aint num = in.num;
    void *cin = in.is_int ? &num : in.ptr, *got = NULL;
    int rc;
    if (kv->kind == KV_COMM)
        rc = ((MPI_Comm_copy_attr_function *)kv->copy)(obj, kv->handle, kv->extra, cin, &got, flag);
    else
        rc = ((MPI_Type_copy_attr_function *)kv->copy)(obj, kv->handle, kv->extra, cin, &got, flag);
    *out = in.is_int && got == cin ? in : (struct attr_val){.ptr = got};
    return rc;
}

/* Call the delete callback of a; its return code (MPI_SUCCESS if none).
 * a stays in its list meanwhile, marked, so the callback may get, set or
 * delete any attribute of obj without a being freed under us. */
static int run_delete(struct attr *a, int obj)
{
    struct keyval *kv = a->kv;
    if (!kv->del)
        return MPI_SUCCESS;
    a->deleting = 1;
    int rc;
    if (kv->lang == BMPI_LANG_FORTRAN)
        rc = fortran_delete(kv, obj, value_of(a));
    else if (kv->kind == KV_COMM)
        rc = ((MPI_Comm_delete_attr_function *)kv->del)(obj, kv->handle, a->val, kv->extra);
    else if (kv->kind == KV_WIN)
        rc = ((MPI_Win_delete_attr_function *)kv->del)(obj, kv->handle, a->val, kv->extra);
    else
        rc = ((MPI_Type_delete_attr_function *)kv->del)(obj, kv->handle, a->val, kv->extra);
    a->deleting = 0;
    if (rc != MPI_SUCCESS)
        bmpi_err_set(rc, "the delete callback of %s keyval 0x%x returned %d", kind_name(kv->kind),
                     (unsigned)kv->handle, rc);
    return rc;
}

static struct attr **find(struct attr **head, struct keyval *kv)
{
    for (; *head; head = &(*head)->next)
        if ((*head)->kv == kv)
            return head;
    return NULL;
}

/* Unlink a, wherever callbacks have left it in the list, and free it. */
static void drop(struct attr **head, struct attr *a)
{
    while (*head != a)
        head = &(*head)->next;
    *head = a->next;
    kv_release(a->kv);
    free(a);
}

static int set_attr(struct attr **head, struct keyval *kv, struct attr_val val, int obj)
{
    struct attr **at = find(head, kv);
    if (at) {
        struct attr *a = *at;
        /* from inside its own delete callback the old value is already
         * being deleted: the new one just takes its place */
        int rc = a->deleting ? MPI_SUCCESS : run_delete(a, obj);
        if (rc == MPI_SUCCESS)
            store(a, val);
        return rc;
    }
    struct attr *a = malloc(sizeof(*a));
    if (!a)
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory for an attribute");
    *a = (struct attr){.kv = kv};
    store(a, val);
    kv->refs++;
    /* append: the list is in the order the attributes were set */
    while (*head)
        head = &(*head)->next;
    *head = a;
    return MPI_SUCCESS;
}

/* A failing callback leaves the attribute in place. Deleting the attribute
 * whose delete callback is running (from inside it) is a no-op: it goes
 * when that callback returns. */
static int delete_attr(struct attr **head, struct keyval *kv, int obj)
{
    struct attr **at = find(head, kv);
    if (!at || (*at)->deleting)
        return MPI_SUCCESS;
    struct attr *a = *at;
    int rc = run_delete(a, obj);
    if (rc == MPI_SUCCESS)
        drop(head, a);
    return rc;
}

static struct attr *last_to_delete(struct attr *a)
{
    struct attr *last = NULL;
    for (; a; a = a->next)
        if (!a->deleting)
            last = a;
    return last;
}

/* Delete every attribute, the last set first (the standard's order for
 * MPI_COMM_SELF at MPI_Finalize, used for every object). Attributes the
 * callbacks set meanwhile are deleted too. A failing callback stops it with
 * that attribute and the older ones in place, unless force (the object
 * goes anyway): then every attribute goes and the first failure is
 * returned. */
static int delete_all(struct attr **head, int obj, int force)
{
    int first_rc = MPI_SUCCESS;
    struct attr *a;
    while ((a = last_to_delete(*head))) {
        int rc = run_delete(a, obj);
        if (rc != MPI_SUCCESS && !force)
            return rc;
        if (first_rc == MPI_SUCCESS)
            first_rc = rc;
        drop(head, a);
    }
    return first_rc;
}

static int run_copy(struct keyval *kv, int old_obj, struct attr_val in, struct attr_val *out, int *flag)
{
    int rc = kv->lang == BMPI_LANG_FORTRAN ? fortran_copy(kv, old_obj, in, out, flag)
                                           : c_copy(kv, old_obj, in, out, flag);
    if (rc != MPI_SUCCESS)
        bmpi_err_set(rc, "the copy callback of %s keyval 0x%x returned %d", kind_name(kv->kind),
                     (unsigned)kv->handle, rc);
    return rc;
}

/* The keyvals of src that have a copy callback, each retained. */
static struct keyval **copy_keyvals(struct attr *src, int *n)
{
    int cnt = 0;
    for (struct attr *a = src; a; a = a->next)
        cnt += a->kv->copy && !a->deleting;
    struct keyval **kvs = malloc((size_t)(cnt ? cnt : 1) * sizeof(*kvs));
    if (!kvs)
        return NULL;
    *n = 0;
    for (struct attr *a = src; a; a = a->next)
        if (a->kv->copy && !a->deleting) {
            a->kv->refs++;
            kvs[(*n)++] = a->kv;
        }
    return kvs;
}

/* Copy callbacks of *src's attributes onto *dst. The callbacks may change
 * *src, so each attribute is looked up again before its callback runs; one
 * deleted meanwhile is not copied. On failure *dst is emptied again. */
static int copy_all(struct attr **src, struct attr **dst, int old_obj, int new_obj)
{
    int n, rc = MPI_SUCCESS;
    struct keyval **kvs = copy_keyvals(*src, &n);
    if (!kvs)
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory copying attributes");
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++) {
        struct attr **at = find(src, kvs[i]);
        if (!at || (*at)->deleting)
            continue;
        struct attr_val out;
        int flag = 0;
        rc = run_copy(kvs[i], old_obj, value_of(*at), &out, &flag);
        if (rc == MPI_SUCCESS && flag)
            rc = set_attr(dst, kvs[i], out, new_obj);
    }
    for (int i = 0; i < n; i++)
        kv_release(kvs[i]);
    free(kvs);
    if (rc != MPI_SUCCESS)
        delete_all(dst, new_obj, 1);
    return rc;
}

/* --- communicators --------------------------------------------------------- */

int bmpi_attr_comm_copy(struct bmpi_comm *old, struct bmpi_comm *new_c)
{
    return copy_all((struct attr **)&old->attrs, (struct attr **)&new_c->attrs, old->handle, new_c->handle);
}

int bmpi_attr_comm_free(struct bmpi_comm *c)
{
    return delete_all((struct attr **)&c->attrs, c->handle, 0);
}

void bmpi_attr_comm_delete_all(struct bmpi_comm *c)
{
    delete_all((struct attr **)&c->attrs, c->handle, 1);
}

int bmpi_attr_finalize_self(void)
{
    struct bmpi_comm *self = bmpi_comm_get(MPI_COMM_SELF);
    int rc = self ? delete_all((struct attr **)&self->attrs, MPI_COMM_SELF, 1) : MPI_SUCCESS;
    /* reported now, while MPI_COMM_SELF and its error handler still exist */
    return rc ? bmpi_err_comm(MPI_COMM_SELF, rc, "MPI_Finalize", NULL) : MPI_SUCCESS;
}

/* The predefined attributes: a pointer to the int, as the standard says. */
static int *predefined(int keyval)
{
    switch (keyval) {
    case MPI_TAG_UB: attrs.tag_ub = INT_MAX; return &attrs.tag_ub;
    case MPI_HOST: attrs.host = MPI_PROC_NULL; return &attrs.host;
    case MPI_IO: attrs.io = MPI_ANY_SOURCE; return &attrs.io;
    case MPI_WTIME_IS_GLOBAL: attrs.wtime_is_global = 0; return &attrs.wtime_is_global;
    case MPI_UNIVERSE_SIZE: attrs.universe_size = bmpi_world.universe_size; return &attrs.universe_size;
    case MPI_APPNUM: attrs.appnum = bmpi_world.appnum; return &attrs.appnum;
    case MPI_LASTUSEDCODE: return &attrs.lastusedcode;
    default: return NULL;
    }
}

/* The communicator and user keyval of a set, get or delete. */
static int comm_keyval(MPI_Comm comm, int keyval, const char *fn, struct bmpi_comm **c, struct keyval **kv)
{
    int err = bmpi_check_comm(comm, fn, c);
    if (err)
        return err;
    if (predefined(keyval))
        return bmpi_err_comm(comm, MPI_ERR_KEYVAL, fn, "predefined attribute 0x%x cannot be set or deleted",
                             (unsigned)keyval);
    if (!(*kv = kv_get(keyval, KV_COMM)))
        return bmpi_err_comm(comm, MPI_ERR_KEYVAL, fn, "invalid communicator keyval 0x%x", (unsigned)keyval);
    return MPI_SUCCESS;
}

BMPI_API(MPI_Comm_create_keyval)
int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function *comm_copy_attr_fn,
                            MPI_Comm_delete_attr_function *comm_delete_attr_fn, int *comm_keyval,
                            void *extra_state)
{
    return create_keyval(&(struct keyval){.kind = KV_COMM, .copy = (void (*)(void))comm_copy_attr_fn,
                                          .del = (void (*)(void))comm_delete_attr_fn, .extra = extra_state},
                         comm_keyval, "MPI_Comm_create_keyval");
}

BMPI_API(MPI_Comm_free_keyval)
int PMPI_Comm_free_keyval(int *comm_keyval)
{
    if (comm_keyval && predefined(*comm_keyval))
        return bmpi_err_noobj(MPI_ERR_KEYVAL, "MPI_Comm_free_keyval", "cannot free predefined keyval 0x%x",
                              (unsigned)*comm_keyval);
    return free_keyval(KV_COMM, comm_keyval, "MPI_Comm_free_keyval");
}

static int comm_set(MPI_Comm comm, int keyval, struct attr_val val, const char *fn)
{
    struct bmpi_comm *c;
    struct keyval *kv;
    int err = comm_keyval(comm, keyval, fn, &c, &kv);
    if (err)
        return err;
    int rc = set_attr((struct attr **)&c->attrs, kv, val, comm);
    return rc ? bmpi_err_comm(comm, rc, fn, NULL) : MPI_SUCCESS;
}

/* The attribute of keyval on comm for a get: *pre for a predefined keyval,
 * else *a (NULL when comm has none). */
static int comm_lookup(MPI_Comm comm, int keyval, const void *val, const int *flag, const char *fn, int **pre,
                       struct attr **a)
{
    struct bmpi_comm *c;
    struct keyval *kv;
    int err = bmpi_check_comm(comm, fn, &c);
    if (err)
        return err;
    if (!val || !flag)
        return bmpi_err_comm(comm, MPI_ERR_ARG, fn, "attribute_val or flag is NULL");
    if ((*pre = predefined(keyval)))
        return MPI_SUCCESS;
    if ((err = comm_keyval(comm, keyval, fn, &c, &kv)))
        return err;
    struct attr **at = find((struct attr **)&c->attrs, kv);
    *a = at ? *at : NULL;
    return MPI_SUCCESS;
}

static int comm_get(MPI_Comm comm, int keyval, void *val, int *flag, const char *fn)
{
    int *pre = NULL;
    struct attr *a = NULL;
    int err = comm_lookup(comm, keyval, val, flag, fn, &pre, &a);
    if (err)
        return err;
    *flag = pre || a;
    if (*flag)
        *(void **)val = pre ? (void *)pre : a->val;
    return MPI_SUCCESS;
}

static int comm_delete(MPI_Comm comm, int keyval, const char *fn)
{
    struct bmpi_comm *c;
    struct keyval *kv;
    int err = comm_keyval(comm, keyval, fn, &c, &kv);
    if (err)
        return err;
    int rc = delete_attr((struct attr **)&c->attrs, kv, comm);
    return rc ? bmpi_err_comm(comm, rc, fn, NULL) : MPI_SUCCESS;
}

BMPI_API(MPI_Comm_set_attr)
int PMPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void *attribute_val)
{
    return comm_set(comm, comm_keyval, (struct attr_val){.ptr = attribute_val}, "MPI_Comm_set_attr");
}

BMPI_API(MPI_Comm_get_attr)
int PMPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void *attribute_val, int *flag)
{
    return comm_get(comm, comm_keyval, attribute_val, flag, "MPI_Comm_get_attr");
}

BMPI_API(MPI_Comm_delete_attr)
int PMPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval)
{
    return comm_delete(comm, comm_keyval, "MPI_Comm_delete_attr");
}

static int dup_fn(void *in, void *out, int *flag)
{
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

BMPI_API(MPI_COMM_DUP_FN)
int PMPI_COMM_DUP_FN(MPI_Comm oldcomm, int comm_keyval, void *extra_state, void *attribute_val_in,
                     void *attribute_val_out, int *flag)
{
    return dup_fn(attribute_val_in, attribute_val_out, flag);
}

BMPI_API(MPI_TYPE_DUP_FN)
int PMPI_TYPE_DUP_FN(MPI_Datatype oldtype, int type_keyval, void *extra_state, void *attribute_val_in,
                     void *attribute_val_out, int *flag)
{
    return dup_fn(attribute_val_in, attribute_val_out, flag);
}

BMPI_API(MPI_WIN_DUP_FN)
int PMPI_WIN_DUP_FN(MPI_Win oldwin, int win_keyval, void *extra_state, void *attribute_val_in,
                    void *attribute_val_out, int *flag)
{
    return dup_fn(attribute_val_in, attribute_val_out, flag);
}

/* --- deprecated MPI-1 names ------------------------------------------------ */

BMPI_API(MPI_DUP_FN)
int PMPI_DUP_FN(MPI_Comm oldcomm, int keyval, void *extra_state, void *attribute_val_in,
                void *attribute_val_out, int *flag)
{
    return dup_fn(attribute_val_in, attribute_val_out, flag);
}

BMPI_API(MPI_Keyval_create)
int PMPI_Keyval_create(MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn, int *keyval,
                       void *extra_state)
{
    return create_keyval(&(struct keyval){.kind = KV_COMM, .copy = (void (*)(void))copy_fn,
                                          .del = (void (*)(void))delete_fn, .extra = extra_state},
                         keyval, "MPI_Keyval_create");
}

BMPI_API(MPI_Keyval_free)
int PMPI_Keyval_free(int *keyval)
{
    return free_keyval(KV_COMM, keyval, "MPI_Keyval_free");
}

BMPI_API(MPI_Attr_put)
int PMPI_Attr_put(MPI_Comm comm, int keyval, void *attribute_val)
{
    return comm_set(comm, keyval, (struct attr_val){.ptr = attribute_val}, "MPI_Attr_put");
}

BMPI_API(MPI_Attr_get)
int PMPI_Attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
    return comm_get(comm, keyval, attribute_val, flag, "MPI_Attr_get");
}

BMPI_API(MPI_Attr_delete)
int PMPI_Attr_delete(MPI_Comm comm, int keyval)
{
    return comm_delete(comm, keyval, "MPI_Attr_delete");
}

/* --- datatypes -------------------------------------------------------------- */

static struct type_attrs **type_slot(MPI_Datatype t)
{
    struct type_attrs **p = &attrs.types;
    while (*p && (*p)->type != t)
        p = &(*p)->next;
    return p;
}

/* The attribute list of t, created when create. An entry lives until its
 * type is freed (or its copy failed), never shorter, so a list pointer
 * held across callbacks stays valid whatever they delete. */
static struct attr **type_list(MPI_Datatype t, int create)
{
    struct type_attrs **p = type_slot(t);
    if (!*p) {
        if (!create || !(*p = calloc(1, sizeof(**p))))
            return NULL;
        (*p)->type = t;
    }
    return &(*p)->head;
}

static void type_list_drop_if_empty(MPI_Datatype t)
{
    struct type_attrs **p = type_slot(t);
    if (*p && !(*p)->head) {
        struct type_attrs *e = *p;
        *p = e->next;
        free(e);
    }
}

int bmpi_attr_type_copy(MPI_Datatype old, MPI_Datatype new_t)
{
    struct attr **src = type_list(old, 0);
    if (!src)
        return MPI_SUCCESS;
    struct attr **dst = type_list(new_t, 1);
    if (!dst)
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory copying attributes");
    int rc = copy_all(src, dst, old, new_t);
    type_list_drop_if_empty(new_t);
    return rc;
}

/* MPI_Finalize, once every communicator and datatype is gone: the
 * attributes of datatypes the program never freed (MPI runs delete
 * callbacks at finalize for MPI_COMM_SELF's only) and the keyvals it never
 * freed (drop() frees those the program did free with their last
 * attribute). */
void bmpi_attr_finalize(void)
{
    while (attrs.types) {
        struct type_attrs *t = attrs.types;
        attrs.types = t->next;
        while (t->head)
            drop(&t->head, t->head);
        free(t);
    }
    for (int i = 0; i < attrs.keyvals.used; i++)
        free(attrs.keyvals.objs[i]);
    bmpi_handle_table_free(&attrs.keyvals);
}

int bmpi_attr_type_delete_all(MPI_Datatype t)
{
    struct attr **l = type_list(t, 0);
    if (!l)
        return MPI_SUCCESS;
    int rc = delete_all(l, t, 0);
    type_list_drop_if_empty(t);
    return rc;
}

static int type_kv(MPI_Datatype type, int keyval, const char *fn, struct keyval **kv)
{
    if (!bmpi_dt_get(type))
        return bmpi_err_noobj(MPI_ERR_TYPE, fn, "invalid datatype 0x%x", (unsigned)type);
    if (!(*kv = kv_get(keyval, KV_TYPE)))
        return bmpi_err_noobj(MPI_ERR_KEYVAL, fn, "invalid datatype keyval 0x%x", (unsigned)keyval);
    return MPI_SUCCESS;
}

BMPI_API(MPI_Type_create_keyval)
int PMPI_Type_create_keyval(MPI_Type_copy_attr_function *type_copy_attr_fn,
                            MPI_Type_delete_attr_function *type_delete_attr_fn, int *type_keyval,
                            void *extra_state)
{
    return create_keyval(&(struct keyval){.kind = KV_TYPE, .copy = (void (*)(void))type_copy_attr_fn,
                                          .del = (void (*)(void))type_delete_attr_fn, .extra = extra_state},
                         type_keyval, "MPI_Type_create_keyval");
}

BMPI_API(MPI_Type_free_keyval)
int PMPI_Type_free_keyval(int *type_keyval)
{
    return free_keyval(KV_TYPE, type_keyval, "MPI_Type_free_keyval");
}

static int type_set(MPI_Datatype datatype, int type_keyval, struct attr_val val, const char *fn)
{
    struct keyval *kv;
    int err = type_kv(datatype, type_keyval, fn, &kv);
    if (err)
        return err;
    struct attr **l = type_list(datatype, 1);
    int rc = l ? set_attr(l, kv, val, datatype) : bmpi_err_set(MPI_ERR_NO_MEM, "out of memory for an attribute");
    return rc ? bmpi_err_noobj(rc, fn, NULL) : MPI_SUCCESS;
}

/* The attribute of type_keyval on datatype for a get, NULL when none. */
static int type_lookup(MPI_Datatype datatype, int type_keyval, const void *val, const int *flag, const char *fn,
                       struct attr **a)
{
    struct keyval *kv;
    int err = type_kv(datatype, type_keyval, fn, &kv);
    if (err)
        return err;
    if (!val || !flag)
        return bmpi_err_noobj(MPI_ERR_ARG, fn, "attribute_val or flag is NULL");
    struct attr **l = type_list(datatype, 0);
    struct attr **at = l ? find(l, kv) : NULL;
    *a = at ? *at : NULL;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Type_set_attr)
int PMPI_Type_set_attr(MPI_Datatype datatype, int type_keyval, void *attribute_val)
{
    return type_set(datatype, type_keyval, (struct attr_val){.ptr = attribute_val}, "MPI_Type_set_attr");
}

BMPI_API(MPI_Type_get_attr)
int PMPI_Type_get_attr(MPI_Datatype datatype, int type_keyval, void *attribute_val, int *flag)
{
    struct attr *a = NULL;
    int err = type_lookup(datatype, type_keyval, attribute_val, flag, "MPI_Type_get_attr", &a);
    if (err)
        return err;
    *flag = a != NULL;
    if (a)
        *(void **)attribute_val = a->val;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Type_delete_attr)
int PMPI_Type_delete_attr(MPI_Datatype datatype, int type_keyval)
{
    struct keyval *kv;
    int err = type_kv(datatype, type_keyval, "MPI_Type_delete_attr", &kv);
    if (err)
        return err;
    struct attr **l = type_list(datatype, 0);
    int rc = l ? delete_attr(l, kv, datatype) : MPI_SUCCESS;
    return rc ? bmpi_err_noobj(rc, "MPI_Type_delete_attr", NULL) : MPI_SUCCESS;
}

/* --- windows ---------------------------------------------------------------- */

static bool win_keyval_predefined(int keyval)
{
    return keyval == MPI_WIN_BASE || keyval == MPI_WIN_SIZE || keyval == MPI_WIN_DISP_UNIT ||
           keyval == MPI_WIN_CREATE_FLAVOR || keyval == MPI_WIN_MODEL;
}

/* A predefined window attribute as C gets it (the standard's "Window
 * Attributes": the base itself, a pointer to each of the others, all
 * filled in at creation) and as Fortran does (each an integer). False for
 * any other keyval. */
static bool win_predefined(struct bmpi_win *w, int keyval, void **c_val, MPI_Aint *f_val)
{
    switch (keyval) {
    case MPI_WIN_BASE: *c_val = w->attr_base; *f_val = (MPI_Aint)(intptr_t)w->attr_base; return true;
    case MPI_WIN_SIZE: *c_val = &w->attr_size; *f_val = w->attr_size; return true;
    case MPI_WIN_DISP_UNIT: *c_val = &w->attr_disp_unit; *f_val = w->attr_disp_unit; return true;
    case MPI_WIN_CREATE_FLAVOR: *c_val = &w->attr_flavor; *f_val = w->attr_flavor; return true;
    case MPI_WIN_MODEL: *c_val = &w->attr_model; *f_val = w->attr_model; return true;
    default: return false;
    }
}

/* The window and user keyval of a set or delete (or of a get of a keyval
 * that is not predefined). */
static int win_attr_keyval(MPI_Win win, int keyval, const char *fn, struct bmpi_win **w, struct keyval **kv)
{
    int err = bmpi_win_check(win, fn, w);
    if (err)
        return err;
    if (win_keyval_predefined(keyval))
        return bmpi_err_win_obj(*w, MPI_ERR_KEYVAL, fn, "predefined attribute 0x%x cannot be set or deleted",
                                (unsigned)keyval);
    if (!(*kv = kv_get(keyval, KV_WIN)))
        return bmpi_err_win_obj(*w, MPI_ERR_KEYVAL, fn, "invalid window keyval 0x%x", (unsigned)keyval);
    return MPI_SUCCESS;
}

int bmpi_attr_win_delete_all(struct bmpi_win *w)
{
    return delete_all((struct attr **)&w->attrs, w->handle, 0);
}

void bmpi_attr_win_force_delete_all(struct bmpi_win *w)
{
    delete_all((struct attr **)&w->attrs, w->handle, 1);
}

BMPI_API(MPI_Win_create_keyval)
int PMPI_Win_create_keyval(MPI_Win_copy_attr_function *win_copy_attr_fn,
                           MPI_Win_delete_attr_function *win_delete_attr_fn, int *win_keyval, void *extra_state)
{
    return create_keyval(&(struct keyval){.kind = KV_WIN, .copy = (void (*)(void))win_copy_attr_fn,
                                          .del = (void (*)(void))win_delete_attr_fn, .extra = extra_state},
                         win_keyval, "MPI_Win_create_keyval");
}

BMPI_API(MPI_Win_free_keyval)
int PMPI_Win_free_keyval(int *win_keyval)
{
    if (win_keyval && win_keyval_predefined(*win_keyval))
        return bmpi_err_noobj(MPI_ERR_KEYVAL, "MPI_Win_free_keyval", "cannot free predefined keyval 0x%x",
                              (unsigned)*win_keyval);
    return free_keyval(KV_WIN, win_keyval, "MPI_Win_free_keyval");
}

static int win_set(MPI_Win win, int keyval, struct attr_val val, const char *fn)
{
    struct bmpi_win *w;
    struct keyval *kv;
    int err = win_attr_keyval(win, keyval, fn, &w, &kv);
    if (err)
        return err;
    int rc = set_attr((struct attr **)&w->attrs, kv, val, win);
    return rc ? bmpi_err_win(win, rc, fn, NULL) : MPI_SUCCESS;
}

/* What a get finds: a predefined attribute (its C and Fortran values), a
 * user attribute, or nothing. */
struct win_found {
    bool predefined;
    void *c_val;
    MPI_Aint f_val;
    struct attr *a;
};

static int win_lookup(MPI_Win win, int keyval, const void *val, const int *flag, const char *fn,
                      struct win_found *found)
{
    struct bmpi_win *w;
    struct keyval *kv;
    int err = bmpi_win_check(win, fn, &w);
    if (err)
        return err;
    if (!val || !flag)
        return bmpi_err_win_obj(w, MPI_ERR_ARG, fn, "attribute_val or flag is NULL");
    if ((found->predefined = win_predefined(w, keyval, &found->c_val, &found->f_val)))
        return MPI_SUCCESS;
    if ((err = win_attr_keyval(win, keyval, fn, &w, &kv)))
        return err;
    struct attr **at = find((struct attr **)&w->attrs, kv);
    found->a = at ? *at : NULL;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Win_set_attr)
int PMPI_Win_set_attr(MPI_Win win, int win_keyval, void *attribute_val)
{
    return win_set(win, win_keyval, (struct attr_val){.ptr = attribute_val}, "MPI_Win_set_attr");
}

BMPI_API(MPI_Win_get_attr)
int PMPI_Win_get_attr(MPI_Win win, int win_keyval, void *attribute_val, int *flag)
{
    struct win_found f = {0};
    int err = win_lookup(win, win_keyval, attribute_val, flag, "MPI_Win_get_attr", &f);
    if (err)
        return err;
    *flag = f.predefined || f.a;
    if (*flag)
        *(void **)attribute_val = f.predefined ? f.c_val : f.a->val;
    return MPI_SUCCESS;
}

/* MPI_Win_get_attr from Fortran: every value an integer (runtime/lang.h). */
static int win_get_int(MPI_Win win, int keyval, MPI_Aint *val, int *flag, const char *fn)
{
    struct win_found f = {0};
    int err = win_lookup(win, keyval, val, flag, fn, &f);
    if (err)
        return err;
    *flag = f.predefined || f.a;
    if (*flag)
        *val = f.predefined ? f.f_val : fortran_word(value_of(f.a));
    return MPI_SUCCESS;
}

BMPI_API(MPI_Win_delete_attr)
int PMPI_Win_delete_attr(MPI_Win win, int win_keyval)
{
    struct bmpi_win *w;
    struct keyval *kv;
    int err = win_attr_keyval(win, win_keyval, "MPI_Win_delete_attr", &w, &kv);
    if (err)
        return err;
    int rc = delete_attr((struct attr **)&w->attrs, kv, win);
    return rc ? bmpi_err_win(win, rc, "MPI_Win_delete_attr", NULL) : MPI_SUCCESS;
}

/* --- the language hooks (runtime/lang.h) ---------------------------------- */

static enum kv_kind kind_of(enum bmpi_attr_obj obj)
{
    static const enum kv_kind kinds[] = {[BMPI_ATTR_COMM] = KV_COMM, [BMPI_ATTR_TYPE] = KV_TYPE,
                                         [BMPI_ATTR_WIN] = KV_WIN};
    return kinds[obj];
}

int bmpi_lang_keyval_create(enum bmpi_attr_obj obj, void (*copy)(void), void (*del)(void), MPI_Aint extra_state,
                            enum bmpi_lang lang, enum bmpi_attr_width width, int *keyval, const char *fn)
{
    return create_keyval(&(struct keyval){.kind = kind_of(obj), .lang = lang, .width = width, .copy = copy,
                                          .del = del, .extra = (void *)(intptr_t)extra_state},
                         keyval, fn);
}

int bmpi_lang_attr_set_int(enum bmpi_attr_obj obj, int handle, int keyval, MPI_Aint val, const char *fn)
{
    struct attr_val v = {.num = val, .is_int = 1};
    switch (obj) {
    case BMPI_ATTR_COMM: return comm_set(handle, keyval, v, fn);
    case BMPI_ATTR_WIN: return win_set(handle, keyval, v, fn);
    default: return type_set(handle, keyval, v, fn);
    }
}

int bmpi_lang_attr_get_int(enum bmpi_attr_obj obj, int handle, int keyval, MPI_Aint *val, int *flag,
                           const char *fn)
{
    if (obj == BMPI_ATTR_WIN)
        return win_get_int(handle, keyval, val, flag, fn);
    int *pre = NULL;
    struct attr *a = NULL;
    int err = obj == BMPI_ATTR_COMM ? comm_lookup(handle, keyval, val, flag, fn, &pre, &a)
                                    : type_lookup(handle, keyval, val, flag, fn, &a);
    if (err)
        return err;
    *flag = pre || a;
    if (*flag)
        *val = pre ? *pre : fortran_word(value_of(a));
    return MPI_SUCCESS;
}
