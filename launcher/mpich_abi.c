/* Which directory of MPICH sonames the ranks get: the installed one
 * ($(pkglibdir)/mpich-abi), or the build tree's when this bmpirun is the
 * build tree's own (tests run it before `make install`). Both paths come
 * from launcher/local.mk. */
#include "config.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
