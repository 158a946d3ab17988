/*
 * Nonblocking independent access (MPI 4.1 section 14.4): MPI_File_iwrite_at
 * / iread_at and MPI_File_iwrite / iread with the individual file pointer,
 * with contiguous and strided (vector) memory, under the default view and
 * a vector view that interleaves the ranks' blocks.
 *
 *   - many requests outstanding at once, completed with MPI_Waitall,
 *     MPI_Testany, MPI_Waitsome and MPI_Testall in shuffled orders;
 *   - a 64 MiB iwrite left pending while the ranks ping-pong messages: both
 *     must complete and the data must be right (no timing is checked);
 *   - pieces of two ints through a view that interleaves the ranks, more
 *     than 4 MiB a rank: writes and reads that sieve (one read of a span
 *     of many pieces, a read-modify-write for writes), reads and writes in
 *     flight together during a ping-pong, the file checked with pread, and
 *     a read through the view past the end of the file;
 *   - MPI_Cancel of a file request: the request still completes, and if
 *     the library did not cancel it (MPI_Test_cancelled false, as in bmpi)
 *     the data are written;
 *   - MPI_Request_free of a pending iwrite, then MPI_File_close: the data
 *     are in the file after it is reopened;
 *   - atomic mode: strided memory through a vector view, read back;
 *   - a write past RLIMIT_FSIZE fails: the error reaches the file's error
 *     handler and the returned class is MPI_ERR_NO_SPACE or MPI_ERR_IO,
 *     from the iwrite call or, in bmpi, from MPI_Wait.
 *
 * Every rank writes its own part of one shared file; reads of other ranks'
 * parts come after a barrier and an MPI_File_sync on both sides.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "test/io/io_util.h"

#define NPIECES 24       /* requests outstanding at once */
#define PIECE_INTS 1000  /* ints of the largest piece */
#define BIG_BYTES ((size_t)64 << 20)
#define PING_ROUNDS 200

static int value(int rank, int i) { return rank * 1000003 + i * 7 + 1; }

static void check_count(const MPI_Status *st, MPI_Datatype type, int want)
{
    int n = -1;
    MPICHK(MPI_Get_count(st, type, &n));
    CHECK(n == want, "status count %d, expected %d", n, want);
}

/* --- explicit offsets, contiguous memory -------------------------------------------- */

static void test_at_contig(void)
{
    MPI_File fh = iu_open_rw("at_contig");
    const int n = 4096;
    int *w = malloc(n * sizeof(int)), *r = malloc(n * sizeof(int));
    CHECK(w && r, "out of memory");
    for (int i = 0; i < n; i++)
        w[i] = value(tu_rank, i);
    MPI_Request req;
    MPI_Status st;
    MPICHK(MPI_File_iwrite_at(fh, (MPI_Offset)tu_rank * n * 4, w, n, MPI_INT, &req));
    MPICHK(MPI_Wait(&req, &st));
    CHECK(req == MPI_REQUEST_NULL, "MPI_Wait left the request");
    check_count(&st, MPI_INT, n);
    iu_sync_barrier(fh);
    int peer = (tu_rank + 1) % tu_size;
    MPICHK(MPI_File_iread_at(fh, (MPI_Offset)peer * n * 4, r, n, MPI_INT, &req));
    int flag = 0;
    while (!flag)
        MPICHK(MPI_Test(&req, &flag, &st));
    check_count(&st, MPI_INT, n);
    for (int i = 0; i < n; i++)
        CHECK(r[i] == value(peer, i), "int %d of rank %d's part is %d, expected %d", i, peer, r[i], value(peer, i));
    /* a read past the end of the file stops short */
    MPI_Offset end = (MPI_Offset)tu_size * n * 4;
    MPICHK(MPI_File_iread_at_c(fh, end - 8, r, 5, MPI_INT, &req));
    MPICHK(MPI_Wait(&req, &st));
    check_count(&st, MPI_INT, 2);
    CHECK(r[0] == value(tu_size - 1, n - 2) && r[1] == value(tu_size - 1, n - 1), "short read got %d %d", r[0],
          r[1]);
    MPICHK(MPI_File_close(&fh));
    free(w);
    free(r);
}

/* --- individual file pointer, strided memory ------------------------------------------ */

/* Every other int of 2n: a vector with holes that must stay untouched. */
static void test_pointer_strided(void)
{
    MPI_File fh = iu_open_rw("pointer_strided");
    const int n = 3000;
    MPI_Datatype every_other;
    MPICHK(MPI_Type_vector(n, 1, 2, MPI_INT, &every_other));
    MPICHK(MPI_Type_commit(&every_other));
    int *w = malloc(2 * n * sizeof(int)), *r = malloc(2 * n * sizeof(int));
    CHECK(w && r, "out of memory");
    for (int i = 0; i < 2 * n; i++)
        w[i] = i % 2 ? -1 : value(tu_rank, i / 2);
    MPICHK(MPI_File_seek(fh, (MPI_Offset)tu_rank * n * 4, MPI_SEEK_SET));
    MPI_Request req;
    MPI_Status st;
    MPICHK(MPI_File_iwrite(fh, w, 1, every_other, &req));
    MPI_Offset pos;
    MPICHK(MPI_File_get_position(fh, &pos)); /* moved when iwrite returned */
    CHECK(pos == (MPI_Offset)(tu_rank + 1) * n * 4, "position %lld after iwrite, expected %lld", (long long)pos,
          (long long)(tu_rank + 1) * n * 4);
    MPICHK(MPI_Type_free(&every_other)); /* the request keeps the type alive */
    MPICHK(MPI_Wait(&req, &st));
    check_count(&st, MPI_BYTE, n * 4);
    iu_sync_barrier(fh);

    /* read the contiguous file data back into strided memory */
    MPICHK(MPI_Type_vector(n, 1, 2, MPI_INT, &every_other));
    MPICHK(MPI_Type_commit(&every_other));
    for (int i = 0; i < 2 * n; i++)
        r[i] = -7;
    MPICHK(MPI_File_seek(fh, (MPI_Offset)tu_rank * n * 4, MPI_SEEK_SET));
    MPICHK(MPI_File_iread_c(fh, r, 1, every_other, &req));
    MPICHK(MPI_File_get_position(fh, &pos));
    CHECK(pos == (MPI_Offset)(tu_rank + 1) * n * 4, "position %lld after iread", (long long)pos);
    MPICHK(MPI_Wait(&req, &st));
    for (int i = 0; i < 2 * n; i++) {
        int want = i % 2 ? -7 : value(tu_rank, i / 2);
        CHECK(r[i] == want, "int %d of the strided read is %d, expected %d", i, r[i], want);
    }
    MPICHK(MPI_Type_free(&every_other));
    MPICHK(MPI_File_close(&fh));
    free(w);
    free(r);
}

/* --- a vector view ---------------------------------------------------------------------- */

/* Blocks of B ints, rank r's every size * B ints from r * B: written with
 * strided memory through the view, checked with plain reads of the file. */
static void test_vector_view(void)
{
    const int B = 5, nblocks = 400, n = B * nblocks;
    MPI_File fh = iu_open_rw("vector_view");
    MPI_Datatype tile, filetype, mem;
    MPICHK(MPI_Type_vector(1, B, B * tu_size, MPI_INT, &tile));
    MPICHK(MPI_Type_create_resized(tile, 0, (MPI_Aint)B * tu_size * 4, &filetype));
    MPICHK(MPI_Type_commit(&filetype));
    MPICHK(MPI_Type_vector(n, 1, 3, MPI_INT, &mem)); /* every third int */
    MPICHK(MPI_Type_commit(&mem));
    MPICHK(MPI_File_set_view(fh, (MPI_Offset)tu_rank * B * 4, MPI_INT, filetype, "native", MPI_INFO_NULL));
    int *w = malloc(3 * n * sizeof(int)), *r = malloc(3 * n * sizeof(int));
    CHECK(w && r, "out of memory");
    for (int i = 0; i < 3 * n; i++)
        w[i] = i % 3 ? -1 : value(tu_rank, i / 3);
    /* two requests in flight together: the first h ints at etype offset 0
     * with iwrite_at, the rest through the pointer after a seek */
    const int h = (nblocks / 2) * B + 2; /* ends inside a block */
    MPI_Datatype head, rest;
    MPICHK(MPI_Type_vector(h, 1, 3, MPI_INT, &head));
    MPICHK(MPI_Type_vector(n - h, 1, 3, MPI_INT, &rest));
    MPICHK(MPI_Type_commit(&head));
    MPICHK(MPI_Type_commit(&rest));
    MPI_Request req[2];
    MPICHK(MPI_File_iwrite_at(fh, 0, w, 1, head, &req[0]));
    MPICHK(MPI_File_seek(fh, h, MPI_SEEK_SET));
    MPICHK(MPI_File_iwrite(fh, w + 3 * h, 1, rest, &req[1]));
    MPICHK(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
    iu_sync_barrier(fh);

    /* the whole file under the default view: block k belongs to rank k % size */
    MPICHK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    int total = n * tu_size;
    int *all = malloc((size_t)total * sizeof(int));
    CHECK(all != NULL, "out of memory");
    MPI_Status st;
    MPICHK(MPI_File_iread_at(fh, 0, all, total, MPI_INT, &req[0]));
    MPICHK(MPI_Wait(&req[0], &st));
    check_count(&st, MPI_INT, total);
    for (int i = 0; i < total; i++) {
        int blk = i / B, owner = blk % tu_size, idx = (blk / tu_size) * B + i % B;
        CHECK(all[i] == value(owner, idx), "file int %d is %d, expected rank %d's int %d = %d", i, all[i], owner,
              idx, value(owner, idx));
    }
    /* and read back through the view into strided memory */
    MPICHK(MPI_File_set_view(fh, (MPI_Offset)tu_rank * B * 4, MPI_INT, filetype, "native", MPI_INFO_NULL));
    for (int i = 0; i < 3 * n; i++)
        r[i] = -7;
    MPICHK(MPI_File_iread_at(fh, 0, r, 1, mem, &req[0]));
    MPICHK(MPI_Wait(&req[0], &st));
    for (int i = 0; i < 3 * n; i++) {
        int want = i % 3 ? -7 : value(tu_rank, i / 3);
        CHECK(r[i] == want, "int %d read through the view is %d, expected %d", i, r[i], want);
    }
    MPICHK(MPI_File_close(&fh));
    MPICHK(MPI_Type_free(&tile));
    MPICHK(MPI_Type_free(&filetype));
    MPICHK(MPI_Type_free(&mem));
    MPICHK(MPI_Type_free(&head));
    MPICHK(MPI_Type_free(&rest));
    free(w);
    free(r);
    free(all);
}

/* --- many outstanding requests ------------------------------------------------------------ */

/* Piece k of a rank: ints [start(k), start(k) + len(k)) of its region. */
static int piece_len(int k) { return 1 + (k * 397) % PIECE_INTS; }
static int piece_start(int k)
{
    int s = 0;
    for (int j = 0; j < k; j++)
        s += piece_len(j);
    return s;
}

static void shuffle(int *a, int n, uint64_t *rng)
{
    for (int i = n - 1; i > 0; i--) {
        int j = (int)tu_range(rng, 0, (size_t)i), t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

static void test_many(void)
{
    MPI_File fh = iu_open_rw("many");
    int region = piece_start(NPIECES);
    int *w = malloc((size_t)region * sizeof(int)), *r = malloc((size_t)region * sizeof(int));
    CHECK(w && r, "out of memory");
    for (int i = 0; i < region; i++)
        w[i] = value(tu_rank, i);
    MPI_Offset base = (MPI_Offset)tu_rank * region * 4;
    uint64_t rng = tu_seed(1, tu_rank, 0, 0);
    int order[NPIECES];
    for (int k = 0; k < NPIECES; k++)
        order[k] = k;

    /* writes issued in a shuffled order, completed with Waitall */
    shuffle(order, NPIECES, &rng);
    MPI_Request req[NPIECES];
    MPI_Status st[NPIECES];
    for (int i = 0; i < NPIECES; i++) {
        int k = order[i];
        MPICHK(MPI_File_iwrite_at(fh, base + (MPI_Offset)piece_start(k) * 4, w + piece_start(k), piece_len(k),
                                  MPI_INT, &req[i]));
    }
    MPICHK(MPI_Waitall(NPIECES, req, st));
    for (int i = 0; i < NPIECES; i++) {
        CHECK(req[i] == MPI_REQUEST_NULL, "request %d left by Waitall", i);
        check_count(&st[i], MPI_INT, piece_len(order[i]));
    }
    iu_sync_barrier(fh);

    /* reads of the next rank's region, completed with Testany one by one */
    int peer = (tu_rank + 1) % tu_size;
    MPI_Offset pbase = (MPI_Offset)peer * region * 4;
    for (int i = 0; i < region; i++)
        r[i] = -7;
    shuffle(order, NPIECES, &rng);
    for (int i = 0; i < NPIECES; i++) {
        int k = order[i];
        MPICHK(MPI_File_iread_at(fh, pbase + (MPI_Offset)piece_start(k) * 4, r + piece_start(k), piece_len(k),
                                 MPI_INT, &req[i]));
    }
    int left = NPIECES;
    bool seen[NPIECES] = {false};
    while (left > 0) {
        int idx, flag;
        MPI_Status s;
        MPICHK(MPI_Testany(NPIECES, req, &idx, &flag, &s));
        if (!flag)
            continue;
        CHECK(idx >= 0 && idx < NPIECES && !seen[idx], "Testany returned index %d", idx);
        seen[idx] = true;
        check_count(&s, MPI_INT, piece_len(order[idx]));
        left--;
    }
    for (int i = 0; i < region; i++)
        CHECK(r[i] == value(peer, i), "int %d of rank %d's region is %d", i, peer, r[i]);

    /* my own region again: half completed by Waitsome, the rest by Testall */
    for (int i = 0; i < region; i++)
        r[i] = -7;
    for (int k = 0; k < NPIECES; k++)
        MPICHK(MPI_File_iread_at(fh, base + (MPI_Offset)piece_start(k) * 4, r + piece_start(k), piece_len(k),
                                 MPI_INT, &req[k]));
    int done = 0, idx[NPIECES];
    while (done < NPIECES / 2) {
        int outcount;
        MPICHK(MPI_Waitsome(NPIECES, req, &outcount, idx, MPI_STATUSES_IGNORE));
        CHECK(outcount > 0, "Waitsome returned %d with requests pending", outcount);
        done += outcount;
    }
    int flag = 0;
    while (!flag)
        MPICHK(MPI_Testall(NPIECES, req, &flag, MPI_STATUSES_IGNORE));
    for (int i = 0; i < region; i++)
        CHECK(r[i] == value(tu_rank, i), "int %d of my region is %d", i, r[i]);
    MPICHK(MPI_File_close(&fh));
    free(w);
    free(r);
}

/* --- a large write overlapped with communication ------------------------------------------- */

static void ping_pong(void)
{
    int partner = tu_rank ^ 1, token = 0;
    if (partner >= tu_size)
        partner = tu_rank; /* odd one out: messages to itself */
    for (int i = 0; i < PING_ROUNDS; i++) {
        MPI_Request rr, sr;
        int in = -1, out = token + 1;
        MPICHK(MPI_Irecv(&in, 1, MPI_INT, partner, 5, MPI_COMM_WORLD, &rr));
        MPICHK(MPI_Isend(&out, 1, MPI_INT, partner, 5, MPI_COMM_WORLD, &sr));
        MPICHK(MPI_Wait(&sr, MPI_STATUS_IGNORE));
        MPICHK(MPI_Wait(&rr, MPI_STATUS_IGNORE));
        CHECK(in == out, "ping-pong round %d got %d, expected %d", i, in, out);
        token = in;
    }
}

static void test_overlap(void)
{
    MPI_File fh = iu_open_rw("overlap");
    size_t each = BIG_BYTES / (size_t)tu_size; /* 64 MiB in all */
    unsigned char *w = malloc(each), *r = malloc(each);
    CHECK(w && r, "out of memory");
    uint64_t seed = tu_seed(2, tu_rank, 0, 0);
    tu_fill(w, each, seed);
    MPI_Request req;
    MPICHK(MPI_File_iwrite_at_c(fh, (MPI_Offset)tu_rank * (MPI_Offset)each, w, (MPI_Count)each, MPI_BYTE, &req));
    ping_pong(); /* must finish whatever the write is doing */
    MPI_Status st;
    MPICHK(MPI_Wait(&req, &st));
    MPI_Count n;
    MPICHK(MPI_Get_count_c(&st, MPI_BYTE, &n));
    CHECK(n == (MPI_Count)each, "the large write moved %lld bytes of %zu", (long long)n, each);
    iu_sync_barrier(fh);
    int peer = (tu_rank + 1) % tu_size;
    MPICHK(MPI_File_iread_at_c(fh, (MPI_Offset)peer * (MPI_Offset)each, r, (MPI_Count)each, MPI_BYTE, &req));
    ping_pong();
    MPICHK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    long bad = tu_verify(r, each, tu_seed(2, peer, 0, 0));
    CHECK(bad < 0, "byte %ld of rank %d's large write is wrong", bad, peer);
    MPICHK(MPI_File_close(&fh));
    free(w);
    free(r);
}

/* --- small pieces through a view: data sieving ---------------------------------------------- */

#define SIEVE_PIECE 2                 /* ints of a piece */
#define SIEVE_INTS ((1 << 20) + 1026) /* ints of a rank: more than one 4 MiB step of bytes */

static int gen_value(int gen, int rank, int i) { return value(rank + 1009 * gen, i); }

/* owner's pieces: SIEVE_PIECE ints every size * SIEVE_PIECE ints. */
static void set_piece_view(MPI_File fh, int owner)
{
    MPI_Datatype tile, filetype;
    MPICHK(MPI_Type_vector(1, SIEVE_PIECE, SIEVE_PIECE * tu_size, MPI_INT, &tile));
    MPICHK(MPI_Type_create_resized(tile, 0, (MPI_Aint)SIEVE_PIECE * tu_size * 4, &filetype));
    MPICHK(MPI_Type_commit(&filetype));
    MPICHK(MPI_File_set_view(fh, (MPI_Offset)owner * SIEVE_PIECE * 4, MPI_INT, filetype, "native",
                             MPI_INFO_NULL));
    MPICHK(MPI_Type_free(&tile));
    MPICHK(MPI_Type_free(&filetype));
}

/* Rank 0: the file, read with plain pread, holds every rank's pieces of
 * generation gen, and nothing more. */
static void check_pieces(const char *name, int gen)
{
    if (tu_rank != 0)
        return;
    size_t total = (size_t)SIEVE_INTS * tu_size, bytes = total * 4;
    int *all = malloc(bytes + 16);
    CHECK(all != NULL, "out of memory");
    int fd = open(iu_path(name), O_RDONLY);
    CHECK(fd >= 0, "cannot open %s: %s", iu_path(name), strerror(errno));
    ssize_t got = pread(fd, all, bytes + 16, 0);
    CHECK(got == (ssize_t)bytes, "%s: pread got %zd bytes, the file should have %zu", name, got, bytes);
    close(fd);
    for (size_t i = 0; i < total; i++) {
        size_t piece = i / SIEVE_PIECE;
        int owner = (int)(piece % (size_t)tu_size);
        int idx = (int)(piece / (size_t)tu_size) * SIEVE_PIECE + (int)(i % SIEVE_PIECE);
        CHECK(all[i] == gen_value(gen, owner, idx), "%s: file int %zu is %d, expected rank %d's int %d = %d", name,
              i, all[i], owner, idx, gen_value(gen, owner, idx));
    }
    free(all);
}

/* Generation gen of my pieces through the view, from contiguous memory in
 * two requests (at an offset, then through the pointer), or from every
 * other int of strided memory in one. */
static void iwrite_pieces(MPI_File fh, int gen, bool strided, int *buf, MPI_Request *req, int *nreq)
{
    const int n = SIEVE_INTS, h = n / 2 + 1; /* ends inside a piece */
    for (int i = 0; i < (strided ? 2 * n : n); i++)
        buf[i] = strided ? (i % 2 ? -1 : gen_value(gen, tu_rank, i / 2)) : gen_value(gen, tu_rank, i);
    if (!strided) {
        MPICHK(MPI_File_iwrite_at(fh, 0, buf, h, MPI_INT, &req[0]));
        MPICHK(MPI_File_seek(fh, h, MPI_SEEK_SET));
        MPICHK(MPI_File_iwrite(fh, buf + h, n - h, MPI_INT, &req[1]));
        *nreq = 2;
        return;
    }
    MPI_Datatype every_other;
    MPICHK(MPI_Type_vector(n, 1, 2, MPI_INT, &every_other));
    MPICHK(MPI_Type_commit(&every_other));
    MPICHK(MPI_File_iwrite_at(fh, 0, buf, 1, every_other, &req[0]));
    MPICHK(MPI_Type_free(&every_other));
    *nreq = 1;
}

/* The pieces of fh's view into every other int of r (the others -7). */
static void iread_pieces(MPI_File fh, int *r, MPI_Request *req)
{
    MPI_Datatype every_other;
    MPICHK(MPI_Type_vector(SIEVE_INTS, 1, 2, MPI_INT, &every_other));
    MPICHK(MPI_Type_commit(&every_other));
    for (int i = 0; i < 2 * SIEVE_INTS; i++)
        r[i] = -7;
    MPICHK(MPI_File_iread_at(fh, 0, r, 1, every_other, req));
    MPICHK(MPI_Type_free(&every_other));
}

static void check_read_pieces(const int *r, int gen, int owner)
{
    for (int i = 0; i < 2 * SIEVE_INTS; i++) {
        int want = i % 2 ? -7 : gen_value(gen, owner, i / 2);
        CHECK(r[i] == want, "int %d of rank %d's pieces read through the view is %d, expected %d", i, owner, r[i],
              want);
    }
}

/* Pieces of two ints, the ranks' interleaved, more than one step of them
 * per rank: nonblocking writes and reads through the view go through data
 * sieving (many pieces in one span; writes read-modify-write spans that
 * hold other ranks' pieces, which must survive) while the ranks exchange
 * messages. File "sieved_a" is written, checked by rank 0 with pread, then
 * read back (the next rank's pieces, into strided memory) while file
 * "sieved_b" is written from strided memory, and a read past the end of
 * the file stops short. */
static void test_sieved_view(void)
{
    const int n = SIEVE_INTS, peer = (tu_rank + 1) % tu_size;
    int *w = malloc(2 * (size_t)n * sizeof(int)), *r = malloc(2 * (size_t)n * sizeof(int));
    CHECK(w && r, "out of memory");
    MPI_File fa = iu_open_rw("sieved_a"), fb = iu_open_rw("sieved_b");
    set_piece_view(fa, tu_rank);
    set_piece_view(fb, tu_rank);
    MPI_Request req[3];
    MPI_Status st[3];
    int nreq;
    iwrite_pieces(fa, 1, false, w, req, &nreq);
    ping_pong();
    MPICHK(MPI_Waitall(nreq, req, st));
    check_count(&st[0], MPI_INT, n / 2 + 1);
    check_count(&st[1], MPI_INT, n - (n / 2 + 1));
    iu_sync_barrier(fa);
    check_pieces("sieved_a", 1);

    set_piece_view(fa, peer);
    iread_pieces(fa, r, &req[0]);
    iwrite_pieces(fb, 2, true, w, &req[1], &nreq);
    ping_pong();
    MPICHK(MPI_Waitall(1 + nreq, req, st));
    check_count(&st[0], MPI_INT, n);
    check_count(&st[1], MPI_INT, n);
    check_read_pieces(r, 1, peer);
    iu_sync_barrier(fb);
    check_pieces("sieved_b", 2);

    /* 8 ints from 3 before the end of the peer's pieces: 3 come back */
    MPICHK(MPI_File_iread_at(fa, n - 3, r, 8, MPI_INT, &req[0]));
    MPICHK(MPI_Wait(&req[0], &st[0]));
    int got;
    MPICHK(MPI_Get_count(&st[0], MPI_INT, &got));
    if (got != 3 && iu_known_deviation("eof-count"))
        printf("NOTE io_nonblock: a read through a view past the end of file: the status says %d ints, not 3 "
               "(eof-count)\n",
               got);
    else
        check_count(&st[0], MPI_INT, 3);
    for (int i = 0; i < 3; i++)
        CHECK(r[i] == gen_value(1, peer, n - 3 + i), "int %d of the short read is %d, expected %d", i, r[i],
              gen_value(1, peer, n - 3 + i));
    MPICHK(MPI_File_close(&fa));
    MPICHK(MPI_File_close(&fb));
    free(w);
    free(r);
}

/* --- cancel and free ------------------------------------------------------------------------ */

static void test_cancel(void)
{
    MPI_File fh = iu_open_rw("cancel");
    const int n = 1 << 16;
    int *w = malloc(n * sizeof(int)), *r = malloc(n * sizeof(int));
    CHECK(w && r, "out of memory");
    for (int i = 0; i < n; i++)
        w[i] = value(tu_rank, i);
    MPI_Request req;
    MPI_Status st;
    MPICHK(MPI_File_iwrite_at(fh, (MPI_Offset)tu_rank * n * 4, w, n, MPI_INT, &req));
    MPICHK(MPI_Cancel(&req));
    MPICHK(MPI_Wait(&req, &st));
    int cancelled = -1;
    MPICHK(MPI_Test_cancelled(&st, &cancelled));
    MPICHK(MPI_File_sync(fh));
#ifdef BMPI
    CHECK(!cancelled, "bmpi cannot recall a file access, yet MPI_Test_cancelled says it did");
#endif
    if (!cancelled) {
        check_count(&st, MPI_INT, n);
        MPICHK(MPI_File_iread_at(fh, (MPI_Offset)tu_rank * n * 4, r, n, MPI_INT, &req));
        MPICHK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        for (int i = 0; i < n; i++)
            CHECK(r[i] == w[i], "int %d after a cancel that did not cancel is %d", i, r[i]);
    }
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    MPICHK(MPI_File_close(&fh));
    free(w);
    free(r);
}

static void test_free_then_close(void)
{
    const size_t each = (size_t)8 << 20;
    unsigned char *w = malloc(each), *r = malloc(each);
    CHECK(w && r, "out of memory");
    tu_fill(w, each, tu_seed(3, tu_rank, 0, 0));
    MPI_File fh = iu_open_rw("free_close");
    MPI_Request req;
    MPICHK(MPI_File_iwrite_at_c(fh, (MPI_Offset)tu_rank * (MPI_Offset)each, w, (MPI_Count)each, MPI_BYTE, &req));
    MPICHK(MPI_Request_free(&req));
    CHECK(req == MPI_REQUEST_NULL, "MPI_Request_free left the handle");
    MPICHK(MPI_File_close(&fh)); /* the freed write still completes */
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    MPICHK(MPI_File_open(MPI_COMM_WORLD, iu_path("free_close"), MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    MPICHK(MPI_File_iread_at_c(fh, (MPI_Offset)tu_rank * (MPI_Offset)each, r, (MPI_Count)each, MPI_BYTE, &req));
    MPICHK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    long bad = tu_verify(r, each, tu_seed(3, tu_rank, 0, 0));
#ifndef BMPI
    /* The standard leaves completing a freed request before the close to
     * the program (14.2.2), which cannot know when it completed; bmpi's
     * close waits for it, ROMIO's does not. */
    if (bad >= 0) {
        if (tu_rank == 0)
            printf("NOTE io_nonblock: a freed iwrite was not complete at MPI_File_close here; "
                   "its data are not checked\n");
        bad = -1;
    }
#endif
    CHECK(bad < 0, "byte %ld of the freed write is wrong after close", bad);
    MPICHK(MPI_File_close(&fh));
    free(w);
    free(r);
}

/* --- atomic mode ------------------------------------------------------------------------------- */

/* Under MPI_File_set_atomicity the access is done whole under a lock:
 * strided memory, a vector view shared by the ranks, and reads back. */
static void test_atomic(void)
{
    const int B = 3, nblocks = 500, n = B * nblocks;
    MPI_File fh = iu_open_rw("atomic");
    MPICHK(MPI_File_set_atomicity(fh, 1));
    MPI_Datatype tile, filetype, mem;
    MPICHK(MPI_Type_vector(1, B, B * tu_size, MPI_INT, &tile));
    MPICHK(MPI_Type_create_resized(tile, 0, (MPI_Aint)B * tu_size * 4, &filetype));
    MPICHK(MPI_Type_commit(&filetype));
    MPICHK(MPI_Type_vector(n, 1, 2, MPI_INT, &mem));
    MPICHK(MPI_Type_commit(&mem));
    MPICHK(MPI_File_set_view(fh, (MPI_Offset)tu_rank * B * 4, MPI_INT, filetype, "native", MPI_INFO_NULL));
    int *w = malloc(2 * n * sizeof(int)), *r = malloc(2 * n * sizeof(int));
    CHECK(w && r, "out of memory");
    for (int i = 0; i < 2 * n; i++) {
        w[i] = i % 2 ? -1 : value(tu_rank, i / 2);
        r[i] = -7;
    }
    MPI_Request req;
    MPICHK(MPI_File_iwrite_at(fh, 0, w, 1, mem, &req));
    MPICHK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    MPICHK(MPI_Barrier(MPI_COMM_WORLD)); /* atomic mode: no sync needed */
    MPICHK(MPI_File_iread_at(fh, 0, r, 1, mem, &req));
    MPICHK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int i = 0; i < 2 * n; i++) {
        int want = i % 2 ? -7 : value(tu_rank, i / 2);
        CHECK(r[i] == want, "int %d read in atomic mode is %d, expected %d", i, r[i], want);
    }
    MPICHK(MPI_File_close(&fh));
    MPICHK(MPI_Type_free(&tile));
    MPICHK(MPI_Type_free(&filetype));
    MPICHK(MPI_Type_free(&mem));
    free(w);
    free(r);
}

/* --- a failing write ---------------------------------------------------------------------- */

static int handler_calls, handler_code;

static void count_errors(MPI_File *fh, int *code, ...)
{
    (void)fh;
    handler_calls++;
    handler_code = *code;
}

static void test_error(void)
{
    char name[32];
    snprintf(name, sizeof name, "fsize.%d", tu_rank);
    MPI_File fh;
    MPICHK(MPI_File_open(MPI_COMM_SELF, iu_path(name), MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    MPI_Errhandler eh;
    MPICHK(MPI_File_create_errhandler(count_errors, &eh));
    MPICHK(MPI_File_set_errhandler(fh, eh));
    const size_t limit = 64 << 10, bytes = 256 << 10;
    unsigned char *w = calloc(1, bytes);
    CHECK(w != NULL, "out of memory");
    struct rlimit old, lim;
    CHECK(getrlimit(RLIMIT_FSIZE, &old) == 0, "getrlimit failed");
    lim = old;
    lim.rlim_cur = limit;
    signal(SIGXFSZ, SIG_IGN); /* EFBIG instead of the signal */
    CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0, "setrlimit failed");
    MPI_Request req;
    MPI_Status st;
    int rc = MPI_File_iwrite_at(fh, 0, w, (int)bytes, MPI_BYTE, &req);
    if (rc == MPI_SUCCESS)
        rc = MPI_Wait(&req, &st);
    CHECK(setrlimit(RLIMIT_FSIZE, &old) == 0, "setrlimit failed");
#ifndef BMPI
    int moved = -1;
    if (rc == MPI_SUCCESS && MPI_Get_count(&st, MPI_BYTE, &moved) == MPI_SUCCESS && moved < (int)bytes) {
        if (tu_rank == 0)
            printf("NOTE io_nonblock: a write cut short by RLIMIT_FSIZE returned success with %d of %zu "
                   "bytes here; the error case is not checked\n", moved, bytes);
        MPICHK(MPI_File_close(&fh));
        MPICHK(MPI_Errhandler_free(&eh));
        free(w);
        return;
    }
#endif
    int cls = -1;
    MPICHK(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_NO_SPACE || cls == MPI_ERR_IO, "a write past RLIMIT_FSIZE returned %s", tu_errstr(rc));
#ifdef BMPI
    /* the text names the file and the system's reason */
    char text[MPI_MAX_ERROR_STRING];
    int len;
    MPICHK(MPI_Error_string(rc, text, &len));
    CHECK(strstr(text, name) && strstr(text, strerror(EFBIG)), "error text \"%s\"", text);
#endif
    CHECK(handler_calls == 1 && handler_code == rc, "the file's handler ran %d times, code %d (returned %d)",
          handler_calls, handler_code, rc);
    MPICHK(MPI_File_close(&fh));
    MPICHK(MPI_Errhandler_free(&eh));
    free(w);
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv, "io_nonblock");
    iu_init("io_nonblock");
    test_at_contig();
    test_pointer_strided();
    test_vector_view();
    test_many();
    test_overlap();
    test_sieved_view();
    test_cancel();
    test_free_then_close();
    test_atomic();
    test_error();
    iu_finish();
    tu_finish();
    return 0;
}
