/*
 * Shared helpers of the multi-rank tests (test/mpi/p2p_*.c, and test/rma
 * through rma_util.h; plain MPI, so that these build with MPICH and Open
 * MPI too): checks that
 * name the rank and the line and abort the job, deterministic random
 * numbers, byte patterns to fill and verify buffers, and a barrier built on
 * point-to-point alone (so these tests do not depend on the collectives).
 *
 * Every test sets MPI_ERRORS_RETURN on MPI_COMM_WORLD (tu_init) and checks
 * return codes itself with MPICHK, so a failure prints the call, the line
 * and the error string instead of dying somewhere inside the library.
 *
 * BMPI_TEST_ALLOW_STUBS=1 lets a test go on when a helper function outside
 * point-to-point (MPI_Get_count, MPI_Type_vector ...) is still a stub
 * returning MPI_ERR_UNSUPPORTED_OPERATION: the part that needs it is
 * skipped with a note. Without it such a stub is a failure.
 */
#ifndef BMPI_TEST_TESTUTIL_H
#define BMPI_TEST_TESTUTIL_H

#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int tu_rank = -1, tu_size = 0;
static const char *tu_prog = "test";

/* Tags at and above this belong to the helpers. */
#define TU_TAG_BARRIER 32700

static inline void tu_fail(const char *file, int line, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 4, 5), noreturn));
static inline void tu_fail(const char *file, int line, const char *what, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fflush(stdout);
    fprintf(stderr, "FAIL %s: rank %d/%d: %s:%d: %s: %s\n", tu_prog, tu_rank, tu_size, file, line, what, msg);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        if (!(cond))                                                       \
            tu_fail(__FILE__, __LINE__, "check `" #cond "`", __VA_ARGS__); \
    } while (0)

static const char *tu_errstr(int rc)
{
    static char s[MPI_MAX_ERROR_STRING + 32];
    int len = 0, cls = -1;
    if (MPI_Error_class(rc, &cls) != MPI_SUCCESS)
        cls = -1;
    char text[MPI_MAX_ERROR_STRING];
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "(no error string)");
    snprintf(s, sizeof s, "rc %d class %d: %s", rc, cls, text);
    return s;
}

/* An MPI call that must succeed. */
#define MPICHK(call)                                                         \
    do {                                                                     \
        int tu_rc_ = (call);                                                 \
        if (tu_rc_ != MPI_SUCCESS)                                           \
            tu_fail(__FILE__, __LINE__, #call, "%s", tu_errstr(tu_rc_));     \
    } while (0)

/* rc of a call that must have failed with error class want, with a
 * non-empty error string. */
static inline void tu_expect_class(const char *file, int line, const char *call, int rc, int want,
                                   const char *want_name)
{
    int cls = -1, len = 0;
    char text[MPI_MAX_ERROR_STRING];
    if (rc == MPI_SUCCESS)
        tu_fail(file, line, call, "succeeded, expected class %s (%d)", want_name, want);
    if (MPI_Error_class(rc, &cls) != MPI_SUCCESS)
        tu_fail(file, line, call, "MPI_Error_class(%d) failed", rc);
    if (cls != want)
        tu_fail(file, line, call, "class %d, expected %s (%d); %s", cls, want_name, want, tu_errstr(rc));
    text[0] = '\0';
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS || len <= 0 || text[0] == '\0')
        tu_fail(file, line, call, "empty error string for rc %d", rc);
}
/* An MPI call that must fail with error class want. */
#define EXPECT_CLASS(call, want) tu_expect_class(__FILE__, __LINE__, #call, (call), (want), #want)

static inline int tu_allow_stubs(void)
{
    const char *e = getenv("BMPI_TEST_ALLOW_STUBS");
    return e && *e && strcmp(e, "0") != 0;
}

/* rc of a helper call outside the function under test: 1 if it worked, 0
 * if it is a stub and stubs are allowed (a note is printed once per name). */
static inline int tu_optional_rc(int rc, const char *name, const char *file, int line)
{
    if (rc == MPI_SUCCESS)
        return 1;
    int cls = -1;
    MPI_Error_class(rc, &cls);
    if (cls == MPI_ERR_UNSUPPORTED_OPERATION && tu_allow_stubs()) {
        static char noted[2048];
        if (!strstr(noted, name)) {
            if (strlen(noted) + strlen(name) + 2 < sizeof noted) {
                strcat(noted, name);
                strcat(noted, ";");
            }
            if (tu_rank == 0)
                printf("NOTE %s: %s is a stub; the parts that need it are skipped\n", tu_prog, name);
        }
        return 0;
    }
    tu_fail(file, line, name, "%s", tu_errstr(rc));
}
#define TU_OPTIONAL(call, name) tu_optional_rc((call), (name), __FILE__, __LINE__)

/* ------------------------------------------------------------ random */

/* splitmix64: small, fast, and the same sequence everywhere. */
static inline uint64_t tu_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static inline uint64_t tu_rand(uint64_t *state)
{
    *state += 0x9e3779b97f4a7c15ull;
    return tu_mix(*state);
}

/* Uniform in [lo, hi]. */
static inline size_t tu_range(uint64_t *state, size_t lo, size_t hi)
{
    return lo + (size_t)(tu_rand(state) % (uint64_t)(hi - lo + 1));
}

/* A seed for the message (src, dst, index) of test phase. */
static inline uint64_t tu_seed(int phase, int src, int dst, int idx)
{
    return tu_mix(((uint64_t)(unsigned)phase << 48) ^ ((uint64_t)(unsigned)src << 32) ^
                  ((uint64_t)(unsigned)dst << 16) ^ (uint64_t)(unsigned)idx);
}

/* ----------------------------------------------------------- patterns */

/* Byte i of the pattern of seed: position dependent, so shifted or
 * reordered data never verifies. */
static inline unsigned char tu_pat(uint64_t seed, size_t i)
{
    return (unsigned char)(tu_mix(seed ^ (uint64_t)(i >> 3)) >> (8 * (i & 7)));
}

static inline void tu_fill(void *buf, size_t n, uint64_t seed)
{
    unsigned char *p = buf;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w = tu_mix(seed ^ (uint64_t)(i >> 3));
        memcpy(p + i, &w, 8); /* little-endian order matches tu_pat */
    }
    for (; i < n; i++)
        p[i] = tu_pat(seed, i);
}

/* Index of the first byte that differs from the pattern, or -1. */
static inline long tu_verify(const void *buf, size_t n, uint64_t seed)
{
    const unsigned char *p = buf;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w = tu_mix(seed ^ (uint64_t)(i >> 3));
        if (memcmp(p + i, &w, 8) != 0)
            break;
    }
    for (; i < n; i++)
        if (p[i] != tu_pat(seed, i))
            return (long)i;
    return -1;
}

/* Index of the first byte of buf[0..n) that is not c, or -1. */
static inline long tu_verify_byte(const void *buf, size_t n, unsigned char c)
{
    const unsigned char *p = buf;
    for (size_t i = 0; i < n; i++)
        if (p[i] != c)
            return (long)i;
    return -1;
}

/* ------------------------------------------------------------- misc */

/* A barrier from point-to-point only: everybody reports to rank 0, which
 * then releases everybody. Only rank 0 receives arrival messages, so only
 * rank 0 must not have an (ANY_SOURCE, ANY_TAG) receive pending when a
 * peer may enter a barrier. */
static inline void tu_barrier(void)
{
    if (tu_size <= 1)
        return;
    if (tu_rank == 0) {
        for (int r = 1; r < tu_size; r++)
            MPICHK(MPI_Recv(NULL, 0, MPI_BYTE, r, TU_TAG_BARRIER, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int r = 1; r < tu_size; r++)
            MPICHK(MPI_Send(NULL, 0, MPI_BYTE, r, TU_TAG_BARRIER + 1, MPI_COMM_WORLD));
    } else {
        MPICHK(MPI_Send(NULL, 0, MPI_BYTE, 0, TU_TAG_BARRIER, MPI_COMM_WORLD));
        MPICHK(MPI_Recv(NULL, 0, MPI_BYTE, 0, TU_TAG_BARRIER + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
}

/* Sum of a long over all ranks, result on every rank (point-to-point). */
static inline long tu_sum(long v)
{
    if (tu_size <= 1)
        return v;
    long total = v;
    if (tu_rank == 0) {
        for (int r = 1; r < tu_size; r++) {
            long x;
            MPICHK(MPI_Recv(&x, 1, MPI_LONG, r, TU_TAG_BARRIER + 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            total += x;
        }
        for (int r = 1; r < tu_size; r++)
            MPICHK(MPI_Send(&total, 1, MPI_LONG, r, TU_TAG_BARRIER + 3, MPI_COMM_WORLD));
    } else {
        MPICHK(MPI_Send(&v, 1, MPI_LONG, 0, TU_TAG_BARRIER + 2, MPI_COMM_WORLD));
        MPICHK(MPI_Recv(&total, 1, MPI_LONG, 0, TU_TAG_BARRIER + 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
    return total;
}

static inline double tu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline void tu_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* The count of st in units of type via MPI_Get_count. When that is a stub
 * and stubs are allowed, decoded from the MPICH-layout status (the size of
 * a predefined type is in its handle); returns 0 if even that fails. */
static inline int tu_get_count(const MPI_Status *st, MPI_Datatype type, int *count)
{
    int rc = MPI_Get_count(st, type, count);
    if (TU_OPTIONAL(rc, "MPI_Get_count"))
        return 1;
#ifdef OPEN_MPI
    return 0; /* its status has not the MPICH layout decoded below */
#else
    int tsize;
    if (((unsigned)type & 0xff000000u) == 0x4c000000u)
        tsize = (int)(((unsigned)type >> 8) & 0xff);
    else if (!TU_OPTIONAL(MPI_Type_size(type, &tsize), "MPI_Type_size"))
        return 0;
    long long bytes = (long long)(unsigned)st->count_lo | ((long long)(st->count_hi_and_cancelled >> 1) << 32);
    *count = tsize ? (bytes % tsize ? MPI_UNDEFINED : (int)(bytes / tsize)) : 0;
    return 1;
#endif
}

/* Check that st says (source, tag, count elements of type). */
#define CHECK_STATUS(st, src, tg, n, type)                                                  \
    do {                                                                                    \
        int tu_cnt_ = -7;                                                                   \
        if (!tu_get_count(&(st), (type), &tu_cnt_))                                         \
            tu_cnt_ = (int)(n);                                                             \
        CHECK((st).MPI_SOURCE == (src) && (st).MPI_TAG == (tg) && tu_cnt_ == (n),           \
              "status (source %d, tag %d, count %d), expected (%d, %d, %d)", (st).MPI_SOURCE, \
              (st).MPI_TAG, tu_cnt_, (int)(src), (int)(tg), (int)(n));                      \
    } while (0)

static inline void tu_init(int *argc, char ***argv, const char *prog)
{
    tu_prog = prog;
    MPICHK(MPI_Init(argc, argv));
    MPICHK(MPI_Comm_rank(MPI_COMM_WORLD, &tu_rank));
    MPICHK(MPI_Comm_size(MPI_COMM_WORLD, &tu_size));
    MPICHK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPICHK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    setvbuf(stdout, NULL, _IOLBF, 0);
}

static inline void tu_finish(void)
{
    tu_barrier();
    if (tu_rank == 0)
        printf("PASS %s at %d ranks\n", tu_prog, tu_size);
    MPICHK(MPI_Finalize());
}

#endif
