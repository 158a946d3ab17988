/*
 * Sends still in flight at MPI_Finalize must be delivered: a buffered send
 * (MPI_Bsend, buffer never detached) and a freed MPI_Isend, eager and
 * rendezvous sizes, after which the sender goes straight into
 * MPI_Finalize while its receiver posts only 300 ms later. MPI_Finalize
 * has to keep progressing them (answering the receiver's handshakes)
 * until they are done. Ranks pair up 0->1, 2->3, ...; an odd last rank and
 * a 1-rank job send to themselves and receive before finalizing.
 */
#include "testutil.h"

#include <unistd.h>

static const size_t sizes[] = {100, 1 << 20};
#define NS 2

int main(int argc, char **argv)
{
    tu_init(&argc, &argv, "p2p_finalize");
    int partner = tu_rank ^ 1;
    if (partner >= tu_size)
        partner = tu_rank;
    int self = partner == tu_rank;
    int sender = self || tu_rank % 2 == 0;
    int receiver = self || !sender;
    tu_barrier();
    if (sender) {
        size_t attach_size = 0;
        for (int k = 0; k < NS; k++)
            attach_size += sizes[k] + MPI_BSEND_OVERHEAD;
        char *attach = malloc(attach_size); /* never detached, never freed */
        MPICHK(MPI_Buffer_attach(attach, (int)attach_size));
        for (int k = 0; k < NS; k++) {
            unsigned char *b = malloc(sizes[k]); /* stays valid: never freed */
            tu_fill(b, sizes[k], tu_seed(100, tu_rank, partner, k));
            MPICHK(MPI_Bsend(b, (int)sizes[k], MPI_BYTE, partner, 10 + k, MPI_COMM_WORLD));
            unsigned char *c = malloc(sizes[k]);
            tu_fill(c, sizes[k], tu_seed(101, tu_rank, partner, k));
            MPI_Request r;
            MPICHK(MPI_Isend(c, (int)sizes[k], MPI_BYTE, partner, 20 + k, MPI_COMM_WORLD, &r));
            MPICHK(MPI_Request_free(&r));
        }
    }
    if (receiver) {
        if (!self)
            tu_sleep_ms(300);
        unsigned char *b = malloc(sizes[NS - 1]);
        for (int k = 0; k < NS; k++) {
            for (int kind = 0; kind < 2; kind++) {
                MPI_Status st;
                MPICHK(MPI_Recv(b, (int)sizes[k], MPI_BYTE, partner, (kind ? 20 : 10) + k, MPI_COMM_WORLD, &st));
                long bad = tu_verify(b, sizes[k], tu_seed(100 + kind, partner, tu_rank, k));
                CHECK(bad < 0, "%s of %zu bytes from %d: byte %ld differs", kind ? "freed Isend" : "Bsend", sizes[k],
                      partner, bad);
            }
        }
        free(b);
        printf("p2p_finalize: rank %d got everything from rank %d\n", tu_rank, partner);
    }
    /* no barrier: the senders are in MPI_Finalize by now */
    MPICHK(MPI_Finalize());
    return 0;
}
