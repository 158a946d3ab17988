/* Fences and direct modex along the launch tree (launcher/fence.h). */
#include "config.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "launcher/fence.h"
#include "launcher/job.h"
#include "launcher/pmix_server.h"
#include "launcher/tree.h"
#include "launcher/wire.h"

/* PMIx's "not found" and "lost connection", without PMIx's headers here. */
#define FENCE_ERR_LOST (-61)

struct fence {
    struct fence *next;
    char *sig;
    bool *got;      /* per child slot (0..fanout-1), then the local part */
    int missing;    /* parts still to come */
    bool sent;      /* went to the parent; waits for the joined data */
    bmpi_fence_done_fn done;
    void *arg;
    char *parts; /* int32 vertex, uint32 len, bytes; ... */
    size_t len, cap;
};

struct dmodex_wait {
    struct dmodex_wait *next;
    uint64_t id;
    bmpi_fence_done_fn done;
    void *arg;
};

struct bmpi_fences {
    struct fence *list; /* oldest first */
    struct dmodex_wait *waits;
    uint64_t next_id;
};

int bmpi_fences_init(struct bmpi_job *job)
{
    job->fences = calloc(1, sizeof(*job->fences));
    return job->fences != NULL ? 0 : -1;
}

static void fence_free(struct fence *f)
{
    free(f->sig);
    free(f->got);
    free(f->parts);
    free(f);
}

void bmpi_fences_fini(struct bmpi_job *job)
{
    struct bmpi_fences *fs = job->fences;
    if (fs == NULL)
        return;
    while (fs->list != NULL) {
        struct fence *f = fs->list;
        fs->list = f->next;
        if (f->done != NULL)
            f->done(f->arg, FENCE_ERR_LOST, NULL, 0);
        fence_free(f);
    }
    while (fs->waits != NULL) {
        struct dmodex_wait *w = fs->waits;
        fs->waits = w->next;
        w->done(w->arg, FENCE_ERR_LOST, NULL, 0);
        free(w);
    }
    free(fs);
    job->fences = NULL;
}

/* ---- who takes part ------------------------------------------------------------ */

static bool vertex_runs_ranks(const struct bmpi_job *job, int v)
{
    for (int n = 0; n < job->nnodes; n++)
        if (job->node_vertex[n] == v)
            return true;
    return false;
}

/* Which of the job's namespaces nspace (len bytes) is: 0 the job's own,
 * k the k-th spawned ("<job's>.<k>"), -1 another. */
static int namespace_index(const struct bmpi_job *job, const char *nspace, size_t len)
{
    size_t nslen = strlen(job->nspace);
    if (len < nslen || strncmp(nspace, job->nspace, nslen) != 0)
        return -1;
    if (len == nslen)
        return 0;
    if (nspace[nslen] != '.' || len == nslen + 1)
        return -1;
    int k = 0;
    for (size_t i = nslen + 1; i < len; i++) {
        if (nspace[i] < '0' || nspace[i] > '9' || k > 1000000)
            return -1;
        k = k * 10 + (nspace[i] - '0');
    }
    return k;
}

/* The vertices whose processes a fence names: by the vertex of each
 * process (rank, or all of a namespace for a wildcard); a namespace not
 * ours (not placed by us) means every vertex with ranks. */
static void participants(const struct bmpi_job *job, const char *sig, bool *part)
{
    for (int v = 0; v < job->nvertices; v++)
        part[v] = false;
    for (const char *p = sig; *p;) {
        size_t len = strcspn(p, ",");
        const char *colon = memrchr(p, ':', len);
        int ns = colon != NULL ? namespace_index(job, p, (size_t)(colon - p)) : -1;
        int rank = ns >= 0 && colon[1] != '*' ? atoi(colon + 1) : -1;
        bool found = false;
        for (int i = 0; ns >= 0 && i < job->nranks; i++) {
            const struct bmpi_rank *r = &job->ranks[i];
            if (r->ns == ns && (rank < 0 || r->rank == rank)) {
                part[r->vertex] = true;
                found = true;
            }
        }
        for (int v = 0; !found && v < job->nvertices; v++)
            part[v] = part[v] || vertex_runs_ranks(job, v);
        p += len + (p[len] == ',');
    }
}

static bool subtree_takes_part(const struct bmpi_job *job, int root, const bool *part)
{
    for (int v = root; v < job->nvertices; v++)
        if (part[v] && bmpi_tree_in_subtree(job->tree, root, v))
            return true;
    return false;
}

/* A new record of sig: which parts this vertex waits for. */
static struct fence *fence_new(struct bmpi_job *job, const char *sig)
{
    const struct bmpi_tree *t = job->tree;
    struct fence *f = calloc(1, sizeof(*f));
    bool *part = calloc((size_t)job->nvertices, sizeof(*part));
    if (f == NULL || part == NULL || (f->sig = strdup(sig)) == NULL ||
        (f->got = calloc((size_t)t->fanout + 1, sizeof(*f->got))) == NULL) {
        free(part);
        if (f != NULL)
            fence_free(f);
        return NULL;
    }
    participants(job, sig, part);
    for (int i = 0; i < t->fanout; i++) {
        int child = t->self * t->fanout + 1 + i;
        if (child < t->nvertices && subtree_takes_part(job, child, part))
            f->missing++;
        else
            f->got[i] = true; /* nothing will come from there */
    }
    if (part[t->self])
        f->missing++;
    else
        f->got[t->fanout] = true;
    free(part);
    struct fence **tail = &job->fences->list;
    while (*tail != NULL)
        tail = &(*tail)->next;
    *tail = f;
    return f;
}

/* The oldest record of sig still missing the part of slot. */
static struct fence *fence_for(struct bmpi_job *job, const char *sig, int slot)
{
    for (struct fence *f = job->fences->list; f != NULL; f = f->next)
        if (!f->sent && !f->got[slot] && strcmp(f->sig, sig) == 0)
            return f;
    return fence_new(job, sig);
}

static int add_parts(struct fence *f, const char *parts, size_t len)
{
    if (f->len + len > f->cap) {
        size_t cap = f->cap ? f->cap : 4096;
        while (cap < f->len + len)
            cap *= 2;
        char *grown = realloc(f->parts, cap);
        if (grown == NULL)
            return -1;
        f->parts = grown;
        f->cap = cap;
    }
    if (len > 0)
        memcpy(f->parts + f->len, parts, len);
    f->len += len;
    return 0;
}

static int add_own_part(struct bmpi_job *job, struct fence *f, const char *data, size_t len)
{
    int32_t vertex = job->self_vertex;
    uint32_t n = (uint32_t)len;
    char hdr[sizeof(vertex) + sizeof(n)];
    memcpy(hdr, &vertex, sizeof(vertex));
    memcpy(hdr + sizeof(vertex), &n, sizeof(n));
    return add_parts(f, hdr, sizeof(hdr)) == 0 ? add_parts(f, data, len) : -1;
}

/* ---- completion ------------------------------------------------------------------ */

static int by_vertex(const void *a, const void *b)
{
    int32_t va, vb;
    memcpy(&va, *(const char *const *)a, sizeof(va));
    memcpy(&vb, *(const char *const *)b, sizeof(vb));
    return (va > vb) - (va < vb);
}

/* The parts' data, in vertex order, as one malloc'd blob. */
static char *join_parts(const struct fence *f, size_t *out_len)
{
    size_t n = 0;
    for (size_t off = 0; off + 8 <= f->len; n++) {
        uint32_t len;
        memcpy(&len, f->parts + off + 4, sizeof(len));
        off += 8 + len;
    }
    const char **at = calloc(n ? n : 1, sizeof(*at));
    char *blob = malloc(f->len ? f->len : 1);
    if (at == NULL || blob == NULL) {
        free(at);
        free(blob);
        return NULL;
    }
    size_t i = 0;
    for (size_t off = 0; off + 8 <= f->len; i++) {
        uint32_t len;
        at[i] = f->parts + off;
        memcpy(&len, f->parts + off + 4, sizeof(len));
        off += 8 + len;
    }
    qsort(at, n, sizeof(*at), by_vertex);
    size_t o = 0;
    for (i = 0; i < n; i++) {
        uint32_t len;
        memcpy(&len, at[i] + 4, sizeof(len));
        memcpy(blob + o, at[i] + 8, len);
        o += len;
    }
    free(at);
    *out_len = o;
    return blob;
}

static void fence_unlink(struct bmpi_job *job, struct fence *f)
{
    for (struct fence **p = &job->fences->list; *p != NULL; p = &(*p)->next)
        if (*p == f) {
            *p = f->next;
            return;
        }
}

static void release(struct bmpi_job *job, struct fence *f, const char *data, size_t len)
{
    fence_unlink(job, f);
    if (f->done != NULL)
        f->done(f->arg, 0, data, len);
    fence_free(f);
}

/* Every part this vertex waits for is in: up to the parent, or (the head)
 * to everyone. */
static void fence_progress(struct bmpi_job *job, struct fence *f)
{
    if (f->missing > 0 || f->sent)
        return;
    uint32_t siglen = (uint32_t)strlen(f->sig);
    char *msg = malloc(sizeof(siglen) + siglen);
    if (msg == NULL)
        return;
    memcpy(msg, &siglen, sizeof(siglen));
    memcpy(msg + sizeof(siglen), f->sig, siglen);
    if (job->self_vertex != 0) {
        f->sent = true;
        bmpi_tree_sendv(job->tree, bmpi_tree_parent(job->tree, job->self_vertex), BMPI_WIRE_FENCE, msg,
                        sizeof(siglen) + siglen, f->parts, f->len);
    } else {
        size_t len = 0;
        char *blob = join_parts(f, &len);
        if (blob != NULL) {
            bmpi_tree_sendv(job->tree, BMPI_TREE_ALL, BMPI_WIRE_FENCE_DONE, msg, sizeof(siglen) + siglen, blob,
                            len);
            release(job, f, blob, len);
        }
        free(blob);
    }
    free(msg);
}

void bmpi_fence_local(struct bmpi_job *job, struct bmpi_fence_req *req)
{
    struct fence *f = job->fences != NULL ? fence_for(job, req->sig, job->tree->fanout) : NULL;
    if (f == NULL || add_own_part(job, f, req->data, req->len) != 0) {
        req->done(req->arg, FENCE_ERR_LOST, NULL, 0);
    } else {
        f->got[job->tree->fanout] = true;
        f->missing--;
        f->done = req->done;
        f->arg = req->arg;
        fence_progress(job, f);
    }
    free(req->sig);
    free(req->data);
    free(req);
}

/* "uint32 siglen, sig" at the start of a payload: the sig, and where the
 * rest starts. */
static char *read_sig(const void *payload, size_t len, size_t *rest)
{
    uint32_t siglen;
    if (len < sizeof(siglen))
        return NULL;
    memcpy(&siglen, payload, sizeof(siglen));
    if (len - sizeof(siglen) < siglen)
        return NULL;
    *rest = sizeof(siglen) + siglen;
    return strndup((const char *)payload + sizeof(siglen), siglen);
}

static void from_child(struct bmpi_job *job, int child, const void *payload, size_t len)
{
    const struct bmpi_tree *t = job->tree;
    int slot = child - (t->self * t->fanout + 1);
    size_t rest;
    char *sig = read_sig(payload, len, &rest);
    if (sig == NULL || slot < 0 || slot >= t->fanout) {
        free(sig);
        return;
    }
    struct fence *f = fence_for(job, sig, slot);
    free(sig);
    if (f == NULL || f->got[slot] || add_parts(f, (const char *)payload + rest, len - rest) != 0)
        return;
    f->got[slot] = true;
    f->missing--;
    fence_progress(job, f);
}

static void joined(struct bmpi_job *job, const void *payload, size_t len)
{
    size_t rest;
    char *sig = read_sig(payload, len, &rest);
    if (sig == NULL)
        return;
    for (struct fence *f = job->fences->list; f != NULL; f = f->next)
        if (f->sent && strcmp(f->sig, sig) == 0) {
            release(job, f, (const char *)payload + rest, len - rest);
            break;
        }
    free(sig);
}

/* ---- direct modex ----------------------------------------------------------------- */

void bmpi_fence_dmodex_ask(struct bmpi_job *job, struct bmpi_dmodex_req *req)
{
    struct dmodex_wait *w = calloc(1, sizeof(*w));
    int target = -1;
    int ns = namespace_index(job, req->nspace, strlen(req->nspace));
    for (int i = 0; ns >= 0 && i < job->nranks && target < 0; i++)
        if (job->ranks[i].ns == ns && job->ranks[i].rank == req->rank)
            target = i;
    bool ours = target >= 0;
    if (w == NULL || !ours || job->fences == NULL) {
        req->done(req->arg, FENCE_ERR_LOST, NULL, 0);
        free(w);
        free(req);
        return;
    }
    *w = (struct dmodex_wait){.next = job->fences->waits, .id = ++job->fences->next_id, .done = req->done,
                              .arg = req->arg};
    job->fences->waits = w;
    struct bmpi_wire_dmodex_req m = {.id = w->id, .rank = req->rank};
    bmpi_tree_sendv(job->tree, job->ranks[target].vertex, BMPI_WIRE_DMODEX_REQ, &m, sizeof(m), req->nspace,
                    strlen(req->nspace));
    free(req);
}

void bmpi_fence_dmodex_answer(struct bmpi_job *job, struct bmpi_dmodex_data *d)
{
    struct bmpi_wire_dmodex_resp m = {.id = d->id, .status = d->status};
    bmpi_tree_sendv(job->tree, d->requester, BMPI_WIRE_DMODEX_RESP, &m, sizeof(m), d->data, d->len);
    free(d->data);
    free(d);
}

static void dmodex_request(struct bmpi_job *job, int from, const void *payload, size_t len)
{
    struct bmpi_wire_dmodex_req m;
    if (len < sizeof(m) || len - sizeof(m) >= 256)
        return;
    memcpy(&m, payload, sizeof(m));
    char nspace[256];
    memcpy(nspace, (const char *)payload + sizeof(m), len - sizeof(m));
    nspace[len - sizeof(m)] = '\0';
    bmpi_pmix_dmodex_serve(job, nspace, m.rank, m.id, from);
}

static void dmodex_response(struct bmpi_job *job, const void *payload, size_t len)
{
    struct bmpi_wire_dmodex_resp m;
    if (len < sizeof(m))
        return;
    memcpy(&m, payload, sizeof(m));
    for (struct dmodex_wait **p = &job->fences->waits; *p != NULL; p = &(*p)->next) {
        struct dmodex_wait *w = *p;
        if (w->id != m.id)
            continue;
        *p = w->next;
        w->done(w->arg, m.status, (const char *)payload + sizeof(m), len - sizeof(m));
        free(w);
        return;
    }
}

int bmpi_fence_deliver(struct bmpi_job *job, const struct bmpi_tree_hdr *h, const void *payload)
{
    if (job->fences == NULL)
        return 0;
    switch (h->type) {
    case BMPI_WIRE_FENCE:
        from_child(job, h->src, payload, h->len);
        return 1;
    case BMPI_WIRE_FENCE_DONE:
        joined(job, payload, h->len);
        return 1;
    case BMPI_WIRE_DMODEX_REQ:
        dmodex_request(job, h->src, payload, h->len);
        return 1;
    case BMPI_WIRE_DMODEX_RESP:
        dmodex_response(job, payload, h->len);
        return 1;
    default:
        return 0;
    }
}
