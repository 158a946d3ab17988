/*
 * Windows as objects: the predefined attributes of each flavor, user
 * keyvals (set, get, replace, delete, delete callbacks at MPI_Win_free in
 * the order the standard's finalize uses, a failing one keeping the window,
 * a keyval freed while in use), error handlers (the MPI_ERRORS_ARE_FATAL
 * default, user handlers called with the window and the code,
 * MPI_ERRORS_RETURN, errors on an invalid window going to MPI_COMM_SELF's
 * handler, handlers of the wrong kind refused) and names.
 */
#include "testutil.h"

/* ---- callbacks and what they saw ---------------------------------------- */

static struct {
    int copies;                 /* never: windows are not duplicated */
    int deletes;
    int order[8];               /* values deleted, in order */
    int fail_deletes;           /* the failing callback fails while set */
    MPI_Win errh_win;
    int errh_code, errh_calls;
    int comm_errh_calls, comm_errh_code;
} seen;

static int extra_tag;

static int copy_cb(MPI_Win win, int key, void *extra, void *in, void *out, int *flag)
{
    (void)win, (void)key, (void)extra, (void)in, (void)out, (void)flag;
    seen.copies++;
    return MPI_SUCCESS;
}

/* Records *val and checks the window is still whole: its size attribute is
 * readable from inside the callback. */
static int delete_cb(MPI_Win win, int key, void *val, void *extra)
{
    (void)key;
    CHECK(extra == &extra_tag, "extra_state %p, want %p", extra, (void *)&extra_tag);
    MPI_Aint *size = NULL;
    int flag = 0;
    MPICHK(MPI_Win_get_attr(win, MPI_WIN_SIZE, &size, &flag));
    CHECK(flag && size, "MPI_WIN_SIZE inside a delete callback");
    if (seen.deletes < 8)
        seen.order[seen.deletes] = *(int *)val;
    seen.deletes++;
    return MPI_SUCCESS;
}

static int failing_delete(MPI_Win win, int key, void *val, void *extra)
{
    (void)win, (void)key, (void)val, (void)extra;
    return seen.fail_deletes ? MPI_ERR_OTHER : MPI_SUCCESS;
}

static void win_errh(MPI_Win *win, int *code, ...)
{
    seen.errh_win = *win;
    seen.errh_code = *code;
    seen.errh_calls++;
}

static void comm_errh(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    seen.comm_errh_calls++;
    seen.comm_errh_code = *code;
}

/* ---- without a window ----------------------------------------------------- */

static void test_keyvals(void)
{
    int k, ck;
    MPICHK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, &k, NULL));
    MPICHK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &ck, NULL));
    /* each kind frees only its own */
    int tmp = ck;
    EXPECT_CLASS(MPI_Win_free_keyval(&tmp), MPI_ERR_KEYVAL);
    tmp = k;
    EXPECT_CLASS(MPI_Comm_free_keyval(&tmp), MPI_ERR_KEYVAL);
    tmp = MPI_WIN_BASE;
    EXPECT_CLASS(MPI_Win_free_keyval(&tmp), MPI_ERR_KEYVAL);
    EXPECT_CLASS(MPI_Win_free_keyval(NULL), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, NULL, NULL), MPI_ERR_ARG);
    int copy = k;
    MPICHK(MPI_Win_free_keyval(&k));
    CHECK(k == MPI_KEYVAL_INVALID, "freed keyval reads %d", k);
    EXPECT_CLASS(MPI_Win_free_keyval(&copy), MPI_ERR_KEYVAL);
    MPICHK(MPI_Comm_free_keyval(&ck));

    /* MPI_WIN_DUP_FN hands back what it gets */
    int x = 5, flag = 0;
    void *out = NULL;
    MPICHK(MPI_WIN_DUP_FN(MPI_WIN_NULL, 0, NULL, &x, &out, &flag));
    CHECK(out == &x && flag == 1, "MPI_WIN_DUP_FN gave %p flag %d", out, flag);
}

static void test_errhandler_objects(void)
{
    MPI_Errhandler weh, ceh;
    EXPECT_CLASS(MPI_Win_create_errhandler(NULL, &weh), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Win_create_errhandler(win_errh, NULL), MPI_ERR_ARG);
    MPICHK(MPI_Win_create_errhandler(win_errh, &weh));
    MPICHK(MPI_Comm_create_errhandler(comm_errh, &ceh));
    /* a window handler is not a communicator's */
    EXPECT_CLASS(MPI_Comm_set_errhandler(MPI_COMM_WORLD, weh), MPI_ERR_ARG);
    MPICHK(MPI_Errhandler_free(&weh));
    CHECK(weh == MPI_ERRHANDLER_NULL, "freed errhandler reads 0x%x", (unsigned)weh);

    /* an invalid window: MPI_COMM_SELF's handler, with MPI_ERR_WIN */
    MPICHK(MPI_Comm_set_errhandler(MPI_COMM_SELF, ceh));
    char name[MPI_MAX_OBJECT_NAME];
    int len, flag;
    void *v;
    EXPECT_CLASS(MPI_Win_get_name(MPI_WIN_NULL, name, &len), MPI_ERR_WIN);
    CHECK(seen.comm_errh_calls == 1 && seen.comm_errh_code == MPI_ERR_WIN, "MPI_COMM_SELF's handler: %d calls, code %d",
          seen.comm_errh_calls, seen.comm_errh_code);
    EXPECT_CLASS(MPI_Win_set_name(MPI_WIN_NULL, "x"), MPI_ERR_WIN);
    EXPECT_CLASS(MPI_Win_get_attr(MPI_WIN_NULL, MPI_WIN_BASE, &v, &flag), MPI_ERR_WIN);
    EXPECT_CLASS(MPI_Win_set_errhandler(MPI_WIN_NULL, MPI_ERRORS_RETURN), MPI_ERR_WIN);
    EXPECT_CLASS(MPI_Win_call_errhandler(MPI_WIN_NULL, MPI_ERR_OTHER), MPI_ERR_WIN);
    EXPECT_CLASS(MPI_Win_call_errhandler((MPI_Win)0x2000abcd, MPI_ERR_OTHER), MPI_ERR_WIN);
    CHECK(seen.comm_errh_calls == 6, "MPI_COMM_SELF's handler called %d times, want 6", seen.comm_errh_calls);
    MPICHK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MPICHK(MPI_Errhandler_free(&ceh));
    seen.comm_errh_calls = 0;
}

/* ---- on windows ----------------------------------------------------------- */

/* The five predefined attributes of win against what it was made with. */
static void check_predefined(MPI_Win win, void *base, MPI_Aint size, int disp_unit, int flavor)
{
    void *b = (void *)1;
    MPI_Aint *s = NULL;
    int *d = NULL, *f = NULL, *m = NULL, flag = 0;
    MPICHK(MPI_Win_get_attr(win, MPI_WIN_BASE, &b, &flag));
    CHECK(flag && b == base, "flavor %d: MPI_WIN_BASE %p, want %p", flavor, b, base);
    MPICHK(MPI_Win_get_attr(win, MPI_WIN_SIZE, &s, &flag));
    CHECK(flag && *s == size, "flavor %d: MPI_WIN_SIZE %ld, want %ld", flavor, (long)*s, (long)size);
    MPICHK(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &d, &flag));
    CHECK(flag && *d == disp_unit, "flavor %d: MPI_WIN_DISP_UNIT %d, want %d", flavor, *d, disp_unit);
    MPICHK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &f, &flag));
    CHECK(flag && *f == flavor, "MPI_WIN_CREATE_FLAVOR %d, want %d", *f, flavor);
    MPICHK(MPI_Win_get_attr(win, MPI_WIN_MODEL, &m, &flag));
    CHECK(flag && *m == MPI_WIN_UNIFIED, "flavor %d: MPI_WIN_MODEL %d", flavor, *m);
    /* they cannot be set or deleted */
    MPICHK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    EXPECT_CLASS(MPI_Win_set_attr(win, MPI_WIN_SIZE, &size), MPI_ERR_KEYVAL);
    EXPECT_CLASS(MPI_Win_delete_attr(win, MPI_WIN_MODEL), MPI_ERR_KEYVAL);
    /* a communicator's predefined keyval is not a window's */
    EXPECT_CLASS(MPI_Win_get_attr(win, MPI_TAG_UB, &s, &flag), MPI_ERR_KEYVAL);
}

static void test_flavors(void)
{
    MPI_Aint size = 64 * (tu_rank + 1);
    MPI_Win win;
    static char buf[256];
    MPICHK(MPI_Win_create(buf, size, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    check_predefined(win, buf, size, 4, MPI_WIN_FLAVOR_CREATE);
    MPICHK(MPI_Win_free(&win));
    CHECK(win == MPI_WIN_NULL, "MPI_Win_free left 0x%x", (unsigned)win);

    void *base = NULL;
    MPICHK(MPI_Win_allocate(size, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    check_predefined(win, base, size, 8, MPI_WIN_FLAVOR_ALLOCATE);
    MPICHK(MPI_Win_free(&win));

    MPICHK(MPI_Win_allocate_shared(size, 2, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    check_predefined(win, base, size, 2, MPI_WIN_FLAVOR_SHARED);
    MPICHK(MPI_Win_free(&win));

    /* dynamic: MPI_BOTTOM, no size, displacement unit 1 */
    MPICHK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    check_predefined(win, MPI_BOTTOM, 0, 1, MPI_WIN_FLAVOR_DYNAMIC);
    MPICHK(MPI_Win_free(&win));
}

static void test_user_attrs(void)
{
    static int vals[] = {10, 11, 12, 13};
    int k1, k2, k3, kf, ck;
    MPICHK(MPI_Win_create_keyval(copy_cb, delete_cb, &k1, &extra_tag));
    MPICHK(MPI_Win_create_keyval(MPI_WIN_DUP_FN, delete_cb, &k2, &extra_tag));
    MPICHK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, &k3, NULL));
    MPICHK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, failing_delete, &kf, NULL));
    MPICHK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &ck, NULL));
    MPI_Win win;
    MPICHK(MPI_Win_create(NULL, 0, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPICHK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));

    int *got = NULL, flag = -1;
    MPICHK(MPI_Win_get_attr(win, k1, &got, &flag));
    CHECK(flag == 0, "an unset attribute is found");
    MPICHK(MPI_Win_set_attr(win, k1, &vals[0]));
    MPICHK(MPI_Win_get_attr(win, k1, &got, &flag));
    CHECK(flag == 1 && got == &vals[0], "get after set: flag %d, %p", flag, (void *)got);
    /* replacing deletes the old value */
    MPICHK(MPI_Win_set_attr(win, k1, &vals[1]));
    CHECK(seen.deletes == 1 && seen.order[0] == 10, "replace: %d deletes, first of %d", seen.deletes,
          seen.order[0]);
    MPICHK(MPI_Win_delete_attr(win, k1));
    CHECK(seen.deletes == 2 && seen.order[1] == 11, "delete: %d deletes, last of %d", seen.deletes,
          seen.order[1]);
    MPICHK(MPI_Win_get_attr(win, k1, &got, &flag));
    CHECK(flag == 0, "a deleted attribute is found");
    MPICHK(MPI_Win_delete_attr(win, k1)); /* nothing there: fine */

    /* bad keyvals and arguments */
    EXPECT_CLASS(MPI_Win_set_attr(win, ck, &vals[0]), MPI_ERR_KEYVAL);
    EXPECT_CLASS(MPI_Win_get_attr(win, ck, &got, &flag), MPI_ERR_KEYVAL);
    EXPECT_CLASS(MPI_Win_delete_attr(win, ck), MPI_ERR_KEYVAL);
    EXPECT_CLASS(MPI_Win_get_attr(win, k1, NULL, &flag), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Win_get_attr(win, k1, &got, NULL), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Comm_set_attr(MPI_COMM_WORLD, k1, &vals[0]), MPI_ERR_KEYVAL);

    /* at MPI_Win_free the last set goes first; a freed keyval's callback
     * still runs */
    MPICHK(MPI_Win_set_attr(win, k1, &vals[0]));
    MPICHK(MPI_Win_set_attr(win, k3, &vals[3]));
    MPICHK(MPI_Win_set_attr(win, k2, &vals[2]));
    MPICHK(MPI_Win_set_attr(win, k1, &vals[1])); /* keeps k1's place */
    CHECK(seen.deletes == 3, "replace: %d deletes", seen.deletes);
    MPICHK(MPI_Win_free_keyval(&k1));

    /* a failing delete callback: MPI_Win_free fails and the window stays */
    MPICHK(MPI_Win_set_attr(win, kf, &vals[0]));
    seen.fail_deletes = 1;
    EXPECT_CLASS(MPI_Win_free(&win), MPI_ERR_OTHER);
    CHECK(win != MPI_WIN_NULL, "a failed MPI_Win_free cleared the handle");
    MPICHK(MPI_Win_get_attr(win, k2, &got, &flag));
    CHECK(flag && got == &vals[2], "attributes set before the failing one stay");
    seen.fail_deletes = 0;
    MPICHK(MPI_Win_free(&win));
    CHECK(seen.deletes == 5 && seen.order[3] == 12 && seen.order[4] == 11,
          "MPI_Win_free: %d deletes, order ... %d %d", seen.deletes, seen.order[3], seen.order[4]);
    CHECK(seen.copies == 0, "a window copy callback ran");
    MPICHK(MPI_Win_free_keyval(&k2));
    MPICHK(MPI_Win_free_keyval(&k3));
    MPICHK(MPI_Win_free_keyval(&kf));
    MPICHK(MPI_Comm_free_keyval(&ck));
}

static void test_errhandlers(void)
{
    MPI_Win win;
    MPI_Errhandler eh, got, ceh;
    MPICHK(MPI_Win_create(NULL, 0, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    /* the default, whatever the communicator's */
    MPICHK(MPI_Win_get_errhandler(win, &got));
    CHECK(got == MPI_ERRORS_ARE_FATAL, "a new window's handler is 0x%x", (unsigned)got);
    MPICHK(MPI_Errhandler_free(&got));

    /* a user handler sees the window and the code; the communicator's
     * handler is not called */
    MPICHK(MPI_Comm_create_errhandler(comm_errh, &ceh));
    MPICHK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, ceh));
    MPICHK(MPI_Win_create_errhandler(win_errh, &eh));
    MPICHK(MPI_Win_set_errhandler(win, eh));
    MPICHK(MPI_Errhandler_free(&eh)); /* the window keeps its reference */
    MPICHK(MPI_Win_call_errhandler(win, MPI_ERR_OTHER));
    CHECK(seen.errh_calls == 1 && seen.errh_win == win && seen.errh_code == MPI_ERR_OTHER,
          "handler: %d calls, window 0x%x, code %d", seen.errh_calls, (unsigned)seen.errh_win, seen.errh_code);
    int flag, *v;
    int rc = MPI_Win_get_attr(win, 0x12345, &v, &flag);
    CHECK(rc == MPI_ERR_KEYVAL && seen.errh_calls == 2 && seen.errh_code == MPI_ERR_KEYVAL,
          "bad keyval: rc %d, handler %d calls, code %d", rc, seen.errh_calls, seen.errh_code);
    rc = MPI_Win_set_name(win, NULL);
    CHECK(rc == MPI_ERR_ARG && seen.errh_calls == 3 && seen.errh_code == MPI_ERR_ARG,
          "NULL name: rc %d, handler %d calls, code %d", rc, seen.errh_calls, seen.errh_code);
    CHECK(seen.comm_errh_calls == 0, "the communicator's handler ran %d times", seen.comm_errh_calls);

    /* get returns a new reference to the same handler */
    MPICHK(MPI_Win_get_errhandler(win, &got));
    MPICHK(MPI_Win_call_errhandler(win, MPI_ERR_RMA_SYNC));
    CHECK(seen.errh_calls == 4 && seen.errh_code == MPI_ERR_RMA_SYNC, "handler %d calls", seen.errh_calls);
    MPICHK(MPI_Errhandler_free(&got));
    MPICHK(MPI_Win_call_errhandler(win, MPI_ERR_OTHER));
    CHECK(seen.errh_calls == 5, "the window's handler went with the user's handles");

    /* wrong kind, and nonsense */
    EXPECT_CLASS(MPI_Win_set_errhandler(win, ceh), MPI_ERR_ARG);
    CHECK(seen.errh_calls == 6 && seen.errh_code == MPI_ERR_ARG, "a communicator's handler on a window");
    EXPECT_CLASS(MPI_Win_set_errhandler(win, MPI_ERRHANDLER_NULL), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Win_get_errhandler(win, NULL), MPI_ERR_ARG);

    /* MPI_ERRORS_RETURN: the class comes back, nothing is called */
    MPICHK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    EXPECT_CLASS(MPI_Win_get_attr(win, 0x12345, &v, &flag), MPI_ERR_KEYVAL);
    MPICHK(MPI_Win_call_errhandler(win, MPI_ERR_OTHER));
    CHECK(seen.errh_calls == 8, "handler called after MPI_ERRORS_RETURN was set (%d)", seen.errh_calls);
    CHECK(seen.comm_errh_calls == 0, "the communicator's handler ran %d times", seen.comm_errh_calls);
    MPICHK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPICHK(MPI_Errhandler_free(&ceh));
    MPICHK(MPI_Win_free(&win));
}

static void test_names(void)
{
    MPI_Win win;
    MPICHK(MPI_Win_create(NULL, 0, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPICHK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    MPICHK(MPI_Win_get_name(win, name, &len));
    CHECK(len == 0 && name[0] == '\0', "a new window is named '%s'", name);
    MPICHK(MPI_Win_set_name(win, "halo exchange"));
    MPICHK(MPI_Win_get_name(win, name, &len));
    CHECK(len == 13 && !strcmp(name, "halo exchange"), "name '%s' (%d)", name, len);
    char longname[MPI_MAX_OBJECT_NAME + 20];
    memset(longname, 'w', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    MPICHK(MPI_Win_set_name(win, longname));
    MPICHK(MPI_Win_get_name(win, name, &len));
    CHECK(len == MPI_MAX_OBJECT_NAME - 1 && strlen(name) == (size_t)len, "long name kept %d characters", len);
    EXPECT_CLASS(MPI_Win_get_name(win, NULL, &len), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Win_get_name(win, name, NULL), MPI_ERR_ARG);
    MPICHK(MPI_Win_free(&win));
}

/* Run as "win_attr fatal": a bad call on a window with its default
 * handler must end the job, though MPI_COMM_WORLD returns errors. */
static void fatal(void)
{
    MPI_Win win;
    MPICHK(MPI_Win_create(NULL, 0, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    int flag, *v;
    if (tu_rank == 0) {
        int rc = MPI_Win_get_attr(win, 0x12345, &v, &flag);
        printf("MPI_Win_get_attr with a bad keyval returned %d\n", rc);
        exit(0); /* the script fails on a clean exit */
    }
    MPI_Win_free(&win); /* waits in the barrier until the job ends */
    exit(0);
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv, "win_attr");
    if (argc > 1 && !strcmp(argv[1], "fatal"))
        fatal();
    test_keyvals();
    test_errhandler_objects();
    test_flavors();
    test_user_attrs();
    test_errhandlers();
    test_names();
    tu_finish();
    return 0;
}
