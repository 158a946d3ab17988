/*
 * Synchronous and ready sends.
 *
 *  - MPI_Issend is not complete while the receive is not posted: the
 *    receiver posts only after the sender, having tested a few times, says
 *    "go" (deterministic); eager, eager-limit and rendezvous sizes;
 *  - MPI_Ssend returns only after the receive matched: the receiver sleeps
 *    200 ms before posting and the sender must have been blocked for
 *    >= 150 ms (a semantic check with a generous margin, not a benchmark);
 *  - MPI_Rsend / MPI_Irsend after the receiver said its receive is posted.
 *
 * Ranks pair up (0-1, 2-3, ...); an odd last rank, and a 1-rank job, pair
 * with themselves for the deterministic parts.
 */
#include "testutil.h"

static const size_t sizes[] = {0, 8, 16384, 16400, 200000, 3 << 20};
#define NS ((int)(sizeof sizes / sizeof sizes[0]))

int main(int argc, char **argv)
{
    tu_init(&argc, &argv, "p2p_ssend");
    int partner = tu_rank ^ 1;
    if (partner >= tu_size)
        partner = tu_rank;
    int self = partner == tu_rank;
    int sender = self || tu_rank % 2 == 0;
    unsigned char *s = malloc(sizes[NS - 1]), *r = malloc(sizes[NS - 1]);

    /* ---- Issend incomplete until the receive is posted */
    for (int k = 0; k < NS; k++) {
        size_t n = sizes[k];
        for (int dir = 0; dir < 2; dir++) { /* both members of the pair send once */
            int i_send = self || (sender ^ dir);
            int i_recv = self || !(sender ^ dir);
            MPI_Request sq = MPI_REQUEST_NULL;
            if (i_send) {
                tu_fill(s, n, tu_seed(80, tu_rank, partner, k));
                MPICHK(MPI_Issend(s, (int)n, MPI_BYTE, partner, 1, MPI_COMM_WORLD, &sq));
                for (int t = 0; t < 5; t++) {
                    int flag = 1;
                    MPICHK(MPI_Test(&sq, &flag, MPI_STATUS_IGNORE));
                    CHECK(!flag, "MPI_Issend of %zu bytes to %d complete before the receive was posted", n, partner);
                    tu_sleep_ms(1);
                }
                MPI_Status st;
                int flag = 1;
                MPICHK(MPI_Request_get_status(sq, &flag, &st));
                CHECK(!flag, "MPI_Request_get_status: Issend of %zu bytes complete before the receive", n);
                int go = 1;
                MPICHK(MPI_Send(&go, 1, MPI_INT, partner, 2, MPI_COMM_WORLD));
            }
            if (i_recv) {
                int go;
                MPICHK(MPI_Recv(&go, 1, MPI_INT, partner, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                MPI_Status st;
                MPICHK(MPI_Recv(r, (int)n, MPI_BYTE, partner, 1, MPI_COMM_WORLD, &st));
                CHECK_STATUS(st, partner, 1, (int)n, MPI_BYTE);
                long bad = tu_verify(r, n, tu_seed(80, partner, tu_rank, k));
                CHECK(bad < 0, "Issend of %zu bytes: byte %ld differs", n, bad);
            }
            if (i_send)
                MPICHK(MPI_Wait(&sq, MPI_STATUS_IGNORE));
            if (self)
                break;
        }
    }
    tu_barrier();

    /* ---- blocking Ssend waits for the (late) receive: pairs only */
    if (!self) {
        for (int k = 0; k < NS; k += 2) {
            size_t n = sizes[k + 1 < NS ? k + 1 : k];
            int hs = 0;
            if (sender) {
                /* t0 before the handshake: the receiver cannot even start
                 * its 200 ms sleep before t0, whatever the scheduling */
                tu_fill(s, n, tu_seed(81, tu_rank, partner, k));
                double t0 = MPI_Wtime();
                MPICHK(MPI_Send(&hs, 1, MPI_INT, partner, 3, MPI_COMM_WORLD));
                MPICHK(MPI_Ssend(s, (int)n, MPI_BYTE, partner, 4, MPI_COMM_WORLD));
                double dt = MPI_Wtime() - t0;
                CHECK(dt >= 0.150, "MPI_Ssend of %zu bytes returned after %.0f ms; the receiver posted only after 200 ms",
                      n, dt * 1e3);
            } else {
                MPICHK(MPI_Recv(&hs, 1, MPI_INT, partner, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                tu_sleep_ms(200);
                MPICHK(MPI_Recv(r, (int)n, MPI_BYTE, partner, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                long bad = tu_verify(r, n, tu_seed(81, partner, tu_rank, k));
                CHECK(bad < 0, "Ssend of %zu bytes: byte %ld differs", n, bad);
            }
        }
    }
    tu_barrier();

    /* ---- ready sends after the receiver said it is ready */
    for (int k = 0; k < NS; k++) {
        size_t n = sizes[k];
        MPI_Request rq, sq;
        tu_fill(s, n, tu_seed(82, tu_rank, partner, k));
        /* each posts its receive, then tells the partner */
        MPICHK(MPI_Irecv(r, (int)n, MPI_BYTE, partner, 5, MPI_COMM_WORLD, &rq));
        int ready = 1;
        MPICHK(MPI_Sendrecv(&ready, 1, MPI_INT, partner, 6, &ready, 1, MPI_INT, partner, 6, MPI_COMM_WORLD,
                            MPI_STATUS_IGNORE));
        if (k % 2) {
            MPICHK(MPI_Irsend(s, (int)n, MPI_BYTE, partner, 5, MPI_COMM_WORLD, &sq));
            MPICHK(MPI_Wait(&sq, MPI_STATUS_IGNORE));
        } else {
            MPICHK(MPI_Rsend(s, (int)n, MPI_BYTE, partner, 5, MPI_COMM_WORLD));
        }
        MPI_Status st;
        MPICHK(MPI_Wait(&rq, &st));
        CHECK_STATUS(st, partner, 5, (int)n, MPI_BYTE);
        long bad = tu_verify(r, n, tu_seed(82, partner, tu_rank, k));
        CHECK(bad < 0, "Rsend of %zu bytes: byte %ld differs", n, bad);
    }
    free(s);
    free(r);
    tu_finish();
    return 0;
}
