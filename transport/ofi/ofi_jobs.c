/*
 * ofi: processes of other jobs (docs/dynamic.md "Transports").
 *
 * Such a process becomes a peer from its card (provider name and endpoint
 * address) at an index the runtime chooses, at or above the world size;
 * peers[] and the order state grow to hold it. Messages to it carry this
 * process's job and rank (struct ofi_wire_job), since it knows us by an
 * index of its own; messages from it are mapped back through `foreign`.
 * One may come before its card has been added here (the other side adds
 * us first and sends at once): it is parked, and progress delivers it, in
 * order, once add_card has made the sender a peer.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_cm.h>
#include <rdma/fi_errno.h>

#include "runtime/error.h"
#include "runtime/world.h"
#include "transport/ofi/ofi.h"

int ofi_query_other_jobs(char *why, size_t why_len)
{
    /* no shortcut for a job on one node here: shm cannot reach other jobs */
    struct fi_info *info = ofi_choose_provider(why, why_len, false);
    if (!info)
        return MPI_ERR_OTHER;
    fi_freeinfo(info);
    return BMPI_OK;
}

/* The card: provider name length, provider name, address length,
 * address. */
int ofi_card(struct bmpi_tl *tl, void *buf, size_t *len)
{
    struct ofi_state *s = tl->priv;
    unsigned char *p = buf;
    size_t plen = strlen(s->prov);
    size_t addrlen = BMPI_TL_CARD_MAX - 2 - plen;
    if (plen > UINT8_MAX || 2 + plen >= BMPI_TL_CARD_MAX)
        return bmpi_err_set(MPI_ERR_INTERN, "ofi: provider name %s too long for a card", s->prov);
    int rc = fi_getname(&s->ep->fid, p + 2 + plen, &addrlen);
    if (rc || addrlen > UINT8_MAX)
        return bmpi_err_set(MPI_ERR_OTHER, "ofi (%s): fi_getname for a card: %s", s->prov,
                            rc ? fi_strerror(-rc) : "address longer than 255 bytes");
    p[0] = (unsigned char)plen;
    memcpy(p + 1, s->prov, plen);
    p[1 + plen] = (unsigned char)addrlen;
    *len = 2 + plen + addrlen;
    return BMPI_OK;
}

/* Parked messages of (job, rank) go to the replay list, oldest first. */
static void release_parked(struct ofi_state *s, uint64_t job, int rank)
{
    struct ofi_parked **tail = &s->replay;
    while (*tail)
        tail = &(*tail)->next;
    for (struct ofi_parked **p = &s->parked; *p;) {
        struct ofi_parked *m = *p;
        if (m->job == job && m->rank == rank) {
            *p = m->next;
            m->next = NULL;
            *tail = m;
            tail = &m->next;
        } else {
            p = &m->next;
        }
    }
}

int ofi_add_card(struct bmpi_tl *tl, int peer, uint64_t job, int job_rank, const void *card, size_t len, char *why,
                 size_t why_len)
{
    struct ofi_state *s = tl->priv;
    const unsigned char *c = card;
    size_t plen = len ? c[0] : 0;
    size_t alen = len > 1 + plen ? c[1 + plen] : 0;
    if (len < 2 || len != 2 + plen + alen) {
        snprintf(why, why_len, "malformed ofi card (%zu bytes)", len);
        return MPI_ERR_OTHER;
    }
    if (plen != strlen(s->prov) || memcmp(c + 1, s->prov, plen) != 0) {
        snprintf(why, why_len, "it uses provider %.*s, this process %.40s", (int)(plen > 40 ? 40 : plen),
                 (const char *)c + 1, s->prov);
        return MPI_ERR_OTHER;
    }
    struct ofi_foreign *f = realloc(s->foreign, (size_t)(s->nforeign + 1) * sizeof(*f));
    if (!f) {
        snprintf(why, why_len, "out of memory");
        return MPI_ERR_NO_MEM;
    }
    s->foreign = f;
    int err = ofi_peers_grow(s, peer + 1);
    if (err) {
        snprintf(why, why_len, "%s", bmpi_err_reason());
        return err;
    }
    int n = fi_av_insert(s->av, c + 2 + plen, 1, &s->peers[peer].addr, 0, NULL);
    if (n != 1) {
        snprintf(why, why_len, "fi_av_insert: %s", n < 0 ? fi_strerror(-n) : "address rejected");
        return MPI_ERR_OTHER;
    }
    f[s->nforeign++] = (struct ofi_foreign){.job = job, .rank = job_rank, .peer = peer};
    release_parked(s, job, job_rank);
    return BMPI_OK;
}

/* A linear search: a job connects to few others, and only their traffic
 * comes here. */
int ofi_foreign_peer(const struct ofi_state *s, uint64_t job, int rank)
{
    for (int i = 0; i < s->nforeign; i++)
        if (s->foreign[i].job == job && s->foreign[i].rank == rank)
            return s->foreign[i].peer;
    return -1;
}

int ofi_park(struct ofi_state *s, uint64_t job, int rank, const void *msg, size_t len)
{
    struct ofi_parked *m = malloc(sizeof(*m) + len);
    if (!m)
        return -1;
    *m = (struct ofi_parked){.job = job, .rank = rank, .len = len};
    memcpy(m->msg, msg, len);
    struct ofi_parked **tail = &s->parked;
    while (*tail)
        tail = &(*tail)->next;
    *tail = m;
    return 0;
}

int ofi_replay(struct ofi_state *s)
{
    int events = 0;
    struct ofi_parked *m;
    while ((m = s->replay)) {
        s->replay = m->next;
        ofi_deliver(s, (const char *)m->msg, m->len);
        free(m);
        events++;
    }
    return events;
}

static void free_list(struct ofi_parked *m)
{
    while (m) {
        struct ofi_parked *next = m->next;
        free(m);
        m = next;
    }
}

void ofi_jobs_fini(struct ofi_state *s)
{
    free_list(s->parked);
    free_list(s->replay);
    s->parked = s->replay = NULL;
    free(s->foreign);
    s->foreign = NULL;
    s->nforeign = 0;
}
