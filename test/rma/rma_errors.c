/*
 * Bad arguments and bad synchronization: each call must fail with the
 * error class the standard implies (MPI 4.1 chapter 12 and section 9.4),
 * through the window's error handler (MPI_ERRORS_RETURN here), with a
 * non-empty error string (built against bmpi: one that names the call);
 * the window stays usable afterwards.
 *
 * Where MPICH 4.0.2 or Open MPI 4.1.4 answer differently (or not at all),
 * the case says so; the test asks for the standard's class. With
 * RMA_ERRORS_SURVEY=1 every case prints what the library answered and the
 * program goes on (how test/rma/README's table was made).
 */
#include "rma_util.h"

struct errors {
    int survey;  /* print instead of failing */
    int checked; /* cases run */
};

/* A case that writes out of bounds, or crashes, where the library does
 * not check it: not run in survey mode (its answer is in the README). */
static int unsafe_in_survey(struct errors *e, const char *what)
{
    if (e->survey && tu_rank == 0)
        printf("%-58s (not run in the survey: undefined where unchecked)\n", what);
    return e->survey;
}

/* bmpi's error strings name the call (runtime/error.h): the function
 * name that starts the call's text must appear in the string. */
static void expect_named(int line, const char *what, const char *call, int rc)
{
#ifdef BMPI
    char fn[64], text[MPI_MAX_ERROR_STRING];
    int len = 0;
    size_t n = strcspn(call, "(");
    snprintf(fn, sizeof fn, "%.*s", (int)(n < sizeof fn ? n : sizeof fn - 1), call);
    MPICHK(MPI_Error_string(rc, text, &len));
    if (!strstr(text, fn))
        tu_fail(__FILE__, line, what, "the error string does not name %s: \"%s\"", fn, text);
#else
    (void)line, (void)what, (void)call, (void)rc;
#endif
}

static void expect(struct errors *e, int line, const char *what, const char *call, int rc, int want,
                   const char *want_name)
{
    e->checked++;
    if (!e->survey) {
        tu_expect_class(__FILE__, line, what, rc, want, want_name);
        expect_named(line, what, call, rc);
        return;
    }
    int cls = -1;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    if (tu_rank == 0)
        printf("%-58s want %-22s got %s\n", what, want_name,
               rc == MPI_SUCCESS ? "MPI_SUCCESS" : cls == want ? "same" : tu_errstr(rc));
}
#define EXPECT(e, what, call, want) expect((e), __LINE__, (what), #call, (call), (want), #want)
#define EXPECT_UNSAFE(e, what, call, want)                                   \
    do {                                                                     \
        if (!unsafe_in_survey((e), (what)))                                  \
            expect((e), __LINE__, (what), #call, (call), (want), #want);     \
    } while (0)

static void user_sum(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

/* Errors of the communication calls, in a lock_all epoch. */
static void bad_operations(struct errors *e, MPI_Win win)
{
    int v[4] = {1, 2, 3, 4}, r[4];
    double d = 1.0, dc = 0.0, dr;
    MPI_Op user;
    MPICHK(MPI_Op_create(user_sum, 1, &user));
    MPICHK(MPI_Win_lock_all(0, win));
    EXPECT(e, "Put to rank == size", MPI_Put(v, 1, MPI_INT, tu_size, 0, 1, MPI_INT, win), MPI_ERR_RANK);
    EXPECT(e, "Get from rank -2", MPI_Get(r, 1, MPI_INT, -2, 0, 1, MPI_INT, win), MPI_ERR_RANK);
    /* The window is 64 bytes, disp_unit 4: displacement 16 is its end.
     * MPICH answers MPI_ERR_RMA_RANGE too (Open MPI: see the README). */
    EXPECT_UNSAFE(e, "Put at displacement 16 (the window's end)", MPI_Put(v, 1, MPI_INT, 0, 16, 1, MPI_INT, win),
           MPI_ERR_RMA_RANGE);
    EXPECT_UNSAFE(e, "Put of 2 ints ending 4 bytes past the end", MPI_Put(v, 2, MPI_INT, 0, 15, 2, MPI_INT, win),
           MPI_ERR_RMA_RANGE);
    EXPECT_UNSAFE(e, "Get at displacement 1000", MPI_Get(r, 1, MPI_INT, 0, 1000, 1, MPI_INT, win), MPI_ERR_RMA_RANGE);
    EXPECT_UNSAFE(e, "Accumulate past the end", MPI_Accumulate(v, 4, MPI_INT, 0, 14, 4, MPI_INT, MPI_SUM, win),
           MPI_ERR_RMA_RANGE);
    EXPECT(e, "Put with count -1", MPI_Put(v, -1, MPI_INT, 0, 0, -1, MPI_INT, win), MPI_ERR_COUNT);
    EXPECT(e, "Put with MPI_DATATYPE_NULL", MPI_Put(v, 1, MPI_DATATYPE_NULL, 0, 0, 1, MPI_INT, win), MPI_ERR_TYPE);
    /* MPI_SUM is not defined on the pair types (MPI 4.1 section 6.9.2);
     * Accumulate takes predefined operations only (section 12.3.4). Each
     * bad pair follows a good one that shares its op or its type: bmpi's
     * direct path remembers the last good pair. */
    MPICHK(MPI_Accumulate(v, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win));
    EXPECT_UNSAFE(e, "Accumulate MPI_SUM on MPI_2INT", MPI_Accumulate(v, 1, MPI_2INT, 0, 0, 1, MPI_2INT, MPI_SUM, win),
           MPI_ERR_OP);
    EXPECT(e, "Accumulate with a user-defined op", MPI_Accumulate(v, 1, MPI_INT, 0, 0, 1, MPI_INT, user, win),
           MPI_ERR_OP);
    EXPECT(e, "Get_accumulate with a user-defined op",
           MPI_Get_accumulate(v, 1, MPI_INT, r, 1, MPI_INT, 0, 0, 1, MPI_INT, user, win), MPI_ERR_OP);
    MPICHK(MPI_Fetch_and_op(&d, &dr, MPI_DOUBLE, 0, 0, MPI_SUM, win));
    EXPECT_UNSAFE(e, "Fetch_and_op MPI_BXOR on MPI_DOUBLE", MPI_Fetch_and_op(&d, &dr, MPI_DOUBLE, 0, 0, MPI_BXOR, win),
           MPI_ERR_OP);
    /* Compare_and_swap takes integer, logical and byte types only. */
    EXPECT_UNSAFE(e, "Compare_and_swap on MPI_DOUBLE", MPI_Compare_and_swap(&d, &dc, &dr, MPI_DOUBLE, 0, 0, win),
           MPI_ERR_TYPE);
    /* MPI_PROC_NULL is no error: nothing happens. */
    MPICHK(MPI_Put(v, 1, MPI_INT, MPI_PROC_NULL, 1000, 1, MPI_INT, win));
    MPICHK(MPI_Win_unlock_all(win));
    MPICHK(MPI_Op_free(&user));
}

/* Synchronization calls in the wrong state. */
static void bad_sync(struct errors *e, MPI_Win win)
{
    int v = 1;
    EXPECT(e, "Put outside any epoch", MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
    EXPECT(e, "Get outside any epoch", MPI_Get(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
    EXPECT(e, "Unlock without a lock", MPI_Win_unlock(0, win), MPI_ERR_RMA_SYNC);
    EXPECT(e, "Unlock_all without lock_all", MPI_Win_unlock_all(win), MPI_ERR_RMA_SYNC);
    EXPECT(e, "Flush outside a passive target epoch", MPI_Win_flush(0, win), MPI_ERR_RMA_SYNC);
    EXPECT(e, "Complete without start", MPI_Win_complete(win), MPI_ERR_RMA_SYNC);
    EXPECT(e, "Wait without post", MPI_Win_wait(win), MPI_ERR_RMA_SYNC);
    EXPECT(e, "Lock with lock type 42", MPI_Win_lock(42, 0, 0, win), MPI_ERR_LOCKTYPE);

    MPICHK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    EXPECT(e, "Lock the same target twice", MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win), MPI_ERR_RMA_SYNC);
    EXPECT(e, "Lock_all while holding a lock", MPI_Win_lock_all(0, win), MPI_ERR_RMA_SYNC);
    if (tu_size > 1)
        EXPECT(e, "Put to a target not locked", MPI_Put(&v, 1, MPI_INT, 1, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
    MPICHK(MPI_Win_unlock(0, win));

    /* Request-based operations belong to passive target epochs. */
    MPICHK(MPI_Win_fence(0, win));
    MPI_Request req = MPI_REQUEST_NULL;
    EXPECT(e, "Rput in a fence epoch", MPI_Rput(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win, &req), MPI_ERR_RMA_SYNC);
    MPICHK(MPI_Win_fence(0, win));
}

static void bad_objects(struct errors *e)
{
    MPI_Win null = MPI_WIN_NULL, win;
    void *mem;
    char buf[8];
    EXPECT(e, "Win_free of MPI_WIN_NULL", MPI_Win_free(&null), MPI_ERR_WIN);
    EXPECT(e, "Win_allocate_shared of -8 bytes",
           MPI_Win_allocate_shared(-8, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win), MPI_ERR_SIZE);
    EXPECT(e, "Win_allocate of -1 bytes", MPI_Win_allocate(-1, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win),
           MPI_ERR_SIZE);
    EXPECT(e, "Win_create with disp_unit 0", MPI_Win_create(buf, 8, 0, MPI_INFO_NULL, MPI_COMM_WORLD, &win),
           MPI_ERR_DISP);
    EXPECT(e, "Win_create on MPI_COMM_NULL", MPI_Win_create(buf, 8, 1, MPI_INFO_NULL, MPI_COMM_NULL, &win),
           MPI_ERR_COMM);

    /* MPI_Win_attach is for dynamic windows only. */
    MPICHK(MPI_Win_create(buf, 8, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    rt_win_errors_return(win);
    EXPECT(e, "Win_attach to a Win_create window", MPI_Win_attach(win, buf, 8), MPI_ERR_RMA_FLAVOR);
    MPICHK(MPI_Win_free(&win));
}

/* After all that, the window works. */
static void still_usable(MPI_Win win, int *mem)
{
    int v = 100 + tu_rank, right = (tu_rank + 1) % tu_size, left = (tu_rank - 1 + tu_size) % tu_size;
    MPICHK(MPI_Win_fence(0, win));
    MPICHK(MPI_Put(&v, 1, MPI_INT, right, 3, 1, MPI_INT, win));
    MPICHK(MPI_Win_fence(0, win));
    CHECK(mem[3] == 100 + left, "after the errors, a Put from rank %d left %d", left, mem[3]);
}

int main(int argc, char **argv)
{
    struct errors e = {0, 0};
    const char *s = getenv("RMA_ERRORS_SURVEY");
    MPI_Win win;
    int *mem;
    tu_init(&argc, &argv, "rma_errors");
    e.survey = s && *s && strcmp(s, "0") != 0;
    MPICHK(MPI_Win_allocate(64, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    rt_win_errors_return(win);
    bad_operations(&e, win);
    bad_sync(&e, win);
    bad_objects(&e);
    still_usable(win, mem);
    MPICHK(MPI_Win_free(&win));
    tu_finish();
    return 0;
}
