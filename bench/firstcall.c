/* firstcall: what a collective or a message costs the first time, on a
 * communicator nobody has used yet, next to what it costs once warm.
 *
 * Standard MPI only. Many applications make only a few calls on each
 * communicator, so a library whose fast path needs a warm-up (mapping a
 * region, registering memory, connecting a peer, faulting pages in) is
 * slower for them than the steady-state figures say. For each collective
 * and size the program dups MPI_COMM_WORLD (the dup itself is not timed:
 * a barrier on the warm parent comes first), then times on the new
 * communicator
 *   first   the first call,
 *   next99  the mean of calls 2 .. 100,
 *   steady  the mean over a batch of calls after a fixed warm-up of
 *           STEADY_WARMUP calls (at most a few hundred, as the usual MPI
 *           benchmarks do).
 * A call's time is the slowest rank's (MPI_MAX over ranks, on the parent).
 * A buffer of each size is allocated and touched once before the first
 * call, so what is timed is the library, not the application's page
 * faults.
 *
 * Point-to-point ("pingpong", ranks 0 and 1 of the new communicator, one
 * way = round trip / 2) is timed the same way; the first message is also
 * the first between those two processes only when it runs first, so it
 * does: run the program once per sample (the -c option limits it to the
 * pingpong, or to one collective).
 *
 * Output (machine readable; '#' lines are comments):
 *   firstcall <name> <size_bytes> <first_usec> <next99_usec> <steady_usec>
 *
 * Options: -c NAME   only this one (pingpong, barrier, bcast, allreduce,
 *                    reduce, allgather, alltoall)
 *          -m MIN -M MAX   sizes (default 8 .. 1m, factors of 64)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"

#define NEXT_CALLS 99
#define STEADY_WARMUP 200
#define STEADY_CALLS 200

enum op { PINGPONG, BARRIER, BCAST, ALLREDUCE, REDUCE, ALLGATHER, ALLTOALL, NOPS };
static const char *names[NOPS] = {
    "pingpong", "barrier", "bcast", "allreduce", "reduce", "allgather", "alltoall",
};

struct bufs {
    char *s, *r;
    size_t bytes; /* per rank and per destination, as coll.c */
};

static void one(enum op o, struct bufs *b, MPI_Comm comm)
{
    int n = (int)b->bytes, rank;
    MPI_Comm_rank(comm, &rank);
    switch (o) {
    case PINGPONG:
        if (rank == 0) {
            MPI_Send(b->s, n, MPI_BYTE, 1, 0, comm);
            MPI_Recv(b->r, n, MPI_BYTE, 1, 0, comm, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(b->r, n, MPI_BYTE, 0, 0, comm, MPI_STATUS_IGNORE);
            MPI_Send(b->s, n, MPI_BYTE, 0, 0, comm);
        }
        break;
    case BARRIER: MPI_Barrier(comm); break;
    case BCAST: MPI_Bcast(b->s, n, MPI_BYTE, 0, comm); break;
    case ALLREDUCE:
        MPI_Allreduce(b->s, b->r, n / (int)sizeof(float), MPI_FLOAT, MPI_SUM, comm);
        break;
    case REDUCE:
        MPI_Reduce(b->s, b->r, n / (int)sizeof(float), MPI_FLOAT, MPI_SUM, 0, comm);
        break;
    case ALLGATHER: MPI_Allgather(b->s, n, MPI_BYTE, b->r, n, MPI_BYTE, comm); break;
    case ALLTOALL: MPI_Alltoall(b->s, n, MPI_BYTE, b->r, n, MPI_BYTE, comm); break;
    default: break;
    }
}

/* Seconds for `calls` calls on comm, the slowest rank's. */
static double timed(enum op o, struct bufs *b, MPI_Comm comm, int calls)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime();
    for (int i = 0; i < calls; i++)
        one(o, b, comm);
    t = MPI_Wtime() - t;
    double slowest;
    MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return slowest;
}

static void measure(enum op o, size_t bytes, int size, int rank)
{
    size_t all = o == ALLGATHER || o == ALLTOALL ? bytes * (size_t)size : bytes;
    struct bufs b = {malloc(all ? all : 1), malloc(all ? all : 1), bytes};
    if (!b.s || !b.r) {
        fprintf(stderr, "firstcall: out of memory for %zu bytes\n", all);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(b.s, 1, all);
    memset(b.r, 0, all);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    double first = timed(o, &b, comm, 1);
    double next = timed(o, &b, comm, NEXT_CALLS) / NEXT_CALLS;
    timed(o, &b, comm, STEADY_WARMUP);
    double steady = timed(o, &b, comm, STEADY_CALLS) / STEADY_CALLS;
    double scale = o == PINGPONG ? 0.5e6 : 1e6; /* one way for the pingpong */
    if (rank == 0)
        printf("firstcall %s %zu %.3f %.3f %.3f\n", names[o], o == BARRIER ? (size_t)0 : bytes,
               first * scale, next * scale, steady * scale);
    MPI_Comm_free(&comm);
    free(b.s);
    free(b.r);
}

int main(int argc, char **argv)
{
    int only = -1, opt;
    size_t min = 8, max = 1u << 20;
    while ((opt = getopt(argc, argv, "c:m:M:")) != -1) {
        if (opt == 'c') {
            for (int i = 0; i < NOPS; i++)
                if (!strcmp(optarg, names[i]))
                    only = i;
            if (only < 0) {
                fprintf(stderr, "firstcall: unknown -c %s\n", optarg);
                return 2;
            }
        } else if (opt == 'm') {
            min = parse_size(optarg);
        } else if (opt == 'M') {
            max = parse_size(optarg);
        } else {
            fprintf(stderr, "usage: firstcall [-c NAME] [-m MIN] [-M MAX]\n");
            return 2;
        }
    }
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0) {
        char version[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(version, &len);
        printf("# %.*s\n# ranks %d\n", (int)strcspn(version, "\n"), version, size);
    }
    for (int o = 0; o < NOPS; o++) {
        if ((only >= 0 && o != only) || (o == PINGPONG && size < 2))
            continue;
        for (size_t bytes = min; bytes <= max; bytes *= 64) {
            measure((enum op)o, bytes, size, rank);
            if (o == BARRIER)
                break;
        }
    }
    MPI_Finalize();
    return 0;
}
