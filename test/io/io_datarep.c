/*
 * Data representations (MPI 4.1 section 14.5):
 *
 *   - "external32": int, double, int64_t and a struct {int; double;
 *     int64_t} (padded in memory) written through views whose datarep is
 *     "external32", with blocking and nonblocking calls; the file, read
 *     with plain pread, holds them big-endian and packed (4 + 8 + 8 bytes
 *     per struct); read back through the view they are the values written;
 *   - "internal": a round trip, and the file holds what memory held (in
 *     bmpi "internal" is "native");
 *   - a representation registered with MPI_Register_datarep whose
 *     conversion functions byte-swap 4-byte integers and count their
 *     calls and items (registered by MPI_Register_datarep and by
 *     MPI_Register_datarep_c); its extent function is asked for the file
 *     extents;
 *     and one registered with MPI_CONVERSION_FN_NULL, which stores the
 *     data as they are in memory;
 *   - MPI_ERR_DUP_DATAREP for a name registered twice (and for
 *     "external32"), MPI_ERR_UNSUPPORTED_DATAREP for an unknown name;
 *   - MPI_File_get_type_extent under native and external32 views (in
 *     external32 MPI_LONG takes 4 bytes);
 *   - types whose size changes in external32 (bmpi only: MPICH 4.0 and
 *     Open MPI 4.1 write wrong files): MPI_LONG through a vector filetype,
 *     collectively and independently, the file holding 4 bytes per long
 *     where the vector's stride, counted in elements, says; MPI_LONG
 *     through the shared file pointer and a nonblocking collective; the file
 *     extent of a vector (elements scale) and of an hvector (bytes stay);
 *     a struct {int; long} as memory type; MPI_WCHAR; a long too large
 *     for 4 bytes (MPI_ERR_CONVERSION); reads cut inside a long and
 *     inside a struct; and a registered representation that keeps
 *     MPI_INT in 8 bytes.
 *
 * Every rank writes its own region of one shared file per case.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <wchar.h>

#include "test/io/io_util.h"

#define N 1000

struct rec {
    int i;
    double d;
    int64_t l;
};
#define REC_EXT32 20 /* 4 + 8 + 8, no padding in external32 */

/* Whether nonblocking accesses convert external32 data here: ROMIO (MPICH
 * 4.0) writes them native (found by ext32_int, which then notes it and the
 * other cases use blocking calls instead); bmpi must convert them. */
static bool nb_ext32 = true;

/* An access at explicit offset, nonblocking (and waited for) when nb. */
static void write_at(MPI_File fh, MPI_Offset off, const void *buf, int n, MPI_Datatype t, bool nb)
{
    MPI_Request req;
    if (!nb) {
        MPICHK(MPI_File_write_at(fh, off, buf, n, t, MPI_STATUS_IGNORE));
        return;
    }
    MPICHK(MPI_File_iwrite_at(fh, off, buf, n, t, &req));
    MPICHK(MPI_Wait(&req, MPI_STATUS_IGNORE));
}

static void read_at(MPI_File fh, MPI_Offset off, void *buf, int n, MPI_Datatype t, bool nb)
{
    MPI_Request req;
    MPI_Status st;
    if (nb) {
        MPICHK(MPI_File_iread_at(fh, off, buf, n, t, &req));
        MPICHK(MPI_Wait(&req, &st));
    } else {
        MPICHK(MPI_File_read_at(fh, off, buf, n, t, &st));
    }
    int got = -1;
    MPICHK(MPI_Get_count(&st, t, &got));
    CHECK(got == n, "read %d of %d elements", got, n);
}

/* n bytes of the file at off, read with plain POSIX calls. */
static void raw_read(const char *name, off_t off, void *buf, size_t n)
{
    int fd = open(iu_path(name), O_RDONLY);
    CHECK(fd >= 0, "open %s failed", name);
    ssize_t got = pread(fd, buf, n, off);
    CHECK(got == (ssize_t)n, "pread of %zu bytes at %lld got %zd", n, (long long)off, got);
    close(fd);
}

static uint64_t be(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = v << 8 | p[i];
    return v;
}

static int ival(int rank, int i) { return (rank * 131 + i) * (i % 2 ? -1 : 1) - 7; }
static double dval(int rank, int i) { return rank * 1.5e6 + i * 0.375 - 1e-3 * i * i; }
static int64_t lval(int rank, int i) { return ((int64_t)rank << 40) - (int64_t)i * 123456789; }

/* --- external32 --------------------------------------------------------------------- */

static void ext32_int(void)
{
    MPI_File fh = iu_open_rw("ext32_int");
    MPICHK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "external32", MPI_INFO_NULL));
    int w[N], r[N];
    for (int i = 0; i < N; i++)
        w[i] = ival(tu_rank, i);
    /* the first half blocking, the second nonblocking */
    MPI_Offset base = (MPI_Offset)tu_rank * N;
    write_at(fh, base, w, N / 2, MPI_INT, false);
    write_at(fh, base + N / 2, w + N / 2, N - N / 2, MPI_INT, true);
    iu_sync_barrier(fh);
    unsigned char raw[N * 4];
    raw_read("ext32_int", (off_t)base * 4, raw, sizeof raw);
#ifndef BMPI
    if ((int32_t)be(raw + 4 * (N / 2), 4) != w[N / 2]) {
        nb_ext32 = false;
        if (tu_rank == 0)
            printf("NOTE io_datarep: nonblocking accesses do not convert to external32 here; "
                   "they are checked in \"native\" only (io_nonblock)\n");
        write_at(fh, base + N / 2, w + N / 2, N - N / 2, MPI_INT, false);
        iu_sync_barrier(fh);
        raw_read("ext32_int", (off_t)base * 4, raw, sizeof raw);
    }
#endif
    for (int i = 0; i < N; i++)
        CHECK((int32_t)be(raw + 4 * i, 4) == w[i], "file int %d is 0x%08llx, expected %d big-endian", i,
              (unsigned long long)be(raw + 4 * i, 4), w[i]);
    memset(r, 0, sizeof r);
    read_at(fh, base, r, N / 3, MPI_INT, nb_ext32);
    read_at(fh, base + N / 3, r + N / 3, N - N / 3, MPI_INT, false);
    for (int i = 0; i < N; i++)
        CHECK(r[i] == w[i], "int %d read back is %d, expected %d", i, r[i], w[i]);
    MPICHK(MPI_File_close(&fh));
}

static void ext32_double_int64(void)
{
    MPI_File fh = iu_open_rw("ext32_dl");
    /* doubles then int64s, each rank's N of each in its own region */
    MPI_Offset region = (MPI_Offset)N * 16, base = (MPI_Offset)tu_rank * region;
    double wd[N], rd[N];
    int64_t wl[N], rl[N];
    for (int i = 0; i < N; i++) {
        wd[i] = dval(tu_rank, i);
        wl[i] = lval(tu_rank, i);
    }
    MPICHK(MPI_File_set_view(fh, base, MPI_DOUBLE, MPI_DOUBLE, "external32", MPI_INFO_NULL));
    MPICHK(MPI_File_write_at(fh, 0, wd, N, MPI_DOUBLE, MPI_STATUS_IGNORE));
    MPICHK(MPI_File_set_view(fh, base + N * 8, MPI_INT64_T, MPI_INT64_T, "external32", MPI_INFO_NULL));
    if (nb_ext32) {
        MPI_Request req;
        MPICHK(MPI_File_iwrite(fh, wl, N, MPI_INT64_T, &req));
        MPICHK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    } else {
        MPICHK(MPI_File_write(fh, wl, N, MPI_INT64_T, MPI_STATUS_IGNORE));
    }
    iu_sync_barrier(fh);
    unsigned char raw[N * 16];
    raw_read("ext32_dl", (off_t)base, raw, sizeof raw);
    for (int i = 0; i < N; i++) {
        uint64_t bits;
        memcpy(&bits, &wd[i], 8);
        CHECK(be(raw + 8 * i, 8) == bits, "file double %d is not %g big-endian", i, wd[i]);
        CHECK((int64_t)be(raw + N * 8 + 8 * i, 8) == wl[i], "file int64 %d is not %lld big-endian", i,
              (long long)wl[i]);
    }
    read_at(fh, 0, rl, N, MPI_INT64_T, nb_ext32);
    MPICHK(MPI_File_set_view(fh, base, MPI_DOUBLE, MPI_DOUBLE, "external32", MPI_INFO_NULL));
    read_at(fh, 0, rd, N, MPI_DOUBLE, false);
    for (int i = 0; i < N; i++)
        CHECK(rd[i] == wd[i] && rl[i] == wl[i], "element %d read back: %g %lld, expected %g %lld", i, rd[i],
              (long long)rl[i], wd[i], (long long)wl[i]);
    MPICHK(MPI_File_close(&fh));
}

static MPI_Datatype rec_type(void)
{
    int bl[3] = {1, 1, 1};
    MPI_Aint disp[3] = {offsetof(struct rec, i), offsetof(struct rec, d), offsetof(struct rec, l)};
    MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_INT64_T}, t, rec;
    MPICHK(MPI_Type_create_struct(3, bl, disp, types, &t));
    MPICHK(MPI_Type_create_resized(t, 0, sizeof(struct rec), &rec));
    MPICHK(MPI_Type_free(&t));
    MPICHK(MPI_Type_commit(&rec));
    return rec;
}

/* A struct with padding in memory: packed in the file (etype MPI_BYTE). */
static void ext32_struct(void)
{
#if defined(MPICH_VERSION) && !defined(BMPI)
    /* MPICH 4.0 dies with SIGILL in MPI_Pack_external_size, which ROMIO
     * calls for an external32 access with this struct type. */
    if (tu_rank == 0)
        printf("NOTE io_datarep: external32 with a struct type is skipped on MPICH\n");
    return;
#endif
    MPI_Datatype rec = rec_type();
    MPI_File fh = iu_open_rw("ext32_struct");
    MPI_Offset base = (MPI_Offset)tu_rank * N * REC_EXT32;
    MPICHK(MPI_File_set_view(fh, base, MPI_BYTE, MPI_BYTE, "external32", MPI_INFO_NULL));
    static struct rec w[N], r[N];
    for (int i = 0; i < N; i++)
        w[i] = (struct rec){ival(tu_rank, i), dval(tu_rank, i), lval(tu_rank, i)};
    write_at(fh, 0, w, N / 2, rec, nb_ext32);
    write_at(fh, (MPI_Offset)(N / 2) * REC_EXT32, w + N / 2, N - N / 2, rec, false);
    iu_sync_barrier(fh);
    static unsigned char raw[N * REC_EXT32];
    raw_read("ext32_struct", (off_t)base, raw, sizeof raw);
    for (int i = 0; i < N; i++) {
        const unsigned char *p = raw + (size_t)i * REC_EXT32;
        uint64_t bits;
        memcpy(&bits, &w[i].d, 8);
        CHECK((int32_t)be(p, 4) == w[i].i && be(p + 4, 8) == bits && (int64_t)be(p + 12, 8) == w[i].l,
              "file record %d is not {%d, %g, %lld} packed big-endian", i, w[i].i, w[i].d, (long long)w[i].l);
    }
    memset(r, 0, sizeof r);
    read_at(fh, 0, r, N, rec, false);
    for (int i = 0; i < N; i++)
        CHECK(r[i].i == w[i].i && r[i].d == w[i].d && r[i].l == w[i].l, "record %d read back differs", i);
    memset(r, 0, sizeof r);
    read_at(fh, 0, r, N, rec, nb_ext32);
    for (int i = 0; i < N; i++)
        CHECK(r[i].i == w[i].i && r[i].d == w[i].d && r[i].l == w[i].l, "record %d read back (iread) differs", i);
    MPICHK(MPI_File_close(&fh));
    MPICHK(MPI_Type_free(&rec));
}

/* --- types whose size changes ----------------------------------------------------------- */

#define LONGS 600 /* per rank, even */
#define LSTRIDE 3 /* the filetype: 2 longs of every 3 */
/* one rank's longs in the file: LONGS / 2 strides of 3 slots of 4 bytes */
#define LREGION (LONGS / 2 * LSTRIDE * 4)

static long l32val(int rank, int i) { return (long)(rank * 100003 + i * 7919) * (i % 3 ? 1 : -1); }

static MPI_Datatype long_vector(void)
{
    MPI_Datatype t;
    MPICHK(MPI_Type_vector(LONGS / 2, 2, LSTRIDE, MPI_LONG, &t));
    MPICHK(MPI_Type_commit(&t));
    return t;
}

/* MPI_LONG through a vector filetype, the first half collective, the
 * second independent; the file holds 4 big-endian bytes per long. */
static void ext32_long_vector(void)
{
    MPI_Datatype ft = long_vector();
    MPI_File fh = iu_open_rw("ext32_long");
    MPI_Offset base = (MPI_Offset)tu_rank * LREGION;
    MPICHK(MPI_File_set_view(fh, base, MPI_LONG, ft, "external32", MPI_INFO_NULL));
    MPI_Aint ext;
    MPICHK(MPI_File_get_type_extent(fh, ft, &ext));
    CHECK(ext == ((LONGS / 2 - 1) * LSTRIDE + 2) * 4, "external32 extent of the vector of longs is %ld",
          (long)ext);
    static long w[LONGS], r[LONGS];
    for (int i = 0; i < LONGS; i++)
        w[i] = l32val(tu_rank, i);
    MPICHK(MPI_File_write_at_all(fh, 0, w, LONGS / 2, MPI_LONG, MPI_STATUS_IGNORE));
    MPICHK(MPI_File_write_at(fh, LONGS / 2, w + LONGS / 2, LONGS - LONGS / 2, MPI_LONG, MPI_STATUS_IGNORE));
    iu_sync_barrier(fh);
    static unsigned char raw[LREGION];
    raw_read("ext32_long", (off_t)base, raw, sizeof raw - 4); /* the last rank's file ends at its last long */
    for (int i = 0; i < LONGS; i++) {
        const unsigned char *p = raw + (size_t)(i / 2 * LSTRIDE + i % 2) * 4;
        CHECK((int32_t)be(p, 4) == w[i], "file long %d is 0x%08llx, expected %ld in 4 bytes big-endian", i,
              (unsigned long long)be(p, 4), w[i]);
        CHECK(i % 2 == 0 || i == LONGS - 1 || be(p + 4, 4) == 0, "the hole after long %d was written", i);
    }
    MPI_Status st;
    int got;
    MPICHK(MPI_File_read_at_all(fh, 0, r, LONGS, MPI_LONG, &st));
    MPICHK(MPI_Get_count(&st, MPI_LONG, &got));
    CHECK(got == LONGS, "read_at_all of %d longs counted %d", LONGS, got);
    for (int i = 0; i < LONGS; i++)
        CHECK(r[i] == w[i], "long %d read back is %ld, expected %ld", i, r[i], w[i]);
    memset(r, 0, sizeof r);
    read_at(fh, 1, r, LONGS - 1, MPI_LONG, true);
    for (int i = 1; i < LONGS; i++)
        CHECK(r[i - 1] == w[i], "long %d read back (iread from etype 1) is %ld, expected %ld", i, r[i - 1], w[i]);
    MPICHK(MPI_File_close(&fh));
    MPICHK(MPI_Type_free(&ft));
}

/* MPI_LONG through the shared file pointer (write_ordered, then
 * read_ordered) and a nonblocking collective: etypes count 4 bytes. */
static void ext32_long_shared(void)
{
    enum { K = 5 };
    MPI_File fh = iu_open_rw("ext32_long_sh");
    MPICHK(MPI_File_set_view(fh, 0, MPI_LONG, MPI_LONG, "external32", MPI_INFO_NULL));
    long w[K], r[K];
    for (int i = 0; i < K; i++)
        w[i] = l32val(tu_rank, i);
    MPICHK(MPI_File_write_ordered(fh, w, K, MPI_LONG, MPI_STATUS_IGNORE));
    MPI_Offset pos;
    MPICHK(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == (MPI_Offset)K * tu_size, "the shared pointer is at etype %lld after %d x %d longs", (long long)pos,
          tu_size, K);
    /* after the ordered part, each rank's K longs again, nonblocking collective */
    MPI_Request req;
    MPI_Status st;
    int n;
    MPICHK(MPI_File_iwrite_at_all(fh, (MPI_Offset)K * (tu_size + tu_rank), w, K, MPI_LONG, &req));
    MPICHK(MPI_Wait(&req, &st));
    MPICHK(MPI_Get_count(&st, MPI_LONG, &n));
    CHECK(n == K, "iwrite_at_all of %d longs counted %d", K, n);
    iu_sync_barrier(fh);
    unsigned char raw[K * 4];
    for (int copy = 0; copy < 2; copy++) {
        raw_read("ext32_long_sh", (off_t)(copy * tu_size + tu_rank) * K * 4, raw, sizeof raw);
        for (int i = 0; i < K; i++)
            CHECK((int32_t)be(raw + 4 * i, 4) == w[i], "%s long %d in the file is 0x%08llx, expected %ld",
                  copy ? "iwrite_at_all's" : "write_ordered's", i, (unsigned long long)be(raw + 4 * i, 4), w[i]);
    }
    MPICHK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    memset(r, 0, sizeof r);
    MPICHK(MPI_File_read_ordered(fh, r, K, MPI_LONG, MPI_STATUS_IGNORE));
    for (int i = 0; i < K; i++)
        CHECK(r[i] == w[i], "read_ordered long %d is %ld, expected %ld", i, r[i], w[i]);
    MPICHK(MPI_File_close(&fh));
}

struct il {
    int i;
    long l;
};

static MPI_Datatype il_type(void)
{
    int bl[2] = {1, 1};
    MPI_Aint disp[2] = {offsetof(struct il, i), offsetof(struct il, l)};
    MPI_Datatype types[2] = {MPI_INT, MPI_LONG}, t;
    MPICHK(MPI_Type_create_struct(2, bl, disp, types, &t));
    MPICHK(MPI_Type_commit(&t));
    return t;
}

/* A struct {int; long} (16 bytes in memory) as the access's type: 8 in
 * the file; an hvector's stride in bytes stays as given. */
static void ext32_struct_long(void)
{
    MPI_Datatype t = il_type();
    MPI_File fh = iu_open_rw("ext32_il");
    MPI_Offset base = (MPI_Offset)tu_rank * 8 * 4;
    MPICHK(MPI_File_set_view(fh, base, MPI_BYTE, MPI_BYTE, "external32", MPI_INFO_NULL));
    MPI_Datatype hv;
    MPI_Aint ext;
    MPICHK(MPI_Type_create_hvector(2, 1, 24, MPI_LONG, &hv));
    MPICHK(MPI_File_get_type_extent(fh, hv, &ext));
    CHECK(ext == 28, "external32 extent of hvector(2, 1, 24 bytes, MPI_LONG) is %ld, expected 28", (long)ext);
    MPICHK(MPI_File_get_type_extent(fh, t, &ext));
    CHECK(ext == 12, "external32 extent of struct {int at 0; long at 8} is %ld, expected 12", (long)ext);
    MPICHK(MPI_Type_free(&hv));
    struct il w[4], r[4];
    for (int i = 0; i < 4; i++)
        w[i] = (struct il){ival(tu_rank, i), l32val(tu_rank, i)};
    MPICHK(MPI_File_write_at(fh, 0, w, 4, t, MPI_STATUS_IGNORE));
    iu_sync_barrier(fh);
    unsigned char raw[8 * 4];
    raw_read("ext32_il", (off_t)base, raw, sizeof raw);
    for (int i = 0; i < 4; i++)
        CHECK((int32_t)be(raw + 8 * i, 4) == w[i].i && (int32_t)be(raw + 8 * i + 4, 4) == w[i].l,
              "file record %d is not {%d, %ld} in 4 + 4 bytes big-endian", i, w[i].i, w[i].l);
    memset(r, 0, sizeof r);
    read_at(fh, 0, r, 4, t, false);
    for (int i = 0; i < 4; i++)
        CHECK(r[i].i == w[i].i && r[i].l == w[i].l, "record %d read back is {%d, %ld}", i, r[i].i, r[i].l);
    MPICHK(MPI_File_close(&fh));
    MPICHK(MPI_Type_free(&t));
}

/* MPI_WCHAR in 2 bytes, a long that 4 bytes cannot hold, and a read that
 * ends inside a long: one file per rank. */
static void ext32_wchar_and_limits(void)
{
    char name[32];
    snprintf(name, sizeof name, "ext32_limits.%d", tu_rank);
    MPI_File fh;
    MPICHK(MPI_File_open(MPI_COMM_SELF, iu_path(name), MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPICHK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "external32", MPI_INFO_NULL));
    wchar_t wc[2] = {L'a', 0x263a};
    MPICHK(MPI_File_write_at(fh, 0, wc, 2, MPI_WCHAR, MPI_STATUS_IGNORE));
    MPICHK(MPI_File_sync(fh));
    unsigned char raw[4];
    raw_read(name, 0, raw, 4);
    CHECK(be(raw, 2) == 'a' && be(raw + 2, 2) == 0x263a, "MPI_WCHAR in the file is %04llx %04llx",
          (unsigned long long)be(raw, 2), (unsigned long long)be(raw + 2, 2));

    MPICHK(MPI_File_set_view(fh, 0, MPI_LONG, MPI_LONG, "external32", MPI_INFO_NULL));
    long big = 1L << 40;
    EXPECT_CLASS(MPI_File_write_at(fh, 0, &big, 1, MPI_LONG, MPI_STATUS_IGNORE), MPI_ERR_CONVERSION);
    long w[3] = {-5, 70000, 123456}, r[3] = {0, 0, 77};
    MPICHK(MPI_File_write_at(fh, 0, w, 3, MPI_LONG, MPI_STATUS_IGNORE));
    MPICHK(MPI_File_set_size(fh, 10)); /* two longs and half of the third */
    MPI_Status st;
    int n;
    MPICHK(MPI_File_read_at(fh, 0, r, 3, MPI_LONG, &st));
    MPICHK(MPI_Get_elements(&st, MPI_LONG, &n));
    CHECK(n == 2, "a read of 10 bytes of external32 longs counted %d elements, expected 2", n);
    CHECK(r[0] == w[0] && r[1] == w[1] && r[2] == 77, "read cut in a long gave %ld %ld %ld", r[0], r[1], r[2]);

    /* cut inside the third {int; long}, after its int */
    MPI_Datatype t = il_type();
    MPICHK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "external32", MPI_INFO_NULL));
    struct il wi[3] = {{1, -2}, {3, -4}, {5, -6}}, ri[3] = {{0, 0}, {0, 0}, {0, 77}};
    MPICHK(MPI_File_write_at(fh, 0, wi, 3, t, MPI_STATUS_IGNORE));
    MPICHK(MPI_File_set_size(fh, 2 * 8 + 4 + 2));
    MPICHK(MPI_File_read_at(fh, 0, ri, 3, t, &st));
    MPICHK(MPI_Get_elements(&st, t, &n));
    CHECK(n == 5, "a read cut after the int of the third {int; long} counted %d basic elements, expected 5", n);
    CHECK(ri[1].l == wi[1].l && ri[2].i == wi[2].i && ri[2].l == 77, "read cut in a record gave {%d, %ld} {%d, %ld}",
          ri[1].i, ri[1].l, ri[2].i, ri[2].l);
    MPICHK(MPI_Type_free(&t));
    MPICHK(MPI_File_close(&fh));
}

/* A registered representation that keeps MPI_INT in 8 bytes
 * (little-endian int64): conversion functions for contiguous ints. */
static int widen_write(void *userbuf, MPI_Datatype type, int count, void *filebuf, MPI_Offset position, void *extra)
{
    (void)extra;
    if (type != MPI_INT)
        return MPI_ERR_TYPE;
    for (int i = 0; i < count; i++) {
        int64_t v = ((const int *)userbuf)[position + i];
        memcpy((char *)filebuf + 8 * i, &v, 8);
    }
    return MPI_SUCCESS;
}

static int widen_read(void *userbuf, MPI_Datatype type, int count, void *filebuf, MPI_Offset position, void *extra)
{
    (void)extra;
    if (type != MPI_INT)
        return MPI_ERR_TYPE;
    for (int i = 0; i < count; i++) {
        int64_t v;
        memcpy(&v, (const char *)filebuf + 8 * i, 8);
        ((int *)userbuf)[position + i] = (int)v;
    }
    return MPI_SUCCESS;
}

static int widen_extent(MPI_Datatype type, MPI_Aint *extent, void *extra)
{
    (void)extra;
    int size;
    int rc = MPI_Type_size(type, &size);
    *extent = type == MPI_INT ? 8 : size;
    return rc;
}

static void registered_wider(void)
{
    MPICHK(MPI_Register_datarep("io_datarep_wide", widen_read, widen_write, widen_extent, NULL));
    MPI_File fh = iu_open_rw("wide");
    MPI_Offset base = (MPI_Offset)tu_rank * N * 8;
    MPICHK(MPI_File_set_view(fh, base, MPI_INT, MPI_INT, "io_datarep_wide", MPI_INFO_NULL));
    MPI_Aint ext;
    MPICHK(MPI_File_get_type_extent(fh, MPI_INT, &ext));
    CHECK(ext == 8, "the file extent of MPI_INT in io_datarep_wide is %ld", (long)ext);
    int w[N], r[N];
    for (int i = 0; i < N; i++)
        w[i] = ival(tu_rank, i);
    MPICHK(MPI_File_write_at_all(fh, 0, w, N, MPI_INT, MPI_STATUS_IGNORE));
    iu_sync_barrier(fh);
    static unsigned char raw[N * 8];
    raw_read("wide", (off_t)base, raw, sizeof raw);
    for (int i = 0; i < N; i++) {
        int64_t v;
        memcpy(&v, raw + 8 * i, 8);
        CHECK(v == w[i], "file int %d is %lld in 8 bytes, expected %d", i, (long long)v, w[i]);
    }
    memset(r, 0, sizeof r);
    read_at(fh, 0, r, N, MPI_INT, false);
    for (int i = 0; i < N; i++)
        CHECK(r[i] == w[i], "int %d read back through io_datarep_wide is %d, expected %d", i, r[i], w[i]);
    MPICHK(MPI_File_close(&fh));
}

static void size_changes(void)
{
#ifndef BMPI
    /* MPICH 4.0 writes 8 bytes per long, half of them garbage; Open MPI
     * 4.1 packs longs in 8 bytes and places them by 8-byte extents. */
    if (tu_rank == 0)
        printf("NOTE io_datarep: types whose size changes in the file are checked on bmpi only\n");
    return;
#endif
    ext32_long_vector();
    ext32_long_shared();
    ext32_struct_long();
    ext32_wchar_and_limits();
    registered_wider();
}

/* --- internal ------------------------------------------------------------------------- */

static void internal_rep(void)
{
    MPI_File fh = iu_open_rw("internal");
    MPI_Offset base = (MPI_Offset)tu_rank * N * 8;
    MPICHK(MPI_File_set_view(fh, base, MPI_DOUBLE, MPI_DOUBLE, "internal", MPI_INFO_NULL));
    double w[N], r[N];
    for (int i = 0; i < N; i++)
        w[i] = dval(tu_rank, i);
    MPICHK(MPI_File_write_at(fh, 0, w, N, MPI_DOUBLE, MPI_STATUS_IGNORE));
    iu_sync_barrier(fh);
    MPICHK(MPI_File_read_at(fh, 0, r, N, MPI_DOUBLE, MPI_STATUS_IGNORE));
    CHECK(memcmp(r, w, sizeof w) == 0, "doubles read back in \"internal\" differ");
#ifdef BMPI
    /* bmpi's "internal" is "native" */
    raw_read("internal", (off_t)base, r, sizeof r);
    CHECK(memcmp(r, w, sizeof w) == 0, "the file does not hold the doubles as memory does");
#endif
    char rep[MPI_MAX_DATAREP_STRING];
    MPI_Offset disp;
    MPI_Datatype et, ft;
    MPICHK(MPI_File_get_view(fh, &disp, &et, &ft, rep));
#ifndef BMPI
    if (!strcmp(rep, "native")) /* ROMIO reports "internal" as the "native" it stands for */
        strcpy(rep, "internal");
#endif
    CHECK(!strcmp(rep, "internal") && disp == base, "get_view: \"%s\" at %lld", rep, (long long)disp);
    if (et != MPI_DOUBLE)
        MPICHK(MPI_Type_free(&et));
    if (ft != MPI_DOUBLE)
        MPICHK(MPI_Type_free(&ft));
    MPICHK(MPI_File_close(&fh));
}

/* --- a registered representation ------------------------------------------------------------ */

struct swap_state {
    int read_calls, write_calls, extent_calls;
    long read_items, write_items;
};

static void swap4(unsigned char *dst, const unsigned char *src)
{
    for (int k = 0; k < 4; k++)
        dst[k] = src[3 - k];
}

/* Only contiguous MPI_INT data: position and count are in ints. */
static int swap_write(void *userbuf, MPI_Datatype type, int count, void *filebuf, MPI_Offset position, void *extra)
{
    struct swap_state *s = extra;
    if (type != MPI_INT)
        return MPI_ERR_TYPE;
    s->write_calls++;
    s->write_items += count;
    for (int i = 0; i < count; i++)
        swap4((unsigned char *)filebuf + 4 * i, (unsigned char *)userbuf + 4 * (position + i));
    return MPI_SUCCESS;
}

static int swap_read(void *userbuf, MPI_Datatype type, int count, void *filebuf, MPI_Offset position, void *extra)
{
    struct swap_state *s = extra;
    if (type != MPI_INT)
        return MPI_ERR_TYPE;
    s->read_calls++;
    s->read_items += count;
    for (int i = 0; i < count; i++)
        swap4((unsigned char *)userbuf + 4 * (position + i), (unsigned char *)filebuf + 4 * i);
    return MPI_SUCCESS;
}

/* The large-count forms (MPI_Register_datarep_c), over the same state. */
static int swap_write_c(void *userbuf, MPI_Datatype type, MPI_Count count, void *filebuf, MPI_Offset position,
                        void *extra)
{
    return swap_write(userbuf, type, (int)count, filebuf, position, extra);
}

static int swap_read_c(void *userbuf, MPI_Datatype type, MPI_Count count, void *filebuf, MPI_Offset position,
                       void *extra)
{
    return swap_read(userbuf, type, (int)count, filebuf, position, extra);
}

static int swap_extent(MPI_Datatype type, MPI_Aint *extent, void *extra)
{
    struct swap_state *s = extra;
    s->extent_calls++;
    int size;
    int rc = MPI_Type_size(type, &size);
    *extent = size;
    return rc;
}

static int noop_extent(MPI_Datatype type, MPI_Aint *extent, void *extra)
{
    (void)type, (void)extra;
    *extent = 1;
    return MPI_SUCCESS;
}

/* Registered without conversion functions: data are copied as "native". */
static void registered_plain(void)
{
    static struct swap_state s;
    MPICHK(MPI_Register_datarep("io_datarep_plain", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, swap_extent,
                                &s));
    EXPECT_CLASS(MPI_Register_datarep("io_datarep_plain", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL,
                                      noop_extent, NULL),
                 MPI_ERR_DUP_DATAREP);
#ifdef BMPI
    /* a predefined name is defined too (ROMIO lets a program redefine
     * "external32", so this is not asked of other MPIs) */
    EXPECT_CLASS(MPI_Register_datarep("external32", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, noop_extent,
                                      NULL),
                 MPI_ERR_DUP_DATAREP);
#endif
    MPI_File fh = iu_open_rw("plain");
    MPI_Offset base = (MPI_Offset)tu_rank * N * 4;
    int rc = MPI_File_set_view(fh, base, MPI_INT, MPI_INT, "io_datarep_plain", MPI_INFO_NULL);
#ifndef BMPI
    int cls = -1;
    MPI_Error_class(rc, &cls);
    if (cls == MPI_ERR_UNSUPPORTED_DATAREP) { /* ROMIO: "only native ... supported" */
        if (tu_rank == 0)
            printf("NOTE io_datarep: views in registered representations are refused here; not checked\n");
        MPICHK(MPI_File_close(&fh));
        return;
    }
#endif
    MPICHK(rc);
    int w[N], r[N];
    for (int i = 0; i < N; i++)
        w[i] = ival(tu_rank, i);
    write_at(fh, 0, w, N, MPI_INT, false);
    iu_sync_barrier(fh);
    raw_read("plain", (off_t)base, r, sizeof r);
    CHECK(memcmp(r, w, sizeof w) == 0, "the file does not hold the ints as memory does");
    memset(r, 0, sizeof r);
    read_at(fh, 0, r, N, MPI_INT, false);
    CHECK(memcmp(r, w, sizeof w) == 0, "ints read back differ");
    MPICHK(MPI_File_close(&fh));
}

/* Registered with conversion functions, by MPI_Register_datarep or (large)
 * MPI_Register_datarep_c. */
static int register_swap(const char *name, bool large, struct swap_state *s)
{
    if (large)
        return MPI_Register_datarep_c(name, swap_read_c, swap_write_c, swap_extent, s);
    return MPI_Register_datarep(name, swap_read, swap_write, swap_extent, s);
}

static void registered(bool large)
{
    static struct swap_state states[2]; /* the registry keeps them until MPI_Finalize */
    struct swap_state *st = &states[large];
    const char *name = large ? "io_datarep_swap32_c" : "io_datarep_swap32";
    int rc = register_swap(name, large, st);
#ifndef BMPI
    int cls = -1;
    MPI_Error_class(rc, &cls);
    if (cls == MPI_ERR_CONVERSION) { /* ROMIO: "currently not supported" */
        if (tu_rank == 0)
            printf("NOTE io_datarep: representations with conversion functions are refused here "
                   "(MPI_Register_datarep%s); only one without them is checked\n", large ? "_c" : "");
        return;
    }
#endif
    MPICHK(rc);
    EXPECT_CLASS(register_swap(name, !large, st), MPI_ERR_DUP_DATAREP);

    MPI_File fh = iu_open_rw(name);
    MPI_Offset base = (MPI_Offset)tu_rank * N * 4;
    MPICHK(MPI_File_set_view(fh, base, MPI_INT, MPI_INT, name, MPI_INFO_NULL));
    MPI_Aint ext = 0;
    MPICHK(MPI_File_get_type_extent(fh, MPI_INT, &ext));
    CHECK(ext == 4, "get_type_extent of MPI_INT under the registered representation is %ld", (long)ext);
    int w[N], r[N];
    for (int i = 0; i < N; i++)
        w[i] = ival(tu_rank, i);
    MPI_Request req;
    MPICHK(MPI_File_iwrite_at(fh, 0, w, N / 2, MPI_INT, &req));
    MPICHK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    MPICHK(MPI_File_write_at(fh, N / 2, w + N / 2, N - N / 2, MPI_INT, MPI_STATUS_IGNORE));
    iu_sync_barrier(fh);
    unsigned char raw[N * 4];
    raw_read(name, (off_t)base, raw, sizeof raw);
    bool converted = (int32_t)be(raw, 4) == w[0];
#ifndef BMPI
    if (!converted) {
        if (tu_rank == 0)
            printf("NOTE io_datarep: the conversion functions of a registered representation were not "
                   "called here (%d write calls); its conversions are not checked\n", st->write_calls);
        MPICHK(MPI_File_close(&fh));
        return;
    }
#endif
    CHECK(converted && st->write_calls >= 2 && st->write_items == N, "write conversion: %d calls, %ld items",
          st->write_calls, st->write_items);
    for (int i = 0; i < N; i++)
        CHECK((int32_t)be(raw + 4 * i, 4) == w[i], "file int %d is not byte-swapped", i);
    MPICHK(MPI_File_read_at(fh, 0, r, N / 4, MPI_INT, MPI_STATUS_IGNORE));
    MPICHK(MPI_File_iread_at(fh, N / 4, r + N / 4, N - N / 4, MPI_INT, &req));
    MPICHK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(st->read_calls >= 2 && st->read_items == N, "read conversion: %d calls, %ld items", st->read_calls,
          st->read_items);
    for (int i = 0; i < N; i++)
        CHECK(r[i] == w[i], "int %d read back through the registered representation is %d", i, r[i]);
    CHECK(st->extent_calls > 0, "the extent function was never called");
    MPICHK(MPI_File_close(&fh));
}

/* --- errors and extents ---------------------------------------------------------------------- */

static void errors_and_extents(void)
{
    MPI_File fh = iu_open_rw("extents");
    EXPECT_CLASS(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "no-such-datarep", MPI_INFO_NULL),
                 MPI_ERR_UNSUPPORTED_DATAREP);
    MPI_Aint ext;
    MPI_Datatype rec = rec_type();
    MPICHK(MPI_File_get_type_extent(fh, MPI_LONG, &ext));
    CHECK(ext == sizeof(long), "native extent of MPI_LONG is %ld", (long)ext);
    MPICHK(MPI_File_get_type_extent(fh, rec, &ext));
    CHECK(ext == sizeof(struct rec), "native extent of the struct is %ld", (long)ext);

    MPICHK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "external32", MPI_INFO_NULL));
    MPICHK(MPI_File_get_type_extent(fh, MPI_INT, &ext));
    CHECK(ext == 4, "external32 extent of MPI_INT is %ld", (long)ext);
    MPICHK(MPI_File_get_type_extent(fh, MPI_DOUBLE, &ext));
    CHECK(ext == 8, "external32 extent of MPI_DOUBLE is %ld", (long)ext);
    MPICHK(MPI_File_get_type_extent(fh, MPI_LONG, &ext));
#ifndef BMPI
    if (ext != 4) { /* MPICH 4.0: 8 */
        if (tu_rank == 0)
            printf("NOTE io_datarep: MPI_LONG takes %ld bytes in external32 here, not table 14.2's 4\n",
                   (long)ext);
        ext = 4;
    }
#endif
    CHECK(ext == 4, "external32 extent of MPI_LONG is %ld (MPI 4.1 table 14.2: 4)", (long)ext);
    MPICHK(MPI_File_close(&fh));
    MPICHK(MPI_Type_free(&rec));
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv, "io_datarep");
    iu_init("io_datarep");
    ext32_int();
    ext32_double_int64();
    ext32_struct();
    size_changes();
    internal_rep();
    registered_plain();
    registered(false);
    registered(true);
    errors_and_extents();
    iu_finish();
    tu_finish();
    return 0;
}
