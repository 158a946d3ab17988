/*
 * Persistent requests restarted many times, and MPI_Request_free of active
 * requests.
 *
 *  - a ring: Recv_init from the left and Send_init / Ssend_init to the right
 *    for a small, an eager-limit and a rendezvous size, plus Send_init to
 *    the left received by an ANY_SOURCE Recv_init; started with Startall or
 *    one by one with Start, completed by Waitall, Testall, Waitany or
 *    Waitsome, new content every iteration;
 *  - Request_free of an active persistent receive, an active Irecv, an
 *    active Isend (rendezvous size) and an active persistent send: each
 *    still does its work, and a message sent after the one a freed receive
 *    took goes to the next receive.
 * At 1 rank left and right are this rank.
 */
#include "testutil.h"

#define ITERS 100
#define NP 4 /* message sizes of the ring */

static const size_t sizes[NP] = {8, 16384 + 8, 100000, 1};
static int right, left;

int main(int argc, char **argv)
{
    tu_init(&argc, &argv, "p2p_persist");
    right = (tu_rank + 1) % tu_size;
    left = (tu_rank + tu_size - 1) % tu_size;
    int iters = tu_size >= 8 ? ITERS / 3 : ITERS;

    unsigned char *sb[NP], *rb[NP];
    MPI_Request reqs[2 * NP];
    for (int i = 0; i < NP; i++) {
        sb[i] = malloc(sizes[i]);
        rb[i] = malloc(sizes[i] + 16);
        CHECK(sb[i] && rb[i], "malloc");
        /* receives first in the array, then sends */
        if (i < NP - 1) {
            MPICHK(MPI_Recv_init(rb[i], (int)sizes[i] + 16, MPI_BYTE, left, 10 + i, MPI_COMM_WORLD, &reqs[i]));
            if (i == 1)
                MPICHK(MPI_Ssend_init(sb[i], (int)sizes[i], MPI_BYTE, right, 10 + i, MPI_COMM_WORLD, &reqs[NP + i]));
            else
                MPICHK(MPI_Send_init(sb[i], (int)sizes[i], MPI_BYTE, right, 10 + i, MPI_COMM_WORLD, &reqs[NP + i]));
        } else {
            /* to the left, received by ANY_SOURCE on the tag */
            MPICHK(MPI_Recv_init(rb[i], (int)sizes[i] + 16, MPI_BYTE, MPI_ANY_SOURCE, 20, MPI_COMM_WORLD, &reqs[i]));
            MPICHK(MPI_Send_init(sb[i], (int)sizes[i], MPI_BYTE, left, 20, MPI_COMM_WORLD, &reqs[NP + i]));
        }
    }
    MPI_Status sts[2 * NP];
    for (int it = 0; it < iters; it++) {
        for (int i = 0; i < NP; i++) {
            int to = i < NP - 1 ? right : left;
            tu_fill(sb[i], sizes[i], tu_seed(30 + it, tu_rank, to, i));
        }
        if (it % 3 == 0) {
            MPICHK(MPI_Startall(2 * NP, reqs));
        } else {
            for (int i = 0; i < NP; i++) /* receives first, then sends */
                MPICHK(MPI_Start(&reqs[i]));
            for (int i = 0; i < NP; i++)
                MPICHK(MPI_Start(&reqs[NP + i]));
        }
        int got[2 * NP] = {0};
        switch (it % 4) {
        case 0:
            MPICHK(MPI_Waitall(2 * NP, reqs, sts));
            for (int i = 0; i < 2 * NP; i++)
                got[i] = 1;
            break;
        case 1: {
            int flag = 0;
            double t0 = tu_now();
            while (!flag) {
                MPICHK(MPI_Testall(2 * NP, reqs, &flag, sts));
                CHECK(tu_now() - t0 < 60, "iteration %d: Testall never true", it);
            }
            for (int i = 0; i < 2 * NP; i++)
                got[i] = 1;
            break;
        }
        case 2:
            for (int n = 0; n < 2 * NP; n++) {
                int idx;
                MPI_Status st;
                MPICHK(MPI_Waitany(2 * NP, reqs, &idx, &st));
                CHECK(idx >= 0 && idx < 2 * NP && !got[idx], "iteration %d: Waitany index %d", it, idx);
                CHECK(reqs[idx] != MPI_REQUEST_NULL, "iteration %d: Waitany freed persistent request %d", it, idx);
                got[idx] = 1;
                sts[idx] = st;
            }
            break;
        default: {
            int n = 0;
            while (n < 2 * NP) {
                int out, idx[2 * NP];
                MPI_Status s2[2 * NP];
                MPICHK(MPI_Waitsome(2 * NP, reqs, &out, idx, s2));
                CHECK(out > 0 && out != MPI_UNDEFINED, "iteration %d: Waitsome outcount %d, %d done", it, out, n);
                for (int j = 0; j < out; j++) {
                    CHECK(!got[idx[j]], "iteration %d: index %d twice", it, idx[j]);
                    got[idx[j]] = 1;
                    sts[idx[j]] = s2[j];
                }
                n += out;
            }
            break;
        }
        }
        for (int i = 0; i < 2 * NP; i++)
            CHECK(reqs[i] != MPI_REQUEST_NULL && got[i], "iteration %d: request %d lost", it, i);
        for (int i = 0; i < NP; i++) {
            int from = i < NP - 1 ? left : right;
            int tag = i < NP - 1 ? 10 + i : 20;
            CHECK_STATUS(sts[i], from, tag, (int)sizes[i], MPI_BYTE);
            long bad = tu_verify(rb[i], sizes[i], tu_seed(30 + it, from, tu_rank, i));
            CHECK(bad < 0, "iteration %d: persistent receive %d (%zu bytes): byte %ld differs", it, i, sizes[i], bad);
        }
        /* all inactive now: a second Waitall returns at once */
        MPICHK(MPI_Waitall(2 * NP, reqs, MPI_STATUSES_IGNORE));
    }
    for (int i = 0; i < 2 * NP; i++) {
        MPICHK(MPI_Request_free(&reqs[i]));
        CHECK(reqs[i] == MPI_REQUEST_NULL, "MPI_Request_free did not null the handle");
    }
    tu_barrier();

    /* ---- Request_free of active requests */
    {
        int freed_p = -1, freed_i = -1, next = -1;
        MPI_Request p, r;
        /* a started persistent receive, and a plain Irecv, freed at once */
        MPICHK(MPI_Recv_init(&freed_p, 1, MPI_INT, left, 40, MPI_COMM_WORLD, &p));
        MPICHK(MPI_Start(&p));
        MPICHK(MPI_Request_free(&p));
        CHECK(p == MPI_REQUEST_NULL, "MPI_Request_free did not null an active persistent request");
        MPICHK(MPI_Irecv(&freed_i, 1, MPI_INT, left, 41, MPI_COMM_WORLD, &r));
        MPICHK(MPI_Request_free(&r));
        CHECK(r == MPI_REQUEST_NULL, "MPI_Request_free did not null an active request");
        tu_barrier(); /* every rank has freed its receives */
        int v[4] = {1000 + tu_rank, 2000 + tu_rank, 3000 + tu_rank, 4000 + tu_rank};
        MPICHK(MPI_Send(&v[0], 1, MPI_INT, right, 40, MPI_COMM_WORLD));
        MPICHK(MPI_Send(&v[1], 1, MPI_INT, right, 41, MPI_COMM_WORLD));
        MPICHK(MPI_Send(&v[2], 1, MPI_INT, right, 40, MPI_COMM_WORLD));
        MPICHK(MPI_Send(&v[3], 1, MPI_INT, right, 41, MPI_COMM_WORLD));
        MPICHK(MPI_Recv(&next, 1, MPI_INT, left, 40, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(next == 3000 + left, "after a freed persistent receive: got %d, expected the second message %d", next,
              3000 + left);
        MPICHK(MPI_Recv(&next, 1, MPI_INT, left, 41, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(next == 4000 + left, "after a freed Irecv: got %d, expected the second message %d", next, 4000 + left);
        /* the freed receives took the first messages (they were eager and
         * the second ones are here, so they are done) */
        CHECK(freed_p == 1000 + left, "freed persistent receive holds %d, expected %d", freed_p, 1000 + left);
        CHECK(freed_i == 2000 + left, "freed Irecv holds %d, expected %d", freed_i, 2000 + left);
    }
    tu_barrier();
    {
        /* an active Isend (rendezvous size) and an active persistent send,
         * freed; the receiver acknowledges before the buffers go */
        size_t n = 1 << 20;
        unsigned char *s1 = malloc(n), *s2 = malloc(n), *r1 = malloc(n), *r2 = malloc(n);
        tu_fill(s1, n, tu_seed(50, tu_rank, right, 1));
        tu_fill(s2, n, tu_seed(50, tu_rank, right, 2));
        MPI_Request rr[2], s, p;
        MPICHK(MPI_Irecv(r1, (int)n, MPI_BYTE, left, 50, MPI_COMM_WORLD, &rr[0]));
        MPICHK(MPI_Irecv(r2, (int)n, MPI_BYTE, left, 51, MPI_COMM_WORLD, &rr[1]));
        MPICHK(MPI_Isend(s1, (int)n, MPI_BYTE, right, 50, MPI_COMM_WORLD, &s));
        MPICHK(MPI_Request_free(&s));
        MPICHK(MPI_Send_init(s2, (int)n, MPI_BYTE, right, 51, MPI_COMM_WORLD, &p));
        MPICHK(MPI_Start(&p));
        MPICHK(MPI_Request_free(&p));
        CHECK(s == MPI_REQUEST_NULL && p == MPI_REQUEST_NULL, "MPI_Request_free did not null the handles");
        MPICHK(MPI_Waitall(2, rr, MPI_STATUSES_IGNORE));
        long bad = tu_verify(r1, n, tu_seed(50, left, tu_rank, 1));
        CHECK(bad < 0, "message of a freed Isend: byte %ld differs", bad);
        bad = tu_verify(r2, n, tu_seed(50, left, tu_rank, 2));
        CHECK(bad < 0, "message of a freed persistent send: byte %ld differs", bad);
        int ack = 0;
        MPICHK(MPI_Sendrecv(&ack, 1, MPI_INT, left, 52, &ack, 1, MPI_INT, right, 52, MPI_COMM_WORLD,
                            MPI_STATUS_IGNORE));
        /* the right neighbour has our data: the sends are done */
        tu_barrier();
        free(s1);
        free(s2);
        free(r1);
        free(r2);
    }
    /* ---- MPI_Start on an active request is an error */
    {
        int x = 0;
        MPI_Request p;
        MPICHK(MPI_Recv_init(&x, 1, MPI_INT, left, 60, MPI_COMM_WORLD, &p));
        MPICHK(MPI_Start(&p));
        EXPECT_CLASS(MPI_Start(&p), MPI_ERR_REQUEST);
        MPICHK(MPI_Send(&x, 1, MPI_INT, right, 60, MPI_COMM_WORLD));
        MPICHK(MPI_Wait(&p, MPI_STATUS_IGNORE));
        MPICHK(MPI_Request_free(&p));
    }
    for (int i = 0; i < NP; i++) {
        free(sb[i]);
        free(rb[i]);
    }
    tu_finish();
    return 0;
}
