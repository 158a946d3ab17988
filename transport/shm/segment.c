/*
 * Shared segments: names, layout, creation, attachment and removal.
 *
 * Every segment of a job on a node is named "/bmpi.<nspace>.<nodeid>..."
 * (so /dev/shm/bmpi.<nspace>.*, which the launcher removes at teardown as a
 * backstop), created with O_EXCL and mode 0600, and unlinked as soon as
 * every process that needs it has mapped it: a crash afterwards leaves
 * nothing behind.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/error.h"
#include "runtime/world.h"
#include "transport/shm/shm.h"

size_t bmpi_shm_block_size(const struct shm_config *cfg)
{
    size_t large = SHM_ALIGN(SHM_CELL_HDR + cfg->max_am, SHM_LINE);
    size_t sz = SHM_BLOCK_HDR + (size_t)cfg->nsmall * cfg->small_size + (size_t)cfg->nlarge * large;
    /* page-aligned blocks: each rank first-touches its own cells */
    return SHM_ALIGN(sz, 4096);
}

size_t bmpi_shm_segment_size(const struct shm_config *cfg, int local_size)
{
    return 4096 + (size_t)local_size * bmpi_shm_block_size(cfg);
}

int bmpi_shm_name(char *buf, size_t len, const char *nspace, uint32_t nodeid, const char *suffix)
{
    int n = snprintf(buf, len, "/bmpi.%s.%u%s", nspace, nodeid, suffix ? suffix : "");
    if (n < 0 || (size_t)n >= len || n > 255)
        return bmpi_err_set(MPI_ERR_INTERN,
                            "shm: segment name for namespace \"%s\" is too long (%d bytes, 255 max)",
                            nspace, n);
    /* a '/' after the first would make shm_open fail: keep the name flat */
    for (char *c = buf + 1; *c; c++)
        if (*c == '/')
            *c = '_';
    return BMPI_OK;
}

int bmpi_shm_ring_name(struct shm_priv *p, char *buf, size_t len, int sender, int receiver)
{
    char suffix[32];
    snprintf(suffix, sizeof suffix, ".fp%d.%d", sender, receiver);
    return bmpi_shm_name(buf, len, bmpi_world.nspace, bmpi_world.nodeid, suffix);
}

int bmpi_shm_create(const char *name, size_t len, void **addr)
{
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0) {
        if (errno == EEXIST)
            return bmpi_err_set(MPI_ERR_OTHER,
                                "shm: /dev/shm%s already exists (left by an earlier job with the "
                                "same namespace?): remove it and run again",
                                name);
        return bmpi_err_set(MPI_ERR_OTHER, "shm: shm_open(%s): %m (is /dev/shm a writable tmpfs?)",
                            name);
    }
    /* Reserve the memory now: on a full /dev/shm a plain ftruncate would
     * succeed and the first touch would kill the process with SIGBUS. */
    int rc = posix_fallocate(fd, 0, (off_t)len);
    if (rc != 0) {
        errno = rc;
        bmpi_err_set(MPI_ERR_NO_MEM,
                     "shm: cannot reserve %zu bytes for /dev/shm%s: %m (/dev/shm too small? "
                     "enlarge it, e.g. docker --shm-size, or lower BMPI_SHM_* sizes)",
                     len, name);
        goto fail;
    }
    void *a = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (a == MAP_FAILED) {
        bmpi_err_set(MPI_ERR_NO_MEM, "shm: mmap of %zu bytes of /dev/shm%s: %m", len, name);
        goto fail;
    }
    close(fd);
    *addr = a;
    return BMPI_OK;

fail:
    close(fd);
    shm_unlink(name);
    return MPI_ERR_NO_MEM;
}

int bmpi_shm_attach(const char *name, void **addr, size_t *len)
{
    int fd = shm_open(name, O_RDWR, 0);
    if (fd < 0)
        return bmpi_err_set(MPI_ERR_OTHER,
                            "shm: cannot open /dev/shm%s: %m (did the process that creates it "
                            "fail, or did someone remove it?)",
                            name);
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size <= 0) {
        close(fd);
        return bmpi_err_set(MPI_ERR_OTHER, "shm: /dev/shm%s is empty or unreadable", name);
    }
    void *a = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (a == MAP_FAILED)
        return bmpi_err_set(MPI_ERR_NO_MEM, "shm: mmap of /dev/shm%s (%lld bytes): %m", name,
                            (long long)st.st_size);
    *addr = a;
    *len = (size_t)st.st_size;
    return BMPI_OK;
}

void bmpi_shm_prefault(void *addr, size_t len)
{
#ifdef MADV_POPULATE_WRITE
    /* Only a hint: older kernels refuse it, and the pages then fault in
     * on first touch as before. */
    (void)madvise(addr, len, MADV_POPULATE_WRITE);
#else
    (void)addr, (void)len;
#endif
}

int bmpi_shm_unlink(const char *name)
{
    if (shm_unlink(name) != 0 && errno != ENOENT)
        return bmpi_err_set(MPI_ERR_OTHER, "shm: shm_unlink(%s): %m", name);
    return BMPI_OK;
}
