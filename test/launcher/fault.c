/* An MPI job in which one rank fails at a chosen phase, for bmpirun's
 * fault-injection tests (test/launcher/fault.sh):
 *
 *   fault PHASE HOW VICTIM [MARKER]
 *
 * PHASE: before    the victim fails before MPI_Init, the others wait in it
 *        init      the victim fails while it waits in MPI_Init's fence
 *                  (the others come late)
 *        after     the victim fails right after MPI_Init
 *        transfer  the victim fails in the middle of a large exchange
 *        finalize  the victim fails while it waits in MPI_Finalize
 *                  (the others come late)
 *        late      the victim fails after MPI_Finalize
 * HOW:   segv (SIGSEGV) or a number: exit with that status (0 before
 *        MPI_Init: a rank that leaves without taking part)
 * Every other rank does everything right; the job must end with the
 * victim's status. Rank 0 prints "nspace NAME" first, so that the test can
 * look for the job's /dev/shm segments. */
#include <mpi.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Long enough for the victim to be waiting in a fence for certain. */
#define LATE_S 0.2
#define TRANSFER_BYTES (16 << 20)
#define TRANSFER_ROUNDS 8

static int fail_by_signal;
static int fail_status;

static void fail_now(void)
{
    if (fail_by_signal)
        raise(SIGSEGV);
    _exit(fail_status);
}

static void sleep_s(double s)
{
    struct timespec ts = {.tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static void *fail_later(void *arg)
{
    sleep_s(*(double *)arg);
    fail_now();
    return NULL;
}

/* Fail from another thread after s seconds, while this one is in a call. */
static void fail_in(double s)
{
    static double delay;
    pthread_t t;
    delay = s;
    if (pthread_create(&t, NULL, fail_later, &delay) != 0) {
        perror("pthread_create");
        exit(1);
    }
}

/* The world rank before MPI_Init, from the launcher's environment. */
static int rank_before_init(void)
{
    const char *r = getenv("PMIX_RANK");
    return r != NULL ? atoi(r) : -1;
}

static void transfer(int rank, int size, int victim)
{
    char *out = malloc(TRANSFER_BYTES), *in = malloc(TRANSFER_BYTES);
    if (out == NULL || in == NULL) {
        fprintf(stderr, "fault: out of memory\n");
        exit(1);
    }
    memset(out, rank, TRANSFER_BYTES);
    if (rank == victim)
        fail_in(0.02);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int i = 0; i < TRANSFER_ROUNDS; i++)
        MPI_Sendrecv(out, TRANSFER_BYTES, MPI_BYTE, right, 0, in, TRANSFER_BYTES, MPI_BYTE, left, 0,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    free(out);
    free(in);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: fault before|init|after|transfer|finalize|late segv|STATUS VICTIM [MARKER]\n");
        return 2;
    }
    const char *phase = argv[1];
    fail_by_signal = strcmp(argv[2], "segv") == 0;
    fail_status = atoi(argv[2]);
    int victim = atoi(argv[3]);
    int me = rank_before_init();
    if (me == 0) {
        const char *ns = getenv("PMIX_NAMESPACE");
        printf("nspace %s\n", ns != NULL ? ns : "none");
        fflush(stdout);
    }

    if (strcmp(phase, "before") == 0 && me == victim)
        fail_now();
    if (strcmp(phase, "init") == 0) {
        if (me == victim)
            fail_in(LATE_S / 2);
        else
            sleep_s(LATE_S);
    }
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (strcmp(phase, "after") == 0 && rank == victim)
        fail_now();
    if (strcmp(phase, "transfer") == 0)
        transfer(rank, size, victim);
    if (strcmp(phase, "finalize") == 0) {
        if (rank == victim)
            fail_in(LATE_S / 2);
        else
            sleep_s(LATE_S);
    }
    MPI_Finalize();
    if (strcmp(phase, "late") == 0 && rank == victim)
        fail_now();
    return 0;
}
