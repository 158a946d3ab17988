/*
 * Sends to oneself (eager and large, receive posted before or after),
 * zero-byte messages, MPI_PROC_NULL as destination and source of every
 * kind of call, Sendrecv and Sendrecv_replace (to oneself and around the
 * ring), MPI_STATUS_IGNORE / MPI_STATUSES_IGNORE.
 */
#include "testutil.h"

static int right, left;

static void self_roundtrip(size_t n, int recv_first, int mode)
{
    unsigned char *s = malloc(n ? n : 1), *r = malloc(n + 32);
    uint64_t seed = tu_seed(60, tu_rank, (int)n, mode);
    tu_fill(s, n, seed);
    memset(r, 0xa5, n + 32);
    MPI_Request rq, sq;
    MPI_Status st;
    const int me = tu_rank, tag = 3 + mode;
    if (recv_first) {
        MPICHK(MPI_Irecv(r, (int)n, MPI_BYTE, me, tag, MPI_COMM_WORLD, &rq));
        switch (mode) {
        case 0:
            MPICHK(MPI_Send(s, (int)n, MPI_BYTE, me, tag, MPI_COMM_WORLD));
            break;
        case 1:
            MPICHK(MPI_Ssend(s, (int)n, MPI_BYTE, me, tag, MPI_COMM_WORLD));
            break;
        default:
            MPICHK(MPI_Rsend(s, (int)n, MPI_BYTE, me, tag, MPI_COMM_WORLD));
            break;
        }
        MPICHK(MPI_Wait(&rq, &st));
    } else {
        switch (mode) {
        case 0:
            MPICHK(MPI_Isend(s, (int)n, MPI_BYTE, me, tag, MPI_COMM_WORLD, &sq));
            break;
        case 1:
            MPICHK(MPI_Issend(s, (int)n, MPI_BYTE, me, tag, MPI_COMM_WORLD, &sq));
            break;
        default: {
            /* not matched yet: a synchronous send cannot be complete */
            MPICHK(MPI_Issend(s, (int)n, MPI_BYTE, me, tag, MPI_COMM_WORLD, &sq));
            int flag = 1;
            for (int i = 0; i < 3; i++) {
                MPICHK(MPI_Test(&sq, &flag, MPI_STATUS_IGNORE));
                CHECK(!flag, "MPI_Issend to self of %zu bytes complete before the receive", n);
            }
            break;
        }
        }
        MPICHK(MPI_Recv(r, (int)n, MPI_BYTE, me, tag, MPI_COMM_WORLD, &st));
        MPICHK(MPI_Wait(&sq, MPI_STATUS_IGNORE));
    }
    CHECK_STATUS(st, me, tag, (int)n, MPI_BYTE);
    long bad = tu_verify(r, n, seed);
    CHECK(bad < 0, "self message of %zu bytes (mode %d, %s): byte %ld differs", n, mode,
          recv_first ? "receive first" : "send first", bad);
    CHECK(tu_verify_byte(r + n, 32, 0xa5) < 0, "self message of %zu bytes wrote past its end", n);
    free(s);
    free(r);
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv, "p2p_self");
    right = (tu_rank + 1) % tu_size;
    left = (tu_rank + tu_size - 1) % tu_size;

    /* ---- to self: sizes across the protocols, both orders, all modes */
    static const size_t sizes[] = {0, 1, 100, 16383, 16384, 16385, 32768, 100000, 1 << 20, (4 << 20) + 1};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        for (int mode = 0; mode < 3; mode++)
            for (int rf = 0; rf < 2; rf++)
                self_roundtrip(sizes[i], rf, mode);
    /* many unexpected self messages, received in reverse tag order */
    {
        enum { N = 64 };
        MPI_Request s[N];
        static int v[N], w[N];
        for (int i = 0; i < N; i++) {
            v[i] = i * 7 + tu_rank;
            MPICHK(MPI_Isend(&v[i], 1, MPI_INT, tu_rank, i, MPI_COMM_WORLD, &s[i]));
        }
        for (int i = N - 1; i >= 0; i--)
            MPICHK(MPI_Recv(&w[i], 1, MPI_INT, tu_rank, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MPICHK(MPI_Waitall(N, s, MPI_STATUSES_IGNORE));
        for (int i = 0; i < N; i++)
            CHECK(w[i] == i * 7 + tu_rank, "self message tag %d: %d", i, w[i]);
    }

    /* ---- zero-byte messages (NULL buffers allowed with count 0) */
    {
        MPI_Status st;
        MPI_Request r;
        MPICHK(MPI_Irecv(NULL, 0, MPI_INT, left, 77, MPI_COMM_WORLD, &r));
        MPICHK(MPI_Send(NULL, 0, MPI_INT, right, 77, MPI_COMM_WORLD));
        MPICHK(MPI_Wait(&r, &st));
        CHECK_STATUS(st, left, 77, 0, MPI_INT);
        /* zero bytes into a real buffer: untouched */
        int x = 12345;
        MPICHK(MPI_Irecv(&x, 1, MPI_INT, left, 78, MPI_COMM_WORLD, &r));
        MPICHK(MPI_Ssend(&x, 0, MPI_INT, right, 78, MPI_COMM_WORLD));
        MPICHK(MPI_Wait(&r, &st));
        CHECK_STATUS(st, left, 78, 0, MPI_INT);
        CHECK(x == 12345, "a zero-byte message changed the buffer to %d", x);
        int elems = -1;
        if (TU_OPTIONAL(MPI_Get_elements(&st, MPI_INT, &elems), "MPI_Get_elements"))
            CHECK(elems == 0, "Get_elements of a zero-byte message: %d", elems);
    }
    tu_barrier();

    /* ---- MPI_PROC_NULL everywhere */
    {
        int buf = 99;
        MPI_Status st;
        MPI_Request r, rs[3];
        MPICHK(MPI_Send(&buf, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
        MPICHK(MPI_Ssend(&buf, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
        MPICHK(MPI_Rsend(&buf, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
        MPICHK(MPI_Bsend(&buf, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD)); /* no buffer needed */
        MPICHK(MPI_Isend(&buf, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &rs[0]));
        MPICHK(MPI_Issend(&buf, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &rs[1]));
        MPICHK(MPI_Irsend(&buf, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &rs[2]));
        MPICHK(MPI_Waitall(3, rs, MPI_STATUSES_IGNORE));
        MPICHK(MPI_Ibsend(&buf, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &r));
        MPICHK(MPI_Wait(&r, MPI_STATUS_IGNORE));

        MPICHK(MPI_Recv(&buf, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st));
        CHECK_STATUS(st, MPI_PROC_NULL, MPI_ANY_TAG, 0, MPI_INT);
        CHECK(buf == 99, "receive from MPI_PROC_NULL wrote the buffer");
        MPICHK(MPI_Irecv(&buf, 1, MPI_INT, MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &r));
        int flag = 0;
        MPICHK(MPI_Test(&r, &flag, &st));
        CHECK(flag, "Irecv from MPI_PROC_NULL not complete at once");
        CHECK_STATUS(st, MPI_PROC_NULL, MPI_ANY_TAG, 0, MPI_INT);

        MPICHK(MPI_Probe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, &st));
        CHECK_STATUS(st, MPI_PROC_NULL, MPI_ANY_TAG, 0, MPI_INT);
        flag = 0;
        MPICHK(MPI_Iprobe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
        CHECK(flag, "Iprobe(MPI_PROC_NULL): flag false");
        CHECK_STATUS(st, MPI_PROC_NULL, MPI_ANY_TAG, 0, MPI_INT);
        MPI_Message m = MPI_MESSAGE_NULL;
        MPICHK(MPI_Mprobe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, &m, &st));
        CHECK(m == MPI_MESSAGE_NO_PROC, "Mprobe(MPI_PROC_NULL): message 0x%x, expected MPI_MESSAGE_NO_PROC", (unsigned)m);
        CHECK_STATUS(st, MPI_PROC_NULL, MPI_ANY_TAG, 0, MPI_INT);
        MPICHK(MPI_Mrecv(&buf, 1, MPI_INT, &m, &st));
        CHECK(m == MPI_MESSAGE_NULL, "Mrecv(MPI_MESSAGE_NO_PROC) left message 0x%x", (unsigned)m);
        CHECK_STATUS(st, MPI_PROC_NULL, MPI_ANY_TAG, 0, MPI_INT);
        CHECK(buf == 99, "Mrecv(MPI_MESSAGE_NO_PROC) wrote the buffer");
        flag = 0;
        MPICHK(MPI_Improbe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &m, MPI_STATUS_IGNORE));
        CHECK(flag && m == MPI_MESSAGE_NO_PROC, "Improbe(MPI_PROC_NULL): flag %d message 0x%x", flag, (unsigned)m);
        MPICHK(MPI_Imrecv(&buf, 1, MPI_INT, &m, &r));
        MPICHK(MPI_Wait(&r, &st));
        CHECK_STATUS(st, MPI_PROC_NULL, MPI_ANY_TAG, 0, MPI_INT);

        MPICHK(MPI_Sendrecv(&buf, 1, MPI_INT, MPI_PROC_NULL, 1, &buf, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st));
        CHECK_STATUS(st, MPI_PROC_NULL, MPI_ANY_TAG, 0, MPI_INT);
        MPICHK(MPI_Sendrecv_replace(&buf, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st));
        CHECK_STATUS(st, MPI_PROC_NULL, MPI_ANY_TAG, 0, MPI_INT);
        CHECK(buf == 99, "Sendrecv_replace with MPI_PROC_NULL changed the buffer");

        MPI_Request p[2];
        MPICHK(MPI_Send_init(&buf, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &p[0]));
        MPICHK(MPI_Recv_init(&buf, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &p[1]));
        for (int i = 0; i < 3; i++) {
            MPI_Status sts[2];
            MPICHK(MPI_Startall(2, p));
            MPICHK(MPI_Waitall(2, p, sts));
            CHECK_STATUS(sts[1], MPI_PROC_NULL, MPI_ANY_TAG, 0, MPI_INT);
        }
        MPICHK(MPI_Request_free(&p[0]));
        MPICHK(MPI_Request_free(&p[1]));
        /* every persistent send mode to MPI_PROC_NULL, no buffer attached */
        MPICHK(MPI_Bsend_init(&buf, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &p[0]));
        MPICHK(MPI_Ssend_init(&buf, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &p[1]));
        for (int i = 0; i < 3; i++) {
            MPICHK(MPI_Start(&p[0]));
            MPICHK(MPI_Start(&p[1]));
            MPICHK(MPI_Waitall(2, p, MPI_STATUSES_IGNORE));
        }
        MPICHK(MPI_Request_free(&p[0]));
        MPICHK(MPI_Request_free(&p[1]));
        MPICHK(MPI_Rsend_init(&buf, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &p[0]));
        MPICHK(MPI_Start(&p[0]));
        MPICHK(MPI_Wait(&p[0], MPI_STATUS_IGNORE));
        MPICHK(MPI_Request_free(&p[0]));
    }
    tu_barrier();

    /* ---- Sendrecv and Sendrecv_replace: to self, and around the ring */
    static const size_t srsizes[] = {0, 40, 20000, 700000};
    for (size_t k = 0; k < sizeof srsizes / sizeof srsizes[0]; k++) {
        size_t n = srsizes[k];
        unsigned char *s = malloc(n + 1), *r = malloc(n + 1);
        MPI_Status st;
        for (int ring = 0; ring < 2; ring++) {
            int to = ring ? right : tu_rank, from = ring ? left : tu_rank;
            tu_fill(s, n, tu_seed(61, tu_rank, to, (int)k));
            MPICHK(MPI_Sendrecv(s, (int)n, MPI_BYTE, to, 9, r, (int)n, MPI_BYTE, from, 9, MPI_COMM_WORLD, &st));
            CHECK_STATUS(st, from, 9, (int)n, MPI_BYTE);
            long bad = tu_verify(r, n, tu_seed(61, from, tu_rank, (int)k));
            CHECK(bad < 0, "Sendrecv of %zu bytes (%s): byte %ld differs", n, ring ? "ring" : "self", bad);
            /* replace: the buffer goes out and comes back filled by the peer */
            MPICHK(MPI_Sendrecv_replace(s, (int)n, MPI_BYTE, to, 10, from, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            CHECK_STATUS(st, from, 10, (int)n, MPI_BYTE);
            bad = tu_verify(s, n, tu_seed(61, from, tu_rank, (int)k));
            CHECK(bad < 0, "Sendrecv_replace of %zu bytes (%s): byte %ld differs", n, ring ? "ring" : "self", bad);
            /* statuses ignored; a tag per size, or a neighbour already at
             * the next size could match this wildcard receive */
            int tag = 11 + (int)k;
            MPICHK(MPI_Sendrecv(s, (int)n, MPI_BYTE, to, tag, r, (int)n, MPI_BYTE, MPI_ANY_SOURCE, tag,
                                MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        }
        free(s);
        free(r);
    }
    /* Sendrecv_replace with a strided type, if there are derived types */
    MPI_Datatype vec;
    if (TU_OPTIONAL(MPI_Type_vector(100, 3, 5, MPI_INT, &vec), "MPI_Type_vector")) {
        MPICHK(MPI_Type_commit(&vec));
        int a[500];
        for (int i = 0; i < 500; i++)
            a[i] = i % 5 < 3 ? tu_rank * 10000 + i : -1;
        MPI_Status st;
        MPICHK(MPI_Sendrecv_replace(a, 1, vec, right, 12, left, 12, MPI_COMM_WORLD, &st));
        for (int i = 0; i < 500; i++) {
            int want = i % 5 < 3 ? left * 10000 + i : -1;
            CHECK(a[i] == want, "Sendrecv_replace with a vector: a[%d] = %d, expected %d", i, a[i], want);
        }
        MPICHK(MPI_Type_free(&vec));
    }
    tu_finish();
    return 0;
}
