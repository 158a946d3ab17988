/*
 * Independent blocking access through views (MPI 4.1 sections 14.3, 14.4.2
 * and 14.4.3): MPI_File_write_at / read_at and MPI_File_write / read with
 * the individual file pointer (seek SEEK_SET, SEEK_CUR and SEEK_END,
 * get_position, get_byte_offset), under views whose filetypes are a
 * vector, a subarray, a 2-D block-cyclic darray, a struct with holes (and
 * a lower bound above 0) and a resized type over a derived etype, with
 * displacements; memory contiguous or strided (a vector with gaps); with
 * the library's default data sieving, without, and with 64-byte sieving
 * buffers (ROMIO's hints, which bmpi honours).
 *
 * Each rank writes its part of a file, in three pieces by three access
 * flavours; rank 0 then checks the whole file byte for byte, with plain
 * open/pread, against a reference built from layouts computed here by
 * hand (not from MPI datatypes); every rank reads its part back through
 * its view, reads past the end of file (a short count), seeks relative to
 * the end, asks get_byte_offset, get_view (the derived types it returns
 * are new handles, freed here) and get_type_extent.
 */
#include <fcntl.h>
#include <sys/stat.h>

#include "test/io/io_util.h"

#define GAP_BYTE 0xEE /* memory that no access may touch */

/* The layout of one rank's filetype, by hand: blocks of bytes at offsets
 * from the start of a tile (the typemap's displacements, lower bound
 * included), tiled every `extent` bytes from the view's displacement. */
struct block {
    long off, len;
};
struct layout {
    MPI_Offset disp;
    long extent;
    long tile_bytes; /* sum of the blocks' lengths */
    int nblk, cap;
    struct block *blk;
};

/* One case of the battery: the view of rank r and how much it writes. */
struct view_case {
    const char *name;
    MPI_Datatype etype, filetype; /* etype may be derived; both ours */
    int eints;                    /* ints per etype */
    long n;                       /* etypes this rank writes */
    struct layout lay;
    char label[128];              /* the case in failure messages */
};

static void lay_add(struct layout *l, long off, long len)
{
    if (l->nblk && l->blk[l->nblk - 1].off + l->blk[l->nblk - 1].len == off) {
        l->blk[l->nblk - 1].len += len; /* adjacent: one block */
    } else {
        if (l->nblk == l->cap) {
            l->cap = l->cap ? 2 * l->cap : 16;
            l->blk = realloc(l->blk, (size_t)l->cap * sizeof *l->blk);
            CHECK(l->blk != NULL, "out of memory");
        }
        l->blk[l->nblk++] = (struct block){off, len};
    }
    l->tile_bytes += len;
}

/* The file offset of byte s of the view's stream. */
static MPI_Offset lay_map(const struct layout *l, long s)
{
    long tile = s / l->tile_bytes, in = s % l->tile_bytes;
    for (int i = 0; i < l->nblk; i++) {
        if (in < l->blk[i].len)
            return l->disp + tile * l->extent + l->blk[i].off + in;
        in -= l->blk[i].len;
    }
    CHECK(0, "lay_map: stream byte %ld not in the layout", s);
}

/* A process grid pr x pc for p ranks, pr <= pc, computed here (not by
 * MPI_Dims_create) so that the reference does not lean on MPI. */
static void grid(int p, int *pr, int *pc)
{
    *pr = 1;
    for (int d = 1; d * d <= p; d++)
        if (p % d == 0)
            *pr = d;
    *pc = p / *pr;
}

/* Block distribution of n over parts: start and length of part i. */
static void block_part(int n, int parts, int i, int *start, int *len)
{
    int base = n / parts, extra = n % parts;
    *len = base + (i < extra);
    *start = i * base + (i < extra ? i : extra);
}

/* --- the cases (one per filetype constructor), for rank r of p ------------- */

enum { CASE_VECTOR, CASE_SUBARRAY, CASE_DARRAY, CASE_STRUCT, CASE_RESIZED, NCASES };

/* vector of 4 blocks of 2 ints, stride 2p ints, one tile per rank from
 * displacement 8r: ranks interleave. Its natural extent (no resize), so a
 * read of a second tile lands on other ranks' blocks. */
static void case_vector(struct view_case *c, int r, int p)
{
    c->name = "vector";
    c->etype = MPI_INT;
    c->eints = 1;
    MPICHK(MPI_Type_vector(4, 2, 2 * p, MPI_INT, &c->filetype));
    c->lay.disp = 8 * r;
    for (int k = 0; k < 4; k++)
        lay_add(&c->lay, 8L * k * p, 8);
    c->lay.extent = 4L * (3 * 2 * p + 2);
    c->n = 8;
}

/* subarray of a 7 x 10 int array, block-distributed over a pr x pc grid,
 * after a 64-byte header (displacement 64). */
enum { SUB_ROWS = 7, SUB_COLS = 10 };
static void case_subarray(struct view_case *c, int r, int p)
{
    int pr, pc, r0, nr, c0, nc;
    grid(p, &pr, &pc);
    block_part(SUB_ROWS, pr, r / pc, &r0, &nr);
    block_part(SUB_COLS, pc, r % pc, &c0, &nc);
    int sizes[2] = {SUB_ROWS, SUB_COLS}, sub[2] = {nr, nc}, starts[2] = {r0, c0};
    c->name = "subarray";
    c->etype = MPI_INT;
    c->eints = 1;
    MPICHK(MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C, MPI_INT, &c->filetype));
    c->lay.disp = 64;
    for (int i = 0; i < nr; i++)
        lay_add(&c->lay, 4L * ((r0 + i) * SUB_COLS + c0), 4L * nc);
    c->lay.extent = 4L * SUB_ROWS * SUB_COLS;
    c->n = (long)nr * nc;
}

/* darray: a 9 x 10 int array, rows cyclic(2) over pr, columns cyclic(3)
 * over pc, C order. Rank r = (pi, pj) row-major owns element (i, j) when
 * (i / 2) % pr == pi and (j / 3) % pc == pj, in row-major order. */
enum { DA_ROWS = 9, DA_COLS = 10, DA_RB = 2, DA_CB = 3 };
static void case_darray(struct view_case *c, int r, int p)
{
    int pr, pc;
    grid(p, &pr, &pc);
    int gsizes[2] = {DA_ROWS, DA_COLS}, distribs[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_CYCLIC};
    int dargs[2] = {DA_RB, DA_CB}, psizes[2] = {pr, pc};
    c->name = "darray";
    c->etype = MPI_INT;
    c->eints = 1;
    MPICHK(MPI_Type_create_darray(p, r, 2, gsizes, distribs, dargs, psizes, MPI_ORDER_C, MPI_INT, &c->filetype));
    c->lay.disp = 0;
    c->n = 0;
    for (int i = 0; i < DA_ROWS; i++)
        for (int j = 0; j < DA_COLS; j++)
            if ((i / DA_RB) % pr == r / pc && (j / DA_CB) % pc == r % pc) {
                lay_add(&c->lay, 4L * (i * DA_COLS + j), 4);
                c->n++;
            }
    c->lay.extent = 4L * DA_ROWS * DA_COLS;
}

/* struct of ints with holes: 2 ints at 4, 1 at 20, 2 at 32 (lower bound
 * 4, upper bound 40, extent 36); three tiles per rank from 108r + 8. */
static void case_struct(struct view_case *c, int r, int p)
{
    (void)p;
    int bl[3] = {2, 1, 2};
    MPI_Aint displs[3] = {4, 20, 32};
    MPI_Datatype types[3] = {MPI_INT, MPI_INT, MPI_INT};
    c->name = "struct";
    c->etype = MPI_INT;
    c->eints = 1;
    MPICHK(MPI_Type_create_struct(3, bl, displs, types, &c->filetype));
    c->lay.disp = 108L * r + 8;
    for (int i = 0; i < 3; i++)
        lay_add(&c->lay, displs[i], 4L * bl[i]);
    c->lay.extent = 36;
    c->n = 3 * 5;
}

/* resized: etype = 2 ints; filetype = 3 etypes resized to extent 24p bytes,
 * from displacement 100 + 24r: round-robin records of 24 bytes after a
 * 100-byte header; four tiles per rank. */
static void case_resized(struct view_case *c, int r, int p)
{
    MPI_Datatype three;
    c->name = "resized";
    MPICHK(MPI_Type_contiguous(2, MPI_INT, &c->etype));
    MPICHK(MPI_Type_commit(&c->etype));
    c->eints = 2;
    MPICHK(MPI_Type_contiguous(3, c->etype, &three));
    MPICHK(MPI_Type_create_resized(three, 0, 24L * p, &c->filetype));
    MPICHK(MPI_Type_free(&three));
    c->lay.disp = 100 + 24L * r;
    lay_add(&c->lay, 0, 24);
    c->lay.extent = 24L * p;
    c->n = 4 * 3;
}

static void case_make(int which, struct view_case *c, int r, int p)
{
    memset(c, 0, sizeof *c);
    switch (which) {
    case CASE_VECTOR: case_vector(c, r, p); break;
    case CASE_SUBARRAY: case_subarray(c, r, p); break;
    case CASE_DARRAY: case_darray(c, r, p); break;
    case CASE_STRUCT: case_struct(c, r, p); break;
    default: case_resized(c, r, p); break;
    }
    MPICHK(MPI_Type_commit(&c->filetype));
}

static void case_free(struct view_case *c)
{
    if (c->etype != MPI_INT)
        MPICHK(MPI_Type_free(&c->etype));
    if (c->filetype != MPI_DATATYPE_NULL)
        MPICHK(MPI_Type_free(&c->filetype));
    free(c->lay.blk);
}

/* --- memory ------------------------------------------------------------------ */

/* Memory for n ints: contiguous, or strided (int i at 2i, gaps between,
 * extent 2n ints so that copies of the type do not overlap). */
struct memory {
    int strided;
    long nints;
    MPI_Datatype type; /* n ints: MPI_INT (count n) or one strided type */
    int count;
    int *buf;          /* 2n ints when strided */
};

static void mem_make(struct memory *m, int strided, long nints)
{
    m->strided = strided;
    m->nints = nints;
    m->buf = malloc((size_t)(strided ? 2 : 1) * (size_t)nints * sizeof(int) + 1);
    CHECK(m->buf != NULL, "out of memory");
    memset(m->buf, GAP_BYTE, (size_t)(strided ? 2 : 1) * (size_t)nints * sizeof(int));
    if (!strided) {
        m->type = MPI_INT;
        m->count = (int)nints;
        return;
    }
    MPI_Datatype v;
    MPICHK(MPI_Type_vector((int)nints, 1, 2, MPI_INT, &v));
    MPICHK(MPI_Type_create_resized(v, 0, (MPI_Aint)(2 * nints * sizeof(int)), &m->type));
    MPICHK(MPI_Type_free(&v));
    MPICHK(MPI_Type_commit(&m->type));
    m->count = 1;
}

static void mem_free(struct memory *m)
{
    if (m->strided)
        MPICHK(MPI_Type_free(&m->type));
    free(m->buf);
}

/* Int i of the stream held by memory m. */
static int *mem_int(struct memory *m, long i)
{
    return m->buf + (m->strided ? 2 * i : i);
}

/* The gaps of a strided memory still hold GAP_BYTE. */
static void mem_check_gaps(const struct view_case *c, struct memory *m, const char *what)
{
    if (!m->strided)
        return;
    for (long i = 0; i < m->nints; i++) {
        long bad = tu_verify_byte(m->buf + 2 * i + 1, sizeof(int), GAP_BYTE);
        CHECK(bad < 0, "%s, %s: the gap after int %ld of strided memory was written", c->label, what, i);
    }
}

/* --- the reference ---------------------------------------------------------------- */

static uint64_t data_seed(int which, int strided, int rank)
{
    return tu_seed(which, rank, strided, 17);
}

/* The file every rank's writes make, computed from the layouts alone:
 * zero where nobody wrote (holes read as zeros), up to the last byte
 * written; written[i] says whether somebody wrote byte i. */
struct reference {
    long fsize;
    unsigned char *bytes, *written;
};

static void reference_grow(struct reference *ref, long end)
{
    if (end <= ref->fsize)
        return;
    ref->bytes = realloc(ref->bytes, (size_t)end);
    ref->written = realloc(ref->written, (size_t)end);
    CHECK(ref->bytes && ref->written, "out of memory");
    memset(ref->bytes + ref->fsize, 0, (size_t)(end - ref->fsize));
    memset(ref->written + ref->fsize, 0, (size_t)(end - ref->fsize));
    ref->fsize = end;
}

static void reference_make(int which, int strided, struct reference *ref)
{
    memset(ref, 0, sizeof *ref);
    for (int q = 0; q < tu_size; q++) {
        struct view_case c;
        case_make(which, &c, q, tu_size);
        long bytes = c.n * c.eints * (long)sizeof(int);
        unsigned char *data = malloc((size_t)bytes);
        CHECK(data != NULL, "out of memory");
        tu_fill(data, (size_t)bytes, data_seed(which, strided, q));
        reference_grow(ref, (long)lay_map(&c.lay, bytes - 1) + 1);
        for (long s = 0; s < bytes; s++) {
            ref->bytes[lay_map(&c.lay, s)] = data[s];
            ref->written[lay_map(&c.lay, s)] = 1;
        }
        free(data);
        case_free(&c);
    }
}

static void reference_free(struct reference *ref)
{
    free(ref->bytes);
    free(ref->written);
}

/* got (file bytes from offset 0) against the reference. A hole nobody
 * wrote must read as zero; ROMIO's data sieving fills such holes with
 * the contents of its buffer (the deviation "hole-garbage", README). */
static void check_file_bytes(const unsigned char *got, const struct reference *ref, const char *what)
{
    long garbage = 0;
    for (long i = 0; i < ref->fsize; i++) {
        if (got[i] == ref->bytes[i])
            continue;
        if (!ref->written[i] && iu_known_deviation("hole-garbage")) {
            garbage++;
            continue;
        }
        CHECK(0, "%s: file byte %ld is 0x%02x, expected 0x%02x%s", what, i, got[i], ref->bytes[i],
              ref->written[i] ? "" : " (a hole nobody wrote)");
    }
    static int noted;
    if (garbage && !noted++)
        printf("NOTE io_views: %s: holes nobody wrote are not zero (hole-garbage)\n", what);
}

/* Rank 0: the file, read with plain POSIX calls, is the reference. */
static void check_file_posix(const char *path, const struct reference *ref, const char *what)
{
    int fd = open(path, O_RDONLY);
    CHECK(fd >= 0, "%s: open %s failed", what, path);
    struct stat st;
    CHECK(fstat(fd, &st) == 0 && st.st_size == ref->fsize, "%s: file size %ld, expected %ld", what,
          (long)st.st_size, ref->fsize);
    unsigned char *got = malloc((size_t)ref->fsize + 1);
    CHECK(got != NULL, "out of memory");
    ssize_t n = pread(fd, got, (size_t)ref->fsize, 0);
    CHECK(n == ref->fsize, "%s: pread returned %ld of %ld", what, (long)n, ref->fsize);
    check_file_bytes(got, ref, what);
    free(got);
    close(fd);
}

/* --- the accesses --------------------------------------------------------------------- */

static void check_position(const struct view_case *c, MPI_File fh, MPI_Offset want, const char *what)
{
    MPI_Offset pos;
    MPICHK(MPI_File_get_position(fh, &pos));
    CHECK(pos == want, "%s, %s: position %lld, expected %lld", c->label, what, (long long)pos, (long long)want);
}

/* Write etypes [lo, hi) of the stream from memory m, which holds the whole
 * stream: a memory type for just those ints, at the right place. */
static void piece(struct view_case *c, struct memory *m, long lo, long hi, struct memory *pm)
{
    long nints = (hi - lo) * c->eints;
    pm->strided = m->strided;
    pm->nints = nints;
    pm->buf = mem_int(m, lo * c->eints);
    if (!m->strided) {
        pm->type = MPI_INT;
        pm->count = (int)nints;
        return;
    }
    MPI_Datatype v;
    MPICHK(MPI_Type_vector((int)nints, 1, 2, MPI_INT, &v));
    MPICHK(MPI_Type_create_resized(v, 0, (MPI_Aint)(2 * nints * sizeof(int)), &pm->type));
    MPICHK(MPI_Type_free(&v));
    MPICHK(MPI_Type_commit(&pm->type));
    pm->count = 1;
}

static void piece_done(struct memory *pm)
{
    if (pm->strided)
        MPICHK(MPI_Type_free(&pm->type));
}

static void check_status_ints(const struct view_case *c, MPI_Status *st, struct memory *m, long want,
                              const char *what)
{
    int got;
    if (m->strided)
        MPICHK(MPI_Get_elements(st, m->type, &got));
    else
        MPICHK(MPI_Get_count(st, MPI_INT, &got));
    if (got != want && iu_known_deviation("eof-count")) {
        static int noted;
        if (!noted++)
            printf("NOTE io_views: %s through a view: the status says %d ints, not %ld (eof-count)\n", what,
                   got, want);
    } else
        CHECK(got == want, "%s, %s: the status says %d ints, expected %ld", c->label, what, got, want);
}

/* This rank's part: etypes [0, a) by write_at at offset 0; [b, n) after
 * a seek to b; [a, b) after a seek back from n by SEEK_CUR. */
static void write_part(MPI_File fh, struct view_case *c, struct memory *m)
{
    long n = c->n, a = n / 3, b = 2 * n / 3;
    struct memory pm;
    MPI_Status st;

    piece(c, m, 0, a, &pm);
    MPICHK(MPI_File_write_at(fh, 0, pm.buf, pm.count, pm.type, &st));
    check_status_ints(c, &st, &pm, a * c->eints, "write_at");
    piece_done(&pm);
    check_position(c, fh, 0, "after write_at"); /* explicit offsets leave the pointer */

    MPICHK(MPI_File_seek(fh, b, MPI_SEEK_SET));
    check_position(c, fh, b, "after seek SET");
    piece(c, m, b, n, &pm);
    MPICHK(MPI_File_write(fh, pm.buf, pm.count, pm.type, &st));
    check_status_ints(c, &st, &pm, (n - b) * c->eints, "write [b, n)");
    piece_done(&pm);
    check_position(c, fh, n, "after write [b, n)");

    MPICHK(MPI_File_seek(fh, a - n, MPI_SEEK_CUR));
    check_position(c, fh, a, "after seek CUR");
    piece(c, m, a, b, &pm);
    MPICHK(MPI_File_write(fh, pm.buf, pm.count, pm.type, &st));
    piece_done(&pm);
    check_position(c, fh, b, "after write [a, b)");
}

/* The view's stream bytes that lie before end of file (ROMIO's and the
 * standard's notion of where SEEK_END puts the pointer), in etypes. */
static long etypes_before_eof(struct view_case *c, long fsize)
{
    long esize = c->eints * (long)sizeof(int), s = 0;
    while (lay_map(&c->lay, s) < fsize)
        s++;
    return (s + esize - 1) / esize;
}

/* The ints read from stream etype `from` on, against the reference. */
static void check_read(struct view_case *c, struct memory *m, long from, long nints, const struct reference *ref,
                       const char *what)
{
    long base = from * c->eints * (long)sizeof(int);
    for (long i = 0; i < nints; i++) {
        unsigned char want[sizeof(int)];
        for (long k = 0; k < (long)sizeof(int); k++)
            want[k] = ref->bytes[lay_map(&c->lay, base + i * (long)sizeof(int) + k)];
        if (memcmp(mem_int(m, i), want, sizeof(int)) != 0) {
            unsigned char *got = (unsigned char *)mem_int(m, i);
            CHECK(0, "%s, %s: int %ld of the stream (file offset %lld) is %02x%02x%02x%02x, "
                  "expected %02x%02x%02x%02x", c->label, what, i,
                  (long long)lay_map(&c->lay, base + i * (long)sizeof(int)), got[0], got[1], got[2], got[3],
                  want[0], want[1], want[2], want[3]);
        }
    }
    mem_check_gaps(c, m, what);
}

static void read_part(MPI_File fh, struct view_case *c, int strided, const struct reference *ref)
{
    long nints = c->n * c->eints;
    struct memory m;
    MPI_Status st;

    /* all of it at explicit offset 0 */
    mem_make(&m, strided, nints);
    MPICHK(MPI_File_read_at(fh, 0, m.buf, m.count, m.type, &st));
    check_status_ints(c, &st, &m, nints, "read_at");
    check_read(c, &m, 0, nints, ref, "read_at");
    mem_free(&m);

    /* twice as much through the pointer: a short count at end of file */
    long eof = etypes_before_eof(c, ref->fsize);
    mem_make(&m, strided, 2 * nints);
    MPICHK(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    MPICHK(MPI_File_read(fh, m.buf, m.count, m.type, &st));
    long want = eof < 2 * c->n ? eof : 2 * c->n;
    check_status_ints(c, &st, &m, want * c->eints, "read past the end of file");
    check_read(c, &m, 0, want * c->eints, ref, "read past the end of file");
    mem_free(&m);

    /* SEEK_END: the pointer after the last etype before end of file */
    MPICHK(MPI_File_seek(fh, 0, MPI_SEEK_END));
    check_position(c, fh, eof, "after seek END 0");
    long k = eof < 2 ? eof : 2;
    MPICHK(MPI_File_seek(fh, -k, MPI_SEEK_END));
    check_position(c, fh, eof - k, "after seek END -k");
    mem_make(&m, strided, k * c->eints);
    MPICHK(MPI_File_read(fh, m.buf, m.count, m.type, &st));
    check_status_ints(c, &st, &m, k * c->eints, "read the last etypes");
    check_read(c, &m, eof - k, k * c->eints, ref, "read the last etypes");
    check_position(c, fh, eof, "after reading the last etypes");
    mem_free(&m);
}

static void check_byte_offsets(MPI_File fh, struct view_case *c)
{
    long esize = c->eints * (long)sizeof(int);
    long probes[] = {0, 1, c->n / 2, c->n - 1, c->n, c->n + 1};
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
        MPI_Offset got;
        MPICHK(MPI_File_get_byte_offset(fh, probes[i], &got));
        MPI_Offset want = lay_map(&c->lay, probes[i] * esize);
        CHECK(got == want, "%s: get_byte_offset(%ld) = %lld, expected %lld", c->label, probes[i], (long long)got,
              (long long)want);
    }
}

static int is_predefined(MPI_Datatype t)
{
    int ni, na, nd, combiner;
    MPICHK(MPI_Type_get_envelope(t, &ni, &na, &nd, &combiner));
    return combiner == MPI_COMBINER_NAMED;
}

/* get_view: what was set; derived types come back as new handles with
 * the same size and extent, which the caller frees. */
static void check_view(MPI_File fh, struct view_case *c)
{
    MPI_Offset disp;
    MPI_Datatype et, ft;
    char rep[MPI_MAX_DATAREP_STRING + 1];
    MPICHK(MPI_File_get_view(fh, &disp, &et, &ft, rep));
    CHECK(disp == c->lay.disp, "%s: get_view disp %lld, expected %lld", c->label, (long long)disp,
          (long long)c->lay.disp);
    CHECK(strcmp(rep, "native") == 0, "%s: get_view datarep \"%s\"", c->label, rep);
    int esize, fsize;
    MPI_Aint lb, ext;
    MPICHK(MPI_Type_size(et, &esize));
    CHECK(esize == c->eints * (int)sizeof(int), "%s: etype size %d", c->label, esize);
    if (c->eints == 1)
        CHECK(et == MPI_INT, "%s: get_view etype is not MPI_INT", c->label);
    else
        CHECK(!is_predefined(et), "%s: derived etype came back predefined", c->label);
    MPICHK(MPI_Type_size(ft, &fsize));
    MPICHK(MPI_Type_get_extent(ft, &lb, &ext));
    CHECK(fsize == c->lay.tile_bytes && ext == c->lay.extent && !is_predefined(ft),
          "%s: get_view filetype size %d extent %ld, expected %ld and %ld", c->label, fsize, (long)ext,
          c->lay.tile_bytes, c->lay.extent);
    if (!is_predefined(et))
        MPICHK(MPI_Type_free(&et));
    MPICHK(MPI_Type_free(&ft));
}

static void check_type_extent(MPI_File fh, MPI_Datatype t, const char *what)
{
    MPI_Aint lb, ext, fext;
    MPICHK(MPI_Type_get_extent(t, &lb, &ext));
    MPICHK(MPI_File_get_type_extent(fh, t, &fext));
    CHECK(fext == ext, "%s: get_type_extent %ld, MPI_Type_get_extent %ld (native)", what, (long)fext, (long)ext);
}

/* The default view before set_view: 0, MPI_BYTE, MPI_BYTE, "native". */
static void check_default_view(MPI_File fh)
{
    MPI_Offset disp;
    MPI_Datatype et, ft;
    char rep[MPI_MAX_DATAREP_STRING + 1];
    MPICHK(MPI_File_get_view(fh, &disp, &et, &ft, rep));
    CHECK(disp == 0 && et == MPI_BYTE && ft == MPI_BYTE && strcmp(rep, "native") == 0,
          "default view (%lld, %s, %s, \"%s\")", (long long)disp, et == MPI_BYTE ? "MPI_BYTE" : "other",
          ft == MPI_BYTE ? "MPI_BYTE" : "other", rep);
}

/* Rank 0, alone: the whole file through the default view, and 100 bytes
 * more (a contiguous short read). */
static void check_file_default_view(const char *path, const struct reference *ref)
{
    long fsize = ref->fsize;
    MPI_File fh;
    MPI_Status st;
    int got;
    unsigned char *buf = malloc((size_t)fsize + 100);
    CHECK(buf != NULL, "out of memory");
    MPICHK(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    MPICHK(MPI_File_read_at(fh, 0, buf, (int)fsize + 100, MPI_BYTE, &st));
    MPICHK(MPI_Get_count(&st, MPI_BYTE, &got));
    CHECK(got == fsize, "default view: read %d bytes of a %ld-byte file", got, fsize);
    check_file_bytes(buf, ref, "read through the default view");
    MPICHK(MPI_File_read_at(fh, fsize, buf, 10, MPI_BYTE, &st));
    MPICHK(MPI_Get_count(&st, MPI_BYTE, &got));
    CHECK(got == 0, "a read at end of file returned %d bytes", got);
    MPICHK(MPI_File_close(&fh));
    free(buf);
}

/* How independent access may move the data: the library's default (data
 * sieving, in ROMIO and bmpi), no sieving, and sieving buffers of 64
 * bytes, so that an access mixes sieved groups and single runs. */
enum { HINTS_DEFAULT, HINTS_NO_SIEVING, HINTS_SMALL_SIEVE, NHINTS };
static const char *const hints_name[NHINTS] = {"default", "no-sieving", "small-sieve"};

static MPI_Info hints_make(int hints)
{
    MPI_Info info = MPI_INFO_NULL;
    if (hints == HINTS_DEFAULT)
        return info;
    MPICHK(MPI_Info_create(&info));
    if (hints == HINTS_NO_SIEVING) {
        MPICHK(MPI_Info_set(info, "romio_ds_read", "disable"));
        MPICHK(MPI_Info_set(info, "romio_ds_write", "disable"));
    } else {
        MPICHK(MPI_Info_set(info, "ind_rd_buffer_size", "64"));
        MPICHK(MPI_Info_set(info, "ind_wr_buffer_size", "64"));
    }
    return info;
}

static void run_case(int which, int strided, int hints)
{
    struct view_case c;
    case_make(which, &c, tu_rank, tu_size);
    char name[48];
    snprintf(name, sizeof name, "%s-%s-%s", c.name, strided ? "strided" : "contig", hints_name[hints]);
    snprintf(c.label, sizeof c.label, "%s view, %s memory, %s hints", c.name, strided ? "strided" : "contiguous",
             hints_name[hints]);
    const char *what = c.label;
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s", iu_path(name));

    MPI_File fh;
    MPI_Info info = hints_make(hints);
    MPICHK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    if (info != MPI_INFO_NULL)
        MPICHK(MPI_Info_free(&info));
    check_default_view(fh);
    MPICHK(MPI_File_set_view(fh, c.lay.disp, c.etype, c.filetype, "native", MPI_INFO_NULL));
    MPICHK(MPI_Type_free(&c.filetype)); /* the view keeps its own */
    c.filetype = MPI_DATATYPE_NULL;
    check_position(&c, fh, 0, "after set_view");

    struct memory m;
    long nints = c.n * c.eints;
    mem_make(&m, strided, nints);
    tu_fill(m.buf, (size_t)nints * sizeof(int), data_seed(which, strided, tu_rank));
    if (strided) { /* spread the stream out: int i to 2i, gaps between */
        for (long i = nints - 1; i >= 0; i--) {
            m.buf[2 * i] = m.buf[i];
            memset(&m.buf[2 * i + 1], GAP_BYTE, sizeof(int));
        }
    }
    write_part(fh, &c, &m);
    mem_free(&m);

    /* sync-barrier-sync: every rank's writes visible to all */
    MPICHK(MPI_File_sync(fh));
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    MPICHK(MPI_File_sync(fh));

    struct reference ref;
    reference_make(which, strided, &ref);
    if (tu_rank == 0)
        check_file_posix(path, &ref, what);
    read_part(fh, &c, strided, &ref);
    check_byte_offsets(fh, &c);
    check_view(fh, &c);
    check_type_extent(fh, c.etype, "etype");
    mem_make(&m, 1, 6);
    check_type_extent(fh, m.type, "strided memory type");
    mem_free(&m);
    MPICHK(MPI_File_close(&fh));
    if (tu_rank == 0)
        check_file_default_view(path, &ref);
    reference_free(&ref);
    case_free(&c);
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv, "io_views");
    iu_init("io_views");
    for (int which = 0; which < NCASES; which++)
        for (int strided = 0; strided < 2; strided++)
            for (int hints = 0; hints < NHINTS; hints++)
                run_case(which, strided, hints);
    iu_finish();
    tu_finish();
    return 0;
}
