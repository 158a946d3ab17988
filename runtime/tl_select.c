/*
 * Transport lifecycle and per-peer selection (DESIGN.md, "The transport
 * contract"): open every transport that is allowed and usable here,
 * exchange addresses with one PMIx fence, then give each peer the
 * reachable transport of highest exclusivity.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/error.h"
#include "runtime/pmix.h"
#include "runtime/tl_select.h"
#include "runtime/world.h"

#define WHY_LEN 128

/* Why each component is not open, for the unreachable-peer message. */
struct tl_attempts {
    char why[16][WHY_LEN];
    int opened[16]; /* index into bmpi_world.tls, -1 if not open */
};

/* Is name in the comma-separated BMPI_TRANSPORT list (or is there none)? */
static bool allowed(const char *name)
{
    const char *list = bmpi_env_string("BMPI_TRANSPORT");
    if (!list)
        return true;
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0)
            return true;
        p = end ? end + 1 : p + len;
    }
    return false;
}

static int open_transports(struct tl_attempts *att)
{
    bmpi_world.tls = calloc((size_t)bmpi_tl_ncomponents, sizeof(struct bmpi_tl));
    if (!bmpi_world.tls)
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory");
    for (int i = 0; i < bmpi_tl_ncomponents; i++) {
        const struct bmpi_tl_component *c = &bmpi_tl_components[i];
        att->opened[i] = -1;
        if (!allowed(c->name)) {
            snprintf(att->why[i], WHY_LEN, "excluded by BMPI_TRANSPORT=%s",
                     bmpi_env_string("BMPI_TRANSPORT"));
            continue;
        }
        if (c->ops->query(att->why[i], WHY_LEN) != BMPI_OK)
            continue;
        struct bmpi_tl *tl = &bmpi_world.tls[bmpi_world.ntls];
        tl->ops = c->ops;
        if (c->ops->open(tl) != BMPI_OK) {
            snprintf(att->why[i], WHY_LEN, "failed to open: %s", bmpi_err_reason());
            continue;
        }
        att->opened[i] = bmpi_world.ntls++;
    }
    return BMPI_OK;
}

static int unreachable(int peer, const struct tl_attempts *att, char (*why)[WHY_LEN])
{
    char msg[2048];
    int n = snprintf(msg, sizeof(msg), "rank %d on %s cannot reach rank %d (node %u); transports tried:",
                     bmpi_world.rank, bmpi_world.hostname, peer, bmpi_world.peers[peer].nodeid);
    for (int i = 0; i < bmpi_tl_ncomponents && n < (int)sizeof(msg); i++) {
        const char *reason = att->opened[i] >= 0 ? why[(size_t)att->opened[i] * (size_t)bmpi_world.size + (size_t)peer]
                                                 : att->why[i];
        n += snprintf(msg + n, sizeof(msg) - (size_t)n, " %s: %s;", bmpi_tl_components[i].name,
                      reason[0] ? reason : "declined");
    }
    return bmpi_err_set(MPI_ERR_OTHER, "%s", msg);
}

static int select_per_peer(const struct tl_attempts *att)
{
    int size = bmpi_world.size;
    int *all = malloc((size_t)size * sizeof(int));
    bool *reach = calloc((size_t)bmpi_world.ntls * (size_t)size, sizeof(bool));
    char(*why)[WHY_LEN] = calloc((size_t)bmpi_world.ntls * (size_t)size, WHY_LEN);
    int err = BMPI_OK;
    if (!all || !reach || !why) {
        err = bmpi_err_set(MPI_ERR_NO_MEM, "out of memory");
        goto out;
    }
    for (int r = 0; r < size; r++)
        all[r] = r;
    for (int t = 0; t < bmpi_world.ntls && !err; t++) {
        struct bmpi_tl *tl = &bmpi_world.tls[t];
        err = tl->ops->add_peers(tl, all, size, reach + (size_t)t * (size_t)size, why + (size_t)t * (size_t)size);
    }
    for (int r = 0; r < size && !err; r++) {
        struct bmpi_tl *best = NULL;
        for (int t = 0; t < bmpi_world.ntls; t++)
            if (reach[(size_t)t * (size_t)size + (size_t)r] &&
                (!best || bmpi_world.tls[t].caps.exclusivity > best->caps.exclusivity))
                best = &bmpi_world.tls[t];
        if (!best) {
            err = unreachable(r, att, why);
            break;
        }
        bmpi_world.peers[r].tl = best;
        if (bmpi_world.verbose)
            fprintf(stderr, "bmpi: rank %d -> rank %d: %s\n", bmpi_world.rank, r, best->caps.name);
    }
out:
    free(all);
    free(reach);
    free(why);
    return err;
}

int bmpi_tl_init(void)
{
    struct tl_attempts att;
    memset(&att, 0, sizeof(att));
    int err = open_transports(&att);
    if (!err)
        err = bmpi_pmix_fence();
    if (!err)
        err = select_per_peer(&att);
    return err;
}

void bmpi_tl_finalize(void)
{
    for (int t = bmpi_world.ntls - 1; t >= 0; t--)
        bmpi_world.tls[t].ops->close(&bmpi_world.tls[t]);
    free(bmpi_world.tls);
    bmpi_world.tls = NULL;
    bmpi_world.ntls = 0;
}

int bmpi_tl_progress(void)
{
    int events = 0;
    for (int t = 0; t < bmpi_world.ntls; t++)
        events += bmpi_world.tls[t].ops->progress(&bmpi_world.tls[t]);
    return events;
}
