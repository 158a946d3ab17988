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

/* Whether the heap's blocks get the transparent huge pages that glibc's
 * would, from the kernel's settings under thp_dir (BMPI_SHM_THP_SYSFS)
 * and glibc's tunables (GLIBC_TUNABLES). glibc's large blocks are
 * anonymous memory (setting "enabled"), the heap's are shmem
 * ("shmem_enabled"). Where glibc's would get huge pages and the heap's
 * cannot, the heap stands down unless BMPI_SHM_HEAP=1 (docs/shm.md). */
#define BMPI_SHM_THP_SYSFS "/sys/kernel/mm/transparent_hugepage"
enum bmpi_shm_heap_thp {
    BMPI_SHM_HEAP_THP_NONE,      /* glibc's blocks get none by default either */
    BMPI_SHM_HEAP_THP_BY_ITSELF, /* shmem gets them without asking */
    BMPI_SHM_HEAP_THP_ASK,       /* shmem gets them where madvise(MADV_HUGEPAGE) asks */
    BMPI_SHM_HEAP_THP_LOST,      /* glibc's would get them, shmem cannot */
};
enum bmpi_shm_heap_thp bmpi_shm_heap_thp_plan(const char *thp_dir, const char *glibc_tunables);

/* Map a local peer's heap. A peer whose heap cannot be mapped here is
 * read with process_vm_readv instead: the return says why, for the
 * verbose report. */
int bmpi_shm_peer_heap_attach(const struct bmpi_shm_heap_info *peer, char *why, size_t why_len);
void bmpi_shm_peer_heap_detach_all(void);

/* Where [remote, remote + len) of pid is mapped here, or NULL. */
char *bmpi_shm_peer_translate(int pid, uint64_t remote, size_t len);

/* n bytes from (to) address remote of process pid: memcpy where remote
 * lies in pid's mapped heap, process_vm_readv (writev) elsewhere. */
int bmpi_shm_peer_read(int pid, void *local, uint64_t remote, size_t len);
int bmpi_shm_peer_write(int pid, const void *local, uint64_t remote, size_t len);

#endif
