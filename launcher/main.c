/* bmpirun: start N ranks of a program as their PMIx server, on this node
 * or across hosts (then with one `bmpirun --daemon` on each other host).
 *
 * The job's flow, and the files that do each step:
 *   options.c      command line -> struct bmpi_options (nothing started yet)
 *   job.c          job struct, signals, tmp directory    (bmpi_job_init)
 *   pmix_server.c  PMIx server, namespace, clients       (bmpi_pmix_start)
 *   remote.c       across hosts: the daemons, the tree   (bmpi_remote_start)
 *   spawn.c        fork/exec every rank, no waiting      (bmpi_spawn_all)
 *   job.c + iof.c  event loop: exits, aborts, signals,
 *                  output, stdin, timeouts                (bmpi_job_run)
 *   remote.c       the daemons told to finish, waited for (bmpi_remote_finish)
 *   job.c          teardown and cleanup, in reverse order (bmpi_job_cleanup)
 *   pmix_server.c  the PMIx server stopped, within a limit (bmpi_pmix_stop)
 * The exit status is the first failure's (see bmpirun --help). */
#include "config.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launcher/daemon.h"
#include "launcher/job.h"
#include "launcher/options.h"
#include "launcher/pmix_server.h"
#include "launcher/remote.h"
#include "launcher/spawn.h"

/* Pipes created later must not land on fd 0-2, or a rank's dup2 would
 * silently keep them close-on-exec. */
static void ensure_std_fds(void)
{
    for (int fd = 0; fd <= 2; fd++)
        if (fcntl(fd, F_GETFD) == -1)
            (void)open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
}

/* Die of the signal bmpirun was stopped with, as a shell expects of a
 * program interrupted by Ctrl-C. */
static void reraise(int sig)
{
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    sigset_t set;
    sigaction(sig, &dfl, NULL);
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
}

int main(int argc, char **argv)
{
    struct bmpi_job job = {0};
    int rc;

    ensure_std_fds();
    if (argc > 1 && strcmp(argv[1], "--daemon") == 0)
        return bmpi_daemon_main(argc, argv);
    rc = bmpi_options_parse(&job.opt, argc, argv);
    if (rc != BMPI_OPT_RUN) {
        bmpi_options_free(&job.opt);
        return rc;
    }
    if (bmpi_pmix_check_version() != 0) {
        bmpi_options_free(&job.opt);
        return BMPI_EXIT_LAUNCH;
    }

    /* Across hosts the head's own ranks start once every daemon has
     * joined (remote.c). */
    if (bmpi_job_init(&job) != 0 || bmpi_pmix_start(&job) != 0 ||
        (job.opt.multi_host ? bmpi_remote_start(&job) : bmpi_spawn_all(&job)) != 0) {
        if (job.nrunning > 0)
            bmpi_say("terminating the %d rank(s) already started", job.nrunning);
        rc = BMPI_EXIT_LAUNCH;
    } else {
        rc = bmpi_job_run(&job);
    }

    bmpi_remote_finish(&job);
    bmpi_job_cleanup(&job);
    int sig = job.term_signal;
    bool stopped = bmpi_pmix_stop(&job);
    bmpi_job_sweep(&job);
    if (!stopped) {
        /* The library's thread still runs: no exit handlers, no frees. */
        fflush(NULL);
        if (sig != 0)
            reraise(sig);
        _exit(rc);
    }
    bmpi_remote_free(&job);
    bmpi_job_free(&job);
    bmpi_options_free(&job.opt);
    if (sig != 0)
        reraise(sig);
    return rc;
}
