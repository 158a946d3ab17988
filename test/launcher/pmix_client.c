/* A PMIx client for bmpirun's tests: it uses the PMIx calls the bmpi rank
 * runtime uses, checks what it gets, and does on request what a misbehaving
 * rank does.
 *
 * usage: pmix_client [noinit] [action ...]
 *   By default: PMIx_Init; print "rank R size S local_rank L local_size N
 *   nodeid I host H peers P pid X"; Put a key, Commit, Fence with
 *   PMIX_COLLECT_DATA, Get every peer's key and node id and check them;
 *   print "rank R exchange ok"; then the actions in order; PMIx_Finalize.
 *   noinit        do not use PMIx at all (a plain program)
 *   noexchange    skip the Put/Fence/Get
 *   multinode     the job may span nodes (test/netns/bmpirun.sh): the local
 *                 rank and size need only fit the job, and peers' node ids
 *                 are printed ("nodes I,J,... of rank R", "?" for one
 *                 PMIx does not give) instead of checked against this
 *                 rank's; the caller checks them against the hosts
 * actions; "@R" restricts one to rank R (needs PMIx):
 *   exit=C[@R]    PMIx_Finalize, then exit with status C
 *   segv[@R]      crash with SIGSEGV
 *   sleep=S[@R]   sleep S seconds (fractions allowed)
 *   abort=C[@R]   PMIx_Abort(C, "test abort from rank R")
 *   lines=N       print N lines "rank R line I <payload>" to stdout, fast
 *   errlines=N    the same to stderr
 *   partial       print "partial-R" with no newline
 *   stdin         print every stdin line as "stdin R: line", then "stdin R eof N"
 *   env=VAR       print "env R VAR=value" or "env R VAR unset"
 *   shm           create /dev/shm/bmpi.<nspace>.test.<rank>, as the shm transport would
 *   forksleep=S   fork a child that sleeps S seconds (a grandchild of bmpirun)
 *   ignoreterm    ignore SIGTERM from now on (bmpirun must escalate to SIGKILL)
 *   nofinalize    end without PMIx_Finalize
 * anything else (e.g. a marker for pgrep) is ignored. Exit 3 on a failed check. */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pmix.h>

static pmix_proc_t me;
static bool have_pmix;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "pmix_client rank %d FAIL: ", have_pmix ? (int)me.rank : -1);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(3);
}

static uint64_t number(const pmix_value_t *v, const char *key)
{
    switch (v->type) {
    case PMIX_UINT8: return v->data.uint8;
    case PMIX_UINT16: return v->data.uint16;
    case PMIX_UINT32: return v->data.uint32;
    case PMIX_UINT64: return v->data.uint64;
    case PMIX_INT: return (uint64_t)v->data.integer;
    case PMIX_PROC_RANK: return v->data.rank;
    default: fail("%s has type %d, not a number", key, (int)v->type);
    }
}

static pmix_value_t *get(const pmix_proc_t *proc, const char *key)
{
    pmix_value_t *v = NULL;
    pmix_status_t rc = PMIx_Get(proc, key, NULL, 0, &v);
    if (rc != PMIX_SUCCESS || v == NULL)
        fail("PMIx_Get(%s, rank %d) failed: %s", key, (int)proc->rank, PMIx_Error_string(rc));
    return v;
}

static uint64_t get_number(const pmix_proc_t *proc, const char *key)
{
    pmix_value_t *v = get(proc, key);
    uint64_t n = number(v, key);
    PMIX_VALUE_RELEASE(v);
    return n;
}

static char *get_string(const pmix_proc_t *proc, const char *key)
{
    pmix_value_t *v = get(proc, key);
    if (v->type != PMIX_STRING)
        fail("%s has type %d, not a string", key, (int)v->type);
    char *s = strdup(v->data.string);
    PMIX_VALUE_RELEASE(v);
    return s;
}

/* A peer's node id in the list "nodes I,J,...", or "?" when PMIx has none. */
static void print_node_id(const pmix_proc_t *peer)
{
    pmix_value_t *v = NULL;
    printf("%s", peer->rank == 0 ? "nodes " : ",");
    if (PMIx_Get(peer, PMIX_NODEID, NULL, 0, &v) != PMIX_SUCCESS || v == NULL) {
        printf("?");
        return;
    }
    printf("%llu", (unsigned long long)number(v, PMIX_NODEID));
    PMIX_VALUE_RELEASE(v);
}

static void exchange(uint32_t size, uint32_t nodeid, bool multinode)
{
    char key[] = "bmpi.test.addr";
    char value[300];
    snprintf(value, sizeof(value), "address-of-rank-%d-%s", (int)me.rank, me.nspace);
    pmix_value_t val;
    PMIX_VALUE_LOAD(&val, value, PMIX_STRING);
    pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, key, &val);
    PMIX_VALUE_DESTRUCT(&val);
    if (rc != PMIX_SUCCESS)
        fail("PMIx_Put: %s", PMIx_Error_string(rc));
    if ((rc = PMIx_Commit()) != PMIX_SUCCESS)
        fail("PMIx_Commit: %s", PMIx_Error_string(rc));

    pmix_info_t info;
    bool yes = true;
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    pmix_proc_t all;
    PMIX_LOAD_PROCID(&all, me.nspace, PMIX_RANK_WILDCARD);
    if ((rc = PMIx_Fence(&all, 1, &info, 1)) != PMIX_SUCCESS)
        fail("PMIx_Fence: %s", PMIx_Error_string(rc));
    PMIX_INFO_DESTRUCT(&info);

    for (uint32_t r = 0; r < size; r++) {
        pmix_proc_t peer;
        PMIX_LOAD_PROCID(&peer, me.nspace, r);
        char *got = get_string(&peer, key);
        char want[300];
        snprintf(want, sizeof(want), "address-of-rank-%d-%s", (int)r, me.nspace);
        if (strcmp(got, want) != 0)
            fail("rank %u's key is '%s', expected '%s'", r, got, want);
        free(got);
        if (multinode) {
            print_node_id(&peer);
            continue;
        }
        uint64_t nid = get_number(&peer, PMIX_NODEID);
        if (nid != nodeid)
            fail("rank %u's node id is %llu, expected %u (same node)", r, (unsigned long long)nid, nodeid);
    }
    if (multinode)
        printf(" of rank %d\n", (int)me.rank);
    printf("rank %d exchange ok\n", (int)me.rank);
    fflush(stdout);
}

/* "name=value@rank" -> does it apply to this rank; *val gets value or NULL */
static bool action(const char *arg, const char *name, const char **val)
{
    size_t n = strlen(name);
    if (strncmp(arg, name, n) != 0 || (arg[n] != '\0' && arg[n] != '=' && arg[n] != '@'))
        return false;
    *val = arg[n] == '=' ? arg + n + 1 : NULL;
    const char *at = strchr(arg + n, '@');
    if (at != NULL && (!have_pmix || atoi(at + 1) != (int)me.rank)) {
        *val = NULL;
        return false; /* someone else's */
    }
    return true;
}

static void sleep_s(double s)
{
    struct timespec ts = {.tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

static void finalize(void)
{
    if (have_pmix) {
        pmix_status_t rc = PMIx_Finalize(NULL, 0);
        if (rc != PMIX_SUCCESS)
            fail("PMIx_Finalize: %s", PMIx_Error_string(rc));
        have_pmix = false;
    }
}

int main(int argc, char **argv)
{
    bool init = !(argc > 1 && strcmp(argv[1], "noinit") == 0);
    bool do_exchange = true, do_finalize = true, multinode = false;
    int rank = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "noexchange") == 0)
            do_exchange = false;
        else if (strcmp(argv[i], "multinode") == 0)
            multinode = true;
    }

    if (init) {
        pmix_status_t rc = PMIx_Init(&me, NULL, 0);
        if (rc != PMIX_SUCCESS)
            fail("PMIx_Init: %s", PMIx_Error_string(rc));
        have_pmix = true;
        rank = (int)me.rank;
        pmix_proc_t wild;
        PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
        uint32_t size = (uint32_t)get_number(&wild, PMIX_JOB_SIZE);
        uint32_t univ = (uint32_t)get_number(&wild, PMIX_UNIV_SIZE);
        uint32_t lrank = (uint32_t)get_number(&me, PMIX_LOCAL_RANK);
        uint32_t lsize = (uint32_t)get_number(&wild, PMIX_LOCAL_SIZE);
        uint32_t nodeid = (uint32_t)get_number(&me, PMIX_NODEID);
        uint32_t wnodeid = (uint32_t)get_number(&wild, PMIX_NODEID);
        uint32_t appnum = (uint32_t)get_number(&me, PMIX_APPNUM);
        char *peers = get_string(&wild, PMIX_LOCAL_PEERS);
        char *host = get_string(&wild, PMIX_HOSTNAME);
        char *myhost = get_string(&me, PMIX_HOSTNAME);
        bool local_ok = multinode ? lrank < lsize && lsize <= size : lsize == size && lrank == me.rank;
        if (me.rank >= size || univ != size || !local_ok || nodeid != wnodeid ||
            appnum != 0 || strcmp(host, myhost) != 0)
            fail("inconsistent job data: rank %u size %u univ %u local_rank %u local_size %u nodeid %u/%u "
                 "appnum %u host %s/%s",
                 me.rank, size, univ, lrank, lsize, nodeid, wnodeid, appnum, host, myhost);
        printf("rank %d size %u local_rank %u local_size %u nodeid %u host %s peers %s pid %d\n", rank,
               size, lrank, lsize, nodeid, host, peers, (int)getpid());
        fflush(stdout);
        free(peers);
        free(host);
        free(myhost);
        if (do_exchange)
            exchange(size, nodeid, multinode);
    }

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        if (action(a, "exit", &v)) {
            fflush(stdout);
            finalize();
            exit(v ? atoi(v) : 0);
        } else if (action(a, "segv", &v)) {
            fflush(stdout);
            raise(SIGSEGV);
        } else if (action(a, "sleep", &v)) {
            sleep_s(v ? atof(v) : 1);
        } else if (action(a, "abort", &v)) {
            char msg[64];
            snprintf(msg, sizeof(msg), "test abort from rank %d", rank);
            fflush(stdout);
            pmix_status_t rc = PMIx_Abort(v ? atoi(v) : 1, msg, NULL, 0);
            /* as an MPI runtime would after PMIx_Abort returns */
            fprintf(stderr, "pmix_client rank %d: PMIx_Abort returned %s\n", rank, PMIx_Error_string(rc));
            _exit(v ? atoi(v) : 1);
        } else if (action(a, "lines", &v) || action(a, "errlines", &v)) {
            FILE *f = a[0] == 'e' ? stderr : stdout;
            long n = v ? atol(v) : 100;
            for (long l = 0; l < n; l++)
                fprintf(f, "rank %d line %ld %s\n", rank, l,
                        "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ.end");
            fflush(f);
        } else if (action(a, "partial", &v)) {
            printf("partial-%d", rank);
            fflush(stdout);
        } else if (action(a, "stdin", &v)) {
            char *line = NULL;
            size_t cap = 0, total = 0;
            ssize_t n;
            while ((n = getline(&line, &cap, stdin)) > 0) {
                total += (size_t)n;
                printf("stdin %d: %s%s", rank, line, line[n - 1] == '\n' ? "" : "\n");
            }
            free(line);
            printf("stdin %d eof %zu\n", rank, total);
            fflush(stdout);
        } else if (action(a, "env", &v)) {
            const char *val = v ? getenv(v) : NULL;
            if (val)
                printf("env %d %s=%s\n", rank, v, val);
            else
                printf("env %d %s unset\n", rank, v ? v : "");
            fflush(stdout);
        } else if (action(a, "shm", &v)) {
            char path[512];
            snprintf(path, sizeof(path), "/dev/shm/bmpi.%s.test.%d", have_pmix ? me.nspace : "none", rank);
            int fd = open(path, O_CREAT | O_RDWR, 0600);
            if (fd < 0)
                fail("cannot create %s: %s", path, strerror(errno));
            close(fd);
            printf("shm %d %s\n", rank, path);
            fflush(stdout);
        } else if (action(a, "forksleep", &v)) {
            fflush(stdout);
            pid_t pid = fork();
            if (pid == 0) {
                sleep_s(v ? atof(v) : 100);
                _exit(0);
            }
            printf("forked %d pid %d\n", rank, (int)pid);
            fflush(stdout);
        } else if (action(a, "ignoreterm", &v)) {
            signal(SIGTERM, SIG_IGN);
        } else if (action(a, "nofinalize", &v)) {
            do_finalize = false;
        }
    }

    fflush(stdout);
    if (do_finalize)
        finalize();
    return 0;
}
