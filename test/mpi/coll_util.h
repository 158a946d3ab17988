/*
 * Helpers of the collective tests (test/mpi/coll_*.c): checks that name the
 * rank and line and abort the job, MPI_ERRORS_RETURN on the world, and a
 * deterministic value for (rank, index, salt) so each test computes the
 * serial reference itself.
 */
#ifndef BMPI_TEST_COLL_UTIL_H
#define BMPI_TEST_COLL_UTIL_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cu_rank, cu_size;
static const char *cu_prog = "coll";

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        fprintf(stderr, "FAIL %s: rank %d/%d: %s:%d: ", cu_prog, cu_rank, cu_size, __FILE__,       \
                __LINE__);                                                                         \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fprintf(stderr, "\n");                                                                     \
        fflush(stderr);                                                                            \
        MPI_Abort(MPI_COMM_WORLD, 1);                                                              \
        exit(1);                                                                                   \
    } while (0)

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "FAIL %s: rank %d/%d: %s:%d: check `%s`: ", cu_prog, cu_rank,        \
                    cu_size, __FILE__, __LINE__, #cond);                                           \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            fflush(stderr);                                                                        \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#define MPICHK(call)                                                                               \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ != MPI_SUCCESS) {                                                                  \
            char es_[MPI_MAX_ERROR_STRING];                                                        \
            int el_ = 0;                                                                           \
            es_[0] = 0;                                                                            \
            MPI_Error_string(rc_, es_, &el_);                                                      \
            FAIL("%s: rc %d: %s", #call, rc_, es_);                                                \
        }                                                                                          \
    } while (0)

/* The call must fail with error class want. */
#define EXPECT_CLASS(call, want)                                                                   \
    do {                                                                                           \
        int rc_ = (call), cls_ = -1;                                                               \
        CHECK(rc_ != MPI_SUCCESS, "%s succeeded; expected class %d", #call, (int)(want));         \
        MPI_Error_class(rc_, &cls_);                                                               \
        CHECK(cls_ == (want), "%s: class %d, expected %s (%d)", #call, cls_, #want, (int)(want));  \
    } while (0)

static inline uint64_t cu_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* A value in [-500, 500) for rank r, element i, test salt. */
static inline int cu_val(int r, size_t i, int salt)
{
    return (int)(cu_mix(((uint64_t)(unsigned)salt << 40) ^ ((uint64_t)(unsigned)r << 32) ^ i) %
                 1000) - 500;
}

/* A non-commutative op for the tests: 2x2 unsigned matrices (an element
 * is 4 unsigned), inout = in * inout, so rank order shows in the result. */
static inline void cu_matmul(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    unsigned *a = in, *b = inout;
    for (int k = 0; k < *len; k++, a += 4, b += 4) {
        unsigned c[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
                         a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3]};
        memcpy(b, c, sizeof(c));
    }
}

/* The matrix of rank r, element i: small entries, so products stay exact
 * modulo 2^32 and differ when the order does. */
static inline void cu_mat_of(unsigned *m, int r, size_t i, int salt)
{
    for (int j = 0; j < 4; j++)
        m[j] = (unsigned)(cu_val(r, 4 * i + (size_t)j, salt) & 7);
}

static inline void cu_init(int *argc, char ***argv, const char *prog)
{
    cu_prog = prog;
    MPICHK(MPI_Init(argc, argv));
    MPICHK(MPI_Comm_rank(MPI_COMM_WORLD, &cu_rank));
    MPICHK(MPI_Comm_size(MPI_COMM_WORLD, &cu_size));
    MPICHK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPICHK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    setvbuf(stdout, NULL, _IOLBF, 0);
}

/* Runs test on the communicators that, with MPI_COMM_WORLD, give a run at
 * n ranks every communicator size from 1 to n: the first k ranks for k =
 * 1 .. n - 1, in reverse order so that a communicator rank is not the
 * world rank; then the odd and the even ranks, the odd ones in reverse
 * order (sizes n/2 and n - n/2, ranks interleaved across the node). */
static inline void cu_each_subcomm(void (*test)(MPI_Comm, const char *))
{
    MPI_Comm sub;
    char what[32];
    for (int k = 1; k < cu_size; k++) {
        MPICHK(MPI_Comm_split(MPI_COMM_WORLD, cu_rank < k ? 0 : MPI_UNDEFINED, -cu_rank, &sub));
        if (sub == MPI_COMM_NULL)
            continue;
        snprintf(what, sizeof what, "first %d", k);
        test(sub, what);
        MPICHK(MPI_Comm_free(&sub));
    }
    if (cu_size > 2) {
        MPICHK(MPI_Comm_split(MPI_COMM_WORLD, cu_rank % 2, cu_rank % 2 ? -cu_rank : cu_rank, &sub));
        test(sub, "split");
        MPICHK(MPI_Comm_free(&sub));
    }
}

static inline void cu_finish(void)
{
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    if (cu_rank == 0)
        printf("PASS %s at %d ranks\n", cu_prog, cu_size);
    MPICHK(MPI_Finalize());
}

#endif
