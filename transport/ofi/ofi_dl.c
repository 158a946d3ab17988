/*
 * libfabric is opened with dlopen() the first time the ofi transport asks
 * for it, not linked into libbmpi.so: loading libfabric runs its providers'
 * library constructors (PSM's timer calibration sleeps about 0.2 s), a cost
 * every bmpi program would pay at start-up even on one node, where ofi is
 * not used. The transport calls libfabric's few real entry points through
 * these same-named forwarders; everything else in libfabric's API is inline
 * and goes through the objects these return.
 */
#include "config.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

#include "transport/ofi/ofi.h"
#include "transport/transport.h"

#define LIBFABRIC_SONAME "libfabric.so.1"

static struct {
    void *lib;
    int (*getinfo)(uint32_t, const char *, const char *, uint64_t, const struct fi_info *,
                   struct fi_info **);
    void (*freeinfo)(struct fi_info *);
    struct fi_info *(*dupinfo)(const struct fi_info *);
    int (*fabric)(struct fi_fabric_attr *, struct fid_fabric **, void *);
    const char *(*strerror)(int);
    uint32_t (*version)(void);
} fabric;

/* 0 when libfabric is loaded; the dlerror() text stays for ofi_dl_error().
 *
 * Before the load: PSM's libraries (libinfinipath, libpsm2, which
 * Debian's libfabric brings in) install a SIGSEGV handler when they load
 * that prints a backtrace and exits with status 1, so a rank that crashed
 * would be reported as "exited with status 1" instead of killed by signal
 * 11, and the launcher could not tell a crash from an error exit. Their
 * own variables turn it off; a user who sets them keeps the choice.
 *
 * After the load: libfabric's kernel symbol scan is skipped
 * (ofi_kallsyms.c) unless BMPI_OFI_KALLSYMS=on. */
static int load(void)
{
    if (fabric.lib)
        return 0;
    setenv("IPATH_NO_BACKTRACE", "1", 0);
    setenv("HFI_NO_BACKTRACE", "1", 0);
    void *lib = dlopen(LIBFABRIC_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return -1;
    *(void **)&fabric.getinfo = dlsym(lib, "fi_getinfo");
    *(void **)&fabric.freeinfo = dlsym(lib, "fi_freeinfo");
    *(void **)&fabric.dupinfo = dlsym(lib, "fi_dupinfo");
    *(void **)&fabric.fabric = dlsym(lib, "fi_fabric");
    *(void **)&fabric.strerror = dlsym(lib, "fi_strerror");
    *(void **)&fabric.version = dlsym(lib, "fi_version");
    if (!fabric.getinfo || !fabric.freeinfo || !fabric.dupinfo || !fabric.fabric || !fabric.strerror ||
        !fabric.version) {
        dlclose(lib);
        return -1;
    }
    if (bmpi_env_switch("BMPI_OFI_KALLSYMS") != 1)
        ofi_skip_kallsyms_scan(lib);
    fabric.lib = lib;
    return 0;
}

int fi_getinfo(uint32_t version, const char *node, const char *service, uint64_t flags,
               const struct fi_info *hints, struct fi_info **info)
{
    if (load() != 0)
        return -FI_ENOSYS;
    return fabric.getinfo(version, node, service, flags, hints, info);
}

void fi_freeinfo(struct fi_info *info)
{
    if (info && load() == 0)
        fabric.freeinfo(info);
}

struct fi_info *fi_dupinfo(const struct fi_info *info)
{
    return load() == 0 ? fabric.dupinfo(info) : NULL;
}

int fi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fab, void *context)
{
    if (load() != 0)
        return -FI_ENOSYS;
    return fabric.fabric(attr, fab, context);
}

const char *fi_strerror(int errnum)
{
    if (load() != 0)
        return "libfabric (" LIBFABRIC_SONAME ") could not be loaded";
    return fabric.strerror(errnum);
}

/* 0 when libfabric cannot be loaded. */
uint32_t fi_version(void)
{
    return load() == 0 ? fabric.version() : 0;
}
