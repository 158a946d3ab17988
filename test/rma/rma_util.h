/*
 * Shared helpers of the one-sided tests (test/rma/README): checks that name
 * the program, the rank and the line and abort the job; error-class checks
 * for calls that must fail. Plain MPI only, so that every program also
 * builds and runs with MPICH and Open MPI (test/rma/validate-with-mpich.sh).
 *
 * Every program sets MPI_ERRORS_RETURN on MPI_COMM_WORLD, MPI_COMM_SELF
 * and on each window it makes, and checks every return code with MPICHK: a
 * failure prints the call, the line, the error class and string instead of
 * dying inside the library.
 */
#ifndef BMPI_TEST_RMA_UTIL_H
#define BMPI_TEST_RMA_UTIL_H

#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rt_job {
    const char *prog;
    int rank, size;
};
static struct rt_job rt = {"rma", -1, 0};

static inline void rt_fail(const char *file, int line, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 4, 5), noreturn));
static inline void rt_fail(const char *file, int line, const char *what, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fflush(stdout);
    fprintf(stderr, "FAIL %s: rank %d/%d: %s:%d: %s: %s\n", rt.prog, rt.rank, rt.size, file, line, what, msg);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        if (!(cond))                                                       \
            rt_fail(__FILE__, __LINE__, "check `" #cond "`", __VA_ARGS__); \
    } while (0)

/* "rc R class C: text" for an MPI return code (one static buffer: use the
 * result before the next call). */
static inline const char *rt_errstr(int rc)
{
    static char s[MPI_MAX_ERROR_STRING + 48];
    char text[MPI_MAX_ERROR_STRING];
    int len = 0, cls = -1;
    if (MPI_Error_class(rc, &cls) != MPI_SUCCESS)
        cls = -1;
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "(no error string)");
    snprintf(s, sizeof s, "rc %d class %d: %s", rc, cls, text);
    return s;
}

/* An MPI call that must succeed. */
#define MPICHK(call)                                                     \
    do {                                                                 \
        int rt_rc_ = (call);                                             \
        if (rt_rc_ != MPI_SUCCESS)                                       \
            rt_fail(__FILE__, __LINE__, #call, "%s", rt_errstr(rt_rc_)); \
    } while (0)

/* rc of a call that must have failed with error class want, with a
 * non-empty error string. */
static inline void rt_expect_class(const char *file, int line, const char *call, int rc, int want,
                                   const char *want_name)
{
    int cls = -1, len = 0;
    char text[MPI_MAX_ERROR_STRING];
    if (rc == MPI_SUCCESS)
        rt_fail(file, line, call, "succeeded, expected class %s (%d)", want_name, want);
    if (MPI_Error_class(rc, &cls) != MPI_SUCCESS)
        rt_fail(file, line, call, "MPI_Error_class(%d) failed", rc);
    if (cls != want)
        rt_fail(file, line, call, "class %d, expected %s (%d); %s", cls, want_name, want, rt_errstr(rc));
    text[0] = '\0';
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS || len <= 0 || text[0] == '\0')
        rt_fail(file, line, call, "empty error string for rc %d", rc);
}
#define EXPECT_CLASS(call, want) rt_expect_class(__FILE__, __LINE__, #call, (call), (want), #want)

static inline void rt_init(int *argc, char ***argv, const char *prog)
{
    rt.prog = prog;
    MPICHK(MPI_Init(argc, argv));
    MPICHK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPICHK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MPICHK(MPI_Comm_rank(MPI_COMM_WORLD, &rt.rank));
    MPICHK(MPI_Comm_size(MPI_COMM_WORLD, &rt.size));
}

/* One line from rank 0, then MPI_Finalize; the program's exit status. */
static inline int rt_finish(void)
{
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    if (rt.rank == 0)
        printf("ok: %s at %d ranks\n", rt.prog, rt.size);
    MPICHK(MPI_Finalize());
    return 0;
}

/* 1 when every rank of comm is on this node (MPI_Win_allocate_shared
 * over comm is allowed). */
static inline int rt_one_node(MPI_Comm comm)
{
    MPI_Comm node;
    int n, size;
    MPICHK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    MPICHK(MPI_Comm_size(node, &n));
    MPICHK(MPI_Comm_size(comm, &size));
    MPICHK(MPI_Comm_free(&node));
    int all = n == size, every = 0;
    MPICHK(MPI_Allreduce(&all, &every, 1, MPI_INT, MPI_LAND, comm));
    return every;
}

static inline void rt_win_errors_return(MPI_Win win)
{
    MPICHK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
}

#endif
