/*
 * Attributes: predefined ones, keyvals with copy and delete callbacks run
 * (and counted) on dup, set-over, delete and free, MPI_COMM_DUP_FN and the
 * NULL callbacks, a keyval freed while attributes still use it, the
 * deprecated MPI-1 names, and datatype attributes.
 */
#include "testutil.h"

static int copies, deletes, last_deleted;

static int copy_cb(MPI_Comm old, int key, void *extra, void *in, void *out, int *flag)
{
    (void)old;
    (void)key;
    CHECK(extra == (void *)&copies, "extra_state not passed to copy");
    copies++;
    *(void **)out = (void *)((long)in + 1); /* the copy is one more */
    *flag = 1;
    return MPI_SUCCESS;
}

static int delete_cb(MPI_Comm comm, int key, void *val, void *extra)
{
    (void)comm;
    (void)key;
    CHECK(extra == (void *)&copies, "extra_state not passed to delete");
    deletes++;
    last_deleted = (int)(long)val;
    return MPI_SUCCESS;
}

static int failing_copy(MPI_Comm old, int key, void *extra, void *in, void *out, int *flag)
{
    (void)old, (void)key, (void)extra, (void)in, (void)out, (void)flag;
    return MPI_ERR_OTHER;
}

/* A delete callback that still talks on the communicator being freed. */
static int talking_deletes;
static int talking_delete(MPI_Comm comm, int key, void *val, void *extra)
{
    (void)key, (void)val, (void)extra;
    int r, in = -1, out = 77;
    MPI_Request rq;
    MPICHK(MPI_Comm_rank(comm, &r));
    MPICHK(MPI_Isend(&out, 1, MPI_INT, r, 0, comm, &rq));
    MPICHK(MPI_Recv(&in, 1, MPI_INT, r, 0, comm, MPI_STATUS_IGNORE));
    MPICHK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    CHECK(in == 77, "self message in a delete callback: %d", in);
    talking_deletes++;
    return MPI_SUCCESS;
}

static int type_deletes;
static int type_delete_cb(MPI_Datatype t, int key, void *val, void *extra)
{
    (void)t, (void)key, (void)val, (void)extra;
    type_deletes++;
    return MPI_SUCCESS;
}

static void test_predefined(void)
{
    int *v, flag;
    MPICHK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag));
    CHECK(flag && *v >= 32767, "MPI_TAG_UB %d", flag ? *v : -1);
    MPICHK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &v, &flag));
    CHECK(flag && *v == MPI_PROC_NULL, "MPI_HOST");
    MPICHK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_IO, &v, &flag));
    CHECK(flag && *v == MPI_ANY_SOURCE, "MPI_IO");
    MPICHK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &v, &flag));
    CHECK(flag && *v == 0, "MPI_WTIME_IS_GLOBAL");
    MPICHK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &v, &flag));
    CHECK(flag && *v == tu_size, "MPI_UNIVERSE_SIZE %d", *v);
    MPICHK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &v, &flag));
    CHECK(flag && *v == 0, "MPI_APPNUM");
    MPICHK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &v, &flag));
    CHECK(flag && *v >= MPI_ERR_LASTCODE, "MPI_LASTUSEDCODE %d", *v);
    MPICHK(MPI_Attr_get(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag));
    CHECK(flag && *v >= 32767, "MPI_Attr_get(MPI_TAG_UB)");
    EXPECT_CLASS(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, NULL), MPI_ERR_KEYVAL);
}

static void test_callbacks(void)
{
    int key, flag;
    void *v;
    MPICHK(MPI_Comm_create_keyval(copy_cb, delete_cb, &key, &copies));
    MPI_Comm a, b, c;
    MPICHK(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    MPICHK(MPI_Comm_get_attr(a, key, &v, &flag));
    CHECK(!flag, "attribute present before set");
    MPICHK(MPI_Comm_set_attr(a, key, (void *)10L));
    MPICHK(MPI_Comm_get_attr(a, key, &v, &flag));
    CHECK(flag && (long)v == 10, "get after set: %ld", (long)v);
    /* set over: the old value is deleted */
    MPICHK(MPI_Comm_set_attr(a, key, (void *)20L));
    CHECK(deletes == 1 && last_deleted == 10, "set-over: %d deletes, last %d", deletes, last_deleted);
    /* dup copies (20 -> 21), dup of dup (21 -> 22) */
    MPICHK(MPI_Comm_dup(a, &b));
    MPICHK(MPI_Comm_dup(b, &c));
    CHECK(copies == 2, "copies %d", copies);
    MPICHK(MPI_Comm_get_attr(c, key, &v, &flag));
    CHECK(flag && (long)v == 22, "copied value %ld", (long)v);
    /* the keyval may go while attributes use it: callbacks still run */
    MPICHK(MPI_Comm_free_keyval(&key));
    CHECK(key == MPI_KEYVAL_INVALID, "free_keyval did not reset the key");
    MPICHK(MPI_Comm_free(&b));
    CHECK(deletes == 2 && last_deleted == 21, "free b: %d deletes, last %d", deletes, last_deleted);
    MPICHK(MPI_Comm_free(&c));
    CHECK(deletes == 3 && last_deleted == 22, "free c: %d deletes, last %d", deletes, last_deleted);
    MPICHK(MPI_Comm_free(&a));
    CHECK(deletes == 4 && last_deleted == 20, "free a: %d deletes, last %d", deletes, last_deleted);

    /* delete_attr runs the callback; the NULL copy function does not copy */
    int k2;
    MPICHK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_cb, &k2, &copies));
    MPICHK(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    MPICHK(MPI_Comm_set_attr(a, k2, (void *)5L));
    MPICHK(MPI_Comm_dup(a, &b));
    MPICHK(MPI_Comm_get_attr(b, k2, &v, &flag));
    CHECK(!flag, "MPI_COMM_NULL_COPY_FN copied");
    MPICHK(MPI_Comm_delete_attr(a, k2));
    CHECK(deletes == 5 && last_deleted == 5, "delete_attr: %d deletes", deletes);
    MPICHK(MPI_Comm_get_attr(a, k2, &v, &flag));
    CHECK(!flag, "attribute present after delete");
    MPICHK(MPI_Comm_free(&b));
    MPICHK(MPI_Comm_free(&a));
    CHECK(deletes == 5, "deleted twice");
    MPICHK(MPI_Comm_free_keyval(&k2));
    EXPECT_CLASS(MPI_Comm_set_attr(MPI_COMM_WORLD, k2, NULL), MPI_ERR_KEYVAL);

    /* MPI_COMM_DUP_FN copies the pointer; MPI_COMM_NULL_DELETE_FN does nothing */
    int k3;
    MPICHK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &k3, NULL));
    static int payload = 42;
    MPICHK(MPI_Comm_set_attr(MPI_COMM_SELF, k3, &payload));
    MPICHK(MPI_Comm_dup(MPI_COMM_SELF, &a));
    MPICHK(MPI_Comm_get_attr(a, k3, &v, &flag));
    CHECK(flag && v == &payload, "MPI_COMM_DUP_FN");
    MPICHK(MPI_Comm_free(&a));
    MPICHK(MPI_Comm_delete_attr(MPI_COMM_SELF, k3));
    MPICHK(MPI_Comm_free_keyval(&k3));

    /* a failing copy callback fails the dup */
    int k4;
    MPICHK(MPI_Comm_create_keyval(failing_copy, MPI_COMM_NULL_DELETE_FN, &k4, NULL));
    MPICHK(MPI_Comm_set_attr(MPI_COMM_SELF, k4, NULL));
    EXPECT_CLASS(MPI_Comm_dup(MPI_COMM_SELF, &a), MPI_ERR_OTHER);
    MPICHK(MPI_Comm_delete_attr(MPI_COMM_SELF, k4));
    MPICHK(MPI_Comm_free_keyval(&k4));

    /* MPI-1 names */
    int k5;
    MPICHK(MPI_Keyval_create(MPI_DUP_FN, MPI_NULL_DELETE_FN, &k5, NULL));
    MPICHK(MPI_Attr_put(MPI_COMM_WORLD, k5, (void *)7L));
    MPICHK(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    MPICHK(MPI_Attr_get(a, k5, &v, &flag));
    CHECK(flag && (long)v == 7, "MPI_DUP_FN via MPI_Attr_get");
    MPICHK(MPI_Attr_delete(a, k5));
    MPICHK(MPI_Comm_free(&a));
    MPICHK(MPI_Attr_delete(MPI_COMM_WORLD, k5));
    MPICHK(MPI_Keyval_free(&k5));

    int k6;
    MPICHK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, talking_delete, &k6, NULL));
    MPICHK(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    MPICHK(MPI_Comm_set_attr(a, k6, NULL));
    MPICHK(MPI_Comm_free(&a));
    CHECK(talking_deletes == 1, "talking delete callback ran %d times", talking_deletes);
    MPICHK(MPI_Comm_free_keyval(&k6));

    EXPECT_CLASS(MPI_Comm_get_attr(MPI_COMM_WORLD, 0x12345, &v, &flag), MPI_ERR_KEYVAL);
    EXPECT_CLASS(MPI_Comm_free_keyval(&k5), MPI_ERR_KEYVAL);
}

static void test_types(void)
{
    int key, flag;
    void *v;
    MPICHK(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, type_delete_cb, &key, NULL));
    MPICHK(MPI_Type_set_attr(MPI_INT, key, (void *)3L));
    MPICHK(MPI_Type_get_attr(MPI_INT, key, &v, &flag));
    CHECK(flag && (long)v == 3, "type attr %ld", (long)v);
    MPICHK(MPI_Type_get_attr(MPI_DOUBLE, key, &v, &flag));
    CHECK(!flag, "attribute on the wrong type");
    MPICHK(MPI_Type_set_attr(MPI_INT, key, (void *)4L));
    CHECK(type_deletes == 1, "type set-over deletes %d", type_deletes);
    MPICHK(MPI_Type_delete_attr(MPI_INT, key));
    CHECK(type_deletes == 2, "type delete_attr deletes %d", type_deletes);
    MPICHK(MPI_Type_get_attr(MPI_INT, key, &v, &flag));
    CHECK(!flag, "type attribute survived delete");
    /* a communicator keyval is not a type keyval */
    int ck;
    MPICHK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &ck, NULL));
    EXPECT_CLASS(MPI_Type_set_attr(MPI_INT, ck, NULL), MPI_ERR_KEYVAL);
    EXPECT_CLASS(MPI_Comm_set_attr(MPI_COMM_WORLD, key, NULL), MPI_ERR_KEYVAL);
    MPICHK(MPI_Comm_free_keyval(&ck));
    MPICHK(MPI_Type_free_keyval(&key));
    EXPECT_CLASS(MPI_Type_set_attr(MPI_DATATYPE_NULL, key, NULL), MPI_ERR_TYPE);
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv, "attr");
    test_predefined();
    test_callbacks();
    test_types();
    tu_finish();
    return 0;
}
