/*
 * libfabric 1.17's verbs provider reads /proc/kallsyms twice, line by
 * line, when libfabric initialises (the first fi_getinfo of a process,
 * whatever provider is asked for), looking for the kernel symbols
 * ib_register_peer_memory_client and ib_umem_dmabuf_get: they decide
 * whether it offers device (GPU) memory, FI_HMEM. The kernel formats its
 * whole symbol table for each read, and that is most of the CPU a
 * process spends starting libfabric (docs/ofi.md has the figures). bmpi
 * registers host memory only and never asks for FI_HMEM, so the answer
 * does not matter to it. Before that first call, ofi_dl.c redirects
 * libfabric's own import of fopen to a function that opens /dev/null in
 * place of /proc/kallsyms, an empty table, and is fopen for every other
 * path. Only libfabric's global offset table entry changes: the process's
 * other libraries still call fopen itself. Where libfabric's relocations
 * are REL rather than RELA (32-bit x86 and ARM) no slot is found and the
 * scan stays.
 */
#include "config.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "transport/ofi/ofi.h"

#if __ELF_NATIVE_CLASS == 64
#define RELOC_SYMBOL ELF64_R_SYM
#else
#define RELOC_SYMBOL ELF32_R_SYM
#endif

static FILE *fopen_without_kallsyms(const char *path, const char *mode)
{
    if (path && strcmp(path, "/proc/kallsyms") == 0)
        path = "/dev/null";
    return fopen(path, mode);
}

/* One table of relocations with addends. */
struct rela_table {
    const ElfW(Rela) *v;
    size_t bytes;
};

/* What the dynamic section says about the object's imports: the PLT's
 * relocations (DT_JMPREL, when they are RELA) and the others (DT_RELA). */
struct imports {
    uintptr_t base;
    const ElfW(Sym) *symtab;
    const char *strtab;
    struct rela_table plt, other;
};

/* glibc relocates most d_ptr values of a loaded object in place, some
 * targets do not: an address below the load base is still relative. */
static uintptr_t dynamic_address(uintptr_t base, ElfW(Addr) ptr)
{
    return ptr < base ? base + ptr : ptr;
}

static int read_imports(const struct link_map *map, struct imports *im)
{
    memset(im, 0, sizeof(*im));
    im->base = map->l_addr;
    int plt_is_rela = 0;
    struct rela_table jmprel = {0};
    for (const ElfW(Dyn) *d = map->l_ld; d->d_tag != DT_NULL; d++) {
        switch (d->d_tag) {
        case DT_SYMTAB:
            im->symtab = (const ElfW(Sym) *)dynamic_address(im->base, d->d_un.d_ptr);
            break;
        case DT_STRTAB:
            im->strtab = (const char *)dynamic_address(im->base, d->d_un.d_ptr);
            break;
        case DT_JMPREL:
            jmprel.v = (const ElfW(Rela) *)dynamic_address(im->base, d->d_un.d_ptr);
            break;
        case DT_PLTRELSZ:
            jmprel.bytes = d->d_un.d_val;
            break;
        case DT_PLTREL:
            plt_is_rela = d->d_un.d_val == DT_RELA;
            break;
        case DT_RELA:
            im->other.v = (const ElfW(Rela) *)dynamic_address(im->base, d->d_un.d_ptr);
            break;
        case DT_RELASZ:
            im->other.bytes = d->d_un.d_val;
            break;
        }
    }
    if (plt_is_rela)
        im->plt = jmprel;
    return im->symtab && im->strtab ? 0 : -1;
}

/* The address of the slot through which the object calls `name`, or
 * NULL when no relocation of it imports that symbol. */
static void **import_slot(const struct imports *im, const char *name)
{
    const struct rela_table *tables[] = {&im->plt, &im->other};
    for (int t = 0; t < 2; t++) {
        size_t n = tables[t]->v ? tables[t]->bytes / sizeof(ElfW(Rela)) : 0;
        for (size_t i = 0; i < n; i++) {
            const ElfW(Rela) *r = &tables[t]->v[i];
            size_t sym = RELOC_SYMBOL(r->r_info);
            if (sym != 0 && strcmp(im->strtab + im->symtab[sym].st_name, name) == 0)
                return (void **)(im->base + r->r_offset);
        }
    }
    return NULL;
}

/* The pages the loader made read-only after relocating the object (its
 * PT_GNU_RELRO segment, whole pages only, as glibc protects it). */
struct relro {
    uintptr_t base, page, start, end;
};

static int find_relro(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct relro *r = arg;
    if (info->dlpi_addr != r->base)
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_GNU_RELRO) {
            r->start = (r->base + ph->p_vaddr) & ~(r->page - 1);
            r->end = (r->base + ph->p_vaddr + ph->p_memsz) & ~(r->page - 1);
        }
    }
    return 1;
}

/* Stores `value` into a slot of the object's offset table. A slot on a
 * page the loader protected (full RELRO, as Debian links its libraries)
 * gets its page writable for the store and read-only again. */
static int store_slot(uintptr_t base, void **slot, void *value)
{
    struct relro relro = {.base = base, .page = (uintptr_t)sysconf(_SC_PAGESIZE)};
    dl_iterate_phdr(find_relro, &relro);
    uintptr_t at = (uintptr_t)slot;
    if (at < relro.start || at >= relro.end) {
        __atomic_store_n(slot, value, __ATOMIC_RELEASE);
        return 0;
    }
    void *start = (void *)(at & ~(relro.page - 1));
    if (mprotect(start, relro.page, PROT_READ | PROT_WRITE) != 0)
        return -1;
    __atomic_store_n(slot, value, __ATOMIC_RELEASE);
    return mprotect(start, relro.page, PROT_READ);
}

int ofi_skip_kallsyms_scan(void *libfabric)
{
    struct link_map *map = NULL;
    struct imports im;
    if (dlinfo(libfabric, RTLD_DI_LINKMAP, &map) != 0 || !map || read_imports(map, &im) != 0)
        return -1;
    void **slot = import_slot(&im, "fopen");
    if (!slot)
        return -1;
    return store_slot(im.base, slot, (void *)fopen_without_kallsyms);
}
