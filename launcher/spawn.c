/* Starting the ranks. All ranks are forked first, one after the other with
 * no waiting in between; the event loop handles whatever they do next.
 *
 * Each rank gets: its own process group (so that a kill reaches whatever it
 * starts in turn, and so that the terminal's Ctrl-C reaches only bmpirun,
 * which forwards it), a SIGKILL when bmpirun dies (PR_SET_PDEATHSIG), pipes
 * for stdout and stderr, rank 0 a pipe for stdin and the others /dev/null,
 * bmpirun's environment without a stale outer PMIx's variables, plus -x
 * variables, plus what PMIx_server_setup_fork adds, and optionally a core.
 *
 * Between fork and exec the child of this multi-threaded process only makes
 * async-signal-safe calls: everything it needs is prepared before fork. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "launcher/job.h"
#include "launcher/mpich_abi.h"
#include "launcher/pmix_server.h"
#include "launcher/spawn.h"

extern char **environ;

/* Cores this process may use, in order: each a set of its hardware threads. */
struct core_list {
    int n;
    cpu_set_t *sets;
    int ncpus; /* hardware threads in all sets */
};

/* What one child needs between fork and exec. */
struct child_plan {
    int in, out, err;
    const char *path;
    char *const *argv;
    char *const *env;
    const cpu_set_t *cpus;
    const char *wdir; /* NULL: bmpirun's */
    const struct bmpi_job *job;
    pid_t parent;
    char prefix[64]; /* "bmpirun: rank N: " */
};

/* ---- binding ------------------------------------------------------------ */

/* Parse a sysfs cpu list ("0-3,8,10-11") into set. */
static void parse_cpulist(const char *s, cpu_set_t *set)
{
    while (*s) {
        char *end;
        long a = strtol(s, &end, 10), b;
        if (end == s)
            return;
        b = a;
        if (*end == '-') {
            s = end + 1;
            b = strtol(s, &end, 10);
            if (end == s)
                return;
        }
        for (long c = a; c <= b && c < CPU_SETSIZE; c++)
            if (c >= 0)
                CPU_SET((int)c, set);
        s = end;
        while (*s == ',' || *s == '\n' || *s == ' ')
            s++;
    }
}

static int cores_detect(struct core_list *cl)
{
    cpu_set_t allowed, seen;
    if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) {
        bmpi_say("binding ranks to cores: cannot read bmpirun's own CPU affinity: sched_getaffinity: %m");
        return -1;
    }
    cl->n = 0;
    cl->sets = calloc((size_t)CPU_COUNT(&allowed), sizeof(cpu_set_t));
    if (cl->sets == NULL) {
        bmpi_say("binding ranks to cores: out of memory");
        return -1;
    }
    cl->ncpus = CPU_COUNT(&allowed);
    CPU_ZERO(&seen);
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (!CPU_ISSET(cpu, &allowed) || CPU_ISSET(cpu, &seen))
            continue;
        cpu_set_t core;
        CPU_ZERO(&core);
        char path[128], buf[256];
        snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", cpu);
        FILE *f = fopen(path, "r");
        if (f != NULL) {
            if (fgets(buf, sizeof(buf), f) != NULL)
                parse_cpulist(buf, &core);
            fclose(f);
        }
        CPU_AND(&core, &core, &allowed);
        CPU_SET(cpu, &core); /* no topology in sysfs: one thread, one core */
        CPU_OR(&seen, &seen, &core);
        cl->sets[cl->n++] = core;
    }
    return 0;
}

/* Whether the ranks go to cores. Left to the scheduler, more ranks than
 * CPUs do not stay spread evenly: 4 ranks on 2 cores ran 3 on one core and
 * 1 on the other for whole benchmark runs at times, and a collective in
 * which every rank waits for all others, with waiting ranks yielding,
 * then took about twice as long as with the ranks bound round robin
 * (launcher/README.md). */
static bool binds_to_cores(const struct bmpi_job *job, const struct core_list *cl)
{
    switch (job->opt.bind) {
    case BMPI_BIND_CORE:
        return true;
    case BMPI_BIND_AUTO:
        return job->nlocal > cl->ncpus;
    case BMPI_BIND_NONE:
        break;
    }
    return false;
}

/* "0-3,8" of set. */
static void format_cpulist(const cpu_set_t *set, char *buf, size_t size)
{
    size_t off = 0;
    buf[0] = '\0';
    for (int c = 0; c < CPU_SETSIZE && off + 24 < size; c++) {
        if (!CPU_ISSET(c, set))
            continue;
        int last = c;
        while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, set))
            last++;
        off += (size_t)snprintf(buf + off, size - off, last > c ? "%s%d-%d" : "%s%d", off ? "," : "", c, last);
        c = last;
    }
}

/* --report-bindings: the CPUs the rank runs on, which are the core it was
 * bound to or else bmpirun's own affinity, which it inherits. */
static void report_binding(const struct bmpi_rank *r, const cpu_set_t *cpus)
{
    cpu_set_t own;
    if (cpus == NULL) {
        if (sched_getaffinity(0, sizeof(own), &own) != 0) {
            bmpi_say("rank %d (pid %d): cannot read the CPU affinity: %m", r->rank, (int)r->pid);
            return;
        }
        cpus = &own;
    }
    char list[1024];
    format_cpulist(cpus, list, sizeof(list));
    bmpi_say("rank %d (pid %d) on %s may run on CPUs %s (%s)", r->rank, (int)r->pid, r->job->hostname, list,
             cpus == &own ? "not bound" : "bound to one core");
}

/* ---- environment -------------------------------------------------------- */

static bool env_name_eq(const char *a, const char *b)
{
    while (*a && *a != '=' && *a == *b)
        a++, b++;
    return (*a == '=' || *a == '\0') && (*b == '=' || *b == '\0');
}

/* bmpirun's environment plus -x, without variables an outer PMIx server
 * (srun, another mpirun) left, which would point the ranks elsewhere.
 * PMIX_MCA_* are the user's tuning and stay. The strings are not copied.
 * Room is left for one more (with_mpich_abi). */
static const char **base_env(const struct bmpi_job *job, size_t *count)
{
    size_t n = 0;
    while (environ[n])
        n++;
    const char **env = malloc((n + (size_t)job->opt.nenv + 2) * sizeof(*env));
    if (env == NULL)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const char *e = environ[i];
        if (strncmp(e, "PMIX_", 5) == 0 && strncmp(e, "PMIX_MCA_", 9) != 0)
            continue;
        bool overridden = false;
        for (int x = 0; x < job->opt.nenv && !overridden; x++)
            overridden = env_name_eq(e, job->opt.env[x]);
        if (!overridden)
            env[k++] = e;
    }
    for (int x = 0; x < job->opt.nenv; x++)
        env[k++] = job->opt.env[x];
    env[k] = NULL;
    *count = k;
    return env;
}

/* ld_path ("LD_LIBRARY_PATH=...") in place of the variable in env, which
 * has room for one more entry. */
static void with_mpich_abi(const char **env, size_t *count, const char *ld_path)
{
    size_t k = 0;
    for (size_t i = 0; i < *count; i++)
        if (!env_name_eq(env[i], ld_path))
            env[k++] = env[i];
    env[k++] = ld_path;
    env[k] = NULL;
    *count = k;
}

static void env_free(char **env)
{
    if (env == NULL)
        return;
    for (char **e = env; *e; e++)
        free(*e);
    free(env);
}

/* A malloc'd copy with malloc'd strings: PMIx_server_setup_fork reallocs
 * the array and may replace strings in it. */
static char **env_copy(const char **base, size_t count)
{
    char **env = calloc(count + 1, sizeof(*env));
    if (env == NULL)
        return NULL;
    for (size_t i = 0; i < count; i++) {
        if ((env[i] = strdup(base[i])) == NULL) {
            env_free(env);
            return NULL;
        }
    }
    return env;
}

/* ---- the child ---------------------------------------------------------- */

static size_t cat(char *buf, size_t off, size_t cap, const char *s)
{
    while (*s && off + 1 < cap)
        buf[off++] = *s++;
    return off;
}

static void child_fail(const struct child_plan *cp, const char *what, int err, int code)
    __attribute__((noreturn));
static void child_fail(const struct child_plan *cp, const char *what, int err, int code)
{
    char msg[1024];
    size_t o = 0;
    o = cat(msg, o, sizeof(msg), cp->prefix);
    o = cat(msg, o, sizeof(msg), what);
    o = cat(msg, o, sizeof(msg), ": ");
    const char *desc = strerrordesc_np(err);
    o = cat(msg, o, sizeof(msg), desc ? desc : "unknown error");
    o = cat(msg, o, sizeof(msg), "\n");
    if (write(STDERR_FILENO, msg, o) < 0) {
        /* nowhere left to say it */
    }
    _exit(code);
}

static void child_exec(const struct child_plan *cp) __attribute__((noreturn));
static void child_exec(const struct child_plan *cp)
{
    const struct bmpi_job *job = cp->job;

    setpgid(0, 0);
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) == 0 && getppid() != cp->parent)
        _exit(BMPI_EXIT_LAUNCH); /* bmpirun is already gone */

    if (dup2(cp->in, STDIN_FILENO) < 0 || dup2(cp->out, STDOUT_FILENO) < 0 ||
        dup2(cp->err, STDERR_FILENO) < 0)
        _exit(BMPI_EXIT_LAUNCH);
    /* Other ranks' pipe ends and the PMIx server's sockets stay here. */
    close_range(3, ~0U, 0);

    sigaction(SIGPIPE, &job->sigpipe_orig, NULL);
    sigaction(SIGTTIN, &job->sigttin_orig, NULL);
    sigprocmask(SIG_SETMASK, &job->sigmask_orig, NULL);
    setrlimit(RLIMIT_NOFILE, &job->nofile_orig);

    if (cp->cpus != NULL && sched_setaffinity(0, sizeof(*cp->cpus), cp->cpus) != 0)
        child_fail(cp, "binding to a core: sched_setaffinity", errno, BMPI_EXIT_LAUNCH);
    if (cp->wdir != NULL && chdir(cp->wdir) != 0)
        child_fail(cp, "changing to the --wdir directory", errno, BMPI_EXIT_LAUNCH);

    execve(cp->path, cp->argv, cp->env);
    int err = errno;
    char what[PATH_MAX + 32];
    size_t o = cat(what, 0, sizeof(what), "cannot execute '");
    o = cat(what, o, sizeof(what), cp->path);
    o = cat(what, o, sizeof(what), "'");
    what[o] = '\0';
    child_fail(cp, what, err, err == ENOENT ? 127 : 126);
}

/* ---- the parent --------------------------------------------------------- */

static int pipe_pair(int fds[2], bool read_nonblock)
{
    if (pipe2(fds, O_CLOEXEC) != 0)
        return -1;
    if (read_nonblock)
        fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);
    else
        fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK);
    return 0;
}

static int spawn_one(struct bmpi_job *job, struct bmpi_rank *r, const struct bmpi_app *app, char **env,
                     const cpu_set_t *cpus, int devnull)
{
    int out[2] = {-1, -1}, err[2] = {-1, -1}, in[2] = {-1, -1};
    bool want_stdin = r->rank == 0 && r->ns == 0;

    if (pipe_pair(out, true) != 0 || pipe_pair(err, true) != 0 || (want_stdin && pipe_pair(in, false) != 0)) {
        bmpi_say("cannot start rank %d: pipe: %m (too many open files? see ulimit -n)", r->rank);
        goto fail;
    }

    struct child_plan cp = {
        .in = want_stdin ? in[0] : devnull,
        .out = out[1],
        .err = err[1],
        .path = app->path,
        .argv = app->argv,
        .env = env,
        .cpus = cpus,
        .wdir = app->wdir,
        .job = job,
        .parent = getpid(),
    };
    if (r->ns == 0)
        snprintf(cp.prefix, sizeof(cp.prefix), "bmpirun: rank %d: ", r->rank);
    else
        snprintf(cp.prefix, sizeof(cp.prefix), "bmpirun: rank %d of %.24s: ", r->rank, app->nspace);

    pid_t pid = fork();
    if (pid < 0) {
        bmpi_say("cannot start rank %d: fork: %m (too many processes? see ulimit -u)", r->rank);
        goto fail;
    }
    if (pid == 0)
        child_exec(&cp);

    /* Also from this side, so that the group exists before any kill. */
    setpgid(pid, pid);
    r->pid = pid;
    r->state = BMPI_RANK_RUNNING;
    job->nrunning++;

    close(out[1]);
    close(err[1]);
    r->out[BMPI_STDOUT].fd = out[0];
    r->out[BMPI_STDERR].fd = err[0];
    if (want_stdin) {
        close(in[0]);
        bmpi_iof_stdin_start(&job->iof, in[1]);
    }
    return 0;

fail:
    for (int i = 0; i < 2; i++) {
        if (out[i] >= 0)
            close(out[i]);
        if (err[i] >= 0)
            close(err[i]);
        if (in[i] >= 0)
            close(in[i]);
    }
    return -1;
}

int bmpi_spawn_all(struct bmpi_job *job)
{
    int rc = -1;
    struct core_list cores = {0};
    size_t nbase = 0;
    const char **base = NULL;
    char *ld_path = NULL;
    int devnull = -1;

    if (job->opt.bind != BMPI_BIND_NONE && cores_detect(&cores) != 0)
        goto out;
    if (!binds_to_cores(job, &cores))
        cores.n = 0;
    if ((base = base_env(job, &nbase)) == NULL) {
        bmpi_say("out of memory while building the ranks' environment");
        goto out;
    }
    if (!job->opt.no_mpich_abi && (ld_path = bmpi_mpich_abi_ld_path(base)) != NULL) {
        with_mpich_abi(base, &nbase, ld_path);
        bmpi_mpich_abi_check_program(job->opt.program);
    }
    if ((devnull = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) {
        bmpi_say("cannot open /dev/null for the ranks' stdin: %m");
        goto out;
    }

    const struct bmpi_app app = {.path = job->opt.program, .argv = job->opt.argv, .wdir = job->opt.wdir,
                                 .nspace = job->nspace};
    for (int i = 0; i < job->nranks; i++) {
        struct bmpi_rank *r = &job->ranks[i];
        if (!bmpi_rank_is_local(r))
            continue;
        char **env = env_copy(base, nbase);
        if (env == NULL) {
            bmpi_say("out of memory while building the environment of rank %d", r->rank);
            goto out;
        }
        if (bmpi_pmix_setup_fork(job->nspace, r->rank, &env) != 0) {
            env_free(env);
            goto out;
        }
        const cpu_set_t *cpus = cores.n > 0 ? &cores.sets[r->local_rank % cores.n] : NULL;
        int s = spawn_one(job, r, &app, env, cpus, devnull);
        env_free(env);
        if (s != 0)
            goto out;
        if (job->opt.report_bindings)
            report_binding(r, cpus);
    }
    rc = 0;

out:
    if (devnull >= 0)
        close(devnull);
    free(base);
    free(ld_path);
    free(cores.sets);
    return rc;
}

/* base (count entries, room for one more) with app's variables in place
 * of those of the same name: a malloc'd copy for one process. */
static char **app_env(const char **base, size_t count, char *const *extra)
{
    size_t nextra = 0;
    while (extra != NULL && extra[nextra] != NULL)
        nextra++;
    const char **all = malloc((count + nextra + 1) * sizeof(*all));
    if (all == NULL)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < count; i++) {
        bool replaced = false;
        for (size_t x = 0; x < nextra && !replaced; x++)
            replaced = env_name_eq(base[i], extra[x]);
        if (!replaced)
            all[k++] = base[i];
    }
    for (size_t x = 0; x < nextra; x++)
        all[k++] = extra[x];
    char **env = env_copy(all, k);
    free(all);
    return env;
}

int bmpi_spawn_ranks(struct bmpi_job *job, int first, int n, const struct bmpi_app *app)
{
    int rc = -1, devnull = -1;
    size_t nbase = 0;
    char *ld_path = NULL;
    const char **base = base_env(job, &nbase);
    if (base == NULL) {
        bmpi_say("out of memory while building the environment of spawned processes");
        goto out;
    }
    if (!job->opt.no_mpich_abi && (ld_path = bmpi_mpich_abi_ld_path(base)) != NULL)
        with_mpich_abi(base, &nbase, ld_path);
    if ((devnull = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) {
        bmpi_say("cannot open /dev/null for the stdin of spawned processes: %m");
        goto out;
    }
    for (int i = first; i < first + n; i++) {
        struct bmpi_rank *r = &job->ranks[i];
        if (!bmpi_rank_is_local(r))
            continue; /* its host's daemon starts it */
        char **env = app_env(base, nbase, app->env);
        if (env == NULL) {
            bmpi_say("out of memory while building the environment of a spawned process");
            goto out;
        }
        if (bmpi_pmix_setup_fork(app->nspace, r->rank, &env) != 0) {
            env_free(env);
            goto out;
        }
        int s = spawn_one(job, r, app, env, NULL, devnull);
        env_free(env);
        if (s != 0)
            goto out;
    }
    rc = 0;
out:
    if (devnull >= 0)
        close(devnull);
    free(base);
    free(ld_path);
    return rc;
}
