/*
 * MPI_Alloc_mem and MPI_Free_mem: cache-line aligned memory (so blocks
 * from here never share a line with other data) that is registered, at
 * allocation, with every open transport that needs registration for RMA
 * (BMPI_TL_NEEDS_MR), so a window on it or an RMA transfer from it finds
 * the registration made. A header before the block keeps the
 * registrations for MPI_Free_mem. Blocks of 64 KiB and more come from the
 * shared heap (docs/shm.md), which ranks of the node map: a window on
 * them is reached with loads and stores (docs/rma.md). Info hints are
 * checked and not used.
 */
#include "config.h"

#include <stdlib.h>

#include "runtime/api.h"
#include "runtime/info.h"
#include "runtime/world.h"

#define ALLOC_MEM_ALIGN 64
#define MAX_REGS 4

/* Sits just before the user's block, in a line of its own. */
struct alloc_hdr {
    void *raw; /* what posix_memalign gave */
    int nregs;
    struct {
        struct bmpi_tl *tl;
        void *memh;
    } regs[MAX_REGS];
};
#define HDR_ROOM ((sizeof(struct alloc_hdr) + ALLOC_MEM_ALIGN - 1) & ~(size_t)(ALLOC_MEM_ALIGN - 1))

static void register_block(struct alloc_hdr *h, void *p, size_t len)
{
    h->nregs = 0;
    for (int i = 0; bmpi_initialized() && i < bmpi_world.ntls && h->nregs < MAX_REGS; i++) {
        struct bmpi_tl *tl = &bmpi_world.tls[i];
        void *memh;
        if ((tl->caps.flags & BMPI_TL_NEEDS_MR) && tl->ops->mem_reg(tl, p, len, &memh) == BMPI_OK) {
            h->regs[h->nregs].tl = tl;
            h->regs[h->nregs++].memh = memh;
        }
    }
}

BMPI_API(MPI_Alloc_mem)
int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    const char *fn = "MPI_Alloc_mem";
    if (size < 0)
        return bmpi_err_noobj(MPI_ERR_SIZE, fn, "negative size %lld", (long long)size);
    if (!baseptr)
        return bmpi_err_noobj(MPI_ERR_ARG, fn, "baseptr is NULL");
    if (info != MPI_INFO_NULL && !bmpi_info_lookup(info))
        return bmpi_err_noobj(MPI_ERR_INFO, fn, "invalid info 0x%x", (unsigned)info);
    void *raw = NULL;
    /* size 0 still gives a pointer MPI_Free_mem accepts */
    if (posix_memalign(&raw, ALLOC_MEM_ALIGN, HDR_ROOM + (size ? (size_t)size : 1)) != 0)
        return bmpi_err_noobj(MPI_ERR_NO_MEM, fn, "cannot allocate %lld bytes", (long long)size);
    char *p = (char *)raw + HDR_ROOM;
    struct alloc_hdr *h = (struct alloc_hdr *)(p - sizeof *h);
    h->raw = raw;
    register_block(h, p, size ? (size_t)size : 1);
    *(void **)baseptr = p;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Free_mem)
int PMPI_Free_mem(void *base)
{
    if (!base)
        return MPI_SUCCESS;
    struct alloc_hdr *h = (struct alloc_hdr *)((char *)base - sizeof *h);
    /* registrations die with the transports at MPI_Finalize */
    for (int i = 0; bmpi_initialized() && i < h->nregs; i++)
        h->regs[i].tl->ops->mem_dereg(h->regs[i].tl, h->regs[i].memh);
    free(h->raw);
    return MPI_SUCCESS;
}
