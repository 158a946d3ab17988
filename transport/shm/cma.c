/*
 * Cross Memory Attach: single-copy reads and writes of another process's
 * memory with process_vm_readv/writev, and the detection of whether the
 * kernel lets us (Yama ptrace_scope, seccomp filters in containers, pid
 * namespaces that make a published pid name another process).
 *
 * The kernel copies with `rep movsb` as memcpy does, and is as slow where
 * the destination lies a few bytes after the source in the page
 * (transport/copy.h): such reads and writes go through a stage placed
 * where the kernel's copy is fast, and the processes' own copy into or
 * out of it is bmpi_copy's.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "runtime/error.h"
#include "transport/copy.h"
#include "transport/shm/shm.h"

#ifdef HAVE_PROCESS_VM_READV

static int read_ptrace_scope(void)
{
    FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
    if (!f)
        return 0; /* no Yama: classic ptrace rules, same uid is enough */
    int v = 0;
    if (fscanf(f, "%d", &v) != 1)
        v = 0;
    fclose(f);
    return v;
}

int bmpi_shm_cma_probe_self(char *why, size_t why_len)
{
    int scope = read_ptrace_scope();
    if (scope >= 2) {
        snprintf(why, why_len,
                 "kernel.yama.ptrace_scope is %d (only root with CAP_SYS_PTRACE may read another "
                 "process; set it to 0 or 1 to enable)",
                 scope);
        return -1;
    }
#ifdef PR_SET_PTRACER
    /* ptrace_scope 1 allows only descendants unless we name a tracer. */
    if (scope == 1)
        (void)prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
#endif
    /* A seccomp filter (Docker's default profile without CAP_SYS_PTRACE)
     * refuses the call whatever the target: try it on ourselves. */
    uint64_t src = 0x5eed, dst = 0;
    struct iovec l = {&dst, sizeof dst}, r = {&src, sizeof src};
    ssize_t n = process_vm_readv(getpid(), &l, 1, &r, 1, 0);
    if (n != (ssize_t)sizeof dst || dst != src) {
        snprintf(why, why_len, "process_vm_readv on itself failed: %s", strerror(errno));
        return -1;
    }
    return 0;
}

int bmpi_shm_cma_probe_peer(int pid, uint64_t addr, uint64_t cookie, char *why, size_t why_len)
{
    uint64_t v = 0;
    struct iovec l = {&v, sizeof v}, r = {(void *)(uintptr_t)addr, sizeof v};
    ssize_t n = process_vm_readv(pid, &l, 1, &r, 1, 0);
    if (n < 0) {
        if (errno == ESRCH)
            return 0; /* already gone: nothing to learn */
        snprintf(why, why_len, "process_vm_readv from local peer pid %d failed: %s", pid,
                 strerror(errno));
        return -1;
    }
    if (n != (ssize_t)sizeof v || v != cookie) {
        snprintf(why, why_len,
                 "pid %d published by a local peer is another process here (separate pid "
                 "namespaces?)",
                 pid);
        return -1;
    }
    return 0;
}

#define CMA_STAGE ((size_t)32 << 10) /* the stage's bytes per system call (under the heap's blocks) */

enum cma_dir { CMA_READ, CMA_WRITE };

/* process_vm_readv (writev) may stop short (it transfers at most what one
 * call's iovecs cover, and stops at the first fault): loop until done. */
static int cma_direct(int pid, uint8_t *l, uint64_t remote, size_t len, enum cma_dir dir)
{
    while (len > 0) {
        struct iovec li = {l, len}, ri = {(void *)(uintptr_t)remote, len};
        ssize_t n = dir == CMA_READ ? process_vm_readv(pid, &li, 1, &ri, 1, 0)
                                    : process_vm_writev(pid, &li, 1, &ri, 1, 0);
        if (n <= 0) {
            if (n < 0 && errno == EINTR)
                continue;
            return bmpi_err_set(MPI_ERR_OTHER, "shm: process_vm_%s of %zu bytes at 0x%llx %s pid %d: %s",
                                dir == CMA_READ ? "readv" : "writev", len, (unsigned long long)remote,
                                dir == CMA_READ ? "from" : "to", pid,
                                n < 0 ? strerror(errno) : "no progress");
        }
        l += n;
        remote += (uint64_t)n;
        len -= (size_t)n;
    }
    return BMPI_OK;
}

/* A stage of CMA_STAGE bytes at the same offset in its page as remote, so
 * that the kernel copies between addresses equally placed; *block is what
 * to free. NULL when out of memory. */
static uint8_t *stage_alloc(uint64_t remote, void **block)
{
    uint8_t *raw = *block = malloc(CMA_STAGE + 2 * BMPI_COPY_ALIAS_PAGE);
    if (!raw)
        return NULL;
    uintptr_t page = ((uintptr_t)raw + BMPI_COPY_ALIAS_PAGE - 1) & ~(BMPI_COPY_ALIAS_PAGE - 1);
    return (uint8_t *)page + (remote & (BMPI_COPY_ALIAS_PAGE - 1));
}

/* Whether the kernel's copy between local and remote, in direction dir,
 * is one of the slow ones (bmpi_copy's test). */
static int kernel_copy_slow(const uint8_t *local, uint64_t remote, size_t len, enum cma_dir dir)
{
    const uint8_t *r = (const uint8_t *)(uintptr_t)remote;
    return len > BMPI_COPY_SHORT_PIECE &&
           (dir == CMA_READ ? bmpi_copy_page_aliased((const char *)local, (const char *)r)
                            : bmpi_copy_page_aliased((const char *)r, (const char *)local));
}

static int cma_transfer(int pid, uint8_t *local, uint64_t remote, size_t len, enum cma_dir dir)
{
    void *block;
    uint8_t *stage = kernel_copy_slow(local, remote, len, dir) ? stage_alloc(remote, &block) : NULL;
    if (!stage)
        return cma_direct(pid, local, remote, len, dir);
    int rc = BMPI_OK;
    for (size_t done = 0; done < len && rc == BMPI_OK; done += CMA_STAGE) {
        size_t n = len - done < CMA_STAGE ? len - done : CMA_STAGE;
        if (dir == CMA_WRITE)
            bmpi_copy(stage, local + done, n);
        rc = cma_direct(pid, stage, remote + done, n, dir);
        if (rc == BMPI_OK && dir == CMA_READ)
            bmpi_copy(local + done, stage, n);
    }
    free(block);
    return rc;
}

int bmpi_shm_cma_read(int pid, void *local, uint64_t remote, size_t len)
{
    return cma_transfer(pid, local, remote, len, CMA_READ);
}

/* The kernel only reads local here; the cast lets one loop serve both ways. */
int bmpi_shm_cma_write(int pid, const void *local, uint64_t remote, size_t len)
{
    return cma_transfer(pid, (uint8_t *)(uintptr_t)local, remote, len, CMA_WRITE);
}

static double seconds_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The fixed cost of a single-copy call: the fastest of a few reads of one
 * page from this process itself (the system call and pinning the page,
 * next to nothing to copy). Virtual machines differ several times over
 * here (docs/shm.md, "Why the constants are what they are"), and with it
 * the size from which one copy by the kernel beats two by the processes.
 * Measured once a process, on first use. */
double bmpi_shm_cma_call_usec(void)
{
    static double usec = -1;
    static char src[4096] __attribute__((aligned(4096))), dst[sizeof src];
    if (usec >= 0)
        return usec;
    struct iovec l = {dst, sizeof dst}, r = {src, sizeof src};
    double best = 1;
    for (int i = 0; i < 32; i++) {
        double t = seconds_now();
        if (process_vm_readv(getpid(), &l, 1, &r, 1, 0) != (ssize_t)sizeof dst)
            return usec = 0; /* no CMA: the callers do not take it anyway */
        t = seconds_now() - t;
        best = t < best ? t : best;
    }
    return usec = best * 1e6;
}

#else /* !HAVE_PROCESS_VM_READV */

double bmpi_shm_cma_call_usec(void)
{
    return 0;
}

int bmpi_shm_cma_probe_self(char *why, size_t why_len)
{
    snprintf(why, why_len, "built without process_vm_readv");
    return -1;
}

int bmpi_shm_cma_probe_peer(int pid, uint64_t addr, uint64_t cookie, char *why, size_t why_len)
{
    snprintf(why, why_len, "built without process_vm_readv");
    return -1;
}

int bmpi_shm_cma_read(int pid, void *local, uint64_t remote, size_t len)
{
    return bmpi_err_set(MPI_ERR_OTHER, "shm: built without process_vm_readv");
}

int bmpi_shm_cma_write(int pid, const void *local, uint64_t remote, size_t len)
{
    return bmpi_err_set(MPI_ERR_OTHER, "shm: built without process_vm_readv");
}

#endif
