/* MPI_Comm_spawn and MPI_Comm_spawn_multiple under bmpirun. Started as
 * "spawn parent PATH" it is the parent (run with 2 ranks): it spawns 3
 * copies of itself ("child"), talks to them over the intercommunicator
 * (point to point, collectives, merge), then spawns two commands at once
 * (one with MPI_ARGV_NULL), then one child in another working directory
 * (info keys wdir, host, path),
 * and checks the argument errors. The children check MPI_Comm_get_parent
 * and what they were given. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <mpi.h>

static int rank, failures;
static const char *who = "parent";

#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            printf("%s rank %d: FAIL line %d: ", who, rank, __LINE__);                             \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
            fflush(stdout);                                                                        \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

static int cls(int code)
{
    int c;
    MPI_Error_class(code, &c);
    return c;
}

/* Both sides: each child sends its rank to every parent, every parent
 * answers; a bcast from the parents' rank 0; an allreduce; a merge with
 * the parents first. */
static void talk(MPI_Comm inter, int parent_side)
{
    int lsize, rsize;
    MPI_Comm_size(inter, &lsize);
    MPI_Comm_remote_size(inter, &rsize);
    for (int r = 0; r < rsize; r++) {
        int out = (parent_side ? 500 : 900) + rank, in = -1;
        MPI_Sendrecv(&out, 1, MPI_INT, r, 1, &in, 1, MPI_INT, r, 1, inter, MPI_STATUS_IGNORE);
        EXPECT(in == (parent_side ? 900 : 500) + r, "from remote %d got %d", r, in);
    }
    int v = parent_side && rank == 0 ? 31337 : 0;
    MPI_Bcast(&v, 1, MPI_INT, parent_side ? (rank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0, inter);
    if (!parent_side)
        EXPECT(v == 31337, "bcast gave %d", v);
    int one = 1, sum = 0;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, inter);
    EXPECT(sum == rsize, "allreduce gave %d, want %d", sum, rsize);
    MPI_Comm merged;
    int mrank, msize;
    MPI_Intercomm_merge(inter, !parent_side, &merged);
    MPI_Comm_rank(merged, &mrank);
    MPI_Comm_size(merged, &msize);
    EXPECT(msize == lsize + rsize && mrank == (parent_side ? rank : rsize + rank), "merged rank %d of %d", mrank,
           msize);
    MPI_Barrier(merged);
    MPI_Comm_free(&merged);
}

static int child(int argc, char **argv, MPI_Comm parent)
{
    who = "child";
    int size, flag, *univ;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &univ, &flag);
    EXPECT(flag && *univ >= size, "universe size %d", flag ? *univ : -1);
    const char *mode = argc > 1 ? argv[1] : "argv-null";
    if (strcmp(mode, "child") == 0) {
        EXPECT(size == 3, "spawned world of %d", size);
        talk(parent, 0);
    } else if (strcmp(mode, "multi") == 0 || strcmp(mode, "argv-null") == 0) {
        /* spawn_multiple: 2 "multi" then 1 with MPI_ARGV_NULL, one world */
        EXPECT(size == 3, "spawn_multiple world of %d", size);
        int *appnum;
        MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag);
        EXPECT(flag && *appnum == (rank < 2 ? 0 : 1), "MPI_APPNUM %d", flag ? *appnum : -1);
        EXPECT(strcmp(mode, "multi") == 0 ? rank < 2 && argc == 3 && strcmp(argv[2], "x y") == 0
                                          : rank == 2 && argc == 1,
               "rank %d got mode %s with %d arguments", rank, mode, argc);
        int r = rank;
        MPI_Send(&r, 1, MPI_INT, 0, 2, parent);
    } else if (strcmp(mode, "wdir") == 0) {
        char cwd[PATH_MAX];
        EXPECT(getcwd(cwd, sizeof(cwd)) && strcmp(cwd, argv[2]) == 0, "working directory %s, want %s", cwd,
               argv[2]);
        int ok = failures == 0;
        MPI_Send(&ok, 1, MPI_INT, 0, 3, parent);
    }
    MPI_Comm_disconnect(&parent);
    MPI_Comm_get_parent(&parent);
    EXPECT(parent == MPI_COMM_NULL, "get_parent after disconnect");
    MPI_Finalize();
    return failures != 0;
}

static void spawn_three(const char *self)
{
    MPI_Comm inter;
    int errs[3] = {-1, -1, -1};
    char *args[] = {"child", NULL};
    int rc = MPI_Comm_spawn(self, args, 3, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, errs);
    EXPECT(rc == MPI_SUCCESS, "spawn returned class %d", cls(rc));
    if (rc != MPI_SUCCESS)
        return;
    if (rank == 0)
        EXPECT(errs[0] == MPI_SUCCESS && errs[1] == MPI_SUCCESS && errs[2] == MPI_SUCCESS, "errcodes %d %d %d",
               errs[0], errs[1], errs[2]);
    int rsize;
    MPI_Comm_remote_size(inter, &rsize);
    EXPECT(rsize == 3, "remote size %d", rsize);
    talk(inter, 1);
    MPI_Comm_disconnect(&inter);
}

static void spawn_two_commands(const char *self)
{
    char *cmds[2] = {(char *)self, (char *)self};
    char *multi_args[] = {"multi", "x y", NULL};
    char **argvs[2] = {multi_args, MPI_ARGV_NULL};
    int maxprocs[2] = {2, 1};
    MPI_Info infos[2] = {MPI_INFO_NULL, MPI_INFO_NULL};
    MPI_Comm inter;
    int errs[3];
    int rc = MPI_Comm_spawn_multiple(2, cmds, argvs, maxprocs, infos, 0, MPI_COMM_WORLD, &inter, errs);
    EXPECT(rc == MPI_SUCCESS, "spawn_multiple returned class %d", cls(rc));
    if (rc != MPI_SUCCESS)
        return;
    if (rank == 0) {
        for (int i = 0; i < 3; i++) {
            int r = -1;
            MPI_Recv(&r, 1, MPI_INT, i, 2, inter, MPI_STATUS_IGNORE);
            EXPECT(r == i, "child %d says %d", i, r);
        }
    }
    MPI_Comm_disconnect(&inter);
}

static void spawn_in_wdir(const char *self)
{
    char dir[] = "/tmp/bmpi-spawn-wdir.XXXXXX";
    int made = 0;
    if (rank == 0)
        made = mkdtemp(dir) != NULL;
    MPI_Bcast(dir, sizeof(dir), MPI_CHAR, 0, MPI_COMM_WORLD);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "wdir", dir);
    MPI_Info_set(info, "host", "localhost");
    /* the command by its name alone, found through the path key */
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s", self);
    char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : self;
    if (slash) {
        *slash = '\0';
        MPI_Info_set(info, "path", path);
    }
    char *args[] = {"wdir", dir, NULL};
    MPI_Comm inter;
    int rc = MPI_Comm_spawn(name, args, 1, info, 0, MPI_COMM_WORLD, &inter, MPI_ERRCODES_IGNORE);
    MPI_Info_free(&info);
    EXPECT(rc == MPI_SUCCESS, "spawn with wdir returned class %d", cls(rc));
    if (rc == MPI_SUCCESS) {
        if (rank == 0) {
            int ok = 0;
            MPI_Recv(&ok, 1, MPI_INT, 0, 3, inter, MPI_STATUS_IGNORE);
            EXPECT(ok, "the child found another working directory");
        }
        MPI_Comm_disconnect(&inter);
    }
    if (made)
        rmdir(dir);
}

/* keep_job: skip the missing command, which ends the whole job under
 * launchers that treat a failed launch as the job's failure (Open MPI's
 * mpirun). */
static void argument_errors(const char *self, int keep_job)
{
    MPI_Comm inter;
    int size, errs[2] = {0, 0};
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rc = MPI_Comm_spawn(self, MPI_ARGV_NULL, 0, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, errs);
    EXPECT(cls(rc) == MPI_ERR_ARG, "maxprocs 0 gave class %d", cls(rc));
    rc = MPI_Comm_spawn(self, MPI_ARGV_NULL, -1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, errs);
    EXPECT(cls(rc) == MPI_ERR_ARG, "maxprocs -1 gave class %d", cls(rc));
    MPI_Info bad = (MPI_Info)0x7777;
    rc = MPI_Comm_spawn(self, MPI_ARGV_NULL, 1, bad, 0, MPI_COMM_WORLD, &inter, errs);
    EXPECT(cls(rc) == MPI_ERR_INFO, "a bad info gave class %d", cls(rc));
    rc = MPI_Comm_spawn(NULL, MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, errs);
    EXPECT(cls(rc) == MPI_ERR_ARG, "a NULL command gave class %d", cls(rc));
    rc = MPI_Comm_spawn(self, MPI_ARGV_NULL, 1, MPI_INFO_NULL, size, MPI_COMM_WORLD, &inter, errs);
    EXPECT(cls(rc) == MPI_ERR_ROOT, "root out of range gave class %d", cls(rc));
    if (keep_job)
        return;
    /* a command that does not exist: MPI_ERR_SPAWN, every errcode too */
    rc = MPI_Comm_spawn("/nonexistent/bmpi-no-such-program", MPI_ARGV_NULL, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD,
                        &inter, errs);
    EXPECT(cls(rc) == MPI_ERR_SPAWN && inter == MPI_COMM_NULL, "missing command gave class %d", cls(rc));
    if (rank == 0)
        EXPECT(errs[0] == MPI_ERR_SPAWN && errs[1] == MPI_ERR_SPAWN, "errcodes %d %d", errs[0], errs[1]);
}

/* Under a launcher that cannot spawn (Slurm's srun): MPI_ERR_SPAWN on
 * every rank, with a message that names the launcher, and no hang. */
static int refused(const char *self)
{
    MPI_Comm inter;
    int errs[2] = {0, 0}, len = 0;
    char msg[MPI_MAX_ERROR_STRING] = "";
    int rc = MPI_Comm_spawn(self, MPI_ARGV_NULL, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, errs);
    MPI_Error_string(rc, msg, &len);
    printf("rank %d: %s\n", rank, msg);
    EXPECT(cls(rc) == MPI_ERR_SPAWN && inter == MPI_COMM_NULL, "a refused spawn gave class %d", cls(rc));
    EXPECT(strstr(msg, "PMIx_Spawn returned") != NULL, "the message does not say what PMIx_Spawn said");
    if (rank == 0)
        EXPECT(errs[0] == MPI_ERR_SPAWN && errs[1] == MPI_ERR_SPAWN, "errcodes %d %d", errs[0], errs[1]);
    int total;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf(total ? "spawn refused: %d failures\n" : "spawn refused: ok\n", total);
    MPI_Finalize();
    return total != 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL)
        return child(argc, argv, parent);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    /* what to spawn: this program as the build runs it (libtool's wrapper
     * in the build tree), given by spawn.sh */
    if (argc < 3 || argc > 4 || strcmp(argv[1], "parent") != 0) {
        fprintf(stderr, "usage: spawn parent PATH-OF-THIS-PROGRAM [keep-job|refused]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *self = argv[2];
    if (argc == 4 && strcmp(argv[3], "refused") == 0)
        return refused(self);
    spawn_three(self);
    spawn_two_commands(self);
    spawn_in_wdir(self);
    argument_errors(self, argc == 4 && strcmp(argv[3], "keep-job") == 0);
    int total;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf(total ? "spawn: %d failures\n" : "spawn: ok\n", total);
    MPI_Finalize();
    return total != 0;
}
