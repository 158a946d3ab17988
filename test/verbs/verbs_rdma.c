/*
 * verbs_rdma: the rendezvous paths of the verbs transport that ordinary
 * MPI tests do not reach (test/verbs/verbs_emu.sh runs it over the
 * emulation).
 *
 *   verbs_rdma reuse   rank 0 sends a 1 MiB buffer (RDMA READ by rank 1),
 *                      unmaps it, maps new memory at the same address with
 *                      other contents and sends again, three times: rank 1
 *                      must see the new bytes each time. A registration
 *                      kept from before the munmap still names the old
 *                      pages (the emulation keeps them as hardware does),
 *                      so a transport that caches it fails here.
 *   verbs_rdma error   with BMPI_VERBS_FAULT_RKEY=1, rank 1's RDMA READ
 *                      meets a key the device does not know: the receive
 *                      must fail with the device's words; rank 1 prints
 *                      "recv error: <text>" and aborts the job with 3.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define N (1 << 20)

static int reuse(int rank)
{
    char *fixed = NULL;
    int bad = 0;
    for (int round = 0; round < 3; round++) {
        if (rank == 0) {
            char *b = mmap(fixed, N, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | (fixed ? MAP_FIXED : 0), -1, 0);
            if (b == MAP_FAILED) {
                perror("mmap");
                MPI_Abort(MPI_COMM_WORLD, 2);
            }
            fixed = b;
            memset(b, 'A' + round, N);
            MPI_Send(b, N, MPI_BYTE, 1, round, MPI_COMM_WORLD);
            munmap(b, N);
        } else if (rank == 1) {
            char *r = malloc(N);
            MPI_Recv(r, N, MPI_BYTE, 0, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (int i = 0; i < N; i++)
                if (r[i] != 'A' + round) {
                    printf("round %d: byte %d is '%c', expected '%c' (stale registration?)\n",
                           round, i, r[i], 'A' + round);
                    bad = 1;
                    break;
                }
            free(r);
        }
    }
    if (rank == 1 && !bad)
        printf("reuse ok\n");
    return bad;
}

static void error(int rank)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    char *buf = calloc(1, N);
    int hello = 0;
    if (rank == 0) {
        MPI_Recv(&hello, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf, N, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
    } else if (rank == 1) {
        MPI_Send(&hello, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
        int rc = MPI_Recv(buf, N, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) {
            char text[MPI_MAX_ERROR_STRING];
            int len = 0;
            MPI_Error_string(rc, text, &len);
            printf("recv error: %s\n", text);
            fflush(stdout);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
        printf("recv succeeded\n");
    }
    free(buf);
}

int main(int argc, char **argv)
{
    int rank, size, rc = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = argc > 1 ? argv[1] : "reuse";
    if (size < 2) {
        if (rank == 0)
            printf("needs 2 ranks\n");
    } else if (!strcmp(mode, "reuse")) {
        rc = reuse(rank);
    } else if (!strcmp(mode, "error")) {
        error(rank);
    } else {
        if (rank == 0)
            fprintf(stderr, "usage: verbs_rdma reuse|error\n");
        rc = 2;
    }
    MPI_Finalize();
    return rc;
}
