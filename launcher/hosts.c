/* Host lists: -H/--host, hostfiles of Open MPI and MPICH, Slurm's node
 * list. The spellings follow mpirun and Hydra so that a hostfile written
 * for either works unchanged (docs/launcher.md "Hosts and placement"). */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launcher/hosts.h"

/* More slots than this on one host is a typo. */
#define MAX_SLOTS (1 << 20)
/* A host name of DNS (253) plus room for Slurm's suffixes is plenty. */
#define MAX_NAME 255

static int fail(struct bmpi_hostlist *l, const char *fmt, ...)
{
    if (l->error[0] == '\0') {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(l->error, sizeof(l->error), fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* A whole count in 1..MAX_SLOTS of exactly len characters, or -1. */
static long parse_slots(const char *s, size_t len)
{
    long v = 0;
    if (len == 0 || len > 7)
        return -1;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v >= 1 && v <= MAX_SLOTS ? v : -1;
}

/* Letters, digits, '.', '-', '_' and, for IPv6 addresses, ':'. */
static bool is_host_name(const char *s, size_t len)
{
    if (len == 0 || len > MAX_NAME || s[0] == '-')
        return false;
    for (size_t i = 0; i < len; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
              s[i] == '.' || s[i] == '-' || s[i] == '_' || s[i] == ':'))
            return false;
    return true;
}

/* Add slots to host name (a repeat adds to the first mention). */
static int add_host(struct bmpi_hostlist *l, const char *name, size_t len, int slots, int max_slots)
{
    for (int i = 0; i < l->n; i++) {
        struct bmpi_host *h = &l->hosts[i];
        if (strlen(h->name) == len && strncmp(h->name, name, len) == 0) {
            h->slots += slots;
            h->max_slots = h->max_slots && max_slots ? h->max_slots + max_slots : 0;
            return 0;
        }
    }
    struct bmpi_host *grown = realloc(l->hosts, (size_t)(l->n + 1) * sizeof(*grown));
    if (grown == NULL)
        return fail(l, "out of memory for the host list");
    l->hosts = grown;
    char *copy = strndup(name, len);
    if (copy == NULL)
        return fail(l, "out of memory for the host list");
    l->hosts[l->n++] = (struct bmpi_host){.name = copy, .slots = slots, .max_slots = max_slots};
    return 0;
}

/* "name" or "name:N" into its name's length and slots (1 without ":N");
 * an IPv6 address (two ':' or more) takes no ":N". */
static int split_entry(struct bmpi_hostlist *l, const char *where, const char *e, size_t len, size_t *name,
                       long *slots)
{
    const char *colon = memchr(e, ':', len);
    *name = len;
    *slots = 1;
    if (colon != NULL && memchr(colon + 1, ':', len - (size_t)(colon + 1 - e)) == NULL) {
        *name = (size_t)(colon - e);
        *slots = parse_slots(colon + 1, len - *name - 1);
        if (*slots < 0)
            return fail(l, "%s: '%.*s': the number of slots after ':' must be a whole number from 1 to %d",
                        where, (int)len, e, MAX_SLOTS);
    }
    if (!is_host_name(e, *name))
        return fail(l, "%s: '%.*s': not a host name", where, (int)len, e);
    return 0;
}

int bmpi_hostlist_add_list(struct bmpi_hostlist *l, const char *flag, const char *list)
{
    char where[300];
    snprintf(where, sizeof(where), "%s '%.256s'", flag, list);
    if (*list == '\0')
        return fail(l, "%s: no host given; write e.g. %s h1:2,h2:2", where, flag);
    for (const char *p = list;;) {
        size_t len = strcspn(p, ","), name;
        long slots;
        if (split_entry(l, where, p, len, &name, &slots) != 0 || add_host(l, p, name, (int)slots, 0) != 0)
            return -1;
        if (p[len] == '\0')
            return 0;
        p += len + 1;
    }
}

/* "slots=N" or "max_slots=M" (also "max-slots", as Open MPI). */
static int add_keyword(struct bmpi_hostlist *l, const char *where, const char *w, size_t len, long *slots,
                       long *max_slots)
{
    const char *eq = memchr(w, '=', len);
    size_t key = eq ? (size_t)(eq - w) : len;
    long *dst = NULL;
    if (key == 5 && strncmp(w, "slots", 5) == 0)
        dst = slots;
    else if (key == 9 && (strncmp(w, "max_slots", 9) == 0 || strncmp(w, "max-slots", 9) == 0))
        dst = max_slots;
    if (dst == NULL || eq == NULL)
        return fail(l, "%s: '%.*s': unknown; a line is 'host slots=N [max_slots=M]' or 'host:N'", where,
                    (int)len, w);
    *dst = parse_slots(eq + 1, len - key - 1);
    if (*dst < 0)
        return fail(l, "%s: '%.*s': the count must be a whole number from 1 to %d", where, (int)len, w,
                    MAX_SLOTS);
    return 0;
}

/* The next word of line before end (whitespace separated), or NULL. */
static const char *next_word(const char *p, const char *end, size_t *len)
{
    static const char ws[] = " \t\r\n\v\f";
    p += strspn(p, ws);
    if (p >= end)
        return NULL;
    *len = strcspn(p, ws);
    if (*len > (size_t)(end - p))
        *len = (size_t)(end - p);
    return p;
}

int bmpi_hostlist_add_line(struct bmpi_hostlist *l, const char *path, int lineno, const char *line)
{
    char where[1100];
    snprintf(where, sizeof(where), "hostfile '%.1000s' line %d", path, lineno);
    const char *end = line + strcspn(line, "#");
    size_t hlen, name, wlen;
    const char *host = next_word(line, end, &hlen);
    if (host == NULL)
        return 0; /* blank or comment */
    int text = (int)(end - host); /* the line's content, for errors */
    while (text > 0 && strchr(" \t\r\n\v\f", host[text - 1]) != NULL)
        text--;
    long slots, given = 0, max_slots = 0;
    if (split_entry(l, where, host, hlen, &name, &slots) != 0)
        return -1;
    for (const char *w = host + hlen; (w = next_word(w, end, &wlen)) != NULL; w += wlen)
        if (add_keyword(l, where, w, wlen, &given, &max_slots) != 0)
            return -1;
    if (given != 0 && name != hlen)
        return fail(l, "%s: '%.*s': slots given twice (':N' and slots=); give one", where, text, host);
    if (given != 0)
        slots = given;
    if (max_slots != 0 && max_slots < slots)
        return fail(l, "%s: '%.*s': max_slots=%ld is less than the %ld slots", where, text, host, max_slots,
                    slots);
    return add_host(l, host, name, (int)slots, (int)max_slots);
}

int bmpi_hostlist_read_file(struct bmpi_hostlist *l, const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return fail(l, "hostfile '%s': cannot read it: %s", path, strerror(errno));
    char *line = NULL;
    size_t cap = 0;
    int rc = 0, lineno = 0;
    while (rc == 0 && getline(&line, &cap, f) >= 0)
        rc = bmpi_hostlist_add_line(l, path, ++lineno, line);
    if (rc == 0 && ferror(f))
        rc = fail(l, "hostfile '%s': cannot read it: %s", path, strerror(errno));
    if (rc == 0 && l->n == 0)
        rc = fail(l, "hostfile '%s': names no host", path);
    free(line);
    fclose(f);
    return rc;
}

/* ---- Slurm: SLURM_JOB_NODELIST, SLURM_TASKS_PER_NODE ------------------ */

/* A number of at most 9 digits at *p (advanced past it), or -1. */
static long take_number(const char **p, int *width)
{
    const char *s = *p;
    long v = 0;
    while (**p >= '0' && **p <= '9' && *p - s < 9)
        v = v * 10 + (*(*p)++ - '0');
    *width = (int)(*p - s);
    return *width > 0 && !(**p >= '0' && **p <= '9') ? v : -1;
}

/* Expand "pre[1-3,07]rest" into every name, recursing for each bracket. */
static int expand_node(struct bmpi_hostlist *l, const char *all, char *name, size_t have, const char *p,
                       const char *end)
{
    const char *open = memchr(p, '[', (size_t)(end - p));
    size_t lit = open ? (size_t)(open - p) : (size_t)(end - p);
    if (have + lit > MAX_NAME || memchr(p, ']', lit) != NULL)
        return fail(l, "SLURM_JOB_NODELIST '%s': '%.*s': not a node list", all, (int)(end - p), p);
    memcpy(name + have, p, lit);
    have += lit;
    if (open == NULL) {
        if (!is_host_name(name, have))
            return fail(l, "SLURM_JOB_NODELIST '%s': '%.*s': not a host name", all, (int)have, name);
        return add_host(l, name, have, 1, 0);
    }
    const char *q = open + 1, *close = memchr(q, ']', (size_t)(end - q));
    if (close == NULL)
        return fail(l, "SLURM_JOB_NODELIST '%s': '%.*s': '[' without ']'", all, (int)(end - p), p);
    while (q < close) {
        int width, hiwidth;
        long lo = take_number(&q, &width), hi = lo;
        if (lo >= 0 && *q == '-') {
            q++;
            hi = take_number(&q, &hiwidth);
        }
        if (lo < 0 || hi < lo || (*q != ',' && q != close) || have + (size_t)width > MAX_NAME - 9)
            return fail(l, "SLURM_JOB_NODELIST '%s': '[%.*s]': not a range of node numbers", all,
                        (int)(close - open - 1), open + 1);
        for (long v = lo; v <= hi; v++) {
            int n = snprintf(name + have, MAX_NAME + 1 - have, "%0*ld", width, v);
            if (expand_node(l, all, name, have + (size_t)n, close + 1, end) != 0)
                return -1;
        }
        q += *q == ',';
    }
    return 0;
}

/* "2(x3),1": the slots of each node in turn. */
static int apply_tasks(struct bmpi_hostlist *l, int first, const char *tasks)
{
    int node = first, width;
    for (const char *p = tasks; *p != '\0';) {
        long count = take_number(&p, &width), times = 1;
        if (count >= 1 && strncmp(p, "(x", 2) == 0) {
            p += 2;
            times = take_number(&p, &width);
            if (*p == ')')
                p++;
            else
                times = -1;
        }
        if (count < 1 || count > MAX_SLOTS || times < 1 || (*p != ',' && *p != '\0'))
            return fail(l, "SLURM_TASKS_PER_NODE '%s': not a list like '2(x3),1'", tasks);
        for (long i = 0; i < times; i++, node++)
            if (node < l->n)
                l->hosts[node].slots = (int)count;
            else
                return fail(l, "SLURM_TASKS_PER_NODE '%s' counts more nodes than the %d of SLURM_JOB_NODELIST",
                            tasks, l->n - first);
        p += *p == ',';
    }
    if (node != l->n)
        return fail(l, "SLURM_TASKS_PER_NODE '%s' counts %d nodes, SLURM_JOB_NODELIST has %d", tasks, node - first,
                    l->n - first);
    return 0;
}

int bmpi_hostlist_add_slurm(struct bmpi_hostlist *l, const char *nodelist, const char *tasks)
{
    char name[MAX_NAME + 1];
    int first = l->n;
    if (*nodelist == '\0')
        return fail(l, "SLURM_JOB_NODELIST is empty");
    for (const char *p = nodelist;;) {
        /* items end at a ',' outside brackets */
        const char *e = p;
        for (int depth = 0; *e != '\0' && (*e != ',' || depth > 0); e++)
            depth += (*e == '[') - (*e == ']');
        if (e == p || expand_node(l, nodelist, name, 0, p, e) != 0)
            return e == p ? fail(l, "SLURM_JOB_NODELIST '%s': an empty node name", nodelist) : -1;
        if (*e == '\0')
            break;
        p = e + 1;
    }
    return tasks != NULL ? apply_tasks(l, first, tasks) : 0;
}

int bmpi_hostlist_total_slots(const struct bmpi_hostlist *l)
{
    long total = 0;
    for (int i = 0; i < l->n; i++)
        total += l->hosts[i].slots;
    return total > MAX_SLOTS ? MAX_SLOTS : (int)total;
}

void bmpi_hostlist_free(struct bmpi_hostlist *l)
{
    for (int i = 0; i < l->n; i++)
        free(l->hosts[i].name);
    free(l->hosts);
    *l = (struct bmpi_hostlist){0};
}
