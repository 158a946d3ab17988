#include "config.h"

#include <stdlib.h>

#include "runtime/handle.h"

static int grow(struct bmpi_handle_table *t)
{
    int cap = t->cap ? 2 * t->cap : 64;
    void **objs = realloc(t->objs, (size_t)cap * sizeof(*objs));
    if (!objs)
        return -1;
    t->objs = objs;
    int *free_idx = realloc(t->free_idx, (size_t)cap * sizeof(*free_idx));
    if (!free_idx)
        return -1;
    t->free_idx = free_idx;
    t->cap = cap;
    return 0;
}

int bmpi_handle_new(struct bmpi_handle_table *t, void *obj)
{
    int idx;
    if (t->nfree > 0) {
        idx = t->free_idx[--t->nfree];
    } else {
        if (t->used == t->cap && grow(t) != 0)
            return 0;
        if ((uint32_t)t->used > BMPI_HANDLE_INDEX_MASK)
            return 0;
        idx = t->used++;
    }
    t->objs[idx] = obj;
    return (int)(BMPI_HANDLE_KIND_DIRECT | t->type | (uint32_t)idx);
}

void bmpi_handle_release(struct bmpi_handle_table *t, int handle)
{
    uint32_t idx = (uint32_t)handle & BMPI_HANDLE_INDEX_MASK;
    if (!bmpi_handle_get(t, handle))
        return;
    t->objs[idx] = NULL;
    t->free_idx[t->nfree++] = (int)idx;
}

void bmpi_handle_table_free(struct bmpi_handle_table *t)
{
    free(t->objs);
    free(t->free_idx);
    t->objs = NULL;
    t->free_idx = NULL;
    t->cap = t->used = t->nfree = 0;
}
