#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/group.h"
#include "runtime/world.h"

struct bmpi_group *bmpi_group_new(const int *world_ranks, int size)
{
    struct bmpi_group *g = calloc(1, sizeof(*g));
    if (!g)
        return NULL;
    g->world_ranks = malloc((size_t)(size ? size : 1) * sizeof(int));
    if (!g->world_ranks) {
        free(g);
        return NULL;
    }
    memcpy(g->world_ranks, world_ranks, (size_t)size * sizeof(int));
    g->size = size;
    g->refcount = 1;
    g->handle = MPI_GROUP_NULL;
    g->rank = MPI_UNDEFINED;
    for (int i = 0; i < size; i++) {
        if (world_ranks[i] == bmpi_world.rank) {
            g->rank = i;
            break;
        }
    }
    return g;
}

void bmpi_group_retain(struct bmpi_group *g) { g->refcount++; }

void bmpi_group_release(struct bmpi_group *g)
{
    if (g && --g->refcount == 0) {
        free(g->world_ranks);
        free(g);
    }
}
