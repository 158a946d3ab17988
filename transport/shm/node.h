/*
 * The node-level shared-memory service: everything layers above the
 * transports (collectives/, runtime/ for RMA windows and the p2p
 * protocol) may use of transport/shm. Nothing outside transport/shm
 * includes its other headers; cacheline.h (CPU cache hints, no state) is
 * the one other header it offers.
 *
 * Three things:
 *  - regions: shared memory that several ranks of a node map, named after
 *    the job and node with a random tag, so that the launcher's sweep
 *    finds what a crashed rank leaves;
 *  - single copy to and from a local peer's memory, by process id:
 *    memcpy where the address lies in the peer's shared heap mapped here,
 *    process_vm_readv/writev (CMA) elsewhere, and which peers it reaches;
 *  - the shared heap: whether this process's memory lies in it, and
 *    where a peer's heap address is mapped here.
 */
#ifndef BMPI_TRANSPORT_SHM_NODE_H
#define BMPI_TRANSPORT_SHM_NODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A region as this process maps it. name is what other ranks attach by
 * (at most 255 bytes, the final NUL included); suffix_at is where its end
 * after the job's and node's part begins, set when the name is made from
 * a suffix (create, attach_suffix), 0 when attached by full name. */
struct bmpi_node_region {
    void *addr;
    size_t len;
    char name[256];
    size_t suffix_at;
};

/* Create a region of len bytes, its memory reserved (a full /dev/shm
 * fails here with MPI_ERR_NO_MEM, not with SIGBUS later) and zeroed.
 * kind is a short word that says what it is for ("coll", "win"). */
int bmpi_node_region_create(const char *kind, size_t len, struct bmpi_node_region *r);
/* Map a region another rank created (it must be this user's and private). */
int bmpi_node_region_attach(const char *name, struct bmpi_node_region *r);
/* The end of a region's name after the job's and node's part, which every
 * rank of the node knows: what a short message carries instead of the
 * name (at most BMPI_NODE_SUFFIX_MAX bytes, the final NUL included); NULL
 * for a region attached by full name or whose suffix is longer. */
#define BMPI_NODE_SUFFIX_MAX 64
const char *bmpi_node_region_suffix(const struct bmpi_node_region *r);
int bmpi_node_region_attach_suffix(const char *suffix, struct bmpi_node_region *r);
/* Remove the name (once every rank has attached); the mapping stays. */
int bmpi_node_region_unlink(struct bmpi_node_region *r);
void bmpi_node_region_detach(struct bmpi_node_region *r);

/* n bytes from (to) address remote of local process pid. */
int bmpi_node_peer_read(int pid, void *local, uint64_t remote, size_t len);
int bmpi_node_peer_write(int pid, const void *local, uint64_t remote, size_t len);
/* Where [remote, remote + len) of pid is mapped in this process (it lies
 * in pid's shared heap, mapped here), or NULL. */
void *bmpi_node_peer_map(int pid, uint64_t remote, size_t len);
/* Whether [p, p + len) lies in this process's shared heap. */
bool bmpi_node_heap_owns(const void *p, size_t len);
/* Whether bmpi_node_peer_read/write reach peer (an index in the runtime's
 * peer table, bmpi_world.peers): the shm transport serves it and has
 * checked that single copy to it works. */
bool bmpi_node_copy_reaches(int peer);
/* Microseconds one CMA call costs before it copies anything (measured
 * once per process). */
double bmpi_node_copy_call_usec(void);

#endif
