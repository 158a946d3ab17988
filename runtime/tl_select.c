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

/* ---- processes of other jobs (docs/dynamic.md "Transports") ---------- */

static struct bmpi_tl *other_jobs_tl(void)
{
    for (int t = 0; t < bmpi_world.ntls; t++)
        if (bmpi_world.tls[t].caps.flags & BMPI_TL_OTHER_JOBS)
            return &bmpi_world.tls[t];
    return NULL;
}

static bool is_open(const struct bmpi_tl_component *c)
{
    for (int t = 0; t < bmpi_world.ntls; t++)
        if (bmpi_world.tls[t].ops == c->ops)
            return true;
    return false;
}

/* bmpi_world.tls has room for every component (open_transports). */
int bmpi_tl_open_other_jobs(void)
{
    if (other_jobs_tl())
        return BMPI_OK;
    char msg[1024];
    int n = snprintf(msg, sizeof(msg), "no transport reaches processes of other jobs here; transports tried:");
    for (int i = 0; i < bmpi_tl_ncomponents; i++) {
        const struct bmpi_tl_component *c = &bmpi_tl_components[i];
        char why[WHY_LEN] = "";
        if (!allowed(c->name)) {
            snprintf(why, WHY_LEN, "excluded by BMPI_TRANSPORT=%s", bmpi_env_string("BMPI_TRANSPORT"));
        } else if (is_open(c)) {
            snprintf(why, WHY_LEN, "reaches processes of its own job only");
        } else if (c->ops->query_other_jobs(why, WHY_LEN) == BMPI_OK) {
            struct bmpi_tl *tl = &bmpi_world.tls[bmpi_world.ntls];
            memset(tl, 0, sizeof(*tl));
            tl->ops = c->ops;
            if (c->ops->open(tl) == BMPI_OK && (tl->caps.flags & BMPI_TL_OTHER_JOBS)) {
                bmpi_world.ntls++;
                return BMPI_OK;
            }
            if (tl->priv)
                c->ops->close(tl);
            snprintf(why, WHY_LEN, "failed to open: %s", bmpi_err_reason());
        }
        if (n < (int)sizeof(msg))
            n += snprintf(msg + n, sizeof(msg) - (size_t)n, " %s: %s;", c->name, why[0] ? why : "declined");
    }
    return bmpi_err_set(MPI_ERR_OTHER, "%s", msg);
}

int bmpi_tl_card(void *buf, size_t *len)
{
    struct bmpi_tl *tl = other_jobs_tl();
    if (!tl)
        return bmpi_err_set(MPI_ERR_INTERN, "no transport for other jobs is open");
    unsigned char *p = buf;
    size_t nlen = strlen(tl->caps.name);
    if (nlen > 16)
        return bmpi_err_set(MPI_ERR_INTERN, "transport name %s too long for a card", tl->caps.name);
    p[0] = (unsigned char)nlen;
    memcpy(p + 1, tl->caps.name, nlen);
    size_t clen = 0;
    int err = tl->ops->card(tl, p + 2 + nlen, &clen);
    if (err)
        return err;
    p[1 + nlen] = (unsigned char)clen;
    *len = 2 + nlen + clen;
    return BMPI_OK;
}

int bmpi_proc_index(uint64_t job, int job_rank)
{
    if (job == bmpi_world.job_id)
        return job_rank >= 0 && job_rank < bmpi_world.size ? job_rank : -1;
    for (int i = bmpi_world.size; i < bmpi_world.nprocs; i++)
        if (bmpi_world.peers[i].job == job && bmpi_world.peers[i].job_rank == job_rank)
            return i;
    return -1;
}

/* The open transport a card names, NULL with why in msg. */
static struct bmpi_tl *card_transport(const unsigned char *c, size_t len, char *msg, size_t msg_len)
{
    size_t nlen = len ? c[0] : 0;
    if (len < 2 || len < 2 + nlen || len != 2 + nlen + c[1 + nlen]) {
        snprintf(msg, msg_len, "malformed card (%zu bytes)", len);
        return NULL;
    }
    for (int t = 0; t < bmpi_world.ntls; t++) {
        struct bmpi_tl *tl = &bmpi_world.tls[t];
        if ((tl->caps.flags & BMPI_TL_OTHER_JOBS) && strlen(tl->caps.name) == nlen &&
            memcmp(tl->caps.name, c + 1, nlen) == 0)
            return tl;
    }
    snprintf(msg, msg_len, "it is reached through transport %.*s, which is not open here", (int)nlen,
             (const char *)c + 1);
    return NULL;
}

int bmpi_tl_add_process(uint64_t job, int job_rank, const void *card, size_t len, int *index)
{
    if ((*index = bmpi_proc_index(job, job_rank)) >= 0)
        return BMPI_OK;
    if (job == bmpi_world.job_id)
        return bmpi_err_set(MPI_ERR_INTERN, "rank %d of this job does not exist", job_rank);
    char why[WHY_LEN] = "";
    const unsigned char *c = card;
    struct bmpi_tl *tl = card_transport(c, len, why, sizeof(why));
    int idx = bmpi_world.nprocs;
    struct bmpi_peer *p = tl ? realloc(bmpi_world.peers, (size_t)(idx + 1) * sizeof(*p)) : NULL;
    if (tl && !p)
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory for a peer");
    if (p)
        bmpi_world.peers = p;
    int err = tl ? tl->ops->add_card(tl, idx, job, job_rank, c + 2 + c[0], len - 2 - c[0], why, sizeof(why))
                 : MPI_ERR_OTHER;
    if (err)
        return bmpi_err_set(err, "rank %d on %s cannot reach rank %d of job %016llx: %s", bmpi_world.rank,
                            bmpi_world.hostname, job_rank, (unsigned long long)job, why);
    bmpi_world.peers[idx] = (struct bmpi_peer){.tl = tl, .nodeid = UINT32_MAX, .job = job, .job_rank = job_rank};
    bmpi_world.nprocs++;
    *index = idx;
    if (bmpi_world.verbose)
        fprintf(stderr, "bmpi: rank %d -> rank %d of job %016llx (peer %d): %s\n", bmpi_world.rank, job_rank,
                (unsigned long long)job, idx, tl->caps.name);
    return BMPI_OK;
}

int bmpi_proc_before(int a, int b)
{
    const struct bmpi_peer *pa = &bmpi_world.peers[a], *pb = &bmpi_world.peers[b];
    if (pa->job != pb->job)
        return pa->job < pb->job;
    return pa->job_rank < pb->job_rank;
}
