/*
 * Every BMPI_* environment variable bmpi reads, in one table with what it
 * accepts, and the strict parsing of them (docs/environment.md).
 *
 * MPI_Init checks every variable that is set (bmpi_env_check) and fails on
 * the first bad value with one message: "BMPI_X=value: not ... (accepted:
 * ...)". A bad value is never replaced by a default. The readers in the
 * runtime, the collectives and the transports then get their values from
 * the getters, which parse by the same table. The table lives here, below
 * the runtime, so that a transport reads its variables without reaching up.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "runtime/error.h"
#include "transport/transport.h"

enum env_kind {
    ENV_SWITCH, /* 0/1, off/on, no/yes, false/true (any case), or auto */
    ENV_UINT,   /* a decimal whole number in [min, max] */
    ENV_SIZE,   /* bytes in [min, max], optionally with k, m or g (KiB, MiB, GiB) */
    ENV_ENUM,   /* one of names[] (the index), or auto */
    ENV_LIST,   /* a comma-separated list of names[] */
    ENV_NAME,   /* a non-empty name that bmpi passes on (a provider) */
    ENV_DEVICE, /* a device name with an optional ":port", port 1-255 */
};

#define MAX_NAMES 5

struct env_var {
    const char *name;
    enum env_kind kind;
    unsigned long long min, max;
    const char *names[MAX_NAMES]; /* ENUM, LIST */
};

#define SWITCH(n) {n, ENV_SWITCH, 0, 0, {NULL}}
#define UINT(n, lo, hi) {n, ENV_UINT, lo, hi, {NULL}}
#define SIZE(n, lo, hi) {n, ENV_SIZE, lo, hi, {NULL}}
#define ALGO(n, ...) {n, ENV_ENUM, 0, 0, {__VA_ARGS__}}
#define KIB(x) ((unsigned long long)(x) << 10)
#define MIB(x) ((unsigned long long)(x) << 20)

static const struct env_var vars[] = {
    /* runtime */
    UINT("BMPI_BOOTSTRAP_TIMEOUT", 1, 86400),
    SWITCH("BMPI_OVERSUBSCRIBED"),
    UINT("BMPI_VERBOSE", 0, 2),
    {"BMPI_TRANSPORT", ENV_LIST, 0, 0, {"self", "shm", "verbs", "ofi"}},
    /* set by MPI_Comm_spawn for the processes it starts (docs/dynamic.md) */
    {"BMPI_PARENT_PORT", ENV_NAME, 0, 0, {NULL}},
    /* shm */
    SIZE("BMPI_SHM_MAX_AM", KIB(4), MIB(4)),
    SIZE("BMPI_SHM_EAGER_LIMIT", 0, MIB(4)),
    UINT("BMPI_SHM_FASTPATH_THRESHOLD", 0, UINT32_MAX),
    UINT("BMPI_SHM_FASTPATH_MAX", 0, 4096),
    SIZE("BMPI_SHM_RING_SIZE", KIB(4), MIB(1024)),
    UINT("BMPI_SHM_SMALL_CELLS", 1, 65536),
    UINT("BMPI_SHM_LARGE_CELLS", 1, 65536),
    SWITCH("BMPI_SHM_CMA"),
    SIZE("BMPI_SHM_RGET_MIN", 0, SIZE_MAX),
    SWITCH("BMPI_SHM_SHARED_COPY"),
    SWITCH("BMPI_SHM_HEAP"),
    /* collectives */
    SWITCH("BMPI_COLL_SHM"),
    SIZE("BMPI_COLL_SHM_SLOT", KIB(1), MIB(1024)),
    SIZE("BMPI_COLL_SHM_DIRECT", 0, SIZE_MAX),
    ALGO("BMPI_COLL_BARRIER", "dissemination"),
    ALGO("BMPI_COLL_BCAST", "binomial", "scatter_allgather", "pipeline", "linear"),
    ALGO("BMPI_COLL_REDUCE", "binomial", "rabenseifner", "pipeline", "halves"),
    ALGO("BMPI_COLL_ALLREDUCE", "recursive_doubling", "rabenseifner", "ring"),
    ALGO("BMPI_COLL_ALLGATHER", "recursive_doubling", "bruck", "ring", "linear"),
    ALGO("BMPI_COLL_ALLTOALL", "bruck", "pairwise", "linear"),
    ALGO("BMPI_COLL_REDUCE_SCATTER", "ring", "basic", "recursive_halving"),
    ALGO("BMPI_COLL_GATHER", "linear", "binomial"),
    ALGO("BMPI_COLL_SCATTER", "linear", "binomial"),
    ALGO("BMPI_COLL_SCAN", "recursive_doubling"),
    /* one-sided communication */
    SWITCH("BMPI_RMA_NET_ATOMICS"),
    SIZE("BMPI_RMA_BATCH", 0, KIB(32)),
    SIZE("BMPI_RMA_ACC_PULL", 0, SIZE_MAX),
    /* ofi */
    {"BMPI_OFI_PROVIDER", ENV_NAME, 0, 0, {NULL}},
    SWITCH("BMPI_OFI_RMA"),
    SWITCH("BMPI_OFI_MR_LOCAL"),
    SWITCH("BMPI_OFI_MULTI_RECV"),
    SWITCH("BMPI_OFI_FAULT_RKEY"),
    SWITCH("BMPI_OFI_KALLSYMS"),
    SWITCH("BMPI_OFI_FLUSH_READ"),
    SIZE("BMPI_OFI_MAX_AM", KIB(1), KIB(1024) + 65535),
    SIZE("BMPI_OFI_EAGER_LIMIT", 0, KIB(1024) + 65535),
    UINT("BMPI_OFI_RX_BUFS", 2, 65536),
    UINT("BMPI_OFI_TX_BUFS", 1, 65536),
    SIZE("BMPI_OFI_MULTI_RECV_SIZE", 0, MIB(1024)),
    UINT("BMPI_OFI_MR_CACHE", 0, 1u << 20),
    SIZE("BMPI_OFI_RMA_LIMIT", 1, MIB(1024)),
    SIZE("BMPI_OFI_RMA_PIECE", 0, SIZE_MAX),
    SIZE("BMPI_OFI_RMA_INFLIGHT", 0, SIZE_MAX),
    /* verbs */
    {"BMPI_VERBS_DEVICE", ENV_DEVICE, 1, 255, {NULL}},
    SIZE("BMPI_VERBS_MAX_AM", KIB(1), MIB(1)),
    SIZE("BMPI_VERBS_EAGER_LIMIT", 0, MIB(1)),
    UINT("BMPI_VERBS_RX_DEPTH", 4, 4096),
    UINT("BMPI_VERBS_SQ_DEPTH", 8, 16384),
    UINT("BMPI_VERBS_TX_BUFS", 2, 65536),
    UINT("BMPI_VERBS_MR_CACHE", 0, 1u << 20),
    SIZE("BMPI_VERBS_MAX_INLINE", 0, 1024),
    SWITCH("BMPI_VERBS_ODP"),
    SWITCH("BMPI_VERBS_LEAVE_PINNED"),
    UINT("BMPI_VERBS_SL", 0, 15),
    UINT("BMPI_VERBS_GID_INDEX", 0, 255),
    UINT("BMPI_VERBS_CONNECT_TIMEOUT", 1, 3600),
    SWITCH("BMPI_VERBS_FORK_SAFE"),
    SWITCH("BMPI_VERBS_FAULT_RKEY"),
};

static const char *const switch_off[] = {"0", "off", "no", "false"};
static const char *const switch_on[] = {"1", "on", "yes", "true"};

static const struct env_var *lookup(const char *name)
{
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
        if (!strcmp(vars[i].name, name))
            return &vars[i];
    /* a reader of a variable the table lacks: a bug, found by any test */
    fprintf(stderr, "bmpi: internal error: %s is not in transport/env.c's table\n", name);
    abort();
}

static int word_index(const char *const *words, size_t n, const char *v, size_t len)
{
    for (size_t i = 0; i < n && words[i]; i++)
        if (strlen(words[i]) == len && !strncasecmp(words[i], v, len))
            return (int)i;
    return -1;
}

static int parse_switch(const char *v)
{
    if (!strcasecmp(v, "auto"))
        return -1;
    size_t len = strlen(v);
    if (word_index(switch_off, 4, v, len) >= 0)
        return 0;
    if (word_index(switch_on, 4, v, len) >= 0)
        return 1;
    return -2;
}

/* A decimal number, with k/m/g when size: false if it is not one or
 * does not fit 64 bits. */
static bool parse_number(const char *v, bool size, unsigned long long *out)
{
    if (*v < '0' || *v > '9')
        return false; /* no sign, blank or base prefix sneaks through strtoull */
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (errno)
        return false;
    if (size && *end) {
        const char *units = "kmg";
        const char *u = strchr(units, end[0] | 0x20);
        if (!u || end[1])
            return false;
        int shift = 10 * (int)(u - units + 1);
        if (x > (ULLONG_MAX >> shift))
            return false;
        x <<= shift;
        end++;
    }
    *out = x;
    return !*end;
}

static bool list_ok(const struct env_var *e, const char *v)
{
    for (const char *p = v;;) {
        size_t len = strcspn(p, ",");
        if (word_index(e->names, MAX_NAMES, p, len) < 0)
            return false;
        if (!p[len])
            return true;
        p += len + 1;
    }
}

static bool device_ok(const struct env_var *e, const char *v)
{
    const char *colon = strchr(v, ':');
    if (colon == v)
        return false;
    unsigned long long port;
    return !colon || (parse_number(colon + 1, false, &port) && port >= e->min && port <= e->max);
}

static bool value_ok(const struct env_var *e, const char *v)
{
    unsigned long long x;
    switch (e->kind) {
    case ENV_SWITCH:
        return parse_switch(v) != -2;
    case ENV_UINT:
    case ENV_SIZE:
        return parse_number(v, e->kind == ENV_SIZE, &x) && x >= e->min && x <= e->max;
    case ENV_ENUM:
        return !strcasecmp(v, "auto") || word_index(e->names, MAX_NAMES, v, strlen(v)) >= 0;
    case ENV_LIST:
        return list_ok(e, v);
    case ENV_NAME:
        return true;
    case ENV_DEVICE:
        return device_ok(e, v);
    }
    return false;
}

static void join_names(const struct env_var *e, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = 0;
    for (int i = 0; i < MAX_NAMES && e->names[i] && n < len; i++)
        n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? ", " : "", e->names[i]);
}

/* The "not ... (accepted: ...)" part of the message for e. */
static void describe(const struct env_var *e, char *buf, size_t len)
{
    char names[160];
    join_names(e, names, sizeof names);
    switch (e->kind) {
    case ENV_SWITCH:
        snprintf(buf, len, "not an on/off switch (accepted: 0, 1, off, on, no, yes, false, "
                           "true, auto)");
        break;
    case ENV_UINT:
        snprintf(buf, len, "not a whole number from %llu to %llu (accepted: %llu to %llu)",
                 e->min, e->max, e->min, e->max);
        break;
    case ENV_SIZE:
        snprintf(buf, len,
                 "not a size from %llu to %llu bytes (accepted: %llu to %llu, a whole number "
                 "with an optional k, m or g for KiB, MiB, GiB)",
                 e->min, e->max, e->min, e->max);
        break;
    case ENV_ENUM:
        snprintf(buf, len, "not an algorithm of this collective (accepted: auto, %s)", names);
        break;
    case ENV_LIST:
        snprintf(buf, len, "not a list of transports (accepted: comma-separated names from %s)",
                 names);
        break;
    case ENV_NAME:
        snprintf(buf, len, "not a name (accepted: a libfabric provider name)");
        break;
    case ENV_DEVICE:
        snprintf(buf, len, "not a device (accepted: an RDMA device name, optionally with :port, "
                           "port %llu to %llu)",
                 e->min, e->max);
        break;
    }
}

static int check_one(const struct env_var *e)
{
    const char *v = getenv(e->name);
    if (!v || (*v && value_ok(e, v)))
        return BMPI_OK;
    char why[300];
    describe(e, why, sizeof why);
    return bmpi_err_set(MPI_ERR_ARG, "%s=%s: %s%s", e->name, v, *v ? "" : "empty, ", why);
}

int bmpi_env_check(void)
{
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
        int err = check_one(&vars[i]);
        if (err)
            return err;
    }
    return BMPI_OK;
}

/* The variable's value when it is set and valid: MPI_Init has refused
 * any other, so NULL here means "unset" to the readers. */
static const char *valid_value(const struct env_var *e)
{
    const char *v = getenv(e->name);
    return v && *v && value_ok(e, v) ? v : NULL;
}

int bmpi_env_switch(const char *name)
{
    const char *v = valid_value(lookup(name));
    return v ? parse_switch(v) : -1;
}

unsigned long long bmpi_env_uint(const char *name, unsigned long long dflt)
{
    const struct env_var *e = lookup(name);
    const char *v = valid_value(e);
    unsigned long long x = dflt;
    if (v)
        parse_number(v, e->kind == ENV_SIZE, &x);
    return x;
}

int bmpi_env_enum(const char *name)
{
    const struct env_var *e = lookup(name);
    const char *v = valid_value(e);
    return v ? word_index(e->names, MAX_NAMES, v, strlen(v)) : -1;
}

const char *bmpi_env_string(const char *name) { return valid_value(lookup(name)); }
