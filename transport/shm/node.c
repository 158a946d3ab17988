/*
 * The node-level shared-memory service (node.h) over the pieces of
 * transport/shm: segment.c names and maps, peer_heap.c and cma.c copy,
 * heap.c answers for the shared heap.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "runtime/error.h"
#include "runtime/world.h"
#include "transport/shm/node.h"
#include "transport/shm/shm.h"

/* r's name: the job's and node's part, then suffix; notes where the suffix
 * begins, so that bmpi_node_region_suffix() need not format the name again. */
static int node_region_name(const char *suffix, struct bmpi_node_region *r)
{
    int err = bmpi_shm_name(r->name, sizeof r->name, bmpi_world.nspace, bmpi_world.nodeid, suffix);
    if (err)
        return err;
    r->suffix_at = strlen(r->name) - strlen(suffix);
    return BMPI_OK;
}

int bmpi_node_region_create(const char *kind, size_t len, struct bmpi_node_region *r)
{
    char tag[SHM_TAG_LEN + 1], suffix[64 + SHM_TAG_LEN];
    int err = bmpi_shm_random_tag(tag);
    if (err)
        return err;
    snprintf(suffix, sizeof suffix, ".%s.%s", kind, tag);
    if ((err = node_region_name(suffix, r)))
        return err;
    if ((err = bmpi_shm_create(r->name, len, &r->addr)))
        return err;
    r->len = len;
    return BMPI_OK;
}

const char *bmpi_node_region_suffix(const struct bmpi_node_region *r)
{
    size_t n = r->suffix_at;
    return n && strlen(r->name) - n < BMPI_NODE_SUFFIX_MAX ? r->name + n : NULL;
}

int bmpi_node_region_attach_suffix(const char *suffix, struct bmpi_node_region *r)
{
    int err = node_region_name(suffix, r);
    return err ? err : bmpi_shm_attach(r->name, &r->addr, &r->len);
}

int bmpi_node_region_attach(const char *name, struct bmpi_node_region *r)
{
    if (strlen(name) >= sizeof r->name)
        return bmpi_err_set(MPI_ERR_INTERN, "shm: region name too long");
    strcpy(r->name, name);
    r->suffix_at = 0;
    return bmpi_shm_attach(name, &r->addr, &r->len);
}

int bmpi_node_region_unlink(struct bmpi_node_region *r) { return bmpi_shm_unlink(r->name); }

void bmpi_node_region_detach(struct bmpi_node_region *r)
{
    if (r->addr)
        munmap(r->addr, r->len);
    r->addr = NULL;
    r->len = 0;
}

int bmpi_node_peer_read(int pid, void *local, uint64_t remote, size_t len)
{
    return bmpi_shm_peer_read(pid, local, remote, len);
}

int bmpi_node_peer_write(int pid, const void *local, uint64_t remote, size_t len)
{
    return bmpi_shm_peer_write(pid, local, remote, len);
}

void *bmpi_node_peer_map(int pid, uint64_t remote, size_t len) { return bmpi_shm_peer_translate(pid, remote, len); }

bool bmpi_node_heap_owns(const void *p, size_t len)
{
    return bmpi_shm_heap_owns(p) && (len == 0 || bmpi_shm_heap_owns((const char *)p + len - 1));
}

bool bmpi_node_copy_reaches(int peer)
{
    const struct bmpi_tl *tl = bmpi_world.peers[peer].tl;
    return tl->ops == &bmpi_tl_shm_ops && (tl->caps.flags & BMPI_TL_RMA_GET);
}

double bmpi_node_copy_call_usec(void) { return bmpi_shm_cma_call_usec(); }
