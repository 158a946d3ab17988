/*
 * Collective data access (MPI 4.1 14.4): every collective form -- blocking,
 * nonblocking and split; explicit offsets and the individual file pointer;
 * int and large-count (_c) calls -- under views built from vector,
 * subarray and darray filetypes whose pieces interleave across ranks, with
 * contiguous and strided memory types, under several hint sets (one
 * aggregator, two, small collective buffers that force many rounds,
 * collective buffering forced on and off, striping alignment).
 *
 * Writes are checked byte for byte by rank 0, which reads the file with
 * plain pread and compares it with the image it computes serially (file
 * bytes nobody wrote keep the background rank 0 put there before, or read
 * as zeros past it: the read-modify-write of holes). Reads are of a file
 * rank 0 wrote with plain pwrite; gaps of strided memory types must stay
 * untouched. Some cases leave the odd ranks without data (zero-count
 * participants), nonblocking cases keep two collectives in flight and
 * overlap them with point-to-point traffic, four nonblocking writes whose
 * holes and spans overlap are in flight together, pieces large enough to
 * go by single copy are exchanged, and the split collective rules
 * (one at a time per file, no end without begin) are checked; a view in
 * external32 goes through conversion (where supported). Last, a
 * write whose aggregator cannot write (RLIMIT_FSIZE on rank 0) must fail
 * on every rank whose data it held, and hang nobody.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test/io/io_util.h"

/* The large-count (_c) calls are MPI 4.0; Open MPI 4.1 has none, so
 * there the int calls stand in. */
#if MPI_VERSION >= 4
#define LARGE(fn) fn##_c
#else
#define LARGE(fn) fn
#endif

enum pattern_kind { PAT_VECTOR, PAT_SUBARRAY, PAT_DARRAY, PAT_COUNT };
static const char *const pattern_name[] = {"vector", "subarray", "darray"};

enum form { F_AT, F_IND, F_NB_AT, F_NB_IND, F_SPLIT_AT, F_SPLIT_IND, F_COUNT };
static const char *const form_name[] = {"_at_all", "_all", "i_at_all", "i_all", "_at_all_begin/end",
                                        "_all_begin/end"};

#define ROWS 96
#define COLS 64
#define VEC_BLOCKS 160
#define VEC_BLEN 5
#define SENTINEL ((int)0x5e5e5e5e)
#define BACKGROUND 0xee

/* A view: each local element i of the stream is global element gidx[i]
 * of the file (file offset 4 * gidx[i]). */
struct pattern {
    enum pattern_kind kind;
    MPI_Datatype ftype;
    MPI_Offset disp;
    int n;          /* local elements (0 for a zero-count participant) */
    int *gidx;
    int nglobal;
    unsigned char *owned; /* rank 0: which global elements some rank accesses */
};

static int value(int g, unsigned salt)
{
    return (int)(uint32_t)tu_mix(((uint64_t)salt << 32) ^ (uint64_t)(unsigned)g);
}

/* Collective: open (creating) path for reading and writing with hints,
 * key/value pairs up to a NULL key; a pair whose value is NULL is left
 * out (the library's default). */
static MPI_File open_with_hints(const char *path, const char *const *hints)
{
    MPI_Info info;
    MPI_File fh;
    MPICHK(MPI_Info_create(&info));
    for (int k = 0; hints[k]; k += 2)
        if (hints[k + 1])
            MPICHK(MPI_Info_set(info, hints[k], hints[k + 1]));
    MPICHK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    MPICHK(MPI_Info_free(&info));
    return fh;
}

static MPI_Datatype build_filetype(enum pattern_kind kind, MPI_Offset *disp, int *nglobal)
{
    MPI_Datatype t;
    int dims[2] = {0, 0};
    MPICHK(MPI_Dims_create(tu_size, 2, dims));
    int coords[2] = {tu_rank / dims[1], tu_rank % dims[1]};
    int gsizes[2] = {ROWS, COLS};
    *disp = 0;
    switch (kind) {
    case PAT_VECTOR: /* blocks of VEC_BLEN ints, the ranks' blocks in turn */
        MPICHK(MPI_Type_vector(VEC_BLOCKS, VEC_BLEN, VEC_BLEN * tu_size, MPI_INT, &t));
        *disp = (MPI_Offset)tu_rank * VEC_BLEN * (MPI_Offset)sizeof(int);
        *nglobal = VEC_BLOCKS * VEC_BLEN * tu_size;
        break;
    case PAT_SUBARRAY: { /* a 2-d block distribution over a process grid */
        int sub[2] = {ROWS / dims[0], COLS / dims[1]};
        int start[2] = {coords[0] * sub[0], coords[1] * sub[1]};
        MPICHK(MPI_Type_create_subarray(2, gsizes, sub, start, MPI_ORDER_C, MPI_INT, &t));
        *nglobal = ROWS * COLS;
        break;
    }
    default: { /* rows cyclic in pairs, columns in blocks */
        int distribs[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK};
        int dargs[2] = {2, MPI_DISTRIBUTE_DFLT_DARG};
        MPICHK(MPI_Type_create_darray(tu_size, tu_rank, 2, gsizes, distribs, dargs, dims, MPI_ORDER_C, MPI_INT,
                                      &t));
        *nglobal = ROWS * COLS;
        break;
    }
    }
    MPICHK(MPI_Type_commit(&t));
    return t;
}

/* The pattern's map from local to global elements, found by packing an
 * array of global indices with the filetype itself. */
static void pattern_init(struct pattern *p, enum pattern_kind kind, int zero_odd)
{
    p->kind = kind;
    p->ftype = build_filetype(kind, &p->disp, &p->nglobal);
    int tsize;
    MPICHK(MPI_Type_size(p->ftype, &tsize));
    int all = tsize / (int)sizeof(int);
    int *idx = malloc((size_t)p->nglobal * sizeof(int));
    p->gidx = malloc((size_t)all * sizeof(int) + 1);
    CHECK(idx && p->gidx, "out of memory");
    for (int g = 0; g < p->nglobal; g++)
        idx[g] = g;
    int pos = 0;
    MPICHK(MPI_Pack(idx, 1, p->ftype, p->gidx, all * (int)sizeof(int), &pos, MPI_COMM_WORLD));
    CHECK(pos == all * (int)sizeof(int), "packed %d bytes, expected %d", pos, all * (int)sizeof(int));
    for (int i = 0; i < all; i++)
        p->gidx[i] += (int)(p->disp / (MPI_Offset)sizeof(int));
    p->n = zero_odd && tu_rank % 2 ? 0 : all;
    free(idx);

    /* rank 0 learns every rank's map, for the serial reference */
    int *counts = malloc((size_t)tu_size * sizeof(int)), *displs = malloc((size_t)tu_size * sizeof(int));
    CHECK(counts && displs, "out of memory");
    MPICHK(MPI_Gather(&p->n, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD));
    int total = 0;
    for (int r = 0; tu_rank == 0 && r < tu_size; r++) {
        displs[r] = total;
        total += counts[r];
    }
    int *every = malloc((size_t)(total ? total : 1) * sizeof(int));
    CHECK(every != NULL, "out of memory");
    MPICHK(MPI_Gatherv(p->gidx, p->n, MPI_INT, every, counts, displs, MPI_INT, 0, MPI_COMM_WORLD));
    p->owned = NULL;
    if (tu_rank == 0) {
        p->owned = calloc((size_t)p->nglobal, 1);
        CHECK(p->owned != NULL, "out of memory");
        for (int i = 0; i < total; i++) {
            CHECK(every[i] >= 0 && every[i] < p->nglobal, "global index %d out of range", every[i]);
            CHECK(!p->owned[every[i]], "global element %d belongs to two ranks", every[i]);
            p->owned[every[i]] = 1;
        }
    }
    free(every);
    free(counts);
    free(displs);
}

static void pattern_free(struct pattern *p)
{
    MPICHK(MPI_Type_free(&p->ftype));
    free(p->gidx);
    free(p->owned);
}

/* --- the access under test -------------------------------------------------- */

/* Checks that go beyond what the standard promises, or that other
 * libraries are known to fail (README), are made on bmpi only. */
static int is_bmpi(void)
{
    static int known = -1;
    if (known < 0) {
        char v[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPICHK(MPI_Get_library_version(v, &len));
        known = strstr(v, "bmpi") != NULL;
    }
    return known;
}


/* Point-to-point traffic while nonblocking collectives are in flight:
 * a ring exchange, testing the file requests in between. Returns whether
 * they completed (their statuses in st). MPICH 4.0.2 mixes up the data of
 * two collective reads in flight when MPI_Testall completes them (README),
 * so there the file requests are left to the caller's MPI_Waitall unless
 * IO_COLL_TESTALL=1. */
static int ring_traffic(MPI_Request *io, int nio, MPI_Status *st)
{
    int io_done = 0, test_io = is_bmpi() || getenv("IO_COLL_TESTALL");
    enum { N = 1000, ROUNDS = 5 };
    static int out[N], in[N];
    int right = (tu_rank + 1) % tu_size, left = (tu_rank + tu_size - 1) % tu_size;
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < N; i++)
            out[i] = value(i, (unsigned)(tu_rank * 100 + r));
        MPI_Request q[2];
        MPICHK(MPI_Irecv(in, N, MPI_INT, left, 77, MPI_COMM_WORLD, &q[0]));
        MPICHK(MPI_Isend(out, N, MPI_INT, right, 77, MPI_COMM_WORLD, &q[1]));
        int flag = 0;
        while (!flag) {
            MPICHK(MPI_Testall(2, q, &flag, MPI_STATUSES_IGNORE));
            if (!io_done && test_io)
                MPICHK(MPI_Testall(nio, io, &io_done, st));
        }
        for (int i = 0; i < N; i++)
            CHECK(in[i] == value(i, (unsigned)(left * 100 + r)), "ring message %d from %d: element %d wrong", r,
                  left, i);
    }
    return io_done;
}

static void check_count(MPI_Status *st, MPI_Datatype mtype, int want, const char *what)
{
    int n = -1;
    MPICHK(MPI_Get_count(st, mtype, &n));
    CHECK(n == want, "%s: status count %d, expected %d", what, n, want);
}

/* The n elements of buf (memory type mtype, whose extent is ext) to or
 * from the view, in two halves: at etype offsets 0 and h1, or through the
 * individual file pointer from 0. The second half uses the _c call. */
static void do_access(MPI_File fh, int write, enum form form, void *buf, int n, MPI_Datatype mtype, MPI_Aint ext)
{
    int h1 = n / 2, h2 = n - h1;
    void *b2 = (char *)buf + (MPI_Aint)h1 * ext;
    MPI_Status st[2];
    MPI_Request rq[2];
    if (form == F_IND || form == F_NB_IND || form == F_SPLIT_IND)
        MPICHK(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    switch (form) {
    case F_AT:
        if (write) {
            MPICHK(MPI_File_write_at_all(fh, 0, buf, h1, mtype, &st[0]));
            MPICHK(LARGE(MPI_File_write_at_all)(fh, h1, b2, h2, mtype, &st[1]));
        } else {
            MPICHK(MPI_File_read_at_all(fh, 0, buf, h1, mtype, &st[0]));
            MPICHK(LARGE(MPI_File_read_at_all)(fh, h1, b2, h2, mtype, &st[1]));
        }
        break;
    case F_IND:
        if (write) {
            MPICHK(MPI_File_write_all(fh, buf, h1, mtype, &st[0]));
            MPICHK(LARGE(MPI_File_write_all)(fh, b2, h2, mtype, &st[1]));
        } else {
            MPICHK(MPI_File_read_all(fh, buf, h1, mtype, &st[0]));
            MPICHK(LARGE(MPI_File_read_all)(fh, b2, h2, mtype, &st[1]));
        }
        break;
    case F_NB_AT:
    case F_NB_IND:
        if (form == F_NB_AT && write) {
            MPICHK(MPI_File_iwrite_at_all(fh, 0, buf, h1, mtype, &rq[0]));
            MPICHK(LARGE(MPI_File_iwrite_at_all)(fh, h1, b2, h2, mtype, &rq[1]));
        } else if (form == F_NB_AT) {
            MPICHK(MPI_File_iread_at_all(fh, 0, buf, h1, mtype, &rq[0]));
            MPICHK(LARGE(MPI_File_iread_at_all)(fh, h1, b2, h2, mtype, &rq[1]));
        } else if (write) {
            MPICHK(MPI_File_iwrite_all(fh, buf, h1, mtype, &rq[0]));
            MPICHK(LARGE(MPI_File_iwrite_all)(fh, b2, h2, mtype, &rq[1]));
        } else {
            MPICHK(MPI_File_iread_all(fh, buf, h1, mtype, &rq[0]));
            MPICHK(LARGE(MPI_File_iread_all)(fh, b2, h2, mtype, &rq[1]));
        }
        if (tu_size == 1 || !ring_traffic(rq, 2, st))
            MPICHK(MPI_Waitall(2, rq, st));
        break;
    case F_SPLIT_AT:
        if (write) {
            MPICHK(MPI_File_write_at_all_begin(fh, 0, buf, h1, mtype));
            MPICHK(MPI_File_write_at_all_end(fh, buf, &st[0]));
            MPICHK(LARGE(MPI_File_write_at_all_begin)(fh, h1, b2, h2, mtype));
            MPICHK(MPI_File_write_at_all_end(fh, b2, &st[1]));
        } else {
            MPICHK(MPI_File_read_at_all_begin(fh, 0, buf, h1, mtype));
            MPICHK(MPI_File_read_at_all_end(fh, buf, &st[0]));
            MPICHK(LARGE(MPI_File_read_at_all_begin)(fh, h1, b2, h2, mtype));
            MPICHK(MPI_File_read_at_all_end(fh, b2, &st[1]));
        }
        break;
    default:
        if (write) {
            MPICHK(MPI_File_write_all_begin(fh, buf, h1, mtype));
            MPICHK(MPI_File_write_all_end(fh, buf, &st[0]));
            MPICHK(LARGE(MPI_File_write_all_begin)(fh, b2, h2, mtype));
            MPICHK(MPI_File_write_all_end(fh, b2, &st[1]));
        } else {
            MPICHK(MPI_File_read_all_begin(fh, buf, h1, mtype));
            MPICHK(MPI_File_read_all_end(fh, buf, &st[0]));
            MPICHK(LARGE(MPI_File_read_all_begin)(fh, b2, h2, mtype));
            MPICHK(MPI_File_read_all_end(fh, b2, &st[1]));
        }
        break;
    }
    char what[64];
    snprintf(what, sizeof(what), "%s%s, first half", write ? "write" : "read", form_name[form]);
    check_count(&st[0], mtype, h1, what);
    snprintf(what, sizeof(what), "%s%s, second half", write ? "write" : "read", form_name[form]);
    check_count(&st[1], mtype, h2, what);
    if (form == F_IND || form == F_NB_IND || form == F_SPLIT_IND) {
        MPI_Offset pos;
        MPICHK(MPI_File_get_position(fh, &pos));
        CHECK(pos == n, "%s: file pointer at %lld after %d etypes", form_name[form], (long long)pos, n);
    }
}

/* --- one case ----------------------------------------------------------------- */

struct mem {
    MPI_Datatype type; /* MPI_INT, or an int with a gap of one int after it */
    MPI_Aint ext;
    int stride;        /* ints from one element to the next */
};

static int *mem_buf(const struct mem *m, int n)
{
    int *b = malloc((size_t)(n ? n : 1) * (size_t)m->stride * sizeof(int));
    CHECK(b != NULL, "out of memory");
    for (int i = 0; i < n * m->stride; i++)
        b[i] = SENTINEL;
    return b;
}

static void describe(char *s, size_t len, const struct pattern *p, const struct mem *m, enum form form,
                     const char *hints, int zero)
{
    snprintf(s, len, "%s %s view, %s memory, hints {%s}%s", form_name[form], pattern_name[p->kind],
             m->stride == 1 ? "contiguous" : "strided", hints, zero ? ", odd ranks without data" : "");
}

/* Rank 0: the file's bytes against the serial reference: what was
 * written, over a background of `bg` bytes, zeros past it. */
static void verify_file(const char *path, const struct pattern *p, unsigned salt, size_t bg, int big_endian,
                        const char *what)
{
    size_t size = bg;
    for (int g = 0; g < p->nglobal; g++)
        if (p->owned[g] && (size_t)(g + 1) * sizeof(int) > size)
            size = (size_t)(g + 1) * sizeof(int);
    unsigned char *want = calloc(size + 1, 1), *got = malloc(size + 16);
    CHECK(want && got, "out of memory");
    memset(want, BACKGROUND, bg);
    /* bytes past the background that nobody wrote: a hole between the old
     * end of file and new data, zeros on POSIX; the standard leaves them
     * undefined and ROMIO fills them from its buffer, so only bmpi's are
     * checked */
    unsigned char *care = malloc(size + 1);
    CHECK(care != NULL, "out of memory");
    memset(care, 1, size);
    if (!is_bmpi())
        memset(care + bg, 0, size - bg);
    for (int g = 0; g < p->nglobal; g++)
        if (p->owned[g]) {
            int v = value(g, salt);
            if (big_endian)
                v = (int)__builtin_bswap32((uint32_t)v);
            memcpy(want + (size_t)g * sizeof(int), &v, sizeof(int));
            memset(care + (size_t)g * sizeof(int), 1, sizeof(int));
        }
    int fd = open(path, O_RDONLY);
    CHECK(fd >= 0, "open %s for the reference", path);
    ssize_t n = pread(fd, got, size + 16, 0);
    close(fd);
    CHECK(n == (ssize_t)size, "%s: file has %zd bytes, expected %zu", what, n, size);
    for (size_t i = 0; i < size; i++)
        CHECK(!care[i] || got[i] == want[i], "%s: file byte %zu (element %zu) is 0x%02x, expected 0x%02x", what, i,
              i / sizeof(int), got[i], want[i]);
    free(want);
    free(got);
    free(care);
}

/* Rank 0 writes the file with plain POSIX calls: bytes [0, len) of img. */
static void posix_write(const char *path, const void *img, size_t len)
{
    int fd = open(path, O_WRONLY | O_TRUNC);
    CHECK(fd >= 0, "open %s", path);
    CHECK(pwrite(fd, img, len, 0) == (ssize_t)len, "pwrite %s", path);
    CHECK(fsync(fd) == 0, "fsync %s", path);
    close(fd);
}

static void write_case(MPI_File fh, const char *path, const struct pattern *p, const struct mem *m, enum form form,
                       unsigned salt, const char *what)
{
    /* the background covers the first half of the file: the pieces leave
     * holes there (kept) and past it (zeros) */
    size_t bg = (size_t)p->nglobal * sizeof(int) / 2;
    MPICHK(MPI_File_set_size(fh, 0));
    if (tu_rank == 0) {
        unsigned char *img = malloc(bg);
        CHECK(img != NULL, "out of memory");
        memset(img, BACKGROUND, bg);
        posix_write(path, img, bg);
        free(img);
    }
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    MPICHK(MPI_File_sync(fh));
    int *buf = mem_buf(m, p->n);
    for (int i = 0; i < p->n; i++)
        buf[i * m->stride] = value(p->gidx[i], salt);
    do_access(fh, 1, form, buf, p->n, m->type, m->ext);
    for (int i = 0; m->stride > 1 && i < p->n; i++)
        CHECK(buf[i * m->stride + 1] == SENTINEL, "%s: a write changed the memory gap after element %d", what, i);
    free(buf);
    MPICHK(MPI_File_sync(fh));
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    if (tu_rank == 0)
        verify_file(path, p, salt, bg, 0, what);
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
}

static void read_case(MPI_File fh, const char *path, const struct pattern *p, const struct mem *m, enum form form,
                      unsigned salt, const char *what)
{
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    if (tu_rank == 0) {
        int *img = malloc((size_t)p->nglobal * sizeof(int));
        CHECK(img != NULL, "out of memory");
        for (int g = 0; g < p->nglobal; g++)
            img[g] = value(g, salt);
        posix_write(path, img, (size_t)p->nglobal * sizeof(int));
        free(img);
    }
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    MPICHK(MPI_File_sync(fh));
    int *buf = mem_buf(m, p->n);
    do_access(fh, 0, form, buf, p->n, m->type, m->ext);
    for (int i = 0; i < p->n; i++) {
        CHECK(buf[i * m->stride] == value(p->gidx[i], salt), "%s: element %d (global %d) is 0x%08x, expected 0x%08x",
              what, i, p->gidx[i], (unsigned)buf[i * m->stride], (unsigned)value(p->gidx[i], salt));
        if (m->stride > 1)
            CHECK(buf[i * m->stride + 1] == SENTINEL, "%s: a read wrote the memory gap after element %d", what, i);
    }
    free(buf);
    MPICHK(MPI_File_sync(fh));
}

/* A collective read past the end of file: the file holds the first half
 * of the elements. The data before the end must arrive; on bmpi the
 * status counts the elements before the end of file too (ROMIO reports
 * the whole request for a collective read). */
static void short_read_case(MPI_File fh, const char *path, const struct pattern *p, unsigned salt,
                            const char *what)
{
    int half = p->nglobal / 2;
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    if (tu_rank == 0) {
        int *img = malloc((size_t)half * sizeof(int) + 1);
        CHECK(img != NULL, "out of memory");
        for (int g = 0; g < half; g++)
            img[g] = value(g, salt);
        posix_write(path, img, (size_t)half * sizeof(int));
        free(img);
    }
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    MPICHK(MPI_File_sync(fh));
    int *buf = malloc((size_t)(p->n ? p->n : 1) * sizeof(int));
    CHECK(buf != NULL, "out of memory");
    MPI_Status st;
    MPICHK(MPI_File_read_at_all(fh, 0, buf, p->n, MPI_INT, &st));
    int before = 0;
    for (int i = 0; i < p->n; i++)
        if (p->gidx[i] < half) {
            CHECK(buf[i] == value(p->gidx[i], salt), "%s: element %d (global %d) wrong", what, i, p->gidx[i]);
            before++;
        }
    if (is_bmpi())
        check_count(&st, MPI_INT, before, what);
    free(buf);
    MPICHK(MPI_File_sync(fh));
}

/* --- the split collective rules -------------------------------------------------- */

/* A call that must fail; bmpi's class is checked, other libraries'
 * only that they refuse. */
static void expect_refused(int rc, int want, const char *call)
{
    CHECK(rc != MPI_SUCCESS, "%s succeeded", call);
    int cls;
    MPICHK(MPI_Error_class(rc, &cls));
    if (is_bmpi())
        CHECK(cls == want, "%s: class %d, expected %d", call, cls, want);
}

/* Breaking them is erroneous, so a library need not detect it: Open MPI
 * 4.1 takes an end without begin. Where the first probe passes, the rest
 * are skipped, with a note (bmpi must refuse them all). */
static void split_rules(MPI_File fh)
{
    int x[4] = {0}, y[4];
    MPI_Status st;
    MPICHK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    int rc = MPI_File_write_all_end(fh, x, &st);
    if (rc == MPI_SUCCESS && !is_bmpi()) {
        if (tu_rank == 0)
            printf("NOTE io_coll: this library does not detect broken split collective rules; skipped\n");
        return;
    }
    expect_refused(rc, MPI_ERR_OTHER, "MPI_File_write_all_end without begin");
    MPICHK(MPI_File_write_at_all_begin(fh, 4 * tu_rank, x, 4, MPI_INT));
    expect_refused(MPI_File_write_at_all_begin(fh, 4 * tu_rank, y, 4, MPI_INT), MPI_ERR_OTHER,
                   "a second MPI_File_write_at_all_begin");
    expect_refused(MPI_File_read_all_begin(fh, y, 4, MPI_INT), MPI_ERR_OTHER,
                   "MPI_File_read_all_begin during a write_at_all split");
    if (is_bmpi()) {
        expect_refused(MPI_File_write_at_all_end(fh, y, &st), MPI_ERR_BUFFER,
                       "MPI_File_write_at_all_end with another buffer");
        expect_refused(MPI_File_read_at_all_end(fh, x, &st), MPI_ERR_OTHER,
                       "MPI_File_read_at_all_end after write_at_all_begin");
    }
    MPICHK(MPI_File_write_at_all_end(fh, x, &st));
    check_count(&st, MPI_INT, 4, "split rules");
    expect_refused(MPI_File_write_at_all_end(fh, x, &st), MPI_ERR_OTHER, "a second MPI_File_write_at_all_end");
}

/* --- a failing aggregator ----------------------------------------------------------- */

/* Rank 0, the one aggregator, may write no more than 1 KiB into a file:
 * a collective write of more fails there, and must fail on every rank,
 * whose data all went through rank 0. */
static void failing_aggregator(const char *path)
{
    MPI_File fh = open_with_hints(path, (const char *const[]){"cb_nodes", "1", "romio_cb_write", "enable", NULL});
    struct pattern p;
    pattern_init(&p, PAT_VECTOR, 0);
    MPICHK(MPI_File_set_view(fh, p.disp, MPI_INT, p.ftype, "native", MPI_INFO_NULL));
    int *buf = malloc((size_t)p.n * sizeof(int));
    CHECK(buf != NULL, "out of memory");
    for (int i = 0; i < p.n; i++)
        buf[i] = value(p.gidx[i], 99);
    struct rlimit old, small = {1024, 0};
    if (tu_rank == 0) {
        signal(SIGXFSZ, SIG_IGN);
        CHECK(getrlimit(RLIMIT_FSIZE, &old) == 0, "getrlimit");
        small.rlim_max = old.rlim_max;
        CHECK(setrlimit(RLIMIT_FSIZE, &small) == 0, "setrlimit");
    }
    MPI_Status st;
    int rc = MPI_File_write_at_all(fh, 0, buf, p.n, MPI_INT, &st);
    if (tu_rank == 0)
        CHECK(setrlimit(RLIMIT_FSIZE, &old) == 0, "setrlimit back");
    CHECK(rc != MPI_SUCCESS, "a collective write whose aggregator could not write succeeded");
    int cls;
    MPICHK(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_IO || cls == MPI_ERR_NO_SPACE || cls == MPI_ERR_QUOTA,
          "the failed collective write gave class %d, expected MPI_ERR_IO, _NO_SPACE or _QUOTA", cls);
    /* the file still works: the same write without the limit */
    MPICHK(MPI_File_write_at_all(fh, 0, buf, p.n, MPI_INT, &st));
    check_count(&st, MPI_INT, p.n, "write after the failure");
    free(buf);
    pattern_free(&p);
    MPICHK(MPI_File_close(&fh));
}

/* --- collectives in flight over the same bytes' neighbourhood -------------------- */

#define INFLIGHT_OPS 4
#define INFLIGHT_PART 1024 /* ints of a rank in one operation */
#define INFLIGHT_REPS 12

/* After a collective write of the whole file: sync, and rank 0 checks
 * that the file holds value(g, salt) at every element g of [0, total),
 * naming the case with what in a failure; every rank waits for it. */
static void check_file(MPI_File fh, const char *path, int total, unsigned salt, const char *what)
{
    MPICHK(MPI_File_sync(fh));
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    if (tu_rank == 0) {
        int *got = malloc((size_t)total * sizeof(int));
        CHECK(got, "out of memory");
        int fd = open(path, O_RDONLY);
        CHECK(fd >= 0, "open %s for the reference", path);
        ssize_t len = pread(fd, got, (size_t)total * sizeof(int), 0);
        close(fd);
        CHECK(len == (ssize_t)total * (ssize_t)sizeof(int), "%s: file has %zd bytes", what, len);
        for (int g = 0; g < total; g++)
            CHECK(got[g] == value(g, salt), "%s: element %d is 0x%08x, expected 0x%08x", what, g,
                  (unsigned)got[g], (unsigned)value(g, salt));
        free(got);
    }
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
}

/* INFLIGHT_OPS nonblocking collective writes in flight at once, under a
 * view that interleaves the ranks int by int and is cut into
 * INFLIGHT_OPS parts. In operation j the lower half of the ranks writes
 * part j and the upper half part j + 1: each operation's bytes interleave
 * (two-phase), leave holes of the other half's ints, and share a part with
 * the next operation. An aggregator that read the bytes around its pieces
 * while another operation's pieces for those bytes were still on their
 * way would write the old bytes back over them. Small collective buffers
 * make many rounds, so the operations' rounds are in flight together. */
static void inflight_case(const char *path, const char *cb)
{
    MPI_File fh = open_with_hints(path, (const char *const[]){"cb_buffer_size", cb, NULL});
    MPI_Datatype ftype;
    MPICHK(MPI_Type_vector(INFLIGHT_OPS * INFLIGHT_PART, 1, tu_size, MPI_INT, &ftype));
    MPICHK(MPI_Type_commit(&ftype));
    MPICHK(MPI_File_set_view(fh, (MPI_Offset)tu_rank * (MPI_Offset)sizeof(int), MPI_INT, ftype, "native",
                             MPI_INFO_NULL));
    int n = INFLIGHT_OPS * INFLIGHT_PART, total = n * tu_size;
    int *buf = malloc((size_t)n * sizeof(int));
    CHECK(buf, "out of memory");
    for (unsigned rep = 0; rep < INFLIGHT_REPS; rep++) {
        MPICHK(MPI_File_set_size(fh, 0));
        for (int i = 0; i < n; i++)
            buf[i] = value(i * tu_size + tu_rank, 7000u + rep);
        MPI_Request rq[INFLIGHT_OPS];
        for (int j = 0; j < INFLIGHT_OPS; j++) {
            int part = (j + (tu_rank >= tu_size / 2)) % INFLIGHT_OPS;
            MPICHK(MPI_File_iwrite_at_all(fh, (MPI_Offset)part * INFLIGHT_PART, buf + part * INFLIGHT_PART,
                                          INFLIGHT_PART, MPI_INT, &rq[j]));
        }
        MPICHK(MPI_Waitall(INFLIGHT_OPS, rq, MPI_STATUSES_IGNORE));
        char what[128];
        snprintf(what, sizeof what, "%d collective writes in flight, cb_buffer_size %s, repetition %u",
                 INFLIGHT_OPS, cb ? cb : "default", rep);
        check_file(fh, path, total, 7000u + rep, what);
    }
    free(buf);
    MPICHK(MPI_Type_free(&ftype));
    MPICHK(MPI_File_close(&fh));
}

/* --- runs across domain boundaries -------------------------------------------- */

#define CROSS_UNIT 1000 /* rank r's block is (r + 1) * CROSS_UNIT + 1 ints */

/* Collective buffering forced on with two aggregators, each rank one
 * contiguous block of a different size, so that the boundary between the
 * two file domains falls inside a rank's block and its run is split
 * there: written with write_at_all, checked against the file's bytes,
 * read back with read_at_all. */
static void crossing_case(const char *path)
{
    MPI_File fh = open_with_hints(
        path, (const char *const[]){"cb_nodes", "2", "romio_cb_write", "enable", "romio_cb_read", "enable", NULL});
    int n = (tu_rank + 1) * CROSS_UNIT + 1, first = tu_rank * (tu_rank + 1) / 2 * CROSS_UNIT + tu_rank;
    int total = tu_size * (tu_size + 1) / 2 * CROSS_UNIT + tu_size;
    int *buf = malloc((size_t)n * sizeof(int)), *back = malloc((size_t)n * sizeof(int));
    CHECK(buf && back, "out of memory");
    for (int i = 0; i < n; i++)
        buf[i] = value(first + i, 8100u);
    MPI_Offset at = (MPI_Offset)first * (MPI_Offset)sizeof(int);
    MPICHK(MPI_File_write_at_all(fh, at, buf, n, MPI_INT, MPI_STATUS_IGNORE));
    check_file(fh, path, total, 8100u, "runs across domains");
    MPICHK(MPI_File_read_at_all(fh, at, back, n, MPI_INT, MPI_STATUS_IGNORE));
    CHECK(memcmp(buf, back, (size_t)n * sizeof(int)) == 0, "runs across domains: read_at_all differs");
    free(buf);
    free(back);
    MPICHK(MPI_File_close(&fh));
}

/* Pieces large enough that the exchange goes by single copy (a message of
 * at least 32 KiB from a large block: bmpi's aggregator then has each
 * sender write its pieces into the round's buffer instead of reading them
 * itself): rank r owns blocks r, r + size, ... of BIG_BLOCK ints, written
 * with one collective write from contiguous memory through a vector view,
 * checked in the file by rank 0 and read back collectively. Collective
 * buffering forced on; the default cb_buffer_size and a smaller one
 * (several rounds per block). */
#define BIG_BLOCK (64 * 1024)
#define BIG_BLOCKS 6

static void big_pieces_case(const char *path, const char *cb)
{
    MPI_File fh = open_with_hints(path, (const char *const[]){"romio_cb_write", "enable", "romio_cb_read", "enable",
                                                              "cb_buffer_size", cb, NULL});
    MPI_Datatype ftype;
    MPICHK(MPI_Type_vector(BIG_BLOCKS, BIG_BLOCK, BIG_BLOCK * tu_size, MPI_INT, &ftype));
    MPICHK(MPI_Type_commit(&ftype));
    MPI_Offset disp = (MPI_Offset)tu_rank * BIG_BLOCK * (MPI_Offset)sizeof(int);
    MPICHK(MPI_File_set_view(fh, disp, MPI_INT, ftype, "native", MPI_INFO_NULL));
    int n = BIG_BLOCKS * BIG_BLOCK, total = n * tu_size;
    int *buf = malloc((size_t)n * sizeof(int)), *back = malloc((size_t)n * sizeof(int));
    CHECK(buf && back, "out of memory");
    for (int i = 0; i < n; i++)
        buf[i] = value((i / BIG_BLOCK * tu_size + tu_rank) * BIG_BLOCK + i % BIG_BLOCK, 8200u);
    MPICHK(MPI_File_write_all(fh, buf, n, MPI_INT, MPI_STATUS_IGNORE));
    char what[64];
    snprintf(what, sizeof what, "big pieces, cb_buffer_size %s", cb ? cb : "default");
    check_file(fh, path, total, 8200u, what);
    MPICHK(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    MPICHK(MPI_File_read_all(fh, back, n, MPI_INT, MPI_STATUS_IGNORE));
    CHECK(memcmp(buf, back, (size_t)n * sizeof(int)) == 0, "%s: read_all differs", what);
    free(buf);
    free(back);
    MPICHK(MPI_Type_free(&ftype));
    MPICHK(MPI_File_close(&fh));
}

/* --- external32 ---------------------------------------------------------------------- */

/* A view in "external32": the file holds big-endian ints, converted on
 * the way out and back, with collective buffering forced on and off.
 * Skipped, with a note, where the library refuses the representation. */
static void external32_case(const char *path)
{
    static const char *const cb[] = {"enable", "disable"};
    for (int c = 0; c < 2; c++) {
        MPI_File fh =
            open_with_hints(path, (const char *const[]){"romio_cb_write", cb[c], "romio_cb_read", cb[c], NULL});
        struct pattern p;
        pattern_init(&p, PAT_VECTOR, 0);
        int rc = MPI_File_set_view(fh, p.disp, MPI_INT, p.ftype, "external32", MPI_INFO_NULL);
        if (rc != MPI_SUCCESS) {
            int cls;
            MPICHK(MPI_Error_class(rc, &cls));
            CHECK(cls == MPI_ERR_UNSUPPORTED_DATAREP, "set_view external32: %s", tu_errstr(rc));
            if (tu_rank == 0 && c == 0)
                printf("NOTE io_coll: external32 is not supported here; its cases are skipped\n");
        } else {
            char what[100];
            snprintf(what, sizeof(what), "external32 write_at_all, romio_cb_write=%s", cb[c]);
            int *buf = malloc((size_t)p.n * sizeof(int)), *back = malloc((size_t)p.n * sizeof(int));
            CHECK(buf && back, "out of memory");
            for (int i = 0; i < p.n; i++)
                buf[i] = value(p.gidx[i], 500u + (unsigned)c);
            MPI_Status st;
            MPICHK(MPI_File_set_size(fh, 0));
            MPICHK(MPI_File_write_at_all(fh, 0, buf, p.n, MPI_INT, &st));
            check_count(&st, MPI_INT, p.n, what);
            MPICHK(MPI_File_sync(fh));
            MPICHK(MPI_Barrier(MPI_COMM_WORLD));
            if (tu_rank == 0)
                verify_file(path, &p, 500u + (unsigned)c, 0, 1, what);
            MPICHK(MPI_Barrier(MPI_COMM_WORLD));
            MPICHK(MPI_File_sync(fh));
            MPICHK(MPI_File_read_at_all(fh, 0, back, p.n, MPI_INT, &st));
            check_count(&st, MPI_INT, p.n, what);
            CHECK(memcmp(buf, back, (size_t)p.n * sizeof(int)) == 0, "%s: read back differs", what);
            free(buf);
            free(back);
        }
        pattern_free(&p);
        MPICHK(MPI_File_close(&fh));
        MPICHK(MPI_Barrier(MPI_COMM_WORLD));
        if (tu_rank == 0)
            CHECK(unlink(path) == 0, "unlink %s", path);
    }
}

/* --- main ------------------------------------------------------------------------------- */

static const char *const hint_sets[][7] = {
    {NULL},
    {"cb_nodes", "1", NULL},
    {"cb_nodes", "2", "cb_buffer_size", "4096", NULL},
    {"romio_cb_write", "enable", "romio_cb_read", "enable", "cb_buffer_size", "4096", NULL},
    {"romio_cb_write", "disable", "romio_cb_read", "disable", NULL},
    {"cb_buffer_size", "4096", "striping_unit", "1024", "romio_cb_write", "enable", NULL},
};
#define NHINTS (int)(sizeof(hint_sets) / sizeof(hint_sets[0]))

static void hints_text(int h, char *s, size_t len)
{
    s[0] = '\0';
    for (int k = 0; hint_sets[h][k]; k += 2)
        snprintf(s + strlen(s), len - strlen(s), "%s%s=%s", k ? " " : "", hint_sets[h][k], hint_sets[h][k + 1]);
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv, "io_coll");
    iu_init("io_coll");
    MPI_Datatype strided;
    MPICHK(MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &strided));
    MPICHK(MPI_Type_commit(&strided));
    const struct mem mems[2] = {{MPI_INT, sizeof(int), 1}, {strided, 2 * sizeof(int), 2}};
    unsigned salt = 1;
    long cases = 0;

    for (int h = 0; h < NHINTS; h++) {
        char hints[200], what[400], path[PATH_MAX + 64];
        hints_text(h, hints, sizeof(hints));
        snprintf(path, sizeof(path), "%s", iu_path("coll"));
        MPI_File fh = open_with_hints(path, hint_sets[h]);
        for (int kind = 0; kind < PAT_COUNT; kind++)
            for (int zero = 0; zero < 2; zero++) {
                struct pattern p;
                pattern_init(&p, (enum pattern_kind)kind, zero);
                MPICHK(MPI_File_set_view(fh, p.disp, MPI_INT, p.ftype, "native", MPI_INFO_NULL));
                for (int mi = 0; mi < 2; mi++)
                    for (int form = 0; form < F_COUNT; form++) {
                        /* zero-count participants with contiguous memory;
                         * every form under the default hints, one form per
                         * view and memory type under the others */
                        if ((zero && mi) || (h && form != (kind * 3 + zero + mi + h) % F_COUNT))
                            continue;
                        describe(what, sizeof(what), &p, &mems[mi], (enum form)form, hints, zero);
                        char wwhat[420], rwhat[420];
                        snprintf(wwhat, sizeof(wwhat), "write%s", what);
                        snprintf(rwhat, sizeof(rwhat), "read%s", what);
                        write_case(fh, path, &p, &mems[mi], (enum form)form, salt++, wwhat);
                        read_case(fh, path, &p, &mems[mi], (enum form)form, salt++, rwhat);
                        cases += 2;
                    }
                if (!zero) {
                    snprintf(what, sizeof(what), "read_at_all past the end of file, %s view, hints {%s}",
                             pattern_name[kind], hints);
                    short_read_case(fh, path, &p, salt++, what);
                }
                pattern_free(&p);
            }
        if (h == 0)
            split_rules(fh);
        MPICHK(MPI_File_close(&fh));
        MPICHK(MPI_Barrier(MPI_COMM_WORLD));
        if (tu_rank == 0)
            CHECK(unlink(path) == 0, "unlink %s", path);
    }
    inflight_case(iu_path("inflight"), NULL);
    inflight_case(iu_path("inflight"), "16384");
    crossing_case(iu_path("cross"));
    big_pieces_case(iu_path("big"), NULL);
    big_pieces_case(iu_path("big"), "262144");
    external32_case(iu_path("ext32"));
    failing_aggregator(iu_path("fail"));
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    if (tu_rank == 0) {
        CHECK(unlink(iu_path("fail")) == 0, "unlink");
        CHECK(unlink(iu_path("inflight")) == 0, "unlink");
        CHECK(unlink(iu_path("cross")) == 0, "unlink");
        printf("io_coll: %ld collective accesses checked\n", cases);
    }
    MPICHK(MPI_Type_free(&strided));
    iu_finish();
    tu_finish();
    return 0;
}
