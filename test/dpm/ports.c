/* MPI_Open_port/MPI_Comm_accept in one bmpirun job ("server FILE"),
 * MPI_Comm_connect in another ("client FILE"); ports.sh starts both. The
 * server writes its port name to FILE. On the intercommunicator: point to
 * point both ways, collectives, MPI_Intercomm_merge, MPI_Comm_disconnect;
 * and the error classes of bad arguments. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <mpi.h>

static int rank, failures;

#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            printf("%s rank %d: FAIL line %d: ", side, rank, __LINE__);                            \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
            fflush(stdout);                                                                        \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

static const char *side;

static int cls(int code)
{
    int c;
    MPI_Error_class(code, &c);
    return c;
}

static void write_port(const char *file, const char *port)
{
    char tmp[4096];
    snprintf(tmp, sizeof(tmp), "%s.tmp", file);
    FILE *f = fopen(tmp, "w");
    if (!f || fprintf(f, "%s\n", port) < 0 || fclose(f) || rename(tmp, file)) {
        perror("writing the port name");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

static void read_port(const char *file, char *port)
{
    for (int tries = 0; tries < 600; tries++) {
        FILE *f = fopen(file, "r");
        if (f) {
            char *ok = fgets(port, MPI_MAX_PORT_NAME, f);
            fclose(f);
            if (ok) {
                port[strcspn(port, "\n")] = 0;
                return;
            }
        }
        usleep(100000);
    }
    fprintf(stderr, "no port name in %s after 60 s\n", file);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

/* A stranger connects to the port first and sends junk: the server must
 * drop it and go on accepting. The port's first address, which must be
 * IPv4 here ("bmpi-port:ADDR[,ADDR...]:PORT:NONCE"). */
static void stranger(const char *port)
{
    char addr[64];
    int tcp_port = 0;
    const char *last = strrchr(port, ':'), *mid = last;
    while (mid != NULL && mid > port && *--mid != ':')
        ;
    if (sscanf(port, "bmpi-port:%63[0-9.]", addr) != 1 || mid == NULL || sscanf(mid, ":%d:", &tcp_port) != 1) {
        EXPECT(0, "port name %s does not start with an IPv4 address and end with its port", port);
        return;
    }
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((unsigned short)tcp_port)};
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || inet_pton(AF_INET, addr, &sa.sin_addr) != 1 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
        EXPECT(0, "the stranger could not connect to %s", port);
    } else {
        char junk[64];
        memset(junk, 'x', sizeof(junk));
        EXPECT(write(fd, junk, sizeof(junk)) == (ssize_t)sizeof(junk), "the stranger could not write");
    }
    if (fd >= 0)
        close(fd);
}

/* Argument errors a client sees before it connects. */
static void client_errors(const char *port)
{
    MPI_Comm c;
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rc = MPI_Comm_connect(port, MPI_INFO_NULL, size, MPI_COMM_WORLD, &c);
    EXPECT(cls(rc) == MPI_ERR_ROOT, "root out of range gave class %d", cls(rc));
    rc = MPI_Comm_connect(NULL, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &c);
    if (rank == 0)
        EXPECT(cls(rc) == MPI_ERR_ARG, "NULL port name gave class %d", cls(rc));
    else
        EXPECT(cls(rc) == MPI_ERR_ARG, "NULL port name at the root gave class %d here", cls(rc));
    rc = MPI_Comm_connect("not a port", MPI_INFO_NULL, 0, MPI_COMM_WORLD, &c);
    EXPECT(cls(rc) == MPI_ERR_PORT, "malformed port name gave class %d", cls(rc));
    rc = MPI_Comm_connect("bmpi-port:127.0.0.1:1:00000000000000ab", MPI_INFO_NULL, 0, MPI_COMM_WORLD, &c);
    EXPECT(cls(rc) == MPI_ERR_PORT, "port nobody listens on gave class %d", cls(rc));
}

static void server_errors(void)
{
    MPI_Comm c;
    int rc = MPI_Comm_accept("bmpi-port:127.0.0.1:1:00000000000000ab", MPI_INFO_NULL, 0, MPI_COMM_WORLD, &c);
    EXPECT(cls(rc) == MPI_ERR_PORT, "accept on a port not open here gave class %d", cls(rc));
    rc = MPI_Close_port("bmpi-port:127.0.0.1:1:00000000000000ab");
    EXPECT(cls(rc) == MPI_ERR_PORT, "closing a port not open here gave class %d", cls(rc));
    rc = MPI_Close_port(NULL);
    EXPECT(cls(rc) == MPI_ERR_ARG, "closing NULL gave class %d", cls(rc));
}

/* What both sides run on the intercommunicator; server: true on the
 * accepting side. */
static void exercise(MPI_Comm inter, int server)
{
    int lsize, rsize, flag;
    MPI_Comm_size(inter, &lsize);
    MPI_Comm_remote_size(inter, &rsize);
    MPI_Comm_test_inter(inter, &flag);
    EXPECT(flag, "not an intercommunicator");

    /* point to point: every rank to every remote rank and back */
    for (int r = 0; r < rsize; r++) {
        int out = (server ? 1000 : 2000) + rank * 10 + r, in = -1;
        MPI_Sendrecv(&out, 1, MPI_INT, r, 7, &in, 1, MPI_INT, r, 7, inter, MPI_STATUS_IGNORE);
        EXPECT(in == (server ? 2000 : 1000) + r * 10 + rank, "from remote %d got %d", r, in);
    }
    /* a large message (rendezvous) */
    enum { BIG = 1 << 20 };
    int *big = malloc(BIG * sizeof(int));
    if (rank == 0) {
        if (server) {
            for (int i = 0; i < BIG; i++)
                big[i] = i ^ 0x5a5a;
            MPI_Send(big, BIG, MPI_INT, 0, 8, inter);
        } else {
            MPI_Recv(big, BIG, MPI_INT, 0, 8, inter, MPI_STATUS_IGNORE);
            int bad = 0;
            for (int i = 0; i < BIG; i++)
                bad += big[i] != (i ^ 0x5a5a);
            EXPECT(bad == 0, "%d wrong ints in the large message", bad);
        }
    }
    free(big);

    /* bcast from the server's rank 0 */
    int v = server && rank == 0 ? 4242 : -1;
    MPI_Bcast(&v, 1, MPI_INT, server ? (rank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0, inter);
    if (!server)
        EXPECT(v == 4242, "bcast gave %d", v);
    /* allreduce: each side gets the sum over the other */
    int mine = server ? 1 : 100, sum = 0;
    MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, inter);
    EXPECT(sum == (server ? 100 : 1) * rsize, "allreduce gave %d", sum);
    /* allgather of ranks */
    int *all = calloc((size_t)rsize, sizeof(int));
    int me = rank + (server ? 0 : 50);
    MPI_Allgather(&me, 1, MPI_INT, all, 1, MPI_INT, inter);
    for (int i = 0; i < rsize; i++)
        EXPECT(all[i] == i + (server ? 50 : 0), "allgather[%d] = %d", i, all[i]);
    free(all);
    MPI_Barrier(inter);

    /* merge: the server's group first (high false) */
    MPI_Comm merged;
    MPI_Intercomm_merge(inter, server ? 0 : 1, &merged);
    int mrank, msize;
    MPI_Comm_rank(merged, &mrank);
    MPI_Comm_size(merged, &msize);
    EXPECT(msize == lsize + rsize, "merged size %d", msize);
    EXPECT(mrank == (server ? rank : rsize + rank), "merged rank %d", mrank);
    int total = 0;
    MPI_Allreduce(&mrank, &total, 1, MPI_INT, MPI_SUM, merged);
    EXPECT(total == msize * (msize - 1) / 2, "allreduce on the merged communicator gave %d", total);
    /* processes of the other job share no memory with this one */
    MPI_Comm node;
    int nsize = 0;
    MPI_Comm_split_type(merged, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &nsize);
    EXPECT(nsize == lsize, "MPI_COMM_TYPE_SHARED of the merged communicator has %d processes", nsize);
    MPI_Comm_free(&node);
    /* MPI_Intercomm_create across the jobs, bridged by the merged
     * communicator: the leaders swap (job, rank) names */
    MPI_Comm again;
    int remote_leader = server ? lsize : 0; /* the other side's rank 0 in merged */
    MPI_Intercomm_create(MPI_COMM_WORLD, 0, merged, remote_leader, 11, &again);
    int again_rsize = 0, again_sum = 0, again_one = 1;
    MPI_Comm_remote_size(again, &again_rsize);
    MPI_Allreduce(&again_one, &again_sum, 1, MPI_INT, MPI_SUM, again);
    EXPECT(again_rsize == rsize && again_sum == rsize, "intercomm_create: remote size %d, sum %d", again_rsize,
           again_sum);
    MPI_Comm_free(&again);
    MPI_Comm dup;
    MPI_Comm_dup(inter, &dup);
    MPI_Barrier(dup);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&merged);
    /* a send left to finish inside disconnect */
    MPI_Request req = MPI_REQUEST_NULL;
    int last = 77, got = 0;
    if (rank == 0 && server)
        MPI_Isend(&last, 1, MPI_INT, 0, 9, inter, &req);
    if (rank == 0 && !server) {
        MPI_Recv(&got, 1, MPI_INT, 0, 9, inter, MPI_STATUS_IGNORE);
        EXPECT(got == 77, "last message %d", got);
    }
    if (req != MPI_REQUEST_NULL)
        MPI_Request_free(&req);
    MPI_Comm_disconnect(&inter);
    EXPECT(inter == MPI_COMM_NULL, "disconnect left the handle");
}

/* The client runs with BMPI_TRANSPORT=self,shm: nothing can reach the
 * other job, and both sides fail with MPI_ERR_OTHER; the client's message
 * names every transport and why. */
static void unreachable(MPI_Comm *inter, const char *port, int server)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    int rc = server ? MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, inter)
                    : MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, inter);
    EXPECT(cls(rc) == MPI_ERR_OTHER, "with no transport for other jobs: class %d", cls(rc));
    MPI_Error_string(rc, msg, &len);
    printf("%s rank %d: %s\n", side, rank, msg);
    if (!server)
        EXPECT(strstr(msg, "no transport reaches processes of other jobs") && strstr(msg, "shm:") &&
                   strstr(msg, "ofi:"),
               "the message does not name the transports: %s", msg);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc != 3 && argc != 4)
        return 2;
    int expect_unreachable = argc == 4 && strcmp(argv[3], "unreachable") == 0;
    side = argv[1];
    int server = strcmp(side, "server") == 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    char port[MPI_MAX_PORT_NAME] = "";
    MPI_Comm inter;
    if (server) {
        if (rank == 0) {
            EXPECT(MPI_Open_port(MPI_INFO_NULL, port) == MPI_SUCCESS, "open_port");
            EXPECT(strlen(port) < MPI_MAX_PORT_NAME, "port name too long");
        }
        server_errors();
        if (rank == 0)
            write_port(argv[2], port);
    } else {
        read_port(argv[2], port);
        client_errors(port);
        if (rank == 0)
            stranger(port);
    }
    if (expect_unreachable) {
        unreachable(&inter, port, server);
    } else {
        int rc = server ? MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter)
                        : MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter);
        EXPECT(rc == MPI_SUCCESS, "%s", server ? "accept" : "connect");
        if (!failures)
            exercise(inter, server);
    }
    if (server && rank == 0)
        EXPECT(MPI_Close_port(port) == MPI_SUCCESS, "close_port");
    int total;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf(total ? "ports %s: %d failures\n" : "ports %s: ok\n", side, total);
    MPI_Finalize();
    return total != 0;
}
