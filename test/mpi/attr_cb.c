/*
 * Attribute callbacks at the edges the standard's caching chapter
 * describes, one case per argument (all of them without arguments):
 *
 *   reenter   delete callbacks that delete or set attributes of the same
 *             object, their own included; copy callbacks that change the
 *             old object (communicators and datatypes)
 *   keyval    freeing a keyval twice or an invalid one; a keyval freed
 *             while attributes use it serves them until the last goes
 *   errors    a callback's error code is what MPI_Comm_dup, _free,
 *             _delete_attr, _set_attr, MPI_Type_dup, _free ... return,
 *             through the error handler, and the objects stay sane
 *   predef    predefined attributes cannot be set or deleted; the MPI-1
 *             names and the predefined callbacks
 *   copy      the dups copy attributes, the other constructors do not
 *   finalize  MPI_COMM_SELF's attributes are deleted first thing in
 *             MPI_Finalize, the last set first, while MPI still works;
 *             a failing callback is MPI_Finalize's error
 */
#include "testutil.h"

/* What a keyval's callbacks saw and do, passed as its extra_state. */
struct probe {
    int id;
    int key;
    int copies, deletes;
    void *last_deleted;
    int fail; /* error code the callbacks return; 0: MPI_SUCCESS */
    void (*on_copy)(int obj);
    void (*on_delete)(int obj);
};

static struct probe pa = {.id = 1}, pb = {.id = 2}, pc = {.id = 3};

/* ids of the probes whose delete callback ran, in order */
static int deleted_ids[64], ndeleted;

static void reset(struct probe *p)
{
    *p = (struct probe){.id = p->id, .key = p->key};
}

/* The callbacks of every probe keyval: MPI_Comm and MPI_Datatype are both
 * ints, so the communicator and the datatype callback types are one. */
static int probe_copy(int old, int key, void *extra, void *in, void *out, int *flag)
{
    (void)key;
    struct probe *p = extra;
    p->copies++;
    if (p->on_copy)
        p->on_copy(old);
    if (p->fail)
        return p->fail;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

static int probe_delete(int obj, int key, void *val, void *extra)
{
    (void)key;
    struct probe *p = extra;
    p->deletes++;
    p->last_deleted = val;
    if (ndeleted < 64)
        deleted_ids[ndeleted++] = p->id;
    if (p->on_delete)
        p->on_delete(obj);
    return p->fail ? p->fail : MPI_SUCCESS;
}

enum kind { COMM, TYPE };

static struct probe *const probes[] = {&pa, &pb, &pc};

/* Fresh probes a, b and c with keyvals of the given kind. */
static void make_keyvals(enum kind kind)
{
    for (int i = 0; i < 3; i++) {
        struct probe *p = probes[i];
        reset(p);
        if (kind == COMM)
            MPICHK(MPI_Comm_create_keyval(probe_copy, probe_delete, &p->key, p));
        else
            MPICHK(MPI_Type_create_keyval(probe_copy, probe_delete, &p->key, p));
    }
    ndeleted = 0;
}

static void free_keyvals(enum kind kind)
{
    for (int i = 0; i < 3; i++)
        MPICHK(kind == COMM ? MPI_Comm_free_keyval(&probes[i]->key) : MPI_Type_free_keyval(&probes[i]->key));
}

/* A communicator to play on, with fresh communicator probes. */
static MPI_Comm fresh_comm(void)
{
    MPI_Comm c;
    make_keyvals(COMM);
    MPICHK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    return c;
}

static void done_comm(MPI_Comm *c)
{
    MPICHK(MPI_Comm_free(c));
    free_keyvals(COMM);
}

/* The value of p's attribute on comm, or -1 when there is none. */
/* The attribute calls of communicators and datatypes (both handles are
 * ints here), so one scenario serves both. */
struct ops {
    int (*set)(int obj, int key, void *val);
    int (*get)(int obj, int key, void *val, int *flag);
    int (*del)(int obj, int key);
    int (*dup)(int obj, int *copy);
    int (*free)(int *obj);
    int null;
};

static const struct ops comm_ops = {MPI_Comm_set_attr, MPI_Comm_get_attr, MPI_Comm_delete_attr, MPI_Comm_dup,
                                    MPI_Comm_free, MPI_COMM_NULL};
static const struct ops type_ops = {MPI_Type_set_attr, MPI_Type_get_attr, MPI_Type_delete_attr, MPI_Type_dup,
                                    MPI_Type_free, MPI_DATATYPE_NULL};

/* The value of p's attribute on obj, or -1 when there is none. */
static long val(const struct ops *o, int obj, const struct probe *p)
{
    void *v;
    int flag;
    MPICHK(o->get(obj, p->key, &v, &flag));
    return flag ? (long)v : -1;
}

static long comm_val(MPI_Comm comm, const struct probe *p) { return val(&comm_ops, comm, p); }
static long type_val(MPI_Datatype t, const struct probe *p) { return val(&type_ops, t, p); }

/* ------------------------------------------------------------- reenter */

static void comm_del_b(int c) { MPICHK(MPI_Comm_delete_attr(c, pb.key)); }
static void comm_del_a(int c) { MPICHK(MPI_Comm_delete_attr(c, pa.key)); }
static void comm_set_a6(int c) { MPICHK(MPI_Comm_set_attr(c, pa.key, (void *)6L)); }
static void comm_set_c3(int c) { MPICHK(MPI_Comm_set_attr(c, pc.key, (void *)3L)); }
static void comm_del_b_set_c(int c)
{
    comm_del_b(c);
    comm_set_c3(c);
}
static void comm_del_a_b(int c)
{
    comm_del_a(c);
    comm_del_b(c);
}

static void reenter_comm_delete(void)
{
    MPI_Comm c = fresh_comm();

    /* a's delete callback deletes b, set before a */
    pa.on_delete = comm_del_b;
    MPICHK(MPI_Comm_set_attr(c, pb.key, (void *)1L));
    MPICHK(MPI_Comm_set_attr(c, pa.key, (void *)2L));
    MPICHK(MPI_Comm_delete_attr(c, pa.key));
    CHECK(pa.deletes == 1 && pb.deletes == 1, "deletes a %d b %d", pa.deletes, pb.deletes);
    CHECK(comm_val(c, &pa) == -1 && comm_val(c, &pb) == -1, "a %ld b %ld left", comm_val(c, &pa),
          comm_val(c, &pb));

    /* a's delete callback sets c: c stays */
    pa.on_delete = comm_set_c3;
    MPICHK(MPI_Comm_set_attr(c, pa.key, (void *)2L));
    MPICHK(MPI_Comm_delete_attr(c, pa.key));
    CHECK(comm_val(c, &pc) == 3 && comm_val(c, &pa) == -1, "c %ld a %ld", comm_val(c, &pc), comm_val(c, &pa));

    done_comm(&c);
}

static void reenter_comm_delete_self(void)
{
    MPI_Comm c = fresh_comm();
    /* a's delete callback deletes a itself: once, and a is gone */
    pa.on_delete = comm_del_a;
    MPICHK(MPI_Comm_set_attr(c, pa.key, (void *)4L));
    MPICHK(MPI_Comm_delete_attr(c, pa.key));
    CHECK(pa.deletes == 1 && comm_val(c, &pa) == -1, "self delete: %d deletes, a %ld", pa.deletes,
          comm_val(c, &pa));

    /* replacing a whose callback deletes a: the new value stays */
    MPICHK(MPI_Comm_set_attr(c, pa.key, (void *)4L));
    MPICHK(MPI_Comm_set_attr(c, pa.key, (void *)5L));
    CHECK(pa.deletes == 2 && pa.last_deleted == (void *)4L && comm_val(c, &pa) == 5,
          "replace with self delete: %d deletes, a %ld", pa.deletes, comm_val(c, &pa));

    /* replacing a whose callback sets a: no recursion, the caller's value */
    pa.on_delete = comm_set_a6;
    MPICHK(MPI_Comm_set_attr(c, pa.key, (void *)7L));
    CHECK(pa.deletes == 3 && comm_val(c, &pa) == 7, "replace with self set: %d deletes, a %ld", pa.deletes,
          comm_val(c, &pa));

    done_comm(&c);
}

static void reenter_comm_free(void)
{
    MPI_Comm c = fresh_comm();
    /* freeing: a (set last) goes first, deletes b and sets c, which goes
     * after it */
    MPICHK(MPI_Comm_set_attr(c, pb.key, (void *)1L));
    MPICHK(MPI_Comm_set_attr(c, pa.key, (void *)2L));
    pa.on_delete = comm_del_b_set_c;
    ndeleted = 0;
    MPICHK(MPI_Comm_free(&c));
    CHECK(ndeleted == 3 && deleted_ids[0] == pa.id && deleted_ids[1] == pb.id && deleted_ids[2] == pc.id,
          "free order (%d callbacks) %d %d %d", ndeleted, deleted_ids[0], deleted_ids[1], deleted_ids[2]);
    free_keyvals(COMM);
}

static void reenter_comm_copy(void)
{
    MPI_Comm c = fresh_comm(), d;
    MPICHK(MPI_Comm_set_attr(c, pa.key, (void *)1L));
    MPICHK(MPI_Comm_set_attr(c, pb.key, (void *)2L));
    MPICHK(MPI_Comm_set_attr(c, pc.key, (void *)3L));
    /* a's copy callback deletes a and b from the old communicator */
    pa.on_copy = comm_del_a_b;
    MPICHK(MPI_Comm_dup(c, &d));
    CHECK(pa.copies == 1 && pb.copies == 0 && pc.copies == 1, "copies a %d b %d c %d", pa.copies, pb.copies,
          pc.copies);
    CHECK(comm_val(c, &pa) == -1 && comm_val(c, &pb) == -1 && comm_val(c, &pc) == 3, "old: a %ld b %ld c %ld",
          comm_val(c, &pa), comm_val(c, &pb), comm_val(c, &pc));
    CHECK(comm_val(d, &pa) == 1 && comm_val(d, &pb) == -1 && comm_val(d, &pc) == 3, "new: a %ld b %ld c %ld",
          comm_val(d, &pa), comm_val(d, &pb), comm_val(d, &pc));
    MPICHK(MPI_Comm_free(&d));
    done_comm(&c);
}

static void type_del_a(int t) { MPICHK(MPI_Type_delete_attr(t, pa.key)); }
static void type_del_b(int t) { MPICHK(MPI_Type_delete_attr(t, pb.key)); }
static void type_del_a_b(int t)
{
    type_del_a(t);
    type_del_b(t);
}

static void reenter_type(void)
{
    MPI_Datatype t, u;
    make_keyvals(TYPE);
    MPICHK(MPI_Type_contiguous(2, MPI_INT, &t));
    pa.on_delete = type_del_b;
    MPICHK(MPI_Type_set_attr(t, pb.key, (void *)1L));
    MPICHK(MPI_Type_set_attr(t, pa.key, (void *)2L));
    MPICHK(MPI_Type_delete_attr(t, pa.key));
    CHECK(pa.deletes == 1 && pb.deletes == 1 && type_val(t, &pb) == -1, "type: deletes a %d b %d",
          pa.deletes, pb.deletes);
    pa.on_delete = type_del_a;
    MPICHK(MPI_Type_set_attr(t, pa.key, (void *)2L));
    MPICHK(MPI_Type_delete_attr(t, pa.key));
    CHECK(pa.deletes == 2 && type_val(t, &pa) == -1, "type self delete: %d deletes", pa.deletes);

    pa.on_delete = NULL;
    pa.on_copy = type_del_a_b;
    MPICHK(MPI_Type_set_attr(t, pa.key, (void *)1L));
    MPICHK(MPI_Type_set_attr(t, pb.key, (void *)2L));
    MPICHK(MPI_Type_set_attr(t, pc.key, (void *)3L));
    MPICHK(MPI_Type_dup(t, &u));
    CHECK(pa.copies == 1 && pb.copies == 0 && pc.copies == 1, "type copies a %d b %d c %d", pa.copies,
          pb.copies, pc.copies);
    CHECK(type_val(u, &pa) == 1 && type_val(u, &pb) == -1 && type_val(u, &pc) == 3, "type dup: a %ld b %ld c %ld",
          type_val(u, &pa), type_val(u, &pb), type_val(u, &pc));
    /* freeing deletes the last set first, a's callback deleting b on the way */
    pc.on_delete = type_del_a_b;
    MPICHK(MPI_Type_set_attr(u, pb.key, (void *)2L));
    ndeleted = 0;
    MPICHK(MPI_Type_free(&u));
    CHECK(ndeleted == 3 && deleted_ids[0] == pb.id && deleted_ids[1] == pc.id && deleted_ids[2] == pa.id,
          "type free order (%d callbacks) %d %d %d", ndeleted, deleted_ids[0], deleted_ids[1], deleted_ids[2]);
    MPICHK(MPI_Type_free(&t));
    free_keyvals(TYPE);
}

static void case_reenter(void)
{
    reenter_comm_delete();
    reenter_comm_delete_self();
    reenter_comm_free();
    reenter_comm_copy();
    reenter_type();
}

/* -------------------------------------------------------------- keyval */

static void case_keyval(void)
{
    MPI_Comm c = fresh_comm(), d;
    MPICHK(MPI_Comm_set_attr(c, pa.key, (void *)1L));
    int saved = pa.key;
    MPICHK(MPI_Comm_free_keyval(&pa.key));
    CHECK(pa.key == MPI_KEYVAL_INVALID, "free_keyval left 0x%x", (unsigned)pa.key);
    /* freeing it again, even while a keyval made later exists, fails */
    int later;
    MPICHK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &later, NULL));
    int again = saved;
    EXPECT_CLASS(MPI_Comm_free_keyval(&again), MPI_ERR_KEYVAL);
    MPICHK(MPI_Comm_set_attr(c, later, (void *)9L));
    MPICHK(MPI_Comm_free_keyval(&later));

    /* the freed keyval still serves its attribute: get, dup, delete */
    pa.key = saved;
    CHECK(comm_val(c, &pa) == 1, "get with a freed keyval: %ld", comm_val(c, &pa));
    MPICHK(MPI_Comm_dup(c, &d));
    CHECK(pa.copies == 1 && comm_val(d, &pa) == 1, "dup with a freed keyval: %d copies", pa.copies);
    MPICHK(MPI_Comm_delete_attr(c, saved));
    CHECK(pa.deletes == 1, "delete_attr with a freed keyval: %d deletes", pa.deletes);
    MPICHK(MPI_Comm_free(&d));
    CHECK(pa.deletes == 2, "free with a freed keyval: %d deletes", pa.deletes);
    /* the last use went: now the keyval is gone */
    void *v;
    int flag;
    EXPECT_CLASS(MPI_Comm_get_attr(c, saved, &v, &flag), MPI_ERR_KEYVAL);

    int bad = MPI_KEYVAL_INVALID;
    EXPECT_CLASS(MPI_Comm_free_keyval(&bad), MPI_ERR_KEYVAL);
    bad = 0x12345;
    EXPECT_CLASS(MPI_Comm_free_keyval(&bad), MPI_ERR_KEYVAL);
    EXPECT_CLASS(MPI_Comm_free_keyval(NULL), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Keyval_free(&bad), MPI_ERR_KEYVAL);
    int tk;
    MPICHK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &tk, NULL));
    EXPECT_CLASS(MPI_Comm_free_keyval(&tk), MPI_ERR_KEYVAL);
    EXPECT_CLASS(MPI_Type_free_keyval(&pb.key), MPI_ERR_KEYVAL);
    MPICHK(MPI_Type_free_keyval(&tk));
    EXPECT_CLASS(MPI_Type_free_keyval(&tk), MPI_ERR_KEYVAL);

    /* the same for a datatype keyval */
    MPI_Datatype t;
    MPICHK(MPI_Type_contiguous(3, MPI_INT, &t));
    struct probe tp = {.id = 9};
    MPICHK(MPI_Type_create_keyval(probe_copy, probe_delete, &tp.key, &tp));
    MPICHK(MPI_Type_set_attr(t, tp.key, (void *)5L));
    int tsaved = tp.key;
    MPICHK(MPI_Type_free_keyval(&tp.key));
    again = tsaved;
    EXPECT_CLASS(MPI_Type_free_keyval(&again), MPI_ERR_KEYVAL);
    tp.key = tsaved;
    CHECK(type_val(t, &tp) == 5, "type get with a freed keyval");
    MPICHK(MPI_Type_delete_attr(t, tsaved));
    CHECK(tp.deletes == 1, "type delete_attr with a freed keyval: %d deletes", tp.deletes);
    EXPECT_CLASS(MPI_Type_get_attr(t, tsaved, &v, &flag), MPI_ERR_KEYVAL);
    MPICHK(MPI_Type_free(&t));

    MPICHK(MPI_Comm_free(&c));
    MPICHK(MPI_Comm_free_keyval(&pb.key));
    MPICHK(MPI_Comm_free_keyval(&pc.key));
}

/* -------------------------------------------------------------- errors */

static int handler_calls, handler_code;

static void count_errors(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    handler_calls++;
    handler_code = *code;
}

/* The call must return code, after exactly one call of the handler. */
#define EXPECT_CODE(call, code)                                                                   \
    do {                                                                                          \
        handler_calls = 0;                                                                        \
        int rc_ = (call);                                                                         \
        CHECK(rc_ == (code), "%s returned %d, expected the callback's %d", #call, rc_, (code));  \
        CHECK(handler_calls == 1 && handler_code == (code), "%s: handler called %d times, code %d", \
              #call, handler_calls, handler_code);                                                \
    } while (0)

/* On obj (its keyvals made, the error handler that counts set): a failing
 * copy fails the dup, a failing delete fails delete_attr, set_attr over it
 * and the free, each returning code and leaving the attributes as they
 * were; obj is freed at the end. */
static void errors_on(const struct ops *o, int obj, int code)
{
    int d = o->null;
    MPICHK(o->set(obj, pa.key, (void *)1L));
    MPICHK(o->set(obj, pb.key, (void *)2L));
    pb.fail = code;
    EXPECT_CODE(o->dup(obj, &d), code);
    CHECK(d == o->null, "a failed dup returned 0x%x", (unsigned)d);
    /* what was copied before the failure was deleted again */
    CHECK(pa.deletes == pa.copies, "failed dup: a copied %d, deleted %d", pa.copies, pa.deletes);
    pb.fail = 0;

    pa.fail = code;
    EXPECT_CODE(o->del(obj, pa.key), code);
    CHECK(val(o, obj, &pa) == 1, "failed delete_attr left %ld", val(o, obj, &pa));
    EXPECT_CODE(o->set(obj, pa.key, (void *)5L), code);
    CHECK(val(o, obj, &pa) == 1, "failed replace left %ld", val(o, obj, &pa));

    /* freeing: b (set last) goes, a fails: the object stays */
    int keep = obj;
    EXPECT_CODE(o->free(&obj), code);
    CHECK(obj == keep, "failed free changed the handle");
    CHECK(val(o, obj, &pa) == 1 && val(o, obj, &pb) == -1, "after a failed free: a %ld b %ld",
          val(o, obj, &pa), val(o, obj, &pb));
    pa.fail = 0;
    MPICHK(o->free(&obj));
    CHECK(obj == o->null && pa.last_deleted == (void *)1L, "free after the failure");
}

static void errors_comm(int code)
{
    MPI_Comm c = fresh_comm();
    MPI_Errhandler eh;
    MPICHK(MPI_Comm_create_errhandler(count_errors, &eh));
    MPICHK(MPI_Comm_set_errhandler(c, eh));
    MPICHK(MPI_Errhandler_free(&eh));
    /* the MPI-1 name fails alike */
    MPICHK(MPI_Attr_put(c, pc.key, (void *)3L));
    pc.fail = code;
    EXPECT_CODE(MPI_Attr_delete(c, pc.key), code);
    pc.fail = 0;
    MPICHK(MPI_Attr_delete(c, pc.key));
    errors_on(&comm_ops, c, code);
    free_keyvals(COMM);
}

/* Datatype errors go to MPI_COMM_SELF's handler. */
static void errors_type(int code)
{
    MPI_Datatype t;
    MPI_Errhandler eh;
    MPICHK(MPI_Comm_create_errhandler(count_errors, &eh));
    MPICHK(MPI_Comm_set_errhandler(MPI_COMM_SELF, eh));
    make_keyvals(TYPE);
    MPICHK(MPI_Type_contiguous(2, MPI_INT, &t));
    errors_on(&type_ops, t, code);
    MPICHK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MPICHK(MPI_Errhandler_free(&eh));
    free_keyvals(TYPE);
}

/* A user error code of a new class: returned as it is. */
static int user_code(void)
{
    int cls, code;
    MPICHK(MPI_Add_error_class(&cls));
    MPICHK(MPI_Add_error_code(cls, &code));
    return code;
}

static void case_errors(void)
{
    errors_comm(MPI_ERR_OTHER);
    errors_comm(user_code());
    errors_type(MPI_ERR_INTERN);
    errors_type(user_code());
}

/* -------------------------------------------------------------- predef */

static int mpi1_copies, mpi1_deletes;

static int mpi1_copy(MPI_Comm old, int key, void *extra, void *in, void *out, int *flag)
{
    (void)old, (void)key, (void)extra;
    mpi1_copies++;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

static int mpi1_delete(MPI_Comm comm, int key, void *val, void *extra)
{
    (void)comm, (void)key, (void)val, (void)extra;
    mpi1_deletes++;
    return MPI_SUCCESS;
}

static void predefined_read_only(void)
{
    static const int keys[] = {MPI_TAG_UB,  MPI_HOST,   MPI_IO,          MPI_WTIME_IS_GLOBAL,
                               MPI_APPNUM, MPI_UNIVERSE_SIZE, MPI_LASTUSEDCODE};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        int k = keys[i], *v, flag, flag_after;
        MPICHK(MPI_Comm_get_attr(MPI_COMM_WORLD, k, &v, &flag));
        EXPECT_CLASS(MPI_Comm_set_attr(MPI_COMM_WORLD, k, NULL), MPI_ERR_KEYVAL);
        EXPECT_CLASS(MPI_Comm_set_attr(MPI_COMM_SELF, k, NULL), MPI_ERR_KEYVAL);
        EXPECT_CLASS(MPI_Comm_delete_attr(MPI_COMM_WORLD, k), MPI_ERR_KEYVAL);
        EXPECT_CLASS(MPI_Attr_put(MPI_COMM_WORLD, k, NULL), MPI_ERR_KEYVAL);
        EXPECT_CLASS(MPI_Attr_delete(MPI_COMM_WORLD, k), MPI_ERR_KEYVAL);
        EXPECT_CLASS(MPI_Type_set_attr(MPI_INT, k, NULL), MPI_ERR_KEYVAL);
        int copy = k;
        EXPECT_CLASS(MPI_Comm_free_keyval(&copy), MPI_ERR_KEYVAL);
        EXPECT_CLASS(MPI_Keyval_free(&copy), MPI_ERR_KEYVAL);
        CHECK(copy == k, "a failed free changed the keyval");
        MPICHK(MPI_Comm_get_attr(MPI_COMM_WORLD, k, &v, &flag_after));
        CHECK(flag_after == flag, "predefined 0x%x: flag %d, %d before the attempts", (unsigned)k, flag_after, flag);
    }
}

static void mpi1_names(void)
{
    MPI_Comm c;
    void *v;
    int flag, k, k0, kd;
    MPICHK(MPI_Keyval_create(mpi1_copy, mpi1_delete, &k, NULL));
    MPICHK(MPI_Keyval_create(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, &k0, NULL));
    MPICHK(MPI_Keyval_create(MPI_DUP_FN, MPI_NULL_DELETE_FN, &kd, NULL));
    MPICHK(MPI_Attr_put(MPI_COMM_WORLD, k, (void *)11L));
    MPICHK(MPI_Attr_put(MPI_COMM_WORLD, k0, (void *)12L));
    MPICHK(MPI_Comm_set_attr(MPI_COMM_WORLD, kd, (void *)13L));
    MPICHK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    CHECK(mpi1_copies == 1, "MPI_Copy_function ran %d times", mpi1_copies);
    MPICHK(MPI_Attr_get(c, k, &v, &flag));
    CHECK(flag && (long)v == 11, "MPI_Attr_get after dup");
    MPICHK(MPI_Attr_get(c, k0, &v, &flag));
    CHECK(!flag, "MPI_NULL_COPY_FN copied");
    MPICHK(MPI_Comm_get_attr(c, kd, &v, &flag));
    CHECK(flag && (long)v == 13, "MPI_DUP_FN");
    MPICHK(MPI_Attr_put(c, k, (void *)14L));
    CHECK(mpi1_deletes == 1, "MPI_Attr_put over a value: %d deletes", mpi1_deletes);
    MPICHK(MPI_Attr_delete(c, k));
    CHECK(mpi1_deletes == 2, "MPI_Attr_delete: %d deletes", mpi1_deletes);
    MPICHK(MPI_Comm_free(&c));
    MPICHK(MPI_Attr_delete(MPI_COMM_WORLD, k));
    MPICHK(MPI_Attr_delete(MPI_COMM_WORLD, k0));
    MPICHK(MPI_Comm_delete_attr(MPI_COMM_WORLD, kd));
    int saved = k;
    MPICHK(MPI_Keyval_free(&k));
    CHECK(k == MPI_KEYVAL_INVALID, "MPI_Keyval_free left 0x%x", (unsigned)k);
    EXPECT_CLASS(MPI_Keyval_free(&saved), MPI_ERR_KEYVAL);
    MPICHK(MPI_Comm_free_keyval(&k0));
    MPICHK(MPI_Keyval_free(&kd));
}

/* On obj: the NULL copy function copies nothing, the DUP one the value. */
static void null_and_dup_copy(const struct ops *o, int obj, int null_key, int dup_key)
{
    int d;
    MPICHK(o->set(obj, null_key, (void *)1L));
    MPICHK(o->set(obj, dup_key, (void *)2L));
    MPICHK(o->dup(obj, &d));
    struct probe pn = {.key = null_key}, pd = {.key = dup_key};
    CHECK(val(o, d, &pn) == -1, "the NULL copy function copied");
    CHECK(val(o, d, &pd) == 2, "the DUP copy function gave %ld", val(o, d, &pd));
    MPICHK(o->free(&d));
    MPICHK(o->del(obj, null_key));
    MPICHK(o->del(obj, dup_key));
}

static void predefined_callbacks(void)
{
    int cn, cd, tn, td;
    MPICHK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &cn, NULL));
    MPICHK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &cd, NULL));
    null_and_dup_copy(&comm_ops, MPI_COMM_SELF, cn, cd);
    MPICHK(MPI_Comm_free_keyval(&cn));
    MPICHK(MPI_Comm_free_keyval(&cd));

    MPI_Datatype t;
    MPICHK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &tn, NULL));
    MPICHK(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, &td, NULL));
    MPICHK(MPI_Type_contiguous(4, MPI_CHAR, &t));
    null_and_dup_copy(&type_ops, t, tn, td);
    MPICHK(MPI_Type_free(&t));
    MPICHK(MPI_Type_free_keyval(&tn));
    MPICHK(MPI_Type_free_keyval(&td));
}

static void case_predef(void)
{
    predefined_read_only();
    mpi1_names();
    predefined_callbacks();
}

/* ---------------------------------------------------------------- copy */

static void case_copy(void)
{
    MPI_Comm c = fresh_comm(), d;
    MPI_Request rq;
    MPICHK(MPI_Comm_set_attr(c, pa.key, (void *)1L));
    MPICHK(MPI_Comm_idup(c, &d, &rq));
    MPICHK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    CHECK(pa.copies == 1 && comm_val(d, &pa) == 1, "MPI_Comm_idup: %d copies", pa.copies);
    MPICHK(MPI_Comm_free(&d));
    MPICHK(MPI_Comm_dup_with_info(c, MPI_INFO_NULL, &d));
    CHECK(pa.copies == 2 && comm_val(d, &pa) == 1, "MPI_Comm_dup_with_info: %d copies", pa.copies);
    MPICHK(MPI_Comm_free(&d));

    MPICHK(MPI_Comm_split(c, 0, tu_rank, &d));
    CHECK(pa.copies == 2 && comm_val(d, &pa) == -1, "MPI_Comm_split copied (%d copies)", pa.copies);
    MPICHK(MPI_Comm_free(&d));
    MPI_Group g;
    MPICHK(MPI_Comm_group(c, &g));
    MPICHK(MPI_Comm_create(c, g, &d));
    MPICHK(MPI_Group_free(&g));
    CHECK(pa.copies == 2 && comm_val(d, &pa) == -1, "MPI_Comm_create copied (%d copies)", pa.copies);
    MPICHK(MPI_Comm_free(&d));
    done_comm(&c);
    CHECK(pa.deletes == 3, "%d deletes for a set and two copies", pa.deletes);
}

/* ------------------------------------------------------------ finalize */

static int finalize_code;

/* The first attribute set is deleted last: all ran, newest first, and MPI
 * is still all there. */
static void finalize_last(int self)
{
    (void)self;
    CHECK(ndeleted == 3 && deleted_ids[0] == pc.id && deleted_ids[1] == pb.id && deleted_ids[2] == pa.id,
          "MPI_COMM_SELF deletes (%d callbacks) %d %d %d, expected 3 2 1", ndeleted, deleted_ids[0],
          deleted_ids[1], deleted_ids[2]);
    int finalized = 1, sum = -1;
    MPICHK(MPI_Finalized(&finalized));
    CHECK(!finalized, "MPI_Finalized is true in a delete callback of MPI_COMM_SELF");
    MPICHK(MPI_Allreduce(&tu_rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == tu_size * (tu_size - 1) / 2, "allreduce in MPI_Finalize: %d", sum);
}

/* Sets three attributes on MPI_COMM_SELF (their keyvals freed already),
 * the middle one failing with a user code, and finalizes. */
static void case_finalize(void)
{
    make_keyvals(COMM);
    finalize_code = user_code();
    MPICHK(MPI_Comm_set_attr(MPI_COMM_SELF, pa.key, (void *)1L));
    MPICHK(MPI_Comm_set_attr(MPI_COMM_SELF, pb.key, (void *)2L));
    MPICHK(MPI_Comm_set_attr(MPI_COMM_SELF, pc.key, (void *)3L));
    pa.on_delete = finalize_last;
    pb.fail = finalize_code;
    free_keyvals(COMM);
    tu_barrier();
    int rc = MPI_Finalize();
    /* MPI is gone: no CHECK (it aborts through MPI) from here on */
    if (ndeleted != 3 || rc != finalize_code) {
        fprintf(stderr, "FAIL attr_cb: rank %d: %d MPI_COMM_SELF delete callbacks ran; MPI_Finalize returned %d, "
                "not the callback's %d\n", tu_rank, ndeleted, rc, finalize_code);
        exit(1);
    }
    if (tu_rank == 0)
        printf("PASS attr_cb at %d ranks\n", tu_size);
}

static int named(int argc, char **argv, const char *name)
{
    if (argc < 2)
        return 1; /* no names: every case */
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        void (*run)(void);
    } cases[] = {{"reenter", case_reenter}, {"keyval", case_keyval}, {"errors", case_errors},
                 {"predef", case_predef}, {"copy", case_copy}};
    tu_init(&argc, &argv, "attr_cb");
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        if (named(argc, argv, cases[c].name))
            cases[c].run();
    if (named(argc, argv, "finalize"))
        case_finalize();
    else
        tu_finish();
    return 0;
}
