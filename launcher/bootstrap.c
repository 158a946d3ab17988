/* The bootstrap text of a daemon (launcher/bootstrap.h): written by the
 * head, read by the daemon. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launcher/bootstrap.h"
#include "launcher/job.h"

/* ---- writing ------------------------------------------------------------------ */

struct text {
    char *buf;
    size_t len, cap;
    int failed;
};

static void put(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct text *t, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(t->buf ? t->buf + t->len : NULL, t->buf ? t->cap - t->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            t->failed = 1;
            return;
        }
        if (t->buf != NULL && (size_t)n < t->cap - t->len) {
            t->len += (size_t)n;
            return;
        }
        size_t cap = t->cap ? t->cap * 2 : 4096;
        while (cap < t->len + (size_t)n + 1)
            cap *= 2;
        char *grown = realloc(t->buf, cap);
        if (grown == NULL) {
            t->failed = 1;
            return;
        }
        t->buf = grown;
        t->cap = cap;
    }
}

/* "key value\n" with value percent-encoded: no blank, newline or '%' in it. */
static void put_encoded(struct text *t, const char *key, const char *value)
{
    put(t, "%s ", key);
    for (const unsigned char *p = (const unsigned char *)value; *p; p++) {
        if (*p <= ' ' || *p == '%' || *p >= 0x7f)
            put(t, "%%%02x", *p);
        else
            put(t, "%c", *p);
    }
    put(t, "\n");
}

static const char *bind_name(enum bmpi_bind b)
{
    return b == BMPI_BIND_CORE ? "core" : b == BMPI_BIND_NONE ? "none" : "auto";
}

char *bmpi_bootstrap_text(const struct bmpi_job *job, const uint8_t secret[BMPI_TREE_SECRET_LEN],
                          const char *head_addrs, size_t *len)
{
    struct text t = {0};
    char hex[2 * BMPI_TREE_SECRET_LEN + 1], cwd[PATH_MAX];
    bmpi_tree_secret_hex(secret, hex);
    put(&t, "%s\nversion %s\nsecret %s\n", BMPI_BOOTSTRAP_MAGIC, PACKAGE_VERSION, hex);
    put(&t, "nspace %s\nfanout %d\nvertices %d\nhead %s\nnodes %d\n", job->nspace, job->opt.tree_fanout,
        job->nvertices, head_addrs, job->nnodes);
    for (int n = 0; n < job->nnodes; n++)
        put(&t, "node %d %s\n", job->node_vertex[n], job->node_names[n]);
    put(&t, "ranks");
    for (int i = 0; i < job->nranks; i++)
        put(&t, " %d:%d", job->ranks[i].node, job->ranks[i].local_rank);
    put(&t, "\nbind %s\nreport-bindings %d\nno-mpich-abi %d\n", bind_name(job->opt.bind),
        job->opt.report_bindings, job->opt.no_mpich_abi);
    /* every host's PMIx server gives the ranks the same PMIX_UNIV_SIZE */
    put(&t, "universe %d\n", job->opt.universe_size);
    if (getcwd(cwd, sizeof(cwd)) != NULL)
        put_encoded(&t, "cwd", cwd);
    if (job->opt.wdir != NULL)
        put_encoded(&t, "wdir", job->opt.wdir);
    for (int i = 0; i < job->opt.nenv; i++)
        put_encoded(&t, "env", job->opt.env[i]);
    put_encoded(&t, "program", job->opt.program);
    for (char **a = job->opt.argv; *a != NULL; a++)
        put_encoded(&t, "arg", *a);
    put(&t, "end\n");
    if (t.failed) {
        free(t.buf);
        return NULL;
    }
    *len = t.len;
    return t.buf;
}

int bmpi_bootstrap_parent_line(char *buf, size_t len, int vertex, const char *addr)
{
    return snprintf(buf, len, "parent %d %s\n", vertex, addr);
}

/* ---- reading ------------------------------------------------------------------ */

char *bmpi_linebuf_next(struct bmpi_linebuf *lb)
{
    char *nl = lb->len > 0 ? memchr(lb->buf, '\n', lb->len) : NULL;
    if (nl == NULL)
        return NULL;
    size_t n = (size_t)(nl - lb->buf);
    char *line = strndup(lb->buf, n);
    memmove(lb->buf, nl + 1, lb->len - n - 1);
    lb->len -= n + 1;
    return line;
}

int bmpi_linebuf_fill(struct bmpi_linebuf *lb)
{
    if (lb->cap - lb->len < 4096) {
        size_t cap = lb->cap ? lb->cap * 2 : 65536;
        char *grown = realloc(lb->buf, cap);
        if (grown == NULL)
            return -1;
        lb->buf = grown;
        lb->cap = cap;
    }
    ssize_t n;
    do
        n = read(lb->fd, lb->buf + lb->len, lb->cap - lb->len);
    while (n < 0 && errno == EINTR);
    if (n > 0)
        lb->len += (size_t)n;
    else if (n == 0)
        lb->eof = 1;
    return n > 0 ? 1 : n == 0 ? 0 : -1;
}

static char *decode(const char *s)
{
    char *out = malloc(strlen(s) + 1), *o = out;
    if (out == NULL)
        return NULL;
    for (; *s; s++) {
        unsigned v;
        /* only "%XX" is an escape: a '%' without two hex digits after it
         * stays, and nothing is read past the value's end */
        if (*s == '%' && isxdigit((unsigned char)s[1]) && isxdigit((unsigned char)s[2]) &&
            sscanf(s + 1, "%2x", &v) == 1) {
            *o++ = (char)v;
            s += 2;
        } else {
            *o++ = *s;
        }
    }
    *o = '\0';
    return out;
}

static int push(char ***arr, int *n, char *s)
{
    char **grown = realloc(*arr, (size_t)(*n + 2) * sizeof(**arr));
    if (grown == NULL || s == NULL) {
        if (grown != NULL)
            *arr = grown;
        free(s);
        return -1;
    }
    *arr = grown;
    (*arr)[(*n)++] = s;
    (*arr)[*n] = NULL;
    return 0;
}

/* "0:0 0:1 1:0 ...": node and local rank of every rank. */
static int read_ranks(struct bmpi_options *o, const char *list)
{
    int n = 0;
    for (const char *p = list; (p = strchr(p, ':')) != NULL; p++)
        n++;
    struct bmpi_placement *pl = &o->place;
    pl->nranks = n;
    pl->node = calloc((size_t)n + 1, sizeof(int));
    pl->local_rank = calloc((size_t)n + 1, sizeof(int));
    if (pl->node == NULL || pl->local_rank == NULL)
        return -1;
    const char *p = list;
    for (int i = 0; i < n; i++) {
        char *end;
        pl->node[i] = (int)strtol(p, &end, 10);
        if (*end != ':' || pl->node[i] < 0 || pl->node[i] >= pl->nnodes)
            return -1;
        pl->local_rank[i] = (int)strtol(end + 1, &end, 10);
        pl->node_nranks[pl->node[i]]++;
        p = end;
    }
    o->nprocs = n;
    return 0;
}

/* "VERTEX NAME": the name is the rest of the line, of any length (a host
 * list may name a host by a domain name longer than HOST_NAME_MAX). */
static int read_node(struct bmpi_options *o, int *vertex, const char *val)
{
    char *end;
    long v = strtol(val, &end, 10);
    if (o->hosts.n >= o->place.nnodes || end == val || v < 0 || v > INT_MAX || *end != ' ' || end[1] == '\0')
        return -1;
    struct bmpi_host *h = &o->hosts.hosts[o->hosts.n];
    if ((h->name = strdup(end + 1)) == NULL)
        return -1;
    vertex[o->hosts.n++] = (int)v;
    return 0;
}

static int read_nodes(struct bmpi_options *o, int **vertex, const char *val)
{
    int n = atoi(val);
    if (n < 1 || n > 1000000)
        return -1;
    o->place.nnodes = n;
    o->hosts.hosts = calloc((size_t)n, sizeof(*o->hosts.hosts));
    o->place.node_nranks = calloc((size_t)n, sizeof(int));
    *vertex = calloc((size_t)n, sizeof(int));
    return o->hosts.hosts && o->place.node_nranks && *vertex ? 0 : -1;
}

static enum bmpi_bind read_bind(const char *val)
{
    return strcmp(val, "core") == 0 ? BMPI_BIND_CORE : strcmp(val, "none") == 0 ? BMPI_BIND_NONE : BMPI_BIND_AUTO;
}

/* One "key value" line into job / info. 1: the end line; 0: taken; -1: bad. */
static int read_line(struct bmpi_job *job, struct bmpi_boot_info *info, int **vertex, char **cwd, int *nargs,
                     const char *line)
{
    struct bmpi_options *o = &job->opt;
    const char *sp = strchr(line, ' ');
    size_t klen = sp ? (size_t)(sp - line) : strlen(line);
    const char *val = sp ? sp + 1 : "";
#define KEY(k) (klen == sizeof(k) - 1 && strncmp(line, k, klen) == 0)
    if (KEY("end"))
        return 1;
    if (KEY("secret"))
        return bmpi_tree_secret_parse(val, info->secret);
    if (KEY("nspace"))
        return snprintf(job->nspace, sizeof(job->nspace), "%s", val) < (int)sizeof(job->nspace) ? 0 : -1;
    if (KEY("fanout"))
        return (info->fanout = atoi(val)) > 0 ? 0 : -1;
    if (KEY("vertices"))
        return (info->nvertices = atoi(val)) > 1 ? 0 : -1;
    if (KEY("head"))
        return (info->head_addrs = strdup(val)) != NULL ? 0 : -1;
    if (KEY("nodes"))
        return read_nodes(o, vertex, val);
    if (KEY("node"))
        return *vertex != NULL ? read_node(o, *vertex, val) : -1;
    if (KEY("ranks"))
        return o->place.node_nranks != NULL ? read_ranks(o, val) : -1;
    if (KEY("bind"))
        return (o->bind = read_bind(val)), 0;
    if (KEY("report-bindings"))
        return (o->report_bindings = atoi(val) != 0), 0;
    if (KEY("no-mpich-abi"))
        return (o->no_mpich_abi = atoi(val) != 0), 0;
    if (KEY("universe"))
        return (o->universe_size = atoi(val)) >= 0 ? 0 : -1;
    if (KEY("cwd"))
        return (*cwd = decode(val)) != NULL ? 0 : -1;
    if (KEY("wdir"))
        return (o->wdir = decode(val)) != NULL ? 0 : -1;
    if (KEY("env"))
        return push(&o->env, &o->nenv, decode(val));
    if (KEY("program"))
        return (o->program = decode(val)) != NULL ? 0 : -1;
    if (KEY("arg"))
        return push(&o->argv, nargs, decode(val));
    return 0; /* a key of a newer head: the version check tells */
#undef KEY
}

/* Which node is ours: --node, or Slurm's name for this node. */
static int find_node(const struct bmpi_options *o, int node, char *why, size_t why_len)
{
    if (node >= 0 && node < o->hosts.n)
        return node;
    const char *me = getenv("SLURMD_NODENAME");
    for (int i = 0; me != NULL && i < o->hosts.n; i++)
        if (strcmp(o->hosts.hosts[i].name, me) == 0)
            return i;
    snprintf(why, why_len, "cannot tell which of the job's %d nodes this host is (--node %d, SLURMD_NODENAME=%s)",
             o->hosts.n, node, me ? me : "unset");
    return -1;
}

/* The ranks start in --wdir, else in the head's directory if this host has
 * it, else in HOME (as Open MPI's daemons do). */
static void choose_dir(struct bmpi_options *o, char *cwd)
{
    if (o->wdir == NULL && cwd != NULL && access(cwd, X_OK) == 0) {
        o->wdir = cwd;
        return;
    }
    free(cwd);
    if (o->wdir == NULL && getenv("HOME") != NULL)
        o->wdir = strdup(getenv("HOME"));
}

int bmpi_bootstrap_read(struct bmpi_linebuf *lb, struct bmpi_job *job, int node, struct bmpi_boot_info *info,
                        char *why, size_t why_len)
{
    int *vertex = NULL, nargs = 0, rc = 0, lineno = 0;
    char *cwd = NULL, *line;
    bool done = false;
    while (!done && rc == 0) {
        while ((line = bmpi_linebuf_next(lb)) == NULL) {
            if (bmpi_linebuf_fill(lb) <= 0) {
                snprintf(why, why_len, "the bootstrap from the head ended after %d lines", lineno);
                free(vertex);
                free(cwd);
                return -1;
            }
        }
        lineno++;
        if (lineno == 1 && strcmp(line, BMPI_BOOTSTRAP_MAGIC) != 0) {
            snprintf(why, why_len, "stdin does not start with '%s': bmpirun --daemon is started by bmpirun, not by hand",
                     BMPI_BOOTSTRAP_MAGIC);
            rc = -1;
        } else if (lineno == 2 && strncmp(line, "version ", 8) == 0 && strcmp(line + 8, PACKAGE_VERSION) != 0) {
            snprintf(why, why_len, "bmpi version mismatch: this host runs bmpi %s, the head bmpirun runs bmpi %s; "
                     "install the same bmpi on every host", PACKAGE_VERSION, line + 8);
            rc = -1;
        } else if (lineno > 2) {
            int r = read_line(job, info, &vertex, &cwd, &nargs, line);
            if (r < 0)
                snprintf(why, why_len, "bad bootstrap line %d: '%.80s'", lineno, line);
            rc = r < 0 ? -1 : 0;
            done = r == 1;
        }
        free(line);
    }
    if (rc == 0 && (job->opt.program == NULL || nargs == 0 || job->opt.place.node == NULL)) {
        snprintf(why, why_len, "the bootstrap from the head lacks the program or the ranks");
        rc = -1;
    }
    if (rc == 0 && (job->self_node = find_node(&job->opt, node, why, why_len)) < 0)
        rc = -1;
    if (rc == 0) {
        /* The head's own node, if any, is the one its vertex 0 serves. */
        job->opt.local_host = -1;
        for (int i = 0; i < job->opt.hosts.n; i++)
            if (vertex[i] == 0)
                job->opt.local_host = i;
        choose_dir(&job->opt, cwd);
        cwd = NULL;
    }
    free(vertex);
    free(cwd);
    return rc;
}
