/*
 * Buffered sends: MPI_Buffer_attach, many MPI_Bsend / MPI_Ibsend /
 * MPI_Bsend_init messages (eager and large) sent before the receiver posts
 * anything, MPI_Buffer_detach waiting until the buffered data has left
 * (the buffer is scribbled over right after detach: the receiver must
 * still get intact data), reuse of the space, and overflow: a message that
 * does not fit, or no buffer at all, is MPI_ERR_BUFFER and leaves the
 * buffer usable; a second attach fails. Each rank sends to its right
 * neighbour.
 */
#include "testutil.h"

static int right, left;

#define NB 12
static size_t blen(int i)
{
    static const size_t l[] = {0, 1, 100, 16384, 16385, 40000, 300000, 8, 2000000, 17, 65536, 5};
    return l[i % 12];
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv, "p2p_bsend");
    right = (tu_rank + 1) % tu_size;
    left = (tu_rank + tu_size - 1) % tu_size;

    /* ---- no buffer attached: MPI_ERR_BUFFER */
    {
        int x = 1;
        EXPECT_CLASS(MPI_Bsend(&x, 1, MPI_INT, right, 1, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    }

    /* ---- many buffered sends before any receive; detach waits */
    size_t need = 0;
    for (int i = 0; i < NB; i++)
        need += blen(i) + MPI_BSEND_OVERHEAD;
    int size = (int)need;
    char *attach = malloc(need);
    CHECK(attach, "malloc");
    MPICHK(MPI_Buffer_attach(attach, size));
    unsigned char *src = malloc(blen(8));
    MPI_Request ib[NB];
    int nib = 0;
    for (int i = 0; i < NB; i++) {
        tu_fill(src, blen(i), tu_seed(70, tu_rank, right, i));
        if (i % 3 == 2) {
            MPICHK(MPI_Ibsend(src, (int)blen(i), MPI_BYTE, right, i, MPI_COMM_WORLD, &ib[nib]));
            nib++;
        } else {
            MPICHK(MPI_Bsend(src, (int)blen(i), MPI_BYTE, right, i, MPI_COMM_WORLD));
        }
        /* the data is in the attached buffer: the source may change now */
        memset(src, 0xdd, blen(i));
    }
    /* Ibsend requests complete locally */
    MPICHK(MPI_Waitall(nib, ib, MPI_STATUSES_IGNORE));
    /* a message larger than the whole buffer never fits */
    EXPECT_CLASS(MPI_Bsend(src, (int)need, MPI_BYTE, right, 98, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    tu_barrier(); /* everybody has sent: receives start only now */

    {
        /* receive in reverse order, so large messages wait as long as possible */
        unsigned char *dst = malloc(blen(8) + 1);
        for (int i = NB - 1; i >= 0; i--) {
            MPI_Status st;
            MPICHK(MPI_Recv(dst, (int)blen(8) + 1, MPI_BYTE, left, i, MPI_COMM_WORLD, &st));
            CHECK_STATUS(st, left, i, (int)blen(i), MPI_BYTE);
            long bad = tu_verify(dst, blen(i), tu_seed(70, left, tu_rank, i));
            CHECK(bad < 0, "buffered message %d (%zu bytes): byte %ld differs", i, blen(i), bad);
        }
        free(dst);
    }
    void *addr = NULL;
    int dsize = -1;
    MPICHK(MPI_Buffer_detach(&addr, &dsize));
    CHECK(addr == attach && dsize == size, "detach returned %p/%d, attached %p/%d", addr, dsize, (void *)attach, size);
    /* scribble: nothing may still be read from the buffer */
    memset(attach, 0xee, need);
    tu_barrier();

    /* ---- detach must wait: rank sends large buffered messages and
     * detaches at once, then scribbles; the receiver posts late */
    {
        size_t n = 1 << 20;
        size_t sz = 3 * (n + MPI_BSEND_OVERHEAD);
        char *b2 = malloc(sz);
        MPICHK(MPI_Buffer_attach(b2, (int)sz));
        unsigned char *s = malloc(n), *r = malloc(n);
        for (int i = 0; i < 3; i++) {
            tu_fill(s, n, tu_seed(71, tu_rank, right, i));
            MPICHK(MPI_Bsend(s, (int)n, MPI_BYTE, right, 200 + i, MPI_COMM_WORLD));
        }
        /* receive the left's first, then detach: with detach first every
         * rank would wait for a receiver that is itself in detach */
        MPI_Request rr[3];
        unsigned char *rbuf[3];
        for (int i = 0; i < 3; i++) {
            rbuf[i] = malloc(n);
            MPICHK(MPI_Irecv(rbuf[i], (int)n, MPI_BYTE, left, 200 + i, MPI_COMM_WORLD, &rr[i]));
        }
        void *a2;
        int s2;
        MPICHK(MPI_Buffer_detach(&a2, &s2));
        memset(b2, 0xcc, sz);
        MPICHK(MPI_Waitall(3, rr, MPI_STATUSES_IGNORE));
        for (int i = 0; i < 3; i++) {
            long bad = tu_verify(rbuf[i], n, tu_seed(71, left, tu_rank, i));
            CHECK(bad < 0, "buffered 1 MiB message %d: byte %ld differs (detach returned before the data left?)", i,
                  bad);
            free(rbuf[i]);
        }
        free(s);
        free(r);
        free(b2);
    }
    tu_barrier();

    /* ---- a small buffer reused by many sends; Bsend_init restarted */
    {
        enum { M = 200, LEN = 256 };
        size_t sz = 4 * (LEN + MPI_BSEND_OVERHEAD);
        char *b3 = malloc(sz);
        MPICHK(MPI_Buffer_attach(b3, (int)sz));
        /* a second attach is an error (the standard names no class) */
        CHECK(MPI_Buffer_attach(b3, (int)sz) != MPI_SUCCESS, "a second MPI_Buffer_attach succeeded");
        unsigned char s[LEN], r[LEN];
        MPI_Request p;
        MPICHK(MPI_Bsend_init(s, LEN, MPI_BYTE, right, 300, MPI_COMM_WORLD, &p));
        MPI_Request rr;
        for (int i = 0; i < M; i++) {
            MPICHK(MPI_Irecv(r, LEN, MPI_BYTE, left, 300, MPI_COMM_WORLD, &rr));
            tu_fill(s, LEN, tu_seed(72, tu_rank, right, i));
            if (i % 2) {
                MPICHK(MPI_Start(&p));
                MPICHK(MPI_Wait(&p, MPI_STATUS_IGNORE));
            } else {
                MPICHK(MPI_Bsend(s, LEN, MPI_BYTE, right, 300, MPI_COMM_WORLD));
            }
            MPICHK(MPI_Wait(&rr, MPI_STATUS_IGNORE));
            long bad = tu_verify(r, LEN, tu_seed(72, left, tu_rank, i));
            CHECK(bad < 0, "buffered message %d: byte %ld differs", i, bad);
        }
        MPICHK(MPI_Request_free(&p));
        /* too large for this buffer */
        unsigned char big[4 * LEN + 4 * MPI_BSEND_OVERHEAD];
        EXPECT_CLASS(MPI_Bsend(big, (int)sizeof big, MPI_BYTE, right, 301, MPI_COMM_WORLD), MPI_ERR_BUFFER);
        MPI_Request ir = MPI_REQUEST_NULL;
        int rc = MPI_Ibsend(big, (int)sizeof big, MPI_BYTE, right, 301, MPI_COMM_WORLD, &ir);
        int cls = -1;
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_BUFFER, "overflowing Ibsend: class %d", cls);
        /* still usable after the failures */
        MPICHK(MPI_Irecv(r, LEN, MPI_BYTE, left, 302, MPI_COMM_WORLD, &rr));
        tu_fill(s, LEN, tu_seed(73, tu_rank, right, 0));
        MPICHK(MPI_Bsend(s, LEN, MPI_BYTE, right, 302, MPI_COMM_WORLD));
        MPICHK(MPI_Wait(&rr, MPI_STATUS_IGNORE));
        CHECK(tu_verify(r, LEN, tu_seed(73, left, tu_rank, 0)) < 0, "message after an overflow differs");
        void *a3;
        int s3;
        MPICHK(MPI_Buffer_detach(&a3, &s3));
        free(b3);
    }
    free(src);
    free(attach);
    tu_finish();
    return 0;
}
