/*
 * Another user takes the shared-memory names a job used to have: before
 * MPI_Init, rank 0 forks a child that becomes `nobody` and creates
 * /dev/shm/bmpi.<nspace>.0 and every fast-path ring and collective region
 * name of the old scheme (node id 0, no random part). The job must not
 * notice: MPI_Init succeeds, pairs that talk get their fast path and
 * communicators their shared-memory collectives (shm_squat.sh checks that
 * no fallback was reported under BMPI_VERBOSE=1), and the data is right.
 *
 * Needs root (shm_squat.sh skips otherwise). Rank 0 removes the planted
 * files at the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

#define MAX_LOCAL 4 /* ring names planted for local ranks below this */
#define MAX_CTX 64  /* collective region names planted for context ids below this */

/* Calls fn(name) for every name the old scheme gave this job on node 0. */
static int each_old_name(const char *nspace, int (*fn)(const char *))
{
    char name[512];
    int failed = 0;
    snprintf(name, sizeof name, "/bmpi.%s.0", nspace);
    failed |= fn(name);
    for (int s = 0; s < MAX_LOCAL; s++)
        for (int r = 0; r < MAX_LOCAL; r++) {
            snprintf(name, sizeof name, "/bmpi.%s.0.fp%d.%d", nspace, s, r);
            failed |= fn(name);
        }
    for (int ctx = 0; ctx < MAX_CTX; ctx++) {
        snprintf(name, sizeof name, "/bmpi.%s.0.coll0.%d", nspace, ctx);
        failed |= fn(name);
    }
    return failed;
}

static int plant(const char *name)
{
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0644);
    if (fd < 0 || ftruncate(fd, 4096) != 0) {
        fprintf(stderr, "shm_squat: nobody could not create /dev/shm%s: %s\n", name,
                strerror(errno));
        return 1;
    }
    close(fd);
    return 0;
}

static int remove_planted(const char *name)
{
    return shm_unlink(name) != 0 && errno != ENOENT;
}

/* The squatter: a child that drops to nobody before creating anything. */
static void squat(const char *nspace)
{
    const struct passwd *pw = getpwnam("nobody");
    if (!pw) {
        fprintf(stderr, "shm_squat: no user nobody\n");
        exit(1);
    }
    pid_t pid = fork();
    if (pid == 0) {
        if (setgid(pw->pw_gid) != 0 || setuid(pw->pw_uid) != 0)
            _exit(2);
        _exit(each_old_name(nspace, plant));
    }
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "shm_squat: the squatter failed to take the names\n");
        exit(1);
    }
}

static void check_allreduce(MPI_Comm c)
{
    int me, n, sum = 0;
    MPICHK(MPI_Comm_rank(c, &me));
    MPICHK(MPI_Comm_size(c, &n));
    int v = me + 1;
    MPICHK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK(sum == n * (n + 1) / 2, "allreduce gave %d, expected %d", sum, n * (n + 1) / 2);
    MPICHK(MPI_Barrier(c));
}

int main(int argc, char **argv)
{
    const char *nspace = getenv("PMIX_NAMESPACE");
    const char *rank = getenv("PMIX_RANK");
    if (nspace && rank && !strcmp(rank, "0"))
        squat(nspace);
    tu_init(&argc, &argv, "shm_squat");
    /* every pair talks more than the fast-path threshold */
    for (int d = 1; d < tu_size; d++) {
        int to = (tu_rank + d) % tu_size, from = (tu_rank - d + tu_size) % tu_size;
        for (int i = 0; i < 32; i++) {
            int out = tu_rank * 1000 + i, in = -1;
            MPICHK(MPI_Sendrecv(&out, 1, MPI_INT, to, 7, &in, 1, MPI_INT, from, 7,
                                MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(in == from * 1000 + i, "round %d from rank %d: got %d", i, from, in);
        }
    }
    check_allreduce(MPI_COMM_WORLD);
    MPI_Comm dup;
    MPICHK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    check_allreduce(dup);
    MPICHK(MPI_Comm_free(&dup));
    if (tu_rank == 0 && nspace)
        CHECK(!each_old_name(nspace, remove_planted), "could not remove the planted files");
    tu_finish();
    return 0;
}
