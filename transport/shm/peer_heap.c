/*
 * The local peers' shared heaps (heap.c), mapped into this process: a
 * block a peer exposes for single copy is read or written by memcpy when
 * it lies in the peer's heap, and by CMA (cma.c) when it does not.
 *
 * A peer's memfd is reached as /proc/<pid>/fd/<fd>, which the kernel lets
 * the same user open (the ptrace read check, weaker than the attach check
 * CMA needs). The mapping covers the peer's whole reserved range, so the
 * peer's later blocks need no new mapping; pages appear on first touch.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "runtime/error.h"
#include "transport/copy.h"
#include "transport/shm/heap.h"
#include "transport/shm/shm.h"

struct peer_heap {
    int pid;
    uint64_t base, len;
    char *map;
};

/* Process state like the heap itself; filled while the shm transport
 * adds its peers, read by the copies after that. */
static struct {
    struct peer_heap *v;
    int n, cap;
} peers;

int bmpi_shm_peer_heap_attach(const struct bmpi_shm_heap_info *peer, char *why, size_t why_len)
{
    if (!peer->len) {
        snprintf(why, why_len, "pid %d has no shared heap", (int)peer->pid);
        return -1;
    }
    if (peers.n == peers.cap) {
        int cap = peers.cap ? 2 * peers.cap : 8;
        struct peer_heap *v = realloc(peers.v, (size_t)cap * sizeof *v);
        if (!v) {
            snprintf(why, why_len, "out of memory");
            return -1;
        }
        peers.v = v;
        peers.cap = cap;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)peer->pid, (int)peer->fd);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, why_len, "cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    /* A memfd's mode is always 0777: only its owner tells it is the
     * peer's, not another user's process that got the peer's pid. */
    struct stat st;
    if (bmpi_shm_check_owner(fd, path, false, &st, why, why_len) != 0) {
        close(fd);
        return -1;
    }
    void *map = mmap(NULL, peer->len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
    int err = errno;
    close(fd);
    if (map == MAP_FAILED) {
        snprintf(why, why_len, "cannot map %llu bytes of %s: %s", (unsigned long long)peer->len,
                 path, strerror(err));
        return -1;
    }
    peers.v[peers.n++] = (struct peer_heap){peer->pid, peer->base, peer->len, map};
    return 0;
}

void bmpi_shm_peer_heap_detach_all(void)
{
    for (int i = 0; i < peers.n; i++)
        munmap(peers.v[i].map, peers.v[i].len);
    free(peers.v);
    peers.v = NULL;
    peers.n = peers.cap = 0;
}

char *bmpi_shm_peer_translate(int pid, uint64_t remote, size_t len)
{
    for (int i = 0; i < peers.n; i++) {
        const struct peer_heap *h = &peers.v[i];
        if (h->pid != pid)
            continue;
        if (remote < h->base || remote - h->base > h->len || len > h->len - (remote - h->base))
            return NULL;
        return h->map + (remote - h->base);
    }
    return NULL;
}

int bmpi_shm_peer_read(int pid, void *local, uint64_t remote, size_t len)
{
    const char *src = bmpi_shm_peer_translate(pid, remote, len);
    if (!src)
        return bmpi_shm_cma_read(pid, local, remote, len);
    bmpi_copy(local, src, len);
    return BMPI_OK;
}

int bmpi_shm_peer_write(int pid, const void *local, uint64_t remote, size_t len)
{
    char *dst = bmpi_shm_peer_translate(pid, remote, len);
    if (!dst)
        return bmpi_shm_cma_write(pid, local, remote, len);
    bmpi_copy(dst, local, len);
    return BMPI_OK;
}
