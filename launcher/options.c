/* bmpirun's command line. Spellings follow mpirun (Open MPI) and mpiexec
 * (MPICH) so that scripts written for either run unchanged: long options
 * take one or two dashes, a value follows as the next word or after '='.
 * Options end at the first word that is not an option, or at "--"; the rest
 * is the program and its arguments, passed through untouched. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <netdb.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mpi.h> /* MPI_VERSION, MPI_SUBVERSION: the standard level bmpi implements */

#include "launcher/job.h"
#include "launcher/options.h"
#include "launcher/pmix_server.h"
#include "launcher/tree.h"

/* More ranks than this on one node is a typo, not a job. */
#define BMPI_MAX_RANKS (1 << 20)
#define USAGE_ERROR 2

enum opt_id {
    OPT_NP,
    OPT_OVERSUBSCRIBE,
    OPT_X,
    OPT_TAG_OUTPUT,
    OPT_TIMEOUT,
    OPT_BIND_TO,
    OPT_ALLOW_ROOT,
    OPT_HOST,
    OPT_HOSTFILE,
    OPT_NPERNODE,
    OPT_MAP_BY,
    OPT_NO_MPICH_ABI,
    OPT_WDIR,
    OPT_GENV,
    OPT_GENVLIST,
    OPT_REPORT_BINDINGS,
    OPT_LAUNCH_AGENT,
    OPT_TREE_FANOUT,
    OPT_VERSION,
    OPT_HELP,
};

struct opt_spec {
    const char *name;
    enum opt_id id;
    bool has_arg;
};

static const struct opt_spec opt_table[] = {
    {"n", OPT_NP, true},
    {"np", OPT_NP, true},
    {"oversubscribe", OPT_OVERSUBSCRIBE, false},
    {"x", OPT_X, true},
    {"tag-output", OPT_TAG_OUTPUT, false},
    {"timeout", OPT_TIMEOUT, true},
    {"bind-to", OPT_BIND_TO, true},
    {"allow-run-as-root", OPT_ALLOW_ROOT, false},
    {"host", OPT_HOST, true},
    {"H", OPT_HOST, true},
    {"hostfile", OPT_HOSTFILE, true},
    {"machinefile", OPT_HOSTFILE, true},
    {"f", OPT_HOSTFILE, true},
    {"N", OPT_NPERNODE, true},
    {"npernode", OPT_NPERNODE, true},
    {"ppn", OPT_NPERNODE, true},
    {"map-by", OPT_MAP_BY, true},
    {"no-mpich-abi", OPT_NO_MPICH_ABI, false},
    {"wdir", OPT_WDIR, true},
    {"wd", OPT_WDIR, true},
    {"genv", OPT_GENV, true},
    {"genvlist", OPT_GENVLIST, true},
    {"report-bindings", OPT_REPORT_BINDINGS, false},
    {"launch-agent", OPT_LAUNCH_AGENT, true},
    {"tree-fanout", OPT_TREE_FANOUT, true},
    {"version", OPT_VERSION, false},
    {"V", OPT_VERSION, false},
    {"help", OPT_HELP, false},
    {"h", OPT_HELP, false},
};

static void print_help(void)
{
    printf(
        "usage: bmpirun [options] [--] program [args...]\n"
        "\n"
        "Start N copies (ranks) of program on this node and serve them as their\n"
        "PMIx server (rank, size, node map, address exchange, abort).\n"
        "\n"
        "options (one or two dashes; a value follows as the next word or after '='):\n"
        "  -n, -np N            number of ranks (default 1, or every slot of a host\n"
        "                       list). More ranks than cores is allowed: ranks\n"
        "                       then share the cores.\n"
        "  --oversubscribe      allow more ranks than the slots of a host list (up\n"
        "                       to max_slots); without a host list always allowed\n"
        "  -x VAR[=value]       pass VAR to every rank, with the given value or the\n"
        "                       one in bmpirun's environment (repeatable). Ranks\n"
        "                       also inherit bmpirun's whole environment.\n"
        "  -genv VAR VALUE      pass VAR=VALUE to every rank (MPICH's spelling)\n"
        "  -genvlist A,B,...    pass A, B, ... from bmpirun's environment, as -x A -x B\n"
        "  --tag-output[=host]  prefix every output line with the rank that wrote it:\n"
        "                       \"[3] text\", with =host \"[3@host] text\" (stdout\n"
        "                       lines on stdout, stderr on stderr)\n"
        "  --wdir, -wdir, -wd DIR\n"
        "                       start the ranks in DIR (default: bmpirun's directory);\n"
        "                       a relative program path is taken from DIR, as mpirun\n"
        "                       and mpiexec do\n"
        "  --report-bindings    one line per rank on stderr: the CPUs it may run on\n"
        "  --timeout SECONDS    kill the job after SECONDS (fractions allowed; 0 = no\n"
        "                       limit) and exit with status 124\n"
        "  --bind-to core|none  core: bind rank i to core i %% ncores (cores that\n"
        "                       bmpirun may use, in order); none: no binding.\n"
        "                       Default: core when there are more ranks than CPUs\n"
        "                       bmpirun may use, so that every core gets its share\n"
        "                       of ranks; none otherwise\n"
        "  --allow-run-as-root  accepted for mpirun compatibility; root needs nothing\n"
        "  --host, -H LIST      hosts and their slots: h1:2,h2:2 or h1,h1,h2 (a name\n"
        "                       without :N is one slot; repeats add slots)\n"
        "  --hostfile, --machinefile, -f FILE\n"
        "                       hosts from FILE, one a line: 'host slots=N\n"
        "                       [max_slots=M]' or 'host:N'; '#' starts a comment.\n"
        "                       Without -n, the job fills every slot. Inside a\n"
        "                       Slurm allocation, its nodes are the default list\n"
        "                       and srun starts bmpirun's daemons on them\n"
        "  --launch-agent CMD   how to start bmpirun's daemon on another host\n"
        "                       (default: ssh): CMD HOST BMPIRUN --daemon ...;\n"
        "                       any command that takes the host first works,\n"
        "                       e.g. 'ip netns exec' (docs/cluster.md)\n"
        "  --tree-fanout K      daemons per daemon in the launch tree (default %d)\n"
        "  -N, --npernode, -ppn K  K ranks on each host\n"
        "  --map-by slot|node   slot (default): fill each host's slots before the\n"
        "                       next; node: one rank per host, round robin\n"
        "  --no-mpich-abi       leave the ranks' LD_LIBRARY_PATH as it is. By default\n"
        "                       bmpi's directory of MPICH library names comes first\n"
        "                       on it, so that programs built with MPICH's mpicc or\n"
        "                       mpifort run on bmpi (docs/mpich-abi.md)\n"
        "  --version            print bmpirun's version and the PMIx versions it was\n"
        "                       built with and runs with\n"
        "  -h, --help           this text\n"
        "  --                   end of options\n"
        "\n"
        "Output: every line of a rank is passed on whole, never mixed with a line of\n"
        "another rank (lines over 1 MiB go in pieces). A last line without newline\n"
        "is passed on when the rank ends (tagged, it gets one). stdin goes to rank 0;\n"
        "the other ranks read /dev/null.\n"
        "\n"
        "Signals: SIGINT, SIGTERM and SIGHUP are forwarded to every rank, which are\n"
        "then killed (SIGKILL) %d ms later if still running. SIGUSR1, SIGUSR2 and\n"
        "SIGCONT are forwarded only; SIGTSTP (Ctrl-Z) stops the ranks, then bmpirun.\n"
        "\n"
        "Exit status: 0 when every rank exits 0. Otherwise that of the first failure:\n"
        "a rank's exit status; 128+N for a rank killed by signal N; the status given\n"
        "to MPI_Abort/PMIx_Abort (1 if that was 0); 1 for a rank that exits 0 after\n"
        "PMIx_Init without PMIx_Finalize, or without PMIx_Init while its peers wait\n"
        "in it; 1 when ranks have not connected within BMPI_BOOTSTRAP_TIMEOUT while\n"
        "others did, or when no rank of a program that calls MPI_Init connected (a\n"
        "program of another MPI: singletons); 124 on --timeout; 128+N when bmpirun\n"
        "got signal N. bmpirun's own errors: 1 launch failure, 2 usage error, 126\n"
        "program not executable, 127 program not found. When one rank fails, all\n"
        "others are terminated; ranks that fail because a peer died (a failed\n"
        "fence) are not the first failure.\n",
        BMPI_TREE_DEFAULT_FANOUT, BMPI_KILL_GRACE_MS);
}

static void print_version(void)
{
    printf("bmpirun (%s) %s, MPI %d.%d\n", PACKAGE_NAME, PACKAGE_VERSION, MPI_VERSION, MPI_SUBVERSION);
    bmpi_pmix_print_version();
}

/* A whole positive int, or -1. */
static long parse_count(const char *s)
{
    char *end;
    if (*s == '\0' || *s == '-' || *s == '+')
        return -1;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || *end != '\0')
        return -1;
    return v;
}

static int set_nprocs(struct bmpi_options *o, const char *flag, const char *val)
{
    long v = parse_count(val);
    if (v < 0) {
        fprintf(stderr, "bmpirun: %s '%s': not a number of ranks; give a positive integer, e.g. %s 4\n",
                flag, val, flag);
        return USAGE_ERROR; /* usage error */
    }
    if (v == 0) {
        fprintf(stderr, "bmpirun: %s 0: a job needs at least one rank\n", flag);
        return USAGE_ERROR;
    }
    if (v > BMPI_MAX_RANKS) {
        fprintf(stderr, "bmpirun: %s %s: more than %d ranks on one node is not supported\n", flag, val,
                BMPI_MAX_RANKS);
        return USAGE_ERROR;
    }
    if (o->nprocs_given && v != o->nprocs) {
        fprintf(stderr, "bmpirun: %s %ld conflicts with the %d ranks asked for before; give the number of "
                "ranks once\n", flag, v, o->nprocs);
        return USAGE_ERROR;
    }
    o->nprocs = (int)v;
    o->nprocs_given = true;
    return BMPI_OPT_RUN;
}

/* A shell variable name: letters, digits, '_', not starting with a digit.
 * "-x -n 4" must not pass a variable named "-n". */
static bool is_env_name(const char *s, size_t len)
{
    if (len == 0 || (s[0] >= '0' && s[0] <= '9'))
        return false;
    for (size_t i = 0; i < len; i++)
        if (!(s[i] == '_' || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
              (s[i] >= '0' && s[i] <= '9')))
            return false;
    return true;
}

static int add_env(struct bmpi_options *o, const char *flag, const char *val)
{
    const char *eq = strchr(val, '=');
    size_t namelen = eq ? (size_t)(eq - val) : strlen(val);
    if (!is_env_name(val, namelen)) {
        fprintf(stderr, "bmpirun: %s '%s': %s; use -x VAR or -x VAR=value\n", flag, val,
                namelen == 0 ? "no variable name" : "not a variable name");
        return USAGE_ERROR;
    }
    char *entry;
    if (eq) {
        entry = strdup(val);
    } else {
        const char *cur = getenv(val);
        if (cur == NULL) {
            fprintf(stderr,
                    "bmpirun: warning: %s %s: %s is not set in bmpirun's environment, so there "
                    "is nothing to pass on; use -x %s=value to give it a value\n",
                    flag, val, val, val);
            return BMPI_OPT_RUN;
        }
        if (asprintf(&entry, "%s=%s", val, cur) < 0)
            entry = NULL;
    }
    char **grown = realloc(o->env, (size_t)(o->nenv + 1) * sizeof(*grown));
    if (entry == NULL || grown == NULL) {
        free(entry);
        if (grown)
            o->env = grown;
        fprintf(stderr, "bmpirun: out of memory while parsing %s\n", flag);
        return 1;
    }
    o->env = grown;
    o->env[o->nenv++] = entry;
    return BMPI_OPT_RUN;
}

/* ---- hosts and placement (docs/launcher.md "Hosts and placement") ------ */

static void this_host(char self[HOST_NAME_MAX + 1])
{
    if (gethostname(self, HOST_NAME_MAX + 1) != 0)
        snprintf(self, HOST_NAME_MAX + 1, "localhost");
    self[HOST_NAME_MAX] = '\0';
}

static bool is_loopback(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)(const void *)sa)->sin_addr.s_addr) >> 24) == 127;
    return sa->sa_family == AF_INET6 &&
           IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr);
}

static bool same_address(const struct sockaddr *a, const struct sockaddr *b)
{
    if (a->sa_family != b->sa_family)
        return false;
    if (a->sa_family == AF_INET)
        return ((const struct sockaddr_in *)(const void *)a)->sin_addr.s_addr ==
               ((const struct sockaddr_in *)(const void *)b)->sin_addr.s_addr;
    return a->sa_family == AF_INET6 && memcmp(&((const struct sockaddr_in6 *)(const void *)a)->sin6_addr,
                                              &((const struct sockaddr_in6 *)(const void *)b)->sin6_addr,
                                              sizeof(struct in6_addr)) == 0;
}

/* By address: the name resolves to a loopback address or to one of this
 * machine's interfaces (a name that does not resolve is another host). */
static bool resolves_here(const char *name)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res;
    struct ifaddrs *ifs = NULL;
    if (getaddrinfo(name, NULL, &hints, &res) != 0)
        return false;
    bool here = false;
    if (getifaddrs(&ifs) != 0)
        ifs = NULL;
    for (const struct addrinfo *ai = res; ai != NULL && !here; ai = ai->ai_next) {
        here = is_loopback(ai->ai_addr);
        for (const struct ifaddrs *i = ifs; i != NULL && !here; i = i->ifa_next)
            here = i->ifa_addr != NULL && same_address(ai->ai_addr, i->ifa_addr);
    }
    freeifaddrs(ifs);
    freeaddrinfo(res);
    return here;
}

/* By name first (localhost, this machine's name or short name, or Slurm's
 * name for the node a batch script runs on), then by address. */
static bool is_this_host(const char *name)
{
    char self[HOST_NAME_MAX + 1];
    this_host(self);
    size_t len = strlen(name), shortlen = strcspn(self, ".");
    const char *slurm_node = getenv("SLURMD_NODENAME");
    if (strcmp(name, "localhost") == 0 || strcmp(name, self) == 0 ||
        (len == shortlen && strncmp(name, self, len) == 0) || (slurm_node != NULL && strcmp(name, slurm_node) == 0))
        return true;
    return resolves_here(name);
}

bool bmpi_options_is_this_host(const char *name)
{
    return is_this_host(name);
}

static int host_error(const struct bmpi_hostlist *hosts)
{
    fprintf(stderr, "bmpirun: %s\n", hosts->error);
    return USAGE_ERROR;
}

/* -N/--npernode/-ppn and --map-by. */
static int set_npernode(struct bmpi_options *o, const char *flag, const char *val)
{
    long v = parse_count(val);
    if (v < 1 || v > BMPI_MAX_RANKS) {
        fprintf(stderr, "bmpirun: %s '%s': not a number of ranks per host; give e.g. %s 2\n", flag, val, flag);
        return USAGE_ERROR;
    }
    o->npernode = (int)v;
    return BMPI_OPT_RUN;
}

static int set_map_by(struct bmpi_options *o, const char *val)
{
    if (strcmp(val, "slot") == 0 || strcmp(val, "node") == 0) {
        o->map_by = val[0] == 's' ? BMPI_MAP_SLOT : BMPI_MAP_NODE;
        return BMPI_OPT_RUN;
    }
    fprintf(stderr, "bmpirun: --map-by '%s': unknown mapping; use --map-by slot or --map-by node\n", val);
    return USAGE_ERROR;
}

/* The nodes of the job: the hosts that got ranks. When every one is this
 * machine they are one node (as they were before hosts could differ);
 * otherwise this machine may be one of them, once. */
static int choose_nodes(struct bmpi_options *o, const struct bmpi_placement *p)
{
    int local = -1, second_local = -1, remote = 0;
    for (int i = 0; i < o->hosts.n; i++) {
        if (p->node_nranks[i] == 0)
            continue;
        if (!is_this_host(o->hosts.hosts[i].name))
            remote++;
        else if (local < 0)
            local = i;
        else if (second_local < 0)
            second_local = i;
    }
    o->multi_host = remote > 0;
    if (o->multi_host && second_local >= 0) {
        fprintf(stderr, "bmpirun: hosts '%s' and '%s' both name this machine; list it once in a job across hosts\n",
                o->hosts.hosts[local].name, o->hosts.hosts[second_local].name);
        return USAGE_ERROR;
    }
    o->local_host = o->multi_host ? local : -1;
    return BMPI_OPT_RUN;
}

/* Place the ranks over the host list (or Slurm's allocation, when given
 * none) and take the job's size from it. */
static int place_ranks(struct bmpi_options *o)
{
    const char *nodelist = getenv("SLURM_JOB_NODELIST");
    if (o->hosts.n == 0 && nodelist != NULL) {
        if (bmpi_hostlist_add_slurm(&o->hosts, nodelist, getenv("SLURM_TASKS_PER_NODE")) != 0)
            return host_error(&o->hosts);
        o->from_slurm = true;
    }
    struct bmpi_place_request req = {.nprocs = o->nprocs_given ? o->nprocs : 0, .npernode = o->npernode,
                                     .map_by = o->map_by, .oversubscribe = o->oversubscribe};
    struct bmpi_placement *p = &o->place;
    if (bmpi_place(&o->hosts, &req, p) != 0) {
        fprintf(stderr, "bmpirun: %s\n", p->error);
        return USAGE_ERROR;
    }
    o->local_host = -1;
    int rc = choose_nodes(o, p);
    for (int i = 0; rc == BMPI_OPT_RUN && i < p->nnodes; i++) {
        if (p->node_nranks[i] > BMPI_MAX_RANKS) {
            fprintf(stderr, "bmpirun: %d ranks on host '%s': more than %d ranks on one node is not supported\n",
                    p->node_nranks[i], o->hosts.n > 0 ? o->hosts.hosts[i].name : "this one", BMPI_MAX_RANKS);
            rc = USAGE_ERROR;
        }
    }
    o->nprocs = p->nranks;
    int slots = bmpi_hostlist_total_slots(&o->hosts);
    o->universe_size = slots > p->nranks ? slots : p->nranks;
    return rc;
}

static int set_fanout(struct bmpi_options *o, const char *val)
{
    long v = parse_count(val);
    if (v < 1 || v > 4096) {
        fprintf(stderr, "bmpirun: --tree-fanout '%s': not a number of daemons per daemon; give e.g. --tree-fanout 32\n", val);
        return USAGE_ERROR;
    }
    o->tree_fanout = (int)v;
    return BMPI_OPT_RUN;
}

static int set_launch_agent(struct bmpi_options *o, const char *val)
{
    if (strspn(val, " \t") == strlen(val)) {
        fprintf(stderr, "bmpirun: --launch-agent: empty command; give e.g. --launch-agent ssh\n");
        return USAGE_ERROR;
    }
    free(o->launch_agent);
    o->launch_agent = strdup(val);
    return o->launch_agent ? BMPI_OPT_RUN : 1;
}

/* -genv VAR VALUE (Hydra): VALUE is the next word; -genv VAR=VALUE too. */
static int add_genv(struct bmpi_options *o, const char *name, int argc, char **argv, int *i)
{
    if (strchr(name, '=') != NULL)
        return add_env(o, "-genv", name);
    if (*i >= argc) {
        fprintf(stderr, "bmpirun: -genv %s needs a value: -genv VAR VALUE\n", name);
        return USAGE_ERROR;
    }
    char *entry;
    if (asprintf(&entry, "%s=%s", name, argv[(*i)++]) < 0)
        return 1;
    int rc = add_env(o, "-genv", entry);
    free(entry);
    return rc;
}

/* -genvlist A,B (Hydra): each as -x A. */
static int add_genvlist(struct bmpi_options *o, const char *list)
{
    int rc = BMPI_OPT_RUN;
    for (const char *p = list; rc == BMPI_OPT_RUN;) {
        size_t len = strcspn(p, ",");
        char *name = strndup(p, len);
        rc = name != NULL ? add_env(o, "-genvlist", name) : 1;
        free(name);
        if (p[len] == '\0')
            break;
        p += len + 1;
    }
    return rc;
}

static int set_wdir(struct bmpi_options *o, const char *flag, const char *dir)
{
    char real[PATH_MAX];
    struct stat st;
    if (realpath(dir, real) == NULL || stat(real, &st) != 0) {
        fprintf(stderr, "bmpirun: %s '%s': cannot use it as the ranks' working directory: %s\n", flag, dir,
                strerror(errno));
        return USAGE_ERROR;
    }
    if (!S_ISDIR(st.st_mode)) {
        fprintf(stderr, "bmpirun: %s '%s': not a directory\n", flag, dir);
        return USAGE_ERROR;
    }
    free(o->wdir);
    if ((o->wdir = strdup(real)) == NULL)
        return 1;
    /* What a shell's pwd trusts, as mpirun sets it. */
    char *pwd;
    if (asprintf(&pwd, "PWD=%s", real) < 0)
        return 1;
    int rc = add_env(o, flag, pwd);
    free(pwd);
    return rc;
}

static int set_tag_output(struct bmpi_options *o, const char *val)
{
    if (val != NULL && strcmp(val, "host") != 0 && strcmp(val, "rank") != 0) {
        fprintf(stderr, "bmpirun: --tag-output=%s: unknown tag; use --tag-output or --tag-output=host\n", val);
        return USAGE_ERROR;
    }
    o->tag_output = true;
    o->tag_host = val != NULL && strcmp(val, "host") == 0;
    return BMPI_OPT_RUN;
}

/* Resolve program as execvp would, and make sure it can run, so that a typo
 * fails here and not in N ranks at once. */
static int find_program_in(struct bmpi_options *o, const char *name)
{
    struct stat st;
    if (strchr(name, '/') != NULL) {
        if (stat(name, &st) != 0) {
            fprintf(stderr, "bmpirun: cannot run '%s': %s\n", name, strerror(errno));
            return errno == ENOENT ? 127 : 126;
        }
        if (S_ISDIR(st.st_mode)) {
            fprintf(stderr, "bmpirun: cannot run '%s': it is a directory\n", name);
            return 126;
        }
        if (!S_ISREG(st.st_mode) || access(name, X_OK) != 0) {
            fprintf(stderr, "bmpirun: cannot run '%s': it is not an executable file (chmod +x?)\n", name);
            return 126;
        }
        o->program = strdup(name);
        return o->program ? BMPI_OPT_RUN : 1;
    }

    const char *path = getenv("PATH");
    if (path == NULL || *path == '\0')
        path = "/usr/local/bin:/usr/bin:/bin";
    bool seen_noexec = false;
    const char *p = path;
    for (;;) {
        const char *colon = strchr(p, ':');
        size_t dirlen = colon ? (size_t)(colon - p) : strlen(p);
        char *cand;
        int n = dirlen == 0 ? asprintf(&cand, "./%s", name)
                            : asprintf(&cand, "%.*s/%s", (int)dirlen, p, name);
        if (n < 0)
            return 1;
        if (stat(cand, &st) == 0 && S_ISREG(st.st_mode)) {
            if (access(cand, X_OK) == 0) {
                o->program = cand;
                return BMPI_OPT_RUN;
            }
            seen_noexec = true;
        }
        free(cand);
        if (colon == NULL)
            break;
        p = colon + 1;
    }
    if (seen_noexec) {
        fprintf(stderr, "bmpirun: cannot run '%s': found in PATH but not executable (chmod +x?)\n", name);
        return 126;
    }
    fprintf(stderr, "bmpirun: cannot run '%s': not found in PATH (%s); give its path, e.g. ./%s\n",
            name, path, name);
    return 127;
}

/* With --wdir, a relative path names a program there: the ranks start in
 * that directory, as under mpirun and mpiexec. */
static int find_program(struct bmpi_options *o, const char *name)
{
    char *in_wdir = NULL;
    if (o->wdir != NULL && strchr(name, '/') != NULL && name[0] != '/') {
        if (asprintf(&in_wdir, "%s/%s", o->wdir, name) < 0)
            return 1;
        name = in_wdir;
    }
    int rc = find_program_in(o, name);
    free(in_wdir);
    return rc;
}

static const struct opt_spec *lookup(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof(opt_table) / sizeof(opt_table[0]); i++)
        if (strlen(opt_table[i].name) == len && strncmp(opt_table[i].name, name, len) == 0)
            return &opt_table[i];
    return NULL;
}

int bmpi_options_parse(struct bmpi_options *o, int argc, char **argv)
{
    int rc;
    *o = (struct bmpi_options){.nprocs = 1, .bind = BMPI_BIND_AUTO, .tree_fanout = BMPI_TREE_DEFAULT_FANOUT,
                               .local_host = -1};

    int i = 1;
    while (i < argc) {
        const char *arg = argv[i];
        if (strcmp(arg, "--") == 0) {
            i++;
            break;
        }
        if (arg[0] != '-' || arg[1] == '\0')
            break;

        /* "-n4": the count glued to -n, as mpiexec takes it */
        if (arg[1] == 'n' && arg[2] >= '0' && arg[2] <= '9') {
            if ((rc = set_nprocs(o, "-n", arg + 2)) != BMPI_OPT_RUN)
                return rc;
            i++;
            continue;
        }

        const char *name = arg + 1 + (arg[1] == '-');
        const char *eq = strchr(name, '=');
        size_t namelen = eq ? (size_t)(eq - name) : strlen(name);
        const struct opt_spec *spec = lookup(name, namelen);
        if (spec == NULL) {
            fprintf(stderr, "bmpirun: unknown option '%s'; see bmpirun --help (put -- before a program whose name starts with '-')\n",
                    arg);
            return 2;
        }
        const char *val = NULL;
        if (spec->has_arg) {
            if (eq) {
                val = eq + 1;
            } else if (i + 1 < argc) {
                val = argv[++i];
            } else {
                fprintf(stderr, "bmpirun: option '%s' needs a value; see bmpirun --help\n", arg);
                return 2;
            }
        } else if (eq && spec->id == OPT_TAG_OUTPUT) {
            val = eq + 1; /* an optional value: --tag-output=host */
        } else if (eq) {
            fprintf(stderr, "bmpirun: option '%.*s' takes no value\n", (int)(eq - arg), arg);
            return 2;
        }
        i++;

        switch (spec->id) {
        case OPT_NP:
            rc = set_nprocs(o, namelen == 1 ? "-n" : "-np", val);
            break;
        case OPT_X:
            rc = add_env(o, "-x", val);
            break;
        case OPT_TIMEOUT: {
            char *end;
            errno = 0;
            double t = strtod(val, &end);
            if (*val == '\0' || *end != '\0' || errno != 0 || !isfinite(t) || t < 0) {
                fprintf(stderr, "bmpirun: --timeout '%s': not a number of seconds; give e.g. --timeout 60 (0 = no limit)\n",
                        val);
                rc = USAGE_ERROR;
            } else {
                o->timeout = t;
                rc = BMPI_OPT_RUN;
            }
            break;
        }
        case OPT_BIND_TO:
            if (strcmp(val, "core") == 0) {
                o->bind = BMPI_BIND_CORE;
            } else if (strcmp(val, "none") == 0) {
                o->bind = BMPI_BIND_NONE;
            } else {
                fprintf(stderr, "bmpirun: --bind-to '%s': unknown binding; use --bind-to core or --bind-to none\n",
                        val);
                rc = USAGE_ERROR;
                break;
            }
            rc = BMPI_OPT_RUN;
            break;
        case OPT_TAG_OUTPUT:
            rc = set_tag_output(o, val);
            break;
        case OPT_WDIR:
            rc = set_wdir(o, "--wdir", val);
            break;
        case OPT_GENV:
            rc = add_genv(o, val, argc, argv, &i);
            break;
        case OPT_GENVLIST:
            rc = add_genvlist(o, val);
            break;
        case OPT_REPORT_BINDINGS:
            o->report_bindings = true;
            rc = BMPI_OPT_RUN;
            break;
        case OPT_LAUNCH_AGENT:
            rc = set_launch_agent(o, val);
            break;
        case OPT_TREE_FANOUT:
            rc = set_fanout(o, val);
            break;
        case OPT_HOST:
            rc = bmpi_hostlist_add_list(&o->hosts, arg[1] == 'H' ? "-H" : "--host", val) == 0
                     ? BMPI_OPT_RUN : host_error(&o->hosts);
            break;
        case OPT_HOSTFILE:
            rc = bmpi_hostlist_read_file(&o->hosts, val) == 0 ? BMPI_OPT_RUN : host_error(&o->hosts);
            break;
        case OPT_NPERNODE:
            rc = set_npernode(o, namelen == 1 ? "-N" : namelen == 3 ? "-ppn" : "--npernode", val);
            break;
        case OPT_MAP_BY:
            rc = set_map_by(o, val);
            break;
        case OPT_NO_MPICH_ABI:
            o->no_mpich_abi = true;
            rc = BMPI_OPT_RUN;
            break;
        case OPT_OVERSUBSCRIBE:
            o->oversubscribe = true;
            rc = BMPI_OPT_RUN;
            break;
        case OPT_ALLOW_ROOT:
            rc = BMPI_OPT_RUN;
            break;
        case OPT_VERSION:
            print_version();
            return 0;
        case OPT_HELP:
            print_help();
            return 0;
        default:
            rc = 1;
            break;
        }
        if (rc != BMPI_OPT_RUN)
            return rc;
    }

    if (i >= argc) {
        fprintf(stderr, "bmpirun: no program given; usage: bmpirun -n N [options] program [args...]\n");
        return 2;
    }
    if (argv[i][0] == '\0') {
        fprintf(stderr, "bmpirun: the program name is empty\n");
        return 2;
    }
    if ((rc = place_ranks(o)) != BMPI_OPT_RUN)
        return rc;
    if ((rc = find_program(o, argv[i])) != BMPI_OPT_RUN)
        return rc;
    o->argv = &argv[i];
    return BMPI_OPT_RUN;
}

void bmpi_options_free(struct bmpi_options *o)
{
    for (int i = 0; i < o->nenv; i++)
        free(o->env[i]);
    free(o->env);
    free(o->program);
    bmpi_hostlist_free(&o->hosts);
    bmpi_placement_free(&o->place);
    free(o->launch_agent);
    free(o->wdir);
    *o = (struct bmpi_options){0};
}
