/*
 * The shared heap (heap.c) and the peers' heaps mapped here
 * (peer_heap.c): single copy between the ranks of a node by memcpy.
 */
#ifndef BMPI_TRANSPORT_SHM_HEAP_H
#define BMPI_TRANSPORT_SHM_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a rank publishes about its heap; len 0: it has none. */
struct bmpi_shm_heap_info {
    uint64_t base, len;
    int32_t pid, fd;
};

/* This process's heap, set up on first use; len 0 when it is off
 * (BMPI_SHM_HEAP=0, valgrind, no memfd, another allocator in front). */
void bmpi_shm_heap_info(struct bmpi_shm_heap_info *info);
bool bmpi_shm_heap_owns(const void *p);

/* Map a local peer's heap. A peer whose heap cannot be mapped here is
 * read with process_vm_readv instead: the return says why, for the
 * verbose report. */
int bmpi_shm_peer_heap_attach(const struct bmpi_shm_heap_info *peer, char *why, size_t why_len);
void bmpi_shm_peer_heap_detach_all(void);

/* n bytes from (to) address remote of process pid: memcpy where remote
 * lies in pid's mapped heap, process_vm_readv (writev) elsewhere. */
int bmpi_shm_peer_read(int pid, void *local, uint64_t remote, size_t len);
int bmpi_shm_peer_write(int pid, const void *local, uint64_t remote, size_t len);

#endif
