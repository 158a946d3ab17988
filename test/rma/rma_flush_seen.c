/*
 * Remote completion seen from outside MPI: after MPI_Win_flush returns at
 * the origin, the target holds every byte of the Puts before it, even when
 * the target hears of the flush through a channel MPI does not order (a
 * word in a file both map).
 *
 * Rank 0 Puts 4 MiB to the last rank as 256 Puts of 16 KiB (bmpi's ofi
 * lets writes of up to 64 KiB complete locally) in a shared lock epoch,
 * flushes, stores the round number in the mapped word and only then
 * unlocks. The target polls the word while calling MPI_Iprobe (progress,
 * for transports whose target must take the data in) and, once the
 * round's number is there, checks its window without any further MPI
 * call. A transport that called its writes complete once their source was
 * free (bmpi's ofi over sockets, docs/ofi.md "Completion") with a flush
 * that did not wait for them would leave the last bytes in the target's
 * socket, where nothing takes them in. Each round has a pattern of its
 * own. With one rank there is nobody to tell: it passes at once.
 */
#include "rma_util.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#define WORDS (1 << 20) /* uint32 words: 4 MiB */
#define CHUNK 4096      /* words a Put: 16 KiB */
#define ROUNDS 8

static uint32_t pattern(int round, size_t i) { return (uint32_t)(round * 2654435761u) ^ (uint32_t)i; }

/* The word both ranks map, in a file rank 0 makes in TMPDIR (shared by
 * every rank of the job: one node, or simulated hosts on one file system). */
static volatile uint32_t *map_signal(MPI_Comm comm, int rank)
{
    char path[512] = "";
    if (rank == 0) {
        const char *dir = getenv("TMPDIR");
        snprintf(path, sizeof path, "%s/rma_flush_seen.XXXXXX", dir && *dir ? dir : "/tmp");
        int fd = mkstemp(path);
        CHECK(fd >= 0, "mkstemp %s failed", path);
        CHECK(ftruncate(fd, 4096) == 0, "ftruncate of %s failed", path);
        close(fd);
    }
    MPICHK(MPI_Bcast(path, sizeof path, MPI_CHAR, 0, comm));
    int fd = open(path, O_RDWR);
    CHECK(fd >= 0, "open %s failed", path);
    void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK(p != MAP_FAILED, "mmap of %s failed", path);
    close(fd);
    MPICHK(MPI_Barrier(comm));
    if (rank == 0)
        unlink(path);
    return p;
}

static void origin(MPI_Win win, int target, volatile uint32_t *signal)
{
    uint32_t *src = malloc(WORDS * sizeof *src);
    CHECK(src != NULL, "out of memory");
    for (int round = 1; round <= ROUNDS; round++) {
        for (size_t i = 0; i < WORDS; i++)
            src[i] = pattern(round, i);
        MPICHK(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win));
        for (int at = 0; at < WORDS; at += CHUNK)
            MPICHK(MPI_Put(src + at, CHUNK, MPI_UINT32_T, target, at, CHUNK, MPI_UINT32_T, win));
        MPICHK(MPI_Win_flush(target, win));
        __atomic_store_n(signal, (uint32_t)round, __ATOMIC_RELEASE);
        MPICHK(MPI_Win_unlock(target, win));
        MPICHK(MPI_Barrier(MPI_COMM_WORLD)); /* the target has checked */
    }
    free(src);
}

/* Every word of round's pattern in the window, read without any MPI call:
 * the flush completed the Puts at the target, so nothing may still wait
 * for the target's progress. Loads are retried for up to 2 s (updates of
 * the unified model are "eventually" seen) before the word is a failure. */
static void check_round(const uint32_t *mine, int round)
{
    /* from the end: the last bytes put are the last to come in */
    for (size_t i = WORDS; i-- > 0;) {
        uint32_t want = pattern(round, i), got = __atomic_load_n(&mine[i], __ATOMIC_ACQUIRE);
        for (double t0 = MPI_Wtime(); got != want && MPI_Wtime() - t0 < 2.0;)
            got = __atomic_load_n(&mine[i], __ATOMIC_ACQUIRE);
        CHECK(got == want,
              "round %d: word %zu of the window is 0x%08x after the origin's MPI_Win_flush, expected 0x%08x", round,
              i, got, want);
    }
}

static void target(const uint32_t *mine, volatile uint32_t *signal)
{
    for (int round = 1; round <= ROUNDS; round++) {
        int flag;
        while (__atomic_load_n(signal, __ATOMIC_ACQUIRE) < (uint32_t)round)
            MPICHK(MPI_Iprobe(MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
        check_round(mine, round);
        MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    }
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv, "rma_flush_seen");
    int rank = tu_rank, size = tu_size;
    if (size > 1) {
        uint32_t *mine;
        MPI_Win win;
        MPICHK(MPI_Win_allocate(WORDS * sizeof(uint32_t), sizeof(uint32_t), MPI_INFO_NULL, MPI_COMM_WORLD, &mine,
                                &win));
        rt_win_errors_return(win);
        volatile uint32_t *signal = map_signal(MPI_COMM_WORLD, rank);
        if (rank == 0)
            origin(win, size - 1, signal);
        else if (rank == size - 1)
            target(mine, signal);
        else
            for (int round = 1; round <= ROUNDS; round++)
                MPICHK(MPI_Barrier(MPI_COMM_WORLD));
        munmap((void *)signal, 4096);
        MPICHK(MPI_Win_free(&win));
    }
    tu_finish();
    return 0;
}
