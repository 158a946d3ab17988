/*
 * MPI_Cancel of receives and MPI_Test_cancelled:
 *  - an unmatched receive (specific source, ANY_SOURCE, ANY_TAG) is
 *    cancelled: Test_cancelled true, the buffer untouched, and a message
 *    sent afterwards goes to the next matching receive, not to it;
 *  - a receive that already matched (eager, and a rendezvous whose
 *    request-to-send arrived) is not: Test_cancelled false, data complete;
 *  - a completed receive: cancel is a no-op;
 *  - a started persistent receive: cancelled, then restarted and used.
 * Each rank receives from its left neighbour (at 1 rank: itself).
 */
#include "testutil.h"

static int right, left;

static void expect_cancelled(MPI_Request *r, int want, const char *what)
{
    MPI_Status st;
    MPICHK(MPI_Wait(r, &st));
    int flag = -1;
    MPICHK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag == want, "%s: MPI_Test_cancelled says %d, expected %d", what, flag, want);
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv, "p2p_cancel");
    right = (tu_rank + 1) % tu_size;
    left = (tu_rank + tu_size - 1) % tu_size;
    int buf[4] = {-1, -1, -1, -1};
    MPI_Request r;

    /* ---- unmatched receives: nothing will ever be sent for them */
    MPICHK(MPI_Irecv(buf, 4, MPI_INT, left, 500, MPI_COMM_WORLD, &r));
    MPICHK(MPI_Cancel(&r));
    CHECK(r != MPI_REQUEST_NULL, "MPI_Cancel freed the request");
    expect_cancelled(&r, 1, "unmatched receive from the left neighbour");
    CHECK(r == MPI_REQUEST_NULL, "MPI_Wait did not free the cancelled request");
    CHECK(buf[0] == -1, "a cancelled receive wrote its buffer");

    MPICHK(MPI_Irecv(buf, 4, MPI_INT, MPI_ANY_SOURCE, 501, MPI_COMM_WORLD, &r));
    MPICHK(MPI_Cancel(&r));
    int flag = 0;
    MPI_Status st;
    double t0 = tu_now();
    while (!flag) {
        MPICHK(MPI_Test(&r, &flag, &st));
        CHECK(tu_now() - t0 < 30, "a cancelled receive never completes under MPI_Test");
    }
    MPICHK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag, "ANY_SOURCE receive: MPI_Test_cancelled false");

    /* ANY_TAG from the left, cancelled; then the left neighbour sends: the
     * message must go to the receive posted after the cancel */
    int a = -1, b = -1;
    MPI_Request r2;
    MPICHK(MPI_Irecv(&a, 1, MPI_INT, left, MPI_ANY_TAG, MPI_COMM_WORLD, &r));
    MPICHK(MPI_Cancel(&r));
    MPICHK(MPI_Irecv(&b, 1, MPI_INT, left, 502, MPI_COMM_WORLD, &r2));
    int v = 4242 + tu_rank;
    MPICHK(MPI_Send(&v, 1, MPI_INT, right, 502, MPI_COMM_WORLD));
    MPICHK(MPI_Wait(&r2, &st));
    CHECK(b == 4242 + left, "the receive after a cancelled one got %d", b);
    expect_cancelled(&r, 1, "ANY_TAG receive cancelled before the message came");
    CHECK(a == -1, "the cancelled receive got the message (%d)", a);
    tu_barrier();

    /* ---- matched before the cancel: eager, and rendezvous */
    for (int big = 0; big < 2; big++) {
        size_t n = big ? (size_t)3 << 20 : 64;
        unsigned char *rb = malloc(n), *sb = malloc(n);
        tu_fill(sb, n, tu_seed(20, tu_rank, right, big));
        memset(rb, 0, n);
        MPICHK(MPI_Irecv(rb, (int)n, MPI_BYTE, left, 600, MPI_COMM_WORLD, &r));
        MPI_Request s;
        MPICHK(MPI_Isend(sb, (int)n, MPI_BYTE, right, 600, MPI_COMM_WORLD, &s));
        /* a second message behind it: once it is here, the first message's
         * envelope has arrived too (non-overtaking) and matched r */
        int token = 0;
        MPI_Request s2;
        MPICHK(MPI_Isend(&token, 1, MPI_INT, right, 601, MPI_COMM_WORLD, &s2));
        MPICHK(MPI_Recv(&token, 1, MPI_INT, left, 601, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MPICHK(MPI_Cancel(&r));
        expect_cancelled(&r, 0, big ? "matched rendezvous receive" : "matched eager receive");
        long bad = tu_verify(rb, n, tu_seed(20, left, tu_rank, big));
        CHECK(bad < 0, "receive that could not be cancelled: byte %ld differs", bad);
        MPICHK(MPI_Wait(&s, &st));
        MPICHK(MPI_Test_cancelled(&st, &flag));
        CHECK(!flag, "a completed send says cancelled");
        MPICHK(MPI_Wait(&s2, MPI_STATUS_IGNORE));
        free(rb);
        free(sb);
    }
    tu_barrier();

    /* ---- cancel of a completed (not yet waited) receive */
    {
        int x = 7, y = 0;
        MPICHK(MPI_Irecv(&y, 1, MPI_INT, left, 700, MPI_COMM_WORLD, &r));
        MPICHK(MPI_Send(&x, 1, MPI_INT, right, 700, MPI_COMM_WORLD));
        t0 = tu_now();
        do {
            MPICHK(MPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE));
            CHECK(tu_now() - t0 < 30, "receive never completed");
        } while (!flag);
        MPICHK(MPI_Cancel(&r));
        expect_cancelled(&r, 0, "completed receive");
        CHECK(y == 7, "value %d", y);
    }
    tu_barrier();

    /* ---- persistent receive: start, cancel, restart, use */
    {
        int x = 0, y = -1;
        MPI_Request p;
        MPICHK(MPI_Recv_init(&y, 1, MPI_INT, left, 800, MPI_COMM_WORLD, &p));
        MPICHK(MPI_Start(&p));
        MPICHK(MPI_Cancel(&p));
        expect_cancelled(&p, 1, "started persistent receive");
        CHECK(p != MPI_REQUEST_NULL, "MPI_Wait freed a persistent request");
        CHECK(y == -1, "cancelled persistent receive wrote %d", y);
        tu_barrier(); /* every rank has cancelled before anybody sends */
        for (int i = 0; i < 5; i++) {
            MPICHK(MPI_Start(&p));
            x = 100 * tu_rank + i;
            MPICHK(MPI_Send(&x, 1, MPI_INT, right, 800, MPI_COMM_WORLD));
            MPICHK(MPI_Wait(&p, &st));
            CHECK(y == 100 * left + i, "restarted persistent receive %d got %d", i, y);
            MPICHK(MPI_Test_cancelled(&st, &flag));
            CHECK(!flag, "restarted persistent receive says cancelled");
        }
        MPICHK(MPI_Request_free(&p));
    }
    /* nothing left over: a probe for any leftover message finds none */
    tu_barrier();
    MPICHK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
    CHECK(!flag || st.MPI_TAG >= TU_TAG_BARRIER, "a message (source %d, tag %d) was left unreceived", st.MPI_SOURCE,
          st.MPI_TAG);
    tu_finish();
    return 0;
}
