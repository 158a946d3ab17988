/* The name service of bmpirun (docs/dynamic.md "Name service").
 *
 * One list of published (key, value) pairs, each with its publisher, its
 * range and its persistence. What one bmpirun can give of PMIx's
 * semantics:
 *   range     PMIX_RANGE_PROC_LOCAL: the publisher alone sees it;
 *             PMIX_RANGE_NAMESPACE: processes of the publisher's namespace;
 *             any other (the default, session): every process this bmpirun
 *             serves. A lookup that names a range too sees only what
 *             is visible to it under both ranges.
 *   persist   PMIX_PERSIST_PROC: until the publisher finalizes or is gone;
 *             PMIX_PERSIST_FIRST_READ: until one lookup returned it;
 *             every other (the default): until bmpirun ends.
 * A key visible to the publisher already is PMIX_ERR_DUPLICATE_KEY;
 * unpublish removes only what the calling process published. Lookups
 * answer at once: PMIX_WAIT is not honoured (not found is PMIX_ERR_NOT_FOUND).
 */
#include "config.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <pmix.h>

#include "launcher/job.h"
#include "launcher/names.h"
#include "launcher/pmix_server.h"

struct name_entry {
    struct name_entry *next;
    pmix_proc_t owner;
    pmix_key_t key;
    pmix_value_t value;
    pmix_data_range_t range;
    pmix_persistence_t persist;
};

struct bmpi_names {
    pthread_mutex_t lock;
    struct name_entry *head;
};

int bmpi_names_init(struct bmpi_job *job)
{
    struct bmpi_names *n = calloc(1, sizeof(*n));
    if (n == NULL) {
        bmpi_say("out of memory for the name service");
        return -1;
    }
    pthread_mutex_init(&n->lock, NULL);
    job->names = n;
    return 0;
}

/* The store of the job the PMIx server serves (the upcalls carry no
 * context of ours); it lives until the server has stopped. */
static struct bmpi_names *served(void)
{
    struct bmpi_job *job = bmpi_pmix_served_job();
    return job != NULL ? job->names : NULL;
}

static void entry_free(struct name_entry *e)
{
    PMIX_VALUE_DESTRUCT(&e->value);
    free(e);
}

void bmpi_names_free(struct bmpi_job *job)
{
    struct bmpi_names *n = job->names;
    if (n == NULL)
        return;
    for (struct name_entry *e = n->head, *next; e != NULL; e = next) {
        next = e->next;
        entry_free(e);
    }
    pthread_mutex_destroy(&n->lock);
    free(n);
    job->names = NULL;
}

static bool same_proc(const pmix_proc_t *a, const pmix_proc_t *b)
{
    return PMIX_CHECK_NSPACE(a->nspace, b->nspace) && a->rank == b->rank;
}

/* May a process `who` see what `owner` published with `range`? */
static bool in_range(pmix_data_range_t range, const pmix_proc_t *owner, const pmix_proc_t *who)
{
    switch (range) {
    case PMIX_RANGE_PROC_LOCAL: return same_proc(owner, who);
    case PMIX_RANGE_NAMESPACE: return PMIX_CHECK_NSPACE(owner->nspace, who->nspace);
    default: return true;
    }
}

/* Is e visible to `who`, a lookup of range `asked` (PMIX_RANGE_UNDEF:
 * none given)? */
static bool visible(const struct name_entry *e, const pmix_proc_t *who, pmix_data_range_t asked)
{
    return in_range(e->range, &e->owner, who) && (asked == PMIX_RANGE_UNDEF || in_range(asked, &e->owner, who));
}

static struct name_entry *find_visible(struct bmpi_names *n, const char *key, const pmix_proc_t *who,
                                       pmix_data_range_t asked)
{
    for (struct name_entry *e = n->head; e != NULL; e = e->next)
        if (PMIX_CHECK_KEY(e, key) && visible(e, who, asked))
            return e;
    return NULL;
}

static void unlink_entry(struct bmpi_names *n, struct name_entry *gone)
{
    for (struct name_entry **p = &n->head; *p != NULL; p = &(*p)->next) {
        if (*p == gone) {
            *p = gone->next;
            entry_free(gone);
            return;
        }
    }
}

/* The directives among an info array; everything else is data. */
static bool is_directive(const pmix_info_t *i)
{
    static const char *const keys[] = {PMIX_RANGE, PMIX_PERSISTENCE, PMIX_USERID, PMIX_GRPID,
                                       PMIX_TIMEOUT, PMIX_WAIT, NULL};
    for (int k = 0; keys[k] != NULL; k++)
        if (PMIX_CHECK_KEY(i, keys[k]))
            return true;
    return false;
}

static void read_directives(const pmix_info_t info[], size_t ninfo, pmix_data_range_t *range,
                            pmix_persistence_t *persist)
{
    for (size_t i = 0; i < ninfo; i++) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_RANGE) && info[i].value.type == PMIX_DATA_RANGE)
            *range = info[i].value.data.range;
        else if (PMIX_CHECK_KEY(&info[i], PMIX_PERSISTENCE) && info[i].value.type == PMIX_PERSIST)
            *persist = info[i].value.data.persist;
    }
}

static pmix_status_t add_entry(struct bmpi_names *n, const pmix_proc_t *proc, const pmix_info_t *datum,
                               pmix_data_range_t range, pmix_persistence_t persist)
{
    if (find_visible(n, datum->key, proc, PMIX_RANGE_UNDEF) != NULL)
        return PMIX_ERR_DUPLICATE_KEY;
    struct name_entry *e = calloc(1, sizeof(*e));
    if (e == NULL)
        return PMIX_ERR_NOMEM;
    e->owner = *proc;
    PMIX_LOAD_KEY(e->key, datum->key);
    e->range = range;
    e->persist = persist;
    if (PMIx_Value_xfer(&e->value, &datum->value) != PMIX_SUCCESS) {
        free(e);
        return PMIX_ERR_NOMEM;
    }
    e->next = n->head;
    n->head = e;
    return PMIX_SUCCESS;
}

/* Every datum of one publish goes in, or none does. */
pmix_status_t bmpi_names_publish(const pmix_proc_t *proc, const pmix_info_t info[], size_t ninfo,
                                 pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    struct bmpi_names *n = served();
    if (n == NULL)
        return PMIX_ERR_NOT_SUPPORTED;
    pmix_data_range_t range = PMIX_RANGE_SESSION;
    pmix_persistence_t persist = PMIX_PERSIST_SESSION;
    read_directives(info, ninfo, &range, &persist);
    pmix_status_t st = PMIX_SUCCESS;
    pthread_mutex_lock(&n->lock);
    struct name_entry *before = n->head;
    for (size_t i = 0; i < ninfo && st == PMIX_SUCCESS; i++)
        if (!is_directive(&info[i]))
            st = add_entry(n, proc, &info[i], range, persist);
    while (st != PMIX_SUCCESS && n->head != before) {
        struct name_entry *e = n->head;
        n->head = e->next;
        entry_free(e);
    }
    pthread_mutex_unlock(&n->lock);
    if (cbfunc != NULL)
        cbfunc(st, cbdata);
    return PMIX_SUCCESS;
}

pmix_status_t bmpi_names_lookup(const pmix_proc_t *proc, char **keys, const pmix_info_t info[],
                                size_t ninfo, pmix_lookup_cbfunc_t cbfunc, void *cbdata)
{
    struct bmpi_names *n = served();
    if (n == NULL)
        return PMIX_ERR_NOT_SUPPORTED;
    pmix_data_range_t asked = PMIX_RANGE_UNDEF;
    pmix_persistence_t unused;
    read_directives(info, ninfo, &asked, &unused);
    size_t nkeys = 0;
    while (keys != NULL && keys[nkeys] != NULL)
        nkeys++;
    pmix_pdata_t *found = NULL;
    size_t nfound = 0;
    pmix_status_t st = PMIX_SUCCESS;
    if (nkeys > 0) {
        PMIX_PDATA_CREATE(found, nkeys);
        if (found == NULL)
            st = PMIX_ERR_NOMEM;
    }
    pthread_mutex_lock(&n->lock);
    for (size_t k = 0; k < nkeys && st == PMIX_SUCCESS; k++) {
        struct name_entry *e = find_visible(n, keys[k], proc, asked);
        if (e == NULL)
            continue;
        found[nfound].proc = e->owner;
        PMIX_LOAD_KEY(found[nfound].key, e->key);
        st = PMIx_Value_xfer(&found[nfound].value, &e->value);
        if (st != PMIX_SUCCESS)
            break;
        nfound++;
        if (e->persist == PMIX_PERSIST_FIRST_READ)
            unlink_entry(n, e);
    }
    pthread_mutex_unlock(&n->lock);
    if (st == PMIX_SUCCESS && nfound == 0)
        st = PMIX_ERR_NOT_FOUND;
    /* The library packs the answer before the callback returns. */
    if (cbfunc != NULL)
        cbfunc(st, st == PMIX_SUCCESS ? found : NULL, st == PMIX_SUCCESS ? nfound : 0, cbdata);
    if (found != NULL)
        PMIX_PDATA_FREE(found, nkeys);
    return PMIX_SUCCESS;
}

/* Remove what proc published under key (every key of proc's: key NULL);
 * how many went. */
static int remove_owned(struct bmpi_names *n, const pmix_proc_t *proc, const char *key)
{
    int removed = 0;
    for (struct name_entry **p = &n->head; *p != NULL;) {
        struct name_entry *e = *p;
        if (same_proc(&e->owner, proc) && (key == NULL || PMIX_CHECK_KEY(e, key))) {
            *p = e->next;
            entry_free(e);
            removed++;
        } else {
            p = &e->next;
        }
    }
    return removed;
}

/* Every key named must have been published by proc. */
pmix_status_t bmpi_names_unpublish(const pmix_proc_t *proc, char **keys, const pmix_info_t info[],
                                   size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    (void)info;
    (void)ninfo;
    struct bmpi_names *n = served();
    if (n == NULL)
        return PMIX_ERR_NOT_SUPPORTED;
    pmix_status_t st = PMIX_SUCCESS;
    pthread_mutex_lock(&n->lock);
    if (keys == NULL || keys[0] == NULL)
        remove_owned(n, proc, NULL);
    for (size_t k = 0; keys != NULL && keys[k] != NULL; k++)
        if (remove_owned(n, proc, keys[k]) == 0)
            st = PMIX_ERR_NOT_FOUND;
    pthread_mutex_unlock(&n->lock);
    if (cbfunc != NULL)
        cbfunc(st, cbdata);
    return PMIX_SUCCESS;
}

void bmpi_names_proc_gone(struct bmpi_job *job, const pmix_proc_t *proc)
{
    struct bmpi_names *n = job->names;
    if (n == NULL)
        return;
    pthread_mutex_lock(&n->lock);
    for (struct name_entry **p = &n->head; *p != NULL;) {
        struct name_entry *e = *p;
        if (e->persist == PMIX_PERSIST_PROC && same_proc(&e->owner, proc)) {
            *p = e->next;
            entry_free(e);
        } else {
            p = &e->next;
        }
    }
    pthread_mutex_unlock(&n->lock);
}
