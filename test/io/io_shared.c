/*
 * The shared file pointer and the ordered forms (MPI 4.1 14.4.4):
 *
 *  1. records: every rank writes tagged records of several lengths with
 *     MPI_File_write_shared, one to three per call; the file then holds
 *     each record exactly once, whole, the records of one call side by
 *     side, and the pointer is at the end. Then fixed-size records, read
 *     back with read_shared until end of file: each read by one rank.
 *  2. ordered: write_ordered twice (rank r writes r + 1 ints, rank 1 none
 *     when there are more than two), the file in rank order; read_ordered
 *     gives each rank its own part, and nothing past the end.
 *  3. seek: seek_shared with SET, CUR and END, get_position_shared; bad
 *     offsets and whence fail on every rank and leave the pointer alone.
 *  4. nonblocking: iwrite_shared and iread_shared, all requests pending
 *     at once; one rank's ranges follow the order of its calls.
 *  5. split: write_ordered_begin/end and read_ordered_begin/end, a second
 *     split collective refused while one is active (ordered or _all), an
 *     end without its begin, of another kind or with another buffer
 *     refused.
 *  6. views with an 8-byte etype (MPI_DOUBLE) at a displacement,
 *     contiguous and strided (2 doubles of every 3): positions count
 *     etypes, set_view resets the pointer, the end of a strided view
 *     (on bmpi also of a file ending in part of an etype), read_shared
 *     through the strided view, its holes untouched.
 *  7. two files at once keep their own pointers; MPI_MODE_APPEND starts
 *     the pointer at the end of file; a file on MPI_COMM_SELF;
 *     MPI_MODE_SEQUENTIAL: shared and ordered access work, a view at
 *     MPI_DISPLACEMENT_CURRENT starts where the pointer is, seek_shared
 *     and get_position_shared fail with MPI_ERR_UNSUPPORTED_OPERATION.
 *
 * Some checks run only where the library is bmpi or the anchor gets them
 * right (coll_errors, romio_like below; test/io/README). Arguments name
 * the sections to run (records read ordered seek nonblocking split views
 * two append self sequential); none runs them all.
 */
#include "test/io/io_util.h"

#define PROG "io_shared"
#define MAGIC 0x53485244u /* "SHRD" */
#define NREC 40           /* variable-length records per rank */
#define NFIX 24           /* fixed-size records per rank */
#define NNB 8             /* nonblocking records per rank */

/* The large-count forms are MPI 4 (Open MPI 4.1 lacks them). */
#if MPI_VERSION >= 4
#define write_ordered_begin_c MPI_File_write_ordered_begin_c
#define read_ordered_begin_c MPI_File_read_ordered_begin_c
#else
#define write_ordered_begin_c MPI_File_write_ordered_begin
#define read_ordered_begin_c MPI_File_read_ordered_begin
#endif

/* The library: some checks run only where the anchors get them right
 * (test/io/README). */
enum lib { LIB_BMPI, LIB_MPICH, LIB_OTHER };
static enum lib lib;

/* Collective argument errors: bmpi, or MPICH at one rank (MPICH's ROMIO
 * 4.0.2 reports them on some ranks and leaves the others waiting in a
 * barrier; Open MPI 4.1.4 answers MPI_ERR_OTHER). */
static int coll_errors(void) { return lib == LIB_BMPI || (lib == LIB_MPICH && tu_size == 1); }
/* Where Open MPI 4.1.4 goes its own way: split collective misuse
 * (it answers MPI_ERR_REQUEST), read_ordered past the end
 * (it reports the count asked for), the end of a view (it counts the
 * displacement and the holes), seek_shared and get_position_shared on an
 * MPI_MODE_SEQUENTIAL file (it lets them pass). */
static int romio_like(void) { return lib != LIB_OTHER; }

/* MPICH 4.0.2 and Open MPI 4.1.4 move the pointer in seek_shared before
 * every rank has arrived (the standard synchronizes them first), under
 * the feet of ranks still reading or writing at the old position: other
 * libraries than bmpi get a barrier first. */
static void seek_shared(MPI_File fh, MPI_Offset offset, int whence)
{
    if (lib != LIB_BMPI)
        MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    MPICHK(MPI_File_seek_shared(fh, offset, whence));
}

/* A record: this header, then 8 * k pattern bytes, k = 1 .. 6. */
struct rec {
    uint32_t magic;
    uint16_t rank;
    uint16_t batch_left; /* records after this one written by the same call */
    uint32_t seq;
    uint32_t len; /* of the whole record */
};

static size_t rec_len(int rank, int seq) { return sizeof(struct rec) + 8 * (1 + tu_mix(tu_seed(1, rank, 0, seq)) % 6); }

static size_t rec_make(unsigned char *p, int rank, int seq, int batch_left, size_t len)
{
    struct rec h = {MAGIC, (uint16_t)rank, (uint16_t)batch_left, (uint32_t)seq, (uint32_t)len};
    memcpy(p, &h, sizeof h);
    tu_fill(p + sizeof h, len - sizeof h, tu_seed(1, rank, 1, seq));
    return len;
}

static MPI_Offset position_shared(MPI_File fh)
{
    MPI_Offset pos = -1;
    MPICHK(MPI_File_get_position_shared(fh, &pos));
    return pos;
}

/* The shared pointer of fh, a file of MPI_COMM_WORLD, is want: read
 * between two barriers, as a collective call may return on one rank
 * before another has moved the pointer, and the next may move it before
 * another has read it. */
#define EXPECT_POS(fh, want, what) expect_pos(__LINE__, (fh), (want), (what))
static void expect_pos(int line, MPI_File fh, MPI_Offset want, const char *what)
{
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Offset pos = position_shared(fh);
    if (pos != want)
        tu_fail(__FILE__, line, "shared pointer", "%s: %lld, expected %lld", what, (long long)pos, (long long)want);
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
}

static MPI_Offset file_size(MPI_File fh)
{
    MPI_Offset size = -1;
    MPICHK(MPI_File_get_size(fh, &size));
    return size;
}

static int count_of(const MPI_Status *st, MPI_Datatype type)
{
    int n = -1;
    MPICHK(MPI_Get_count(st, type, &n));
    return n;
}

static MPI_File open_file(MPI_Comm comm, const char *name, int amode)
{
    MPI_File fh;
    MPICHK(MPI_File_open(comm, iu_path(name), amode, MPI_INFO_NULL, &fh));
    return fh;
}

/* Rank 0: the whole file into a new buffer. */
static unsigned char *slurp(MPI_File fh, MPI_Offset *size)
{
    *size = file_size(fh);
    unsigned char *buf = malloc((size_t)*size + 1);
    CHECK(buf != NULL, "no memory for %lld bytes", (long long)*size);
    MPI_Status st;
    MPICHK(MPI_File_read_at(fh, 0, buf, (int)*size, MPI_BYTE, &st));
    CHECK(count_of(&st, MPI_BYTE) == (int)*size, "read %d bytes of %lld", count_of(&st, MPI_BYTE),
          (long long)*size);
    return buf;
}

/* ---- 1. records ----------------------------------------------------------- */

static void check_records(const unsigned char *buf, MPI_Offset size)
{
    char *seen = calloc((size_t)tu_size * NREC, 1);
    CHECK(seen != NULL, "no memory");
    MPI_Offset at = 0;
    int expect_rank = -1, expect_seq = -1, expect_left = 0;
    long records = 0;
    while (at < size) {
        struct rec h;
        CHECK(at + (MPI_Offset)sizeof h <= size, "a record header at %lld runs past the end %lld", (long long)at,
              (long long)size);
        memcpy(&h, buf + at, sizeof h);
        CHECK(h.magic == MAGIC && h.rank < tu_size && h.seq < NREC, "no record at %lld (magic %#x rank %u seq %u)",
              (long long)at, h.magic, h.rank, h.seq);
        CHECK(h.len == rec_len(h.rank, (int)h.seq), "record (%u, %u) at %lld: length %u, expected %zu", h.rank,
              h.seq, (long long)at, h.len, rec_len(h.rank, (int)h.seq));
        CHECK(at + h.len <= size, "record (%u, %u) at %lld runs past the end", h.rank, h.seq, (long long)at);
        if (expect_left > 0)
            CHECK(h.rank == expect_rank && (int)h.seq == expect_seq && h.batch_left == expect_left - 1,
                  "record (%u, %u) at %lld inside the batch of rank %d, expected seq %d", h.rank, h.seq,
                  (long long)at, expect_rank, expect_seq);
        long bad = tu_verify(buf + at + sizeof h, h.len - sizeof h, tu_seed(1, h.rank, 1, (int)h.seq));
        CHECK(bad < 0, "record (%u, %u) at %lld: byte %ld differs", h.rank, h.seq, (long long)at, bad);
        CHECK(!seen[h.rank * NREC + h.seq], "record (%u, %u) twice (again at %lld)", h.rank, h.seq, (long long)at);
        seen[h.rank * NREC + h.seq] = 1;
        expect_rank = h.rank;
        expect_seq = (int)h.seq + 1;
        expect_left = h.batch_left;
        at += h.len;
        records++;
    }
    CHECK(records == (long)tu_size * NREC, "%ld records, expected %d", records, tu_size * NREC);
    free(seen);
}

static void records_write(void)
{
    MPI_File fh = open_file(MPI_COMM_WORLD, "records", MPI_MODE_CREATE | MPI_MODE_RDWR);
    EXPECT_POS(fh, 0, "a new file");
    unsigned char batch[3 * 64];
    uint64_t rng = tu_seed(2, tu_rank, 0, 0);
    MPI_Offset mine = 0;
    for (int seq = 0; seq < NREC;) {
        int n = (int)tu_range(&rng, 1, 3);
        if (n > NREC - seq)
            n = NREC - seq;
        size_t len = 0;
        for (int i = 0; i < n; i++)
            len += rec_make(batch + len, tu_rank, seq + i, n - 1 - i, rec_len(tu_rank, seq + i));
        MPI_Status st;
        MPICHK(MPI_File_write_shared(fh, batch, (int)len, MPI_BYTE, &st));
        CHECK(count_of(&st, MPI_BYTE) == (int)len, "write_shared moved %d bytes of %zu", count_of(&st, MPI_BYTE),
              len);
        mine += (MPI_Offset)len;
        seq += n;
    }
    long total = tu_sum((long)mine);
    EXPECT_POS(fh, total, "after the records");
    iu_sync_barrier(fh);
    if (tu_rank == 0) {
        MPI_Offset size;
        unsigned char *buf = slurp(fh, &size);
        CHECK(size == total, "file size %lld, expected %ld", (long long)size, total);
        check_records(buf, size);
        free(buf);
    }
    MPICHK(MPI_File_close(&fh));
}

/* Fixed 32-byte records: int rank, int seq, then a pattern. */
#define FIX 32

static void fix_make(unsigned char *p, int rank, int seq)
{
    int h[2] = {rank, seq};
    memcpy(p, h, sizeof h);
    tu_fill(p + sizeof h, FIX - sizeof h, tu_seed(3, rank, 0, seq));
}

/* One record read back: counted in seen (rank-major), checked whole. */
static void fix_seen(const unsigned char *p, int nper, int *seen)
{
    int h[2];
    memcpy(h, p, sizeof h);
    CHECK(h[0] >= 0 && h[0] < tu_size && h[1] >= 0 && h[1] < nper, "read a record (%d, %d)", h[0], h[1]);
    long bad = tu_verify(p + sizeof h, FIX - sizeof h, tu_seed(3, h[0], 0, h[1]));
    CHECK(bad < 0, "record (%d, %d): byte %ld differs", h[0], h[1], bad);
    seen[h[0] * nper + h[1]]++;
}

/* Every record was seen exactly once by some rank. */
static void fix_all_once(const int *seen, int nper)
{
    int n = tu_size * nper;
    int *all = malloc(sizeof(int) * (size_t)n);
    CHECK(all != NULL, "no memory");
    MPICHK(MPI_Allreduce(seen, all, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < n; i++)
        CHECK(all[i] == 1, "record (%d, %d) read %d times", i / nper, i % nper, all[i]);
    free(all);
}

static void records_read(void)
{
    MPI_File fh = open_file(MPI_COMM_WORLD, "fixed", MPI_MODE_CREATE | MPI_MODE_RDWR);
    unsigned char rec[FIX];
    for (int seq = 0; seq < NFIX; seq++) {
        fix_make(rec, tu_rank, seq);
        MPICHK(MPI_File_write_shared(fh, rec, FIX, MPI_BYTE, MPI_STATUS_IGNORE));
    }
    seek_shared(fh, 0, MPI_SEEK_SET);
    int seen[8 * NFIX] = {0};
    CHECK(tu_size <= 8, "at most 8 ranks");
    for (;;) {
        MPI_Status st;
        MPICHK(MPI_File_read_shared(fh, rec, FIX, MPI_BYTE, &st));
        int n = count_of(&st, MPI_BYTE);
        if (n == 0)
            break;
        CHECK(n == FIX, "read_shared moved %d bytes of %d", n, FIX);
        fix_seen(rec, NFIX, seen);
    }
    fix_all_once(seen, NFIX);
    /* one read past the end per rank, each FIX bytes */
    EXPECT_POS(fh, (MPI_Offset)(tu_size * NFIX + tu_size) * FIX, "after reading to the end");
    MPICHK(MPI_File_close(&fh));
}

/* ---- 2. ordered ------------------------------------------------------------ */

/* Ints rank r writes in an ordered call (rank 1 none above two ranks). */
static int ord_count(int r) { return r == 1 && tu_size > 2 ? 0 : r + 1; }
static int ord_before(int r)
{
    int n = 0;
    for (int i = 0; i < r; i++)
        n += ord_count(i);
    return n;
}
static int ord_value(int r, int i, int round) { return 100000 * round + 1000 * r + i; }

static void ord_fill(int *v, int round)
{
    for (int i = 0; i < ord_count(tu_rank); i++)
        v[i] = ord_value(tu_rank, i, round);
}

/* Rank 0: the file holds `rounds` ordered rounds from int `first` on
 * (after iu_sync_barrier() where other ranks wrote through the same handle). */
static void ord_check_file(MPI_File fh, MPI_Offset first, int rounds)
{
    if (tu_rank != 0)
        return;
    int total = ord_before(tu_size);
    int *v = malloc(sizeof(int) * (size_t)(total * rounds + 1));
    CHECK(v != NULL, "no memory");
    MPI_Status st;
    MPICHK(MPI_File_read_at(fh, first * (MPI_Offset)sizeof(int), v, total * rounds, MPI_INT, &st));
    CHECK(count_of(&st, MPI_INT) == total * rounds, "read %d ints of %d", count_of(&st, MPI_INT), total * rounds);
    for (int round = 0; round < rounds; round++)
        for (int r = 0; r < tu_size; r++)
            for (int i = 0; i < ord_count(r); i++) {
                int got = v[round * total + ord_before(r) + i];
                CHECK(got == ord_value(r, i, round), "round %d: int %d of rank %d is %d, expected %d", round, i, r,
                      got, ord_value(r, i, round));
            }
    free(v);
}

static void ord_read_check(MPI_File fh, int round)
{
    int v[16];
    MPI_Status st;
    for (int i = 0; i < 16; i++)
        v[i] = -1;
    MPICHK(MPI_File_read_ordered(fh, v, ord_count(tu_rank), MPI_INT, &st));
    CHECK(count_of(&st, MPI_INT) == ord_count(tu_rank), "read_ordered moved %d ints of %d", count_of(&st, MPI_INT),
          ord_count(tu_rank));
    for (int i = 0; i < ord_count(tu_rank); i++)
        CHECK(v[i] == ord_value(tu_rank, i, round), "read_ordered round %d: int %d is %d, expected %d", round, i,
              v[i], ord_value(tu_rank, i, round));
}

static void ordered(void)
{
    MPI_File fh = open_file(MPI_COMM_WORLD, "ordered", MPI_MODE_CREATE | MPI_MODE_RDWR);
    int total = ord_before(tu_size), v[16];
    for (int round = 0; round < 2; round++) {
        MPI_Status st;
        ord_fill(v, round);
        MPICHK(MPI_File_write_ordered(fh, v, ord_count(tu_rank), MPI_INT, &st));
        CHECK(count_of(&st, MPI_INT) == ord_count(tu_rank), "write_ordered moved %d ints of %d",
              count_of(&st, MPI_INT), ord_count(tu_rank));
        EXPECT_POS(fh, (MPI_Offset)(round + 1) * total * (MPI_Offset)sizeof(int), "after a write_ordered round");
    }
    iu_sync_barrier(fh);
    ord_check_file(fh, 0, 2);
    seek_shared(fh, 0, MPI_SEEK_SET);
    ord_read_check(fh, 0);
    ord_read_check(fh, 1);
    MPI_Status st;
    MPICHK(MPI_File_read_ordered(fh, v, ord_count(tu_rank), MPI_INT, &st));
    CHECK(count_of(&st, MPI_INT) == 0 || !romio_like(), "read_ordered past the end moved %d ints",
          count_of(&st, MPI_INT));
    MPICHK(MPI_File_close(&fh));
}

/* ---- 3. seek ----------------------------------------------------------------- */

static void seek_expect(MPI_File fh, MPI_Offset offset, int whence, MPI_Offset want)
{
    seek_shared(fh, offset, whence);
    char what[64];
    snprintf(what, sizeof what, "seek_shared(%lld, %d)", (long long)offset, whence);
    EXPECT_POS(fh, want, what);
}

static void seek(void)
{
    MPI_File fh = open_file(MPI_COMM_WORLD, "seek", MPI_MODE_CREATE | MPI_MODE_RDWR);
    unsigned char data[100];
    memset(data, 's', sizeof data);
    if (tu_rank == 0)
        MPICHK(MPI_File_write_at(fh, 0, data, sizeof data, MPI_BYTE, MPI_STATUS_IGNORE));
    iu_sync_barrier(fh);
    MPI_Offset size = file_size(fh);
    CHECK(size == sizeof data, "file size %lld", (long long)size);
    seek_expect(fh, 5, MPI_SEEK_SET, 5);
    seek_expect(fh, 7, MPI_SEEK_CUR, 12);
    seek_expect(fh, -2, MPI_SEEK_CUR, 10);
    seek_expect(fh, 0, MPI_SEEK_END, size);
    seek_expect(fh, -4, MPI_SEEK_END, size - 4);
    seek_expect(fh, 9, MPI_SEEK_END, size + 9);
    seek_expect(fh, 0, MPI_SEEK_SET, 0);
    /* the pointer moved by one rank is seen by all */
    unsigned char three[3];
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    if (tu_rank == tu_size - 1)
        MPICHK(MPI_File_read_shared(fh, three, 3, MPI_BYTE, MPI_STATUS_IGNORE));
    EXPECT_POS(fh, 3, "after the last rank read 3 bytes");
    if (coll_errors()) {
        EXPECT_CLASS(MPI_File_seek_shared(fh, -1, MPI_SEEK_SET), MPI_ERR_ARG);
        EXPECT_CLASS(MPI_File_seek_shared(fh, -4, MPI_SEEK_CUR), MPI_ERR_ARG);
        EXPECT_CLASS(MPI_File_seek_shared(fh, -file_size(fh) - 1, MPI_SEEK_END), MPI_ERR_ARG);
        EXPECT_CLASS(MPI_File_seek_shared(fh, 0, 12345), MPI_ERR_ARG);
        if (lib == LIB_BMPI) /* MPICH dereferences it */
            EXPECT_CLASS(MPI_File_get_position_shared(fh, NULL), MPI_ERR_ARG);
        if (tu_size > 1) {
            EXPECT_CLASS(MPI_File_seek_shared(fh, tu_rank, MPI_SEEK_SET), MPI_ERR_ARG);
            EXPECT_CLASS(MPI_File_seek_shared(fh, 0, tu_rank ? MPI_SEEK_SET : MPI_SEEK_CUR), MPI_ERR_ARG);
            /* one rank's bad whence fails every rank */
            EXPECT_CLASS(MPI_File_seek_shared(fh, 0, tu_rank == 1 ? 12345 : MPI_SEEK_SET), MPI_ERR_ARG);
        }
        EXPECT_POS(fh, 3, "after failed seeks");
    }
    MPICHK(MPI_File_close(&fh));
}

/* ---- 4. nonblocking ------------------------------------------------------------ */

static void nonblocking(void)
{
    MPI_File fh = open_file(MPI_COMM_WORLD, "nonblocking", MPI_MODE_CREATE | MPI_MODE_RDWR);
    unsigned char recs[NNB][FIX];
    MPI_Request req[NNB];
    for (int seq = 0; seq < NNB; seq++) {
        fix_make(recs[seq], tu_rank, seq);
        MPICHK(MPI_File_iwrite_shared(fh, recs[seq], FIX, MPI_BYTE, &req[seq]));
    }
    MPI_Status st[NNB];
    MPICHK(MPI_Waitall(NNB, req, st));
    for (int seq = 0; seq < NNB; seq++)
        CHECK(count_of(&st[seq], MPI_BYTE) == FIX, "iwrite_shared %d moved %d bytes", seq,
              count_of(&st[seq], MPI_BYTE));
    EXPECT_POS(fh, (MPI_Offset)tu_size * NNB * FIX, "after iwrite_shared");
    iu_sync_barrier(fh);
    if (tu_rank == 0) {
        MPI_Offset size;
        unsigned char *buf = slurp(fh, &size);
        CHECK(size == (MPI_Offset)tu_size * NNB * FIX, "file size %lld", (long long)size);
        int seen[8 * NNB] = {0}, last[8];
        for (int r = 0; r < tu_size; r++)
            last[r] = -1;
        for (MPI_Offset at = 0; at < size; at += FIX) {
            int h[2];
            memcpy(h, buf + at, sizeof h);
            fix_seen(buf + at, NNB, seen);
            CHECK(h[1] > last[h[0]], "rank %d's record %d lies after its record %d: ranges out of call order", h[0],
                  h[1], last[h[0]]);
            last[h[0]] = h[1];
        }
        free(buf);
    }
    seek_shared(fh, 0, MPI_SEEK_SET);
    int seen[8 * NNB] = {0};
    for (int i = 0; i < NNB; i++)
        MPICHK(MPI_File_iread_shared(fh, recs[i], FIX, MPI_BYTE, &req[i]));
    MPICHK(MPI_Waitall(NNB, req, st));
    for (int i = 0; i < NNB; i++) {
        CHECK(count_of(&st[i], MPI_BYTE) == FIX, "iread_shared %d moved %d bytes", i, count_of(&st[i], MPI_BYTE));
        fix_seen(recs[i], NNB, seen);
    }
    fix_all_once(seen, NNB);
    MPICHK(MPI_File_close(&fh));
}

/* ---- 5. split ------------------------------------------------------------------ */

/* The class of split collective misuse: bmpi's is MPI_ERR_OTHER (as for
 * the _all forms), MPICH's ROMIO answers MPI_ERR_IO. */
static int split_misuse(void) { return lib == LIB_BMPI ? MPI_ERR_OTHER : MPI_ERR_IO; }

static void split(void)
{
    MPI_File fh = open_file(MPI_COMM_WORLD, "split", MPI_MODE_CREATE | MPI_MODE_RDWR);
    int v[16], w[16], total = ord_before(tu_size);
    MPI_Status st;
    ord_fill(v, 0);
    MPICHK(MPI_File_write_ordered_begin(fh, v, ord_count(tu_rank), MPI_INT));
    if (romio_like()) {
        EXPECT_CLASS(MPI_File_write_ordered_begin(fh, w, 1, MPI_INT), split_misuse());
        EXPECT_CLASS(MPI_File_read_at_all_begin(fh, 0, w, 1, MPI_INT), split_misuse());
    }
    if (lib == LIB_BMPI) { /* ROMIO ends whichever split collective is active, with any buffer */
        EXPECT_CLASS(MPI_File_read_ordered_end(fh, v, &st), MPI_ERR_OTHER);
        EXPECT_CLASS(MPI_File_write_ordered_end(fh, w, &st), MPI_ERR_BUFFER);
    }
    MPICHK(MPI_File_write_ordered_end(fh, v, &st));
    CHECK(count_of(&st, MPI_INT) == ord_count(tu_rank), "write_ordered_end: %d ints of %d", count_of(&st, MPI_INT),
          ord_count(tu_rank));
    if (lib == LIB_BMPI) /* MPICH 4.0.2 lets it pass */
        EXPECT_CLASS(MPI_File_write_ordered_end(fh, v, &st), split_misuse());
    EXPECT_POS(fh, (MPI_Offset)total * (MPI_Offset)sizeof(int), "after the split write");
    /* a second round with the _c begin */
    ord_fill(v, 1);
    MPICHK(write_ordered_begin_c(fh, v, ord_count(tu_rank), MPI_INT));
    MPICHK(MPI_File_write_ordered_end(fh, v, MPI_STATUS_IGNORE));
    iu_sync_barrier(fh);
    ord_check_file(fh, 0, 2);

    seek_shared(fh, 0, MPI_SEEK_SET);
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < 16; i++)
            v[i] = -1;
        if (round == 0)
            MPICHK(MPI_File_read_ordered_begin(fh, v, ord_count(tu_rank), MPI_INT));
        else
            MPICHK(read_ordered_begin_c(fh, v, ord_count(tu_rank), MPI_INT));
        MPICHK(MPI_File_read_ordered_end(fh, v, &st));
        CHECK(count_of(&st, MPI_INT) == ord_count(tu_rank), "read_ordered_end: %d ints", count_of(&st, MPI_INT));
        for (int i = 0; i < ord_count(tu_rank); i++)
            CHECK(v[i] == ord_value(tu_rank, i, round), "split read round %d: int %d is %d", round, i, v[i]);
    }
    if (romio_like())
        EXPECT_CLASS(MPI_File_read_ordered_end(fh, v, &st), split_misuse());

    /* an _all split collective refuses the ordered begin */
    MPICHK(MPI_File_read_at_all_begin(fh, 0, w, 1, MPI_INT));
    if (romio_like())
        EXPECT_CLASS(MPI_File_read_ordered_begin(fh, v, 1, MPI_INT), split_misuse());
    MPICHK(MPI_File_read_at_all_end(fh, w, &st));
    CHECK(w[0] == ord_value(0, 0, 0), "read_at_all_end: %d", w[0]);
    MPICHK(MPI_File_close(&fh));
}

/* ---- 6. views ----------------------------------------------------------------------- */

#define DISP 16
#define FILLER 0xa5 /* the bytes a strided view must leave alone */

/* The double rank r puts at index i of its part. */
static double view_value(int r, int i) { return 1000.0 * r + i + 0.5; }

/* Contiguous view of doubles: write_shared in etypes, the end in etypes. */
static void view_contiguous(MPI_File fh)
{
    MPICHK(MPI_File_set_view(fh, DISP, MPI_DOUBLE, MPI_DOUBLE, "native", MPI_INFO_NULL));
    EXPECT_POS(fh, 0, "after set_view");
    int n = 2 + tu_rank % 3;
    double d[4];
    for (int i = 0; i < n; i++)
        d[i] = view_value(tu_rank, i);
    MPICHK(MPI_File_write_shared(fh, d, n, MPI_DOUBLE, MPI_STATUS_IGNORE));
    long total = tu_sum(n);
    EXPECT_POS(fh, total, "etypes after write_shared");
    CHECK(file_size(fh) == DISP + 8 * total, "file size %lld", (long long)file_size(fh));
    iu_sync_barrier(fh);
    if (tu_rank == 0) {
        double *all = malloc(sizeof(double) * (size_t)total);
        int *seen = calloc((size_t)tu_size, sizeof(int));
        CHECK(all && seen, "no memory");
        MPICHK(MPI_File_read_at(fh, 0, all, (int)total, MPI_DOUBLE, MPI_STATUS_IGNORE));
        for (long i = 0; i < total;) {
            int r = (int)(all[i] / 1000.0);
            CHECK(r >= 0 && r < tu_size && !seen[r], "double %ld is %g", i, all[i]);
            seen[r] = 1;
            for (int k = 0; k < 2 + r % 3; k++, i++)
                CHECK(i < total && all[i] == view_value(r, k), "double %ld is %g, expected %g (rank %d)", i,
                      i < total ? all[i] : -1.0, view_value(r, k), r);
        }
        free(all);
        free(seen);
    }
    if (lib == LIB_BMPI) {
        /* a part of an etype at the end does not count: the end is after
         * the last whole one (MPI 4.1 14.4.3; ROMIO rounds up) */
        MPICHK(MPI_File_set_size(fh, DISP + 8 * total + 4));
        seek_expect(fh, 0, MPI_SEEK_END, total);
        MPICHK(MPI_File_set_size(fh, DISP + 8 * total));
    }
    if (romio_like())
        seek_expect(fh, 0, MPI_SEEK_END, total);
    else
        seek_shared(fh, total, MPI_SEEK_SET);
    seek_expect(fh, -1, MPI_SEEK_CUR, total - 1);
}

/* Strided view: 2 doubles of every 3, from DISP. File offset of double j. */
static MPI_Offset strided_at(long j) { return DISP + (j / 2) * 24 + (j % 2) * 8; }

/* Doubles of the strided view wholly below file size `size`. */
static long strided_end(MPI_Offset size)
{
    long j = 0;
    while (strided_at(j) + 8 <= size)
        j++;
    return j;
}

static void view_strided(MPI_File fh)
{
    MPI_Datatype pair, ftype;
    MPICHK(MPI_Type_contiguous(2, MPI_DOUBLE, &pair));
    MPICHK(MPI_Type_create_resized(pair, 0, 24, &ftype));
    MPICHK(MPI_Type_commit(&ftype));
    MPICHK(MPI_File_set_view(fh, DISP, MPI_DOUBLE, ftype, "native", MPI_INFO_NULL));
    EXPECT_POS(fh, 0, "after set_view");
    double d[16];
    int n = ord_count(tu_rank);
    for (int i = 0; i < n; i++)
        d[i] = view_value(tu_rank, i);
    MPICHK(MPI_File_write_ordered(fh, d, n, MPI_DOUBLE, MPI_STATUS_IGNORE));
    long total = ord_before(tu_size);
    EXPECT_POS(fh, total, "etypes after write_ordered");
    MPI_Offset size = file_size(fh);
    CHECK(size == strided_at(total - 1) + 8, "file size %lld, expected %lld", (long long)size,
          (long long)(strided_at(total - 1) + 8));
    if (romio_like()) {
        seek_expect(fh, 0, MPI_SEEK_END, total);
        /* the end of the view where the file ends in a hole or in a block */
        MPICHK(MPI_File_set_size(fh, size + 8));
        seek_expect(fh, 0, MPI_SEEK_END, strided_end(size + 8));
        MPICHK(MPI_File_set_size(fh, size + 16));
        seek_expect(fh, 0, MPI_SEEK_END, strided_end(size + 16));
        MPICHK(MPI_File_set_size(fh, size));
    }

    /* read_shared through the view, one etype at a time, until the end */
    seek_shared(fh, 0, MPI_SEEK_SET);
    int *seen = calloc((size_t)total, sizeof(int));
    CHECK(seen != NULL, "no memory");
    for (;;) {
        double x = -1;
        MPI_Status st;
        MPICHK(MPI_File_read_shared(fh, &x, 1, MPI_DOUBLE, &st));
        /* MPICH 4.0.2 counts an etype read past the end of a strided
         * view as read, leaving x as it was */
        if (count_of(&st, MPI_DOUBLE) == 0 || (lib != LIB_BMPI && x == -1))
            break;
        int r = (int)(x / 1000.0), i = (int)(x - 1000.0 * r);
        CHECK(r >= 0 && r < tu_size && i < ord_count(r) && x == view_value(r, i), "read_shared got %g", x);
        seen[ord_before(r) + i]++;
    }
    int *all = malloc(sizeof(int) * (size_t)total);
    CHECK(all != NULL, "no memory");
    MPICHK(MPI_Allreduce(seen, all, (int)total, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    for (long j = 0; j < total; j++)
        CHECK(all[j] == 1, "double %ld of the view read %d times", j, all[j]);
    free(all);
    free(seen);
    MPICHK(MPI_Type_free(&ftype));
    MPICHK(MPI_Type_free(&pair));
}

static void views(void)
{
    MPI_File fh = open_file(MPI_COMM_WORLD, "view", MPI_MODE_CREATE | MPI_MODE_RDWR);
    view_contiguous(fh);
    MPICHK(MPI_File_close(&fh));
    /* the file first filled with FILLER up to where the view's data will end */
    fh = open_file(MPI_COMM_WORLD, "strided", MPI_MODE_CREATE | MPI_MODE_RDWR);
    long total = ord_before(tu_size);
    MPI_Offset size = strided_at(total - 1) + 8;
    unsigned char *fill = malloc((size_t)size);
    CHECK(fill != NULL, "no memory");
    memset(fill, FILLER, (size_t)size);
    if (tu_rank == 0)
        MPICHK(MPI_File_write_at(fh, 0, fill, (int)size, MPI_BYTE, MPI_STATUS_IGNORE));
    free(fill);
    iu_sync_barrier(fh);
    view_strided(fh);
    /* the file as bytes: doubles where the view put them, the holes untouched */
    MPICHK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    iu_sync_barrier(fh);
    if (tu_rank == 0) {
        unsigned char *buf = slurp(fh, &size);
        CHECK(tu_verify_byte(buf, DISP, FILLER) < 0, "the bytes before the displacement were written");
        long j = 0;
        for (int r = 0; r < tu_size; r++)
            for (int i = 0; i < ord_count(r); i++, j++) {
                double x;
                memcpy(&x, buf + strided_at(j), 8);
                CHECK(x == view_value(r, i), "double %ld at %lld is %g, expected %g", j, (long long)strided_at(j), x,
                      view_value(r, i));
            }
        for (MPI_Offset hole = DISP + 16; hole < size; hole += 24)
            CHECK(tu_verify_byte(buf + hole, 8, FILLER) < 0, "the hole at %lld was written", (long long)hole);
        free(buf);
    }
    MPICHK(MPI_File_close(&fh));
}

/* ---- 7. modes -------------------------------------------------------------------------- */

static void two_files(void)
{
    MPI_File a = open_file(MPI_COMM_WORLD, "two-a", MPI_MODE_CREATE | MPI_MODE_RDWR);
    MPI_File b = open_file(MPI_COMM_WORLD, "two-b", MPI_MODE_CREATE | MPI_MODE_RDWR);
    unsigned char buf[64];
    memset(buf, 'a' + tu_rank, sizeof buf);
    MPICHK(MPI_File_write_shared(a, buf, tu_rank + 1, MPI_BYTE, MPI_STATUS_IGNORE));
    MPICHK(MPI_File_write_shared(b, buf, 2 * tu_rank + 3, MPI_BYTE, MPI_STATUS_IGNORE));
    MPICHK(MPI_File_write_shared(a, buf, 1, MPI_BYTE, MPI_STATUS_IGNORE));
    MPICHK(MPI_File_write_shared(b, buf, 0, MPI_BYTE, MPI_STATUS_IGNORE)); /* moves nothing */
    long n = tu_size;
    EXPECT_POS(a, n * (n + 1) / 2 + n, "file a");
    EXPECT_POS(b, n * (n + 2), "file b");
    MPICHK(MPI_File_close(&b));
    MPICHK(MPI_File_close(&a));
}

static void append(void)
{
    MPI_File fh = open_file(MPI_COMM_WORLD, "append", MPI_MODE_CREATE | MPI_MODE_RDWR);
    unsigned char head[100];
    memset(head, 'h', sizeof head);
    if (tu_rank == 0)
        MPICHK(MPI_File_write_at(fh, 0, head, sizeof head, MPI_BYTE, MPI_STATUS_IGNORE));
    MPICHK(MPI_File_close(&fh));
    fh = open_file(MPI_COMM_WORLD, "append", MPI_MODE_RDWR | MPI_MODE_APPEND);
    EXPECT_POS(fh, 100, "MPI_MODE_APPEND: the end of file");
    int v[16];
    ord_fill(v, 0);
    MPICHK(MPI_File_write_ordered(fh, v, ord_count(tu_rank), MPI_INT, MPI_STATUS_IGNORE));
    iu_sync_barrier(fh);
    ord_check_file(fh, 100 / (MPI_Offset)sizeof(int), 1);
    MPICHK(MPI_File_close(&fh));
}

/* Every rank its own file on MPI_COMM_SELF. */
static void self_file(void)
{
    char name[32];
    snprintf(name, sizeof name, "self-%d", tu_rank);
    MPI_File fh = open_file(MPI_COMM_SELF, name, MPI_MODE_CREATE | MPI_MODE_RDWR);
    int v[4] = {tu_rank, 1, 2, 3}, w[4] = {0};
    MPICHK(MPI_File_write_shared(fh, v, 2, MPI_INT, MPI_STATUS_IGNORE));
    MPICHK(MPI_File_write_ordered(fh, v + 2, 2, MPI_INT, MPI_STATUS_IGNORE));
    CHECK(position_shared(fh) == 16, "MPI_COMM_SELF file: shared pointer %lld", (long long)position_shared(fh));
    seek_shared(fh, 4, MPI_SEEK_SET);
    MPICHK(MPI_File_read_shared(fh, w, 3, MPI_INT, MPI_STATUS_IGNORE));
    CHECK(w[0] == 1 && w[1] == 2 && w[2] == 3, "MPI_COMM_SELF file: read %d %d %d", w[0], w[1], w[2]);
    MPICHK(MPI_File_close(&fh));
}

static void sequential(void)
{
    MPI_File fh = open_file(MPI_COMM_WORLD, "sequential", MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL);
    int v[16];
    ord_fill(v, 0);
    MPICHK(MPI_File_write_ordered(fh, v, ord_count(tu_rank), MPI_INT, MPI_STATUS_IGNORE));
    unsigned char rec[FIX];
    fix_make(rec, tu_rank, 0);
    MPICHK(MPI_File_write_shared(fh, rec, FIX, MPI_BYTE, MPI_STATUS_IGNORE));
    /* MPI_DISPLACEMENT_CURRENT: a view that starts where the pointer is */
    MPICHK(MPI_File_set_view(fh, MPI_DISPLACEMENT_CURRENT, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    int tail = 1000 + tu_rank;
    MPICHK(MPI_File_write_ordered(fh, &tail, 1, MPI_INT, MPI_STATUS_IGNORE));
    MPI_Offset pos;
    if (romio_like()) {
        EXPECT_CLASS(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET), MPI_ERR_UNSUPPORTED_OPERATION);
        EXPECT_CLASS(MPI_File_get_position_shared(fh, &pos), MPI_ERR_UNSUPPORTED_OPERATION);
    }
    MPICHK(MPI_File_close(&fh));

    fh = open_file(MPI_COMM_WORLD, "sequential", MPI_MODE_RDONLY);
    ord_check_file(fh, 0, 1);
    if (tu_rank == 0) {
        MPI_Offset size;
        unsigned char *buf = slurp(fh, &size);
        MPI_Offset first = (MPI_Offset)ord_before(tu_size) * (MPI_Offset)sizeof(int);
        MPI_Offset records_end = first + (MPI_Offset)tu_size * FIX;
        CHECK(size == records_end + (MPI_Offset)tu_size * (MPI_Offset)sizeof(int), "file size %lld",
              (long long)size);
        int seen[8] = {0};
        for (MPI_Offset at = first; at < records_end; at += FIX)
            fix_seen(buf + at, 1, seen);
        for (int r = 0; r < tu_size; r++) {
            CHECK(seen[r] == 1, "rank %d's record appears %d times", r, seen[r]);
            int tail;
            memcpy(&tail, buf + records_end + (MPI_Offset)r * (MPI_Offset)sizeof(int), sizeof(tail));
            CHECK(tail == 1000 + r, "int %d after MPI_DISPLACEMENT_CURRENT is %d", r, tail);
        }
        free(buf);
    }
    MPICHK(MPI_File_close(&fh));
}

static const struct {
    const char *name;
    void (*run)(void);
} sections[] = {
    {"records", records_write}, {"read", records_read},   {"ordered", ordered},   {"seek", seek},
    {"nonblocking", nonblocking}, {"split", split},       {"views", views},       {"two", two_files},
    {"append", append},         {"self", self_file},      {"sequential", sequential},
};

/* Sections named on the command line, or all. */
static int wanted(int argc, char **argv, const char *name)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], name))
            return 1;
    return argc <= 1;
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv, PROG);
    CHECK(tu_size <= 8, "written for at most 8 ranks, not %d", tu_size);
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPICHK(MPI_Get_library_version(version, &len));
    lib = !strncmp(version, "bmpi", 4) ? LIB_BMPI : !strncmp(version, "MPICH", 5) ? LIB_MPICH : LIB_OTHER;
    iu_init(PROG);
    for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++)
        if (wanted(argc, argv, sections[i].name))
            sections[i].run();
    iu_finish();
    tu_finish();
    return 0;
}
