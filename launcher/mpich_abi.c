/* Which directory of MPICH sonames the ranks get: the installed one
 * ($(pkglibdir)/mpich-abi), or the build tree's when this bmpirun is the
 * build tree's own (tests run it before `make install`). Both paths come
 * from launcher/local.mk. And the one case it cannot help, seen in the
 * program's dynamic section before the ranks start. */
#include "config.h"

#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "launcher/iof.h"
#include "launcher/mpich_abi.h"

static bool is_build_tree_bmpirun(void)
{
    char self[PATH_MAX], built[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n <= 0 || realpath(BMPI_BUILD_BMPIRUN, built) == NULL)
        return false;
    self[n] = '\0';
    return strcmp(self, built) == 0;
}

static const char *compat_dir(void)
{
    const char *dir = is_build_tree_bmpirun() ? BMPI_BUILD_MPICH_ABI_DIR : BMPI_MPICH_ABI_DIR;
    struct stat st;
    return stat(dir, &st) == 0 && S_ISDIR(st.st_mode) ? dir : NULL;
}

char *bmpi_mpich_abi_ld_path(const char *const *env)
{
    static const char name[] = "LD_LIBRARY_PATH=";
    const char *dir = compat_dir(), *old = NULL;
    if (dir == NULL)
        return NULL;
    for (; *env; env++)
        if (strncmp(*env, name, sizeof(name) - 1) == 0)
            old = *env + sizeof(name) - 1;
    char *entry;
    /* An empty element would add the working directory: none for an empty value. */
    int n = old && *old ? asprintf(&entry, "%s%s:%s", name, dir, old) : asprintf(&entry, "%s%s", name, dir);
    return n < 0 ? NULL : entry;
}

/* ---- a DT_RPATH that overrides LD_LIBRARY_PATH --------------------------- */

/* What the dynamic section of a 64-bit ELF program says about MPICH. */
struct mpich_deps {
    char soname[32];        /* the first MPICH soname it needs, or "" */
    char rpath[PATH_MAX];   /* its DT_RPATH, "" without one */
    bool has_runpath;       /* the loader then ignores DT_RPATH */
    bool needs_bmpi;        /* it needs bmpi's own libbmpi.so */
};

static const char *const mpich_sonames[] = {
    "libmpich.so.12", "libmpi.so.12", "libmpichfort.so.12", "libmpifort.so.12",
    "libmpichcxx.so.12", "libmpicxx.so.12",
};

static bool read_at(int fd, void *buf, size_t len, off_t off)
{
    return pread(fd, buf, len, off) == (ssize_t)len;
}

/* The NUL-terminated string at off, if it fits in len bytes. */
static bool read_string(int fd, char *buf, size_t len, off_t off)
{
    ssize_t n = pread(fd, buf, len - 1, off);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    return strlen(buf) < (size_t)n;
}

static bool is_mpich_soname(const char *name)
{
    for (size_t i = 0; i < sizeof(mpich_sonames) / sizeof(mpich_sonames[0]); i++)
        if (strcmp(name, mpich_sonames[i]) == 0)
            return true;
    return false;
}

static void read_dynamic(int fd, const Elf64_Shdr *dyn, const Elf64_Shdr *strtab, struct mpich_deps *deps)
{
    size_t n = dyn->sh_size / sizeof(Elf64_Dyn);
    for (size_t i = 0; i < n; i++) {
        Elf64_Dyn d;
        char name[sizeof(deps->soname)];
        if (!read_at(fd, &d, sizeof(d), (off_t)(dyn->sh_offset + i * sizeof(d))) || d.d_tag == DT_NULL)
            return;
        off_t str = (off_t)(strtab->sh_offset + d.d_un.d_val);
        if (d.d_tag == DT_NEEDED && read_string(fd, name, sizeof(name), str)) {
            if (deps->soname[0] == '\0' && is_mpich_soname(name))
                memcpy(deps->soname, name, sizeof(name));
            if (strncmp(name, "libbmpi.so", strlen("libbmpi.so")) == 0)
                deps->needs_bmpi = true;
        } else if (d.d_tag == DT_RPATH && !read_string(fd, deps->rpath, sizeof(deps->rpath), str))
            deps->rpath[0] = '\0';
        else if (d.d_tag == DT_RUNPATH)
            deps->has_runpath = true;
    }
}

/* Calls visit(fd, section, its linked string table, arg) for every section
 * of a 64-bit ELF file that links one, until visit returns true; returns
 * what the last visit returned (false for a file that is no such ELF). */
typedef bool elf_visit_fn(int fd, const Elf64_Shdr *sec, const Elf64_Shdr *strtab, void *arg);
static bool elf_scan(const char *path, elf_visit_fn *visit, void *arg)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    Elf64_Ehdr eh;
    bool ok = read_at(fd, &eh, sizeof(eh), 0) && memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 &&
              eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_shentsize == sizeof(Elf64_Shdr);
    bool done = false;
    for (unsigned i = 0; ok && !done && i < eh.e_shnum; i++) {
        Elf64_Shdr sec, strtab;
        if (!read_at(fd, &sec, sizeof(sec), (off_t)(eh.e_shoff + i * sizeof(sec))))
            break;
        if (sec.sh_link == 0 || sec.sh_link >= eh.e_shnum ||
            !read_at(fd, &strtab, sizeof(strtab), (off_t)(eh.e_shoff + sec.sh_link * sizeof(strtab))))
            continue;
        done = visit(fd, &sec, &strtab, arg);
    }
    close(fd);
    return done;
}

static bool visit_dynamic(int fd, const Elf64_Shdr *sec, const Elf64_Shdr *strtab, void *deps)
{
    if (sec->sh_type != SHT_DYNAMIC)
        return false;
    read_dynamic(fd, sec, strtab, deps);
    return true;
}

/* false when path is no 64-bit ELF file with a dynamic section. */
static bool read_deps(const char *path, struct mpich_deps *deps)
{
    return elf_scan(path, visit_dynamic, deps);
}

/* The directory of rpath (':'-separated) that holds soname, or NULL. */
static char *rpath_holding(const char *rpath, const char *soname)
{
    for (const char *p = rpath; *p;) {
        size_t len = strcspn(p, ":");
        char *cand;
        if (len > 0 && asprintf(&cand, "%.*s/%s", (int)len, p, soname) >= 0) {
            bool there = access(cand, F_OK) == 0;
            free(cand);
            if (there)
                return strndup(p, len);
        }
        p += len + (p[len] == ':');
    }
    return NULL;
}

void bmpi_mpich_abi_check_program(const char *program)
{
    struct mpich_deps deps = {0};
    if (!read_deps(program, &deps) || deps.soname[0] == '\0' || deps.has_runpath || deps.rpath[0] == '\0')
        return;
    char *dir = rpath_holding(deps.rpath, deps.soname);
    if (dir == NULL)
        return;
    bmpi_say("warning: %s needs %s and has an RPATH (%s) that the loader searches before "
             "LD_LIBRARY_PATH; %s/%s is MPICH's, so the ranks will load MPICH, not bmpi. "
             "Relink it without -Wl,--disable-new-dtags (a RUNPATH gives way to LD_LIBRARY_PATH) or start "
             "it with MPICH's mpiexec (docs/mpich-abi.md)",
             program, deps.soname, deps.rpath, dir, deps.soname);
    free(dir);
}

/* MPI's start calls, in C and in Fortran's usual manglings. */
static const char *const mpi_init_names[] = {
    "MPI_Init", "MPI_Init_thread", "mpi_init_", "mpi_init__", "mpi_init_thread_", "mpi_init_thread__",
};

static bool is_mpi_init(const char *name)
{
    for (size_t i = 0; i < sizeof(mpi_init_names) / sizeof(mpi_init_names[0]); i++)
        if (strcmp(name, mpi_init_names[i]) == 0)
            return true;
    return false;
}

/* Whether sec is a symbol table (SHT_DYNSYM or SHT_SYMTAB) naming an
 * MPI_Init. The file is mapped rather than read a symbol at a time: an
 * unstripped program that is no MPI program has every symbol looked at,
 * and that runs before each job starts. */
static bool symtab_has_mpi_init(int fd, const Elf64_Shdr *sec, const Elf64_Shdr *strtab)
{
    struct stat st;
    if (sec->sh_type != SHT_DYNSYM && sec->sh_type != SHT_SYMTAB)
        return false;
    if (fstat(fd, &st) != 0 || sec->sh_offset % _Alignof(Elf64_Sym) != 0 || sec->sh_offset > (uint64_t)st.st_size ||
        sec->sh_size > (uint64_t)st.st_size - sec->sh_offset || strtab->sh_offset > (uint64_t)st.st_size ||
        strtab->sh_size > (uint64_t)st.st_size - strtab->sh_offset)
        return false;
    const char *file = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (file == MAP_FAILED)
        return false;
    const Elf64_Sym *syms = (const Elf64_Sym *)(const void *)(file + sec->sh_offset);
    const char *names = file + strtab->sh_offset;
    bool found = false;
    for (size_t i = 0; !found && i < sec->sh_size / sizeof(Elf64_Sym); i++) {
        uint32_t at = syms[i].st_name;
        /* A name must end inside the string table to be compared. */
        found = at != 0 && at < strtab->sh_size &&
                memchr(names + at, '\0', strtab->sh_size - at) != NULL && is_mpi_init(names + at);
    }
    munmap((void *)file, (size_t)st.st_size);
    return found;
}

struct mpi_use {
    bool calls_init;
    bool needs_bmpi;
};

static bool visit_mpi_use(int fd, const Elf64_Shdr *sec, const Elf64_Shdr *strtab, void *arg)
{
    struct mpi_use *use = arg;
    if (sec->sh_type == SHT_DYNAMIC) {
        struct mpich_deps deps = {0};
        read_dynamic(fd, sec, strtab, &deps);
        use->needs_bmpi = deps.needs_bmpi;
    } else if (!use->calls_init)
        use->calls_init = symtab_has_mpi_init(fd, sec, strtab);
    return false; /* every section */
}

bool bmpi_program_uses_other_mpi(const char *program)
{
    struct mpi_use use = {0};
    elf_scan(program, visit_mpi_use, &use);
    return use.calls_init && !use.needs_bmpi;
}
