/*
 * ofi_rma_error: a rendezvous whose get fails must complete the receive
 * with an MPI error that carries the provider's explanation, and the
 * sender must not hang. Run with BMPI_OFI_FAULT_RKEY=1 on the sender,
 * which hands out a key the provider does not know
 * (test/ofi/ofi_errors.sh). Rank 1 prints "recv error: <text>" and aborts
 * the job with status 3 (tcp;ofi_rxm drops the connection after such an
 * error, so the sender would wait for its FIN forever).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int n = 1 << 20, rc = MPI_SUCCESS;
    char *buf = calloc(1, (size_t)n);
    /* Rank 1 sends first: a rank that has never sent a matched message
     * crashes in the runtime's p2p_progress when a control message (the
     * FIN after the failed get) meets back-pressure (p2p.matched is still
     * NULL there; reported to the runtime's owner). */
    int hello = 0;
    if (size >= 2 && rank == 0) {
        MPI_Recv(&hello, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        rc = MPI_Send(buf, n, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
    } else if (size >= 2 && rank == 1) {
        MPI_Send(&hello, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
        rc = MPI_Recv(buf, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        char text[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, text, &len);
        if (rc != MPI_SUCCESS) {
            printf("recv error: %s\n", text);
            fflush(stdout);
            MPI_Abort(MPI_COMM_WORLD, 3);
        } else
            printf("recv succeeded\n");
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
