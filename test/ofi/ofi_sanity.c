/*
 * ofi_sanity: point-to-point between all pairs of ranks (oneself
 * included), meant to run over one transport (BMPI_TRANSPORT=ofi):
 *
 *  1. storms of random-size messages, 0 B .. 4 MiB, crossing the eager
 *     limit, max_am and the RMA path, every byte verified;
 *  2. order: a burst of messages with one tag and sizes from 1 B to
 *     256 KiB (eager and rendezvous mixed) must arrive in send order,
 *     received late so that the transport's queues fill and push back;
 *  3. synchronous sends (MPI_Ssend) both ways.
 *
 * Only MPI_BYTE and basic point-to-point calls, so that a failure points at
 * the transport. Sizes and contents derive from (round, src, dst, index),
 * so both sides know them without talking.
 *
 *   ofi_sanity [rounds]
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank, size;

#define GUARD 0xa5

#define CHECK(cond, ...)                                                                 \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "ofi_sanity: rank %d: FAIL %s:%d: ", rank, __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                                                \
            fprintf(stderr, "\n");                                                       \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                \
        }                                                                                \
    } while (0)

#define MPI_OK(call) CHECK((call) == MPI_SUCCESS, "%s failed", #call)

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

static uint64_t seed_of(int round, int src, int dst, int i)
{
    return mix(((uint64_t)round << 48) ^ ((uint64_t)src << 32) ^ ((uint64_t)dst << 16) ^ (uint64_t)i ^ 0x5eed);
}

static size_t pick_size(uint64_t s)
{
    uint64_t r = mix(s);
    switch (r % 10) {
    case 0:
        return 0;
    case 1:
    case 2:
        return 1 + (r >> 8) % 64;
    case 3:
        return 16384 - 64 + (r >> 8) % 128; /* eager limit */
    case 4:
        return 65536 - 128 + (r >> 8) % 192; /* max_am */
    case 5:
    case 6:
        return 1 + (r >> 8) % 200000;
    case 7:
        return (1u << 20) - 64 + (r >> 8) % 128;
    default:
        return 1 + (r >> 8) % (4u << 20);
    }
}

static void fill(unsigned char *p, size_t n, uint64_t s)
{
    uint64_t x = mix(s ^ 0xf111);
    for (size_t i = 0; i < n; i++) {
        if ((i & 7) == 0)
            x = mix(x + i);
        p[i] = (unsigned char)(x >> ((i & 7) * 8));
    }
}

static size_t first_bad(const unsigned char *p, size_t n, uint64_t s)
{
    uint64_t x = mix(s ^ 0xf111);
    for (size_t i = 0; i < n; i++) {
        if ((i & 7) == 0)
            x = mix(x + i);
        if (p[i] != (unsigned char)(x >> ((i & 7) * 8)))
            return i;
    }
    return n;
}

static void storm(int round, int per_pair)
{
    int n = size * per_pair;
    unsigned char **sbuf = calloc((size_t)n, sizeof(*sbuf)), **rbuf = calloc((size_t)n, sizeof(*rbuf));
    MPI_Request *req = malloc(2 * (size_t)n * sizeof(*req));
    CHECK(sbuf && rbuf && req, "out of memory");
    int k = 0;
    for (int src = 0; src < size; src++)
        for (int i = 0; i < per_pair; i++, k++) {
            size_t len = pick_size(seed_of(round, src, rank, i));
            rbuf[k] = malloc(len + 1);
            CHECK(rbuf[k], "out of memory (%zu)", len);
            rbuf[k][len] = GUARD;
            MPI_OK(MPI_Irecv(rbuf[k], (int)len, MPI_BYTE, src, i, MPI_COMM_WORLD, &req[k]));
        }
    k = 0;
    for (int d = 0; d < size; d++) {
        int dst = (rank + d) % size;
        for (int i = 0; i < per_pair; i++, k++) {
            uint64_t s = seed_of(round, rank, dst, i);
            size_t len = pick_size(s);
            sbuf[k] = malloc(len + 1);
            CHECK(sbuf[k], "out of memory (%zu)", len);
            fill(sbuf[k], len, s);
            MPI_OK(MPI_Isend(sbuf[k], (int)len, MPI_BYTE, dst, i, MPI_COMM_WORLD, &req[n + k]));
        }
    }
    MPI_Status *st = malloc(2 * (size_t)n * sizeof(*st));
    CHECK(st, "out of memory");
    MPI_OK(MPI_Waitall(2 * n, req, st));
    k = 0;
    for (int src = 0; src < size; src++)
        for (int i = 0; i < per_pair; i++, k++) {
            uint64_t s = seed_of(round, src, rank, i);
            size_t len = pick_size(s);
            CHECK(st[k].MPI_SOURCE == src && st[k].MPI_TAG == i, "round %d: status says source %d tag %d", round,
                  st[k].MPI_SOURCE, st[k].MPI_TAG);
            CHECK(rbuf[k][len] == GUARD, "round %d: message %d from %d wrote past its %zu bytes", round, i, src, len);
            size_t bad = first_bad(rbuf[k], len, s);
            CHECK(bad == len, "round %d: message %d from %d (%zu bytes): wrong byte at offset %zu", round, i, src,
                  len, bad);
        }
    for (k = 0; k < n; k++) {
        free(sbuf[k]);
        free(rbuf[k]);
    }
    free(sbuf);
    free(rbuf);
    free(req);
    free(st);
}

/* One tag, many messages, mixed protocols: they must match in send order. */
static size_t order_size(int i) { return i % 50 == 49 ? 200000 + (size_t)i : i % 7 == 3 ? 20000 : 8 + (size_t)(i % 13); }

static void order(int burst)
{
    int n = burst * size;
    MPI_Request *req = malloc((size_t)n * sizeof(*req));
    unsigned char **sbuf = calloc((size_t)n, sizeof(*sbuf));
    CHECK(req && sbuf, "out of memory");
    for (int d = 0, k = 0; d < size; d++) {
        int dst = (rank + d) % size;
        for (int i = 0; i < burst; i++, k++) {
            size_t len = order_size(i);
            sbuf[k] = malloc(len);
            CHECK(sbuf[k], "out of memory");
            fill(sbuf[k], len, seed_of(99, rank, dst, i));
            memcpy(sbuf[k], &i, sizeof(i));
            MPI_OK(MPI_Isend(sbuf[k], (int)len, MPI_BYTE, dst, 7, MPI_COMM_WORLD, &req[k]));
        }
    }
    usleep(20000); /* let the senders run into full queues */
    size_t cap = 300000;
    unsigned char *rbuf = malloc(cap);
    CHECK(rbuf, "out of memory");
    memset(rbuf, GUARD, cap);
    for (int src = 0; src < size; src++) {
        for (int i = 0; i < burst; i++) {
            MPI_Status st;
            MPI_OK(MPI_Recv(rbuf, (int)cap, MPI_BYTE, src, 7, MPI_COMM_WORLD, &st));
            int seq, count = (int)order_size(i);
            memcpy(&seq, rbuf, sizeof(seq));
            CHECK(seq == i, "order: message %d from rank %d arrived as number %d", seq, src, i);
            CHECK(rbuf[count] == GUARD, "order: message %d from %d longer than %d bytes", i, src, count);
            fill(rbuf, sizeof(int), seed_of(99, src, rank, i)); /* restore the overwritten prefix */
            size_t bad = first_bad(rbuf, (size_t)count, seed_of(99, src, rank, i));
            CHECK(bad == (size_t)count, "order: message %d from %d: wrong byte at %zu", i, src, bad);
            memset(rbuf, GUARD, (size_t)count);
        }
    }
    MPI_OK(MPI_Waitall(n, req, MPI_STATUSES_IGNORE));
    for (int k = 0; k < n; k++)
        free(sbuf[k]);
    free(sbuf);
    free(rbuf);
    free(req);
}

static void sync_sends(void)
{
    for (int d = 1; d <= size; d++) {
        int dst = (rank + d) % size, src = (rank - d + size) % size;
        for (size_t len = 1; len <= (1u << 20); len *= 16) {
            unsigned char *a = malloc(len), *b = malloc(len);
            CHECK(a && b, "out of memory");
            fill(a, len, seed_of(7, rank, dst, (int)len));
            MPI_Request r;
            MPI_OK(MPI_Irecv(b, (int)len, MPI_BYTE, src, 3, MPI_COMM_WORLD, &r));
            MPI_OK(MPI_Ssend(a, (int)len, MPI_BYTE, dst, 3, MPI_COMM_WORLD));
            MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
            size_t bad = first_bad(b, len, seed_of(7, src, rank, (int)len));
            CHECK(bad == len, "ssend %zu bytes from %d: wrong byte at %zu", len, src, bad);
            free(a);
            free(b);
        }
    }
}

/* Everyone has finished the previous phase (no collectives needed). */
static void sync_all(void)
{
    int token = 0;
    if (rank == 0) {
        for (int r = 1; r < size; r++)
            MPI_OK(MPI_Recv(&token, 1, MPI_INT, r, 1000, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int r = 1; r < size; r++)
            MPI_OK(MPI_Send(&token, 1, MPI_INT, r, 1001, MPI_COMM_WORLD));
    } else {
        MPI_OK(MPI_Send(&token, 1, MPI_INT, 0, 1000, MPI_COMM_WORLD));
        MPI_OK(MPI_Recv(&token, 1, MPI_INT, 0, 1001, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rounds = argc > 1 ? atoi(argv[1]) : 4;
    int per_pair = size > 4 ? 2 : 4;
    for (int r = 0; r < rounds; r++)
        storm(r, per_pair);
    sync_all();
    order(size > 4 ? 200 : 500);
    sync_all();
    sync_sends();
    sync_all();
    if (rank == 0)
        printf("ofi_sanity: %d ranks, %d rounds: ok\n", size, rounds);
    MPI_Finalize();
    return 0;
}
