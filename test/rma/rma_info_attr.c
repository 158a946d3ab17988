/*
 * The window object's own calls: info hints, predefined attributes, user
 * keyvals, names, groups and error handlers.
 *
 *  1. MPI_Win_get_info: the hints no_locks, accumulate_ordering,
 *     accumulate_ops, same_size, same_disp_unit, alloc_shared_noncontig
 *     have their defaults ("false", "rar,raw,war,waw", "same_op_no_op",
 *     "false", "false", "false") when not set; hints given at creation
 *     and by MPI_Win_set_info come back. The standard lets an
 *     implementation leave out a hint it ignores, so elsewhere a missing
 *     key passes; bmpi documents all six (docs/rma.md), and built against
 *     bmpi (BMPI defined by its mpi.h) this test requires them.
 *  2. Attributes MPI_WIN_BASE, MPI_WIN_SIZE, MPI_WIN_DISP_UNIT,
 *     MPI_WIN_CREATE_FLAVOR and MPI_WIN_MODEL for every flavor; the model
 *     is MPI_WIN_UNIFIED.
 *  3. User keyvals: set, get, replace (the delete callback runs for the
 *     old value), delete, and MPI_Win_free runs the delete callback of
 *     what is still set; MPI_Win_free_keyval.
 *  4. MPI_Win_set_name / MPI_Win_get_name (empty by default).
 *  5. MPI_Win_get_group is the creating communicator's group.
 *  6. Error handlers: MPI_Win_create_errhandler, set, get, and
 *     MPI_Win_call_errhandler runs the user function with the window and
 *     the code; a real error (a Put to a rank out of range) runs it too.
 *     With MPI_ERRORS_RETURN the call returns the error instead.
 */
#include "rma_util.h"

struct hint {
    const char *key, *dflt, *other;
};

static const struct hint hints[] = {
    {"no_locks", "false", "true"},
    {"accumulate_ordering", "rar,raw,war,waw", "none"},
    {"accumulate_ops", "same_op_no_op", "same_op"},
    {"same_size", "false", "true"},
    {"same_disp_unit", "false", "true"},
    {"alloc_shared_noncontig", "false", "true"},
};
#define NHINTS ((int)(sizeof hints / sizeof hints[0]))

#ifdef BMPI
#define HINTS_REQUIRED 1
#else
#define HINTS_REQUIRED 0
#endif

/* What the window says of hint h: must be want (or absent where allowed). */
static void expect_hint(MPI_Win win, const struct hint *h, const char *want, const char *when)
{
    MPI_Info info;
    char val[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    MPICHK(MPI_Win_get_info(win, &info));
    MPICHK(MPI_Info_get(info, h->key, MPI_MAX_INFO_VAL, val, &flag));
    MPICHK(MPI_Info_free(&info));
    if (!flag) {
        CHECK(!HINTS_REQUIRED, "%s: MPI_Win_get_info has no %s", when, h->key);
        return;
    }
    CHECK(strcmp(val, want) == 0, "%s: %s is \"%s\", expected \"%s\"", when, h->key, val, want);
}

static void info_defaults_and_round_trip(void)
{
    MPI_Win win;
    long *mem;
    /* Defaults. */
    MPICHK(MPI_Win_allocate(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    rt_win_errors_return(win);
    for (int i = 0; i < NHINTS; i++)
        expect_hint(win, &hints[i], hints[i].dflt, "defaults");
    /* MPI_Win_set_info: the hints that may change after creation. */
    MPI_Info info;
    MPICHK(MPI_Info_create(&info));
    MPICHK(MPI_Info_set(info, "accumulate_ordering", "none"));
    MPICHK(MPI_Info_set(info, "accumulate_ops", "same_op"));
    MPICHK(MPI_Win_set_info(win, info));
    MPICHK(MPI_Info_free(&info));
    expect_hint(win, &hints[1], "none", "after MPI_Win_set_info");
    expect_hint(win, &hints[2], "same_op", "after MPI_Win_set_info");
    MPICHK(MPI_Info_create(&info));
    MPICHK(MPI_Info_set(info, "accumulate_ordering", "rar,raw,war,waw"));
    MPICHK(MPI_Info_set(info, "accumulate_ops", "same_op_no_op"));
    MPICHK(MPI_Win_set_info(win, info));
    MPICHK(MPI_Info_free(&info));
    expect_hint(win, &hints[1], "rar,raw,war,waw", "after a second MPI_Win_set_info");
    expect_hint(win, &hints[2], "same_op_no_op", "after a second MPI_Win_set_info");
    MPICHK(MPI_Win_free(&win));

    /* Every hint's other value, given at creation (shared windows for
     * alloc_shared_noncontig, on this node's ranks). */
    MPI_Comm node;
    MPICHK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    MPICHK(MPI_Info_create(&info));
    for (int i = 0; i < NHINTS; i++)
        MPICHK(MPI_Info_set(info, hints[i].key, hints[i].other));
    MPICHK(MPI_Win_allocate_shared(64, 8, info, node, &mem, &win));
    MPICHK(MPI_Info_free(&info));
    rt_win_errors_return(win);
    for (int i = 0; i < NHINTS; i++)
        expect_hint(win, &hints[i], hints[i].other, "given at creation");
    MPICHK(MPI_Win_free(&win));
    MPICHK(MPI_Comm_free(&node));
}

/* ------------------------------------------------------------ attributes */

static void expect_attrs(MPI_Win win, void *base, MPI_Aint size, int unit, int flavor, const char *what)
{
    void *b;
    MPI_Aint *s;
    int *u, *f, *m, flag;
    MPICHK(MPI_Win_get_attr(win, MPI_WIN_BASE, &b, &flag));
    CHECK(flag && b == base, "%s: MPI_WIN_BASE %p, expected %p", what, flag ? b : NULL, base);
    MPICHK(MPI_Win_get_attr(win, MPI_WIN_SIZE, &s, &flag));
    CHECK(flag && *s == size, "%s: MPI_WIN_SIZE %ld, expected %ld", what, flag ? (long)*s : -1L, (long)size);
    MPICHK(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &u, &flag));
    CHECK(flag && *u == unit, "%s: MPI_WIN_DISP_UNIT %d, expected %d", what, flag ? *u : -1, unit);
    MPICHK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &f, &flag));
    CHECK(flag && *f == flavor, "%s: MPI_WIN_CREATE_FLAVOR %d, expected %d", what, flag ? *f : -1, flavor);
    MPICHK(MPI_Win_get_attr(win, MPI_WIN_MODEL, &m, &flag));
    CHECK(flag && *m == MPI_WIN_UNIFIED, "%s: MPI_WIN_MODEL %d, expected MPI_WIN_UNIFIED (%d)", what, flag ? *m : -1,
          MPI_WIN_UNIFIED);
}

static void predefined_attrs(void)
{
    MPI_Win win;
    char buf[96];
    void *mem;
    MPICHK(MPI_Win_create(buf, 96, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    expect_attrs(win, buf, 96, 4, MPI_WIN_FLAVOR_CREATE, "Win_create");
    MPICHK(MPI_Win_free(&win));
    /* Sizes differ by rank. (With 40 + 8 * rank bytes, MPICH 4.0.2 gives
     * rank 1 a MPI_WIN_BASE 8 bytes below the base it returned.) */
    MPICHK(MPI_Win_allocate(64 * (tu_rank + 1), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    expect_attrs(win, mem, 64 * (tu_rank + 1), 1, MPI_WIN_FLAVOR_ALLOCATE, "Win_allocate");
    MPICHK(MPI_Win_free(&win));
    MPICHK(MPI_Win_allocate_shared(16, 8, MPI_INFO_NULL, MPI_COMM_SELF, &mem, &win));
    expect_attrs(win, mem, 16, 8, MPI_WIN_FLAVOR_SHARED, "Win_allocate_shared");
    MPICHK(MPI_Win_free(&win));
    MPICHK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    expect_attrs(win, MPI_BOTTOM, 0, 1, MPI_WIN_FLAVOR_DYNAMIC, "Win_create_dynamic");
    MPICHK(MPI_Win_free(&win));
    /* A window of size 0 (and a NULL base) is allowed. */
    MPICHK(MPI_Win_create(NULL, 0, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    expect_attrs(win, NULL, 0, 1, MPI_WIN_FLAVOR_CREATE, "Win_create of size 0");
    MPICHK(MPI_Win_free(&win));
}

/* ------------------------------------------------------------- keyvals */

struct deletes {
    int count;
    void *last; /* the value the last delete callback got */
    MPI_Win win;
};

static int copy_never(MPI_Win w, int k, void *extra, void *in, void *out, int *flag)
{
    (void)w, (void)k, (void)extra, (void)in, (void)out;
    *flag = 0;
    return MPI_ERR_OTHER; /* windows are never copied */
}

static int count_delete(MPI_Win w, int k, void *value, void *extra)
{
    struct deletes *d = extra;
    (void)k;
    d->count++;
    d->last = value;
    d->win = w;
    return MPI_SUCCESS;
}

static void user_keyvals(void)
{
    struct deletes d = {0, NULL, MPI_WIN_NULL};
    int key, flag, a = 1, b = 2, c = 3;
    void *got;
    MPI_Win win, handle;
    long *mem;
    MPICHK(MPI_Win_create_keyval(copy_never, count_delete, &key, &d));
    MPICHK(MPI_Win_allocate(8, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    handle = win;
    MPICHK(MPI_Win_get_attr(win, key, &got, &flag));
    CHECK(!flag, "an attribute never set is found");
    MPICHK(MPI_Win_set_attr(win, key, &a));
    MPICHK(MPI_Win_get_attr(win, key, &got, &flag));
    CHECK(flag && got == &a, "attribute: got %p (flag %d), expected %p", got, flag, (void *)&a);
    MPICHK(MPI_Win_set_attr(win, key, &b));
    CHECK(d.count == 1 && d.last == &a && d.win == handle, "replacing: %d delete callbacks, last for %p", d.count,
          d.last);
    MPICHK(MPI_Win_delete_attr(win, key));
    CHECK(d.count == 2 && d.last == &b, "MPI_Win_delete_attr: %d delete callbacks, last for %p", d.count, d.last);
    MPICHK(MPI_Win_get_attr(win, key, &got, &flag));
    CHECK(!flag, "a deleted attribute is found");
    MPICHK(MPI_Win_set_attr(win, key, &c));
    MPICHK(MPI_Win_free_keyval(&key));
    CHECK(key == MPI_KEYVAL_INVALID, "MPI_Win_free_keyval left %d", key);
    MPICHK(MPI_Win_free(&win));
    CHECK(win == MPI_WIN_NULL, "MPI_Win_free did not set the handle to MPI_WIN_NULL");
    CHECK(d.count == 3 && d.last == &c, "MPI_Win_free: %d delete callbacks, last for %p", d.count, d.last);
}

/* --------------------------------------------------- names and groups */

static void names_and_groups(void)
{
    MPI_Win win;
    MPI_Comm half;
    MPI_Group wg, cg;
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1, cmp;
    long *mem;
    MPICHK(MPI_Comm_split(MPI_COMM_WORLD, tu_rank % 2, tu_size - tu_rank, &half));
    MPICHK(MPI_Win_allocate(8, 1, MPI_INFO_NULL, half, &mem, &win));
    MPICHK(MPI_Win_get_name(win, name, &len));
    CHECK(len == 0 && name[0] == '\0', "default window name \"%s\" (%d)", name, len);
    MPICHK(MPI_Win_set_name(win, "the rma_info_attr window"));
    MPICHK(MPI_Win_get_name(win, name, &len));
    CHECK(strcmp(name, "the rma_info_attr window") == 0 && len == (int)strlen(name), "name \"%s\" (%d)", name, len);
    MPICHK(MPI_Win_get_group(win, &wg));
    MPICHK(MPI_Comm_group(half, &cg));
    MPICHK(MPI_Group_compare(wg, cg, &cmp));
    CHECK(cmp == MPI_IDENT, "MPI_Win_get_group vs the communicator's group: %d, expected MPI_IDENT", cmp);
    MPICHK(MPI_Group_free(&wg));
    MPICHK(MPI_Group_free(&cg));
    MPICHK(MPI_Win_free(&win));
    MPICHK(MPI_Comm_free(&half));
}

/* -------------------------------------------------------- errhandlers */

struct handled {
    int calls, last_code;
    MPI_Win last_win;
};
static struct handled handled; /* what the error handler saw */

static void record_error(MPI_Win *win, int *code, ...)
{
    handled.calls++;
    handled.last_code = *code;
    handled.last_win = *win;
}

static void errhandlers(void)
{
    MPI_Win win;
    MPI_Errhandler eh, got;
    long *mem, v = 1;
    int cls;
    MPICHK(MPI_Win_allocate(8, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    MPICHK(MPI_Win_create_errhandler(record_error, &eh));
    MPICHK(MPI_Win_set_errhandler(win, eh));
    MPICHK(MPI_Win_get_errhandler(win, &got));
    CHECK(got == eh, "MPI_Win_get_errhandler returned another handler");
    MPICHK(MPI_Errhandler_free(&got));
    MPICHK(MPI_Win_call_errhandler(win, MPI_ERR_OTHER));
    CHECK(handled.calls == 1 && handled.last_code == MPI_ERR_OTHER && handled.last_win == win,
          "MPI_Win_call_errhandler: %d calls, code %d", handled.calls, handled.last_code);
    /* A real error goes to the handler too. */
    MPICHK(MPI_Win_lock_all(0, win));
    int rc = MPI_Put(&v, 1, MPI_LONG, tu_size, 0, 1, MPI_LONG, win);
    MPICHK(MPI_Win_unlock_all(win));
    CHECK(handled.calls == 2, "a Put to rank %d did not call the window's error handler (%d calls, rc %d)", tu_size,
          handled.calls, rc);
    MPICHK(MPI_Error_class(handled.last_code, &cls));
    CHECK(cls == MPI_ERR_RANK, "Put to rank %d: the handler got class %d, expected MPI_ERR_RANK", tu_size, cls);
    MPICHK(MPI_Errhandler_free(&eh));
    /* MPI_ERRORS_RETURN: the error comes back, no handler runs. */
    MPICHK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MPICHK(MPI_Win_get_errhandler(win, &got));
    CHECK(got == MPI_ERRORS_RETURN, "MPI_Win_get_errhandler after setting MPI_ERRORS_RETURN");
    MPICHK(MPI_Errhandler_free(&got));
    MPICHK(MPI_Win_lock_all(0, win));
    EXPECT_CLASS(MPI_Put(&v, 1, MPI_LONG, tu_size, 0, 1, MPI_LONG, win), MPI_ERR_RANK);
    MPICHK(MPI_Win_unlock_all(win));
    CHECK(handled.calls == 2, "MPI_ERRORS_RETURN: the old handler ran");
    MPICHK(MPI_Win_free(&win));
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv, "rma_info_attr");
    info_defaults_and_round_trip();
    predefined_attrs();
    user_keyvals();
    names_and_groups();
    errhandlers();
    tu_finish();
    return 0;
}
