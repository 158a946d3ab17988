/* MPI_Comm_join over a TCP loopback connection between ranks 0 and 1 of
 * one job (rank 0 listens, tells rank 1 the port, rank 1 connects), then
 * point to point and collectives on the intercommunicator; a bad socket
 * is MPI_ERR_ARG. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <mpi.h>

static int rank, failures;

#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            printf("rank %d: FAIL line %d: ", rank, __LINE__);                                     \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

static int loopback_pair(void)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(sa);
    int port = 0, fd = -1;
    if (rank == 0) {
        int l = socket(AF_INET, SOCK_STREAM, 0);
        if (l < 0 || bind(l, (struct sockaddr *)&sa, len) || listen(l, 1) ||
            getsockname(l, (struct sockaddr *)&sa, &len))
            return -1;
        port = ntohs(sa.sin_port);
        MPI_Send(&port, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
        fd = accept(l, NULL, NULL);
        close(l);
    } else {
        MPI_Recv(&port, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        sa.sin_port = htons((unsigned short)port);
        fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, len)) {
            close(fd);
            fd = -1;
        }
    }
    return fd;
}

int main(int argc, char **argv)
{
    int size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm inter = MPI_COMM_NULL;
    int rc = MPI_Comm_join(-1, &inter), cls;
    MPI_Error_class(rc, &cls);
    EXPECT(cls == MPI_ERR_ARG && inter == MPI_COMM_NULL, "join on fd -1 gave class %d", cls);
    if (size >= 2 && rank < 2) {
        int fd = loopback_pair();
        EXPECT(fd >= 0, "no loopback connection");
        EXPECT(MPI_Comm_join(fd, &inter) == MPI_SUCCESS, "join");
        close(fd);
        int flag = 0, rsize = 0, other = -1;
        MPI_Comm_test_inter(inter, &flag);
        MPI_Comm_remote_size(inter, &rsize);
        EXPECT(flag && rsize == 1, "inter %d remote size %d", flag, rsize);
        int out = 100 + rank;
        MPI_Sendrecv(&out, 1, MPI_INT, 0, 3, &other, 1, MPI_INT, 0, 3, inter, MPI_STATUS_IGNORE);
        EXPECT(other == 100 + (1 - rank), "got %d", other);
        int sum = 0;
        MPI_Allreduce(&out, &sum, 1, MPI_INT, MPI_SUM, inter);
        EXPECT(sum == 100 + (1 - rank), "allreduce gave %d", sum);
        MPI_Comm merged;
        MPI_Intercomm_merge(inter, rank, &merged);
        int mrank;
        MPI_Comm_rank(merged, &mrank);
        EXPECT(mrank == rank, "merged rank %d", mrank);
        MPI_Comm_free(&merged);
        MPI_Comm_disconnect(&inter);
    }
    int total;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf(total ? "join: %d failures\n" : "join: ok\n", total);
    MPI_Finalize();
    return total != 0;
}
