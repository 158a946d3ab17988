/*
 * Single copy through the shared heap (transport/shm/heap.c): messages and
 * collective blocks in malloc'ed buffers large enough to live there, one
 * buffer freed and its space reused between rounds, and a rank that
 * fork()s while its buffers are shared (the child must get a private copy,
 * and the parent's heap must go on working); last, collectives whose ranks
 * send some from their heap, some from outside it. shm_heap.sh also checks,
 * under strace, that such buffers move without process_vm_readv.
 */
#include <errno.h>
#include <stdbool.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

#define MIB ((size_t)1 << 20)

/* Each rank sends n bytes of buf to the next rank and receives as many
 * into rbuf from the previous one. */
static void ring_round(unsigned char *buf, unsigned char *rbuf, size_t n, int phase)
{
    int to = (tu_rank + 1) % tu_size, from = (tu_rank + tu_size - 1) % tu_size;
    tu_fill(buf, n, tu_seed(phase, tu_rank, to, 0));
    MPICHK(MPI_Sendrecv(buf, (int)n, MPI_BYTE, to, phase, rbuf, (int)n, MPI_BYTE, from, phase,
                        MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    long bad = tu_verify(rbuf, n, tu_seed(phase, from, tu_rank, 0));
    CHECK(bad < 0, "phase %d: byte %ld of %zu from rank %d is wrong", phase, bad, n, from);
}

static void alltoall_round(size_t block, int phase)
{
    unsigned char *s = malloc(block * (size_t)tu_size), *r = malloc(block * (size_t)tu_size);
    CHECK(s && r, "malloc of %zu bytes", block * (size_t)tu_size);
    for (int p = 0; p < tu_size; p++)
        tu_fill(s + (size_t)p * block, block, tu_seed(phase, tu_rank, p, 1));
    MPICHK(MPI_Alltoall(s, (int)block, MPI_BYTE, r, (int)block, MPI_BYTE, MPI_COMM_WORLD));
    for (int p = 0; p < tu_size; p++) {
        long bad = tu_verify(r + (size_t)p * block, block, tu_seed(phase, p, tu_rank, 1));
        CHECK(bad < 0, "alltoall phase %d: byte %ld of the block from rank %d", phase, bad, p);
    }
    free(r);
    free(s);
}

/* Collective blocks posted by reference where they lie in the writer's
 * heap and copied into its slot where not (shm_direct.c, "slots by
 * reference"): even ranks send from the heap, odd ranks from static
 * memory. Every rank overwrites its send buffer as soon as a call
 * returns, which shows a writer that returned before its readers copied. */
#define MIXED_RANKS 4
#define MIXED_BLOCK ((size_t)64 << 10)
static unsigned char outside[MIXED_RANKS * MIXED_BLOCK];

static void expect_blocks(const unsigned char *r, size_t block, int phase, bool to_all)
{
    for (int p = 0; p < tu_size; p++) {
        long bad = tu_verify(r + (size_t)p * block, block,
                             tu_seed(phase, p, to_all ? 0 : tu_rank, 2));
        CHECK(bad < 0, "%s of %zu B, phase %d: byte %ld of the block from rank %d is wrong",
              to_all ? "allgather" : "alltoall", block, phase, bad, p);
    }
}

static void mixed_call(unsigned char *s, unsigned char *r, size_t block, int phase, bool to_all)
{
    int blocks = to_all ? 1 : tu_size;
    for (int p = 0; p < blocks; p++)
        tu_fill(s + (size_t)p * block, block, tu_seed(phase, tu_rank, to_all ? 0 : p, 2));
    if (to_all)
        MPICHK(MPI_Allgather(s, (int)block, MPI_BYTE, r, (int)block, MPI_BYTE, MPI_COMM_WORLD));
    else
        MPICHK(MPI_Alltoall(s, (int)block, MPI_BYTE, r, (int)block, MPI_BYTE, MPI_COMM_WORLD));
    memset(s, 0xee, (size_t)blocks * block);
    expect_blocks(r, block, phase, to_all);
}

static void mixed_rounds(int phase)
{
    if (tu_size > MIXED_RANKS)
        return;
    unsigned char *heap = malloc(sizeof outside), *r = malloc(sizeof outside);
    CHECK(heap && r, "malloc of %zu bytes", sizeof outside);
    unsigned char *s = tu_rank % 2 ? outside : heap;
    for (size_t block = 1024; block <= MIXED_BLOCK; block *= 2)
        for (int call = 0; call < 16; call++, phase++)
            mixed_call(s, r, block, phase, call % 2);
    free(r);
    free(heap);
}

/* fork() with a buffer in the heap: the child writes over it and exits;
 * the parent's copy must be untouched. */
static void fork_round(unsigned char *buf, size_t n)
{
    memset(buf, 'p', n);
    pid_t pid = fork();
    CHECK(pid >= 0, "fork: %s", strerror(errno));
    if (pid == 0) {
        int saw_parent = buf[0] == 'p' && buf[n - 1] == 'p';
        memset(buf, 'c', n);
        _exit(saw_parent ? 0 : 1);
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid, "waitpid: %s", strerror(errno));
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child did not see the parent's data");
    CHECK(tu_verify_byte(buf, n, 'p') < 0, "the child's writes reached the parent");
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv, "shm_heap");
    size_t n = 4 * MIB;
    unsigned char *buf = malloc(n), *rbuf = malloc(n);
    CHECK(buf && rbuf, "malloc of %zu bytes", n);
    for (int i = 0; i < 8; i++)
        ring_round(buf, rbuf, i % 2 ? MIB : 100 * 1024 + 7, i);
    alltoall_round(256 * 1024, 20);
    alltoall_round(MIB, 21);

    /* A freed block's space is taken by the next one. */
    free(buf);
    buf = malloc(2 * MIB);
    CHECK(buf != NULL, "malloc of %zu bytes", 2 * MIB);
    ring_round(buf, rbuf, 2 * MIB, 30);

    fork_round(buf, 2 * MIB);
    ring_round(buf, rbuf, 2 * MIB, 31);
    alltoall_round(512 * 1024, 32);
    mixed_rounds(40);
    free(rbuf);
    free(buf);
    tu_finish();
    return 0;
}
