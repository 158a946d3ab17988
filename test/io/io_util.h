/*
 * Shared by the test/io programs (plain MPI, over test/mpi/testutil.h):
 * a scratch directory per run, made by rank 0 under $BMPI_IO_TEST_DIR
 * (default $TMPDIR, then /tmp) and known to every rank, and the paths of
 * files in it. iu_finish() removes the directory and everything in it;
 * a failing check aborts the job and leaves it for inspection, named in
 * the failure line's neighbourhood by iu_init's note on stderr.
 */
#ifndef BMPI_TEST_IO_UTIL_H
#define BMPI_TEST_IO_UTIL_H

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test/mpi/testutil.h"

static char iu_dir[PATH_MAX];

static inline const char *iu_base_dir(void)
{
    const char *d = getenv("BMPI_IO_TEST_DIR");
    if (!d || !*d)
        d = getenv("TMPDIR");
    return d && *d ? d : "/tmp";
}

/* Collective over MPI_COMM_WORLD: make the scratch directory. */
static inline void iu_init(const char *prog)
{
    if (tu_rank == 0) {
        snprintf(iu_dir, sizeof(iu_dir), "%s/bmpi-io-%s.XXXXXX", iu_base_dir(), prog);
        CHECK(mkdtemp(iu_dir) != NULL, "mkdtemp %s failed", iu_dir);
    }
    MPICHK(MPI_Bcast(iu_dir, sizeof(iu_dir), MPI_CHAR, 0, MPI_COMM_WORLD));
}

/* The path of file `name` in the scratch directory (a static buffer per
 * call site is the caller's business: copy it if it must outlive the next). */
static inline const char *iu_path(const char *name)
{
    static char path[PATH_MAX + 64];
    snprintf(path, sizeof(path), "%s/%s", iu_dir, name);
    return path;
}

/* True when $IO_KNOWN_DEVIATIONS (a comma-separated list that
 * test/io/validate-with-mpich.sh sets for another library, never set for
 * bmpi) names `what`: a check of a behaviour that library is known to get
 * wrong (test/io/README) then prints a note instead of failing. */
static inline int iu_known_deviation(const char *what)
{
    const char *list = getenv("IO_KNOWN_DEVIATIONS");
    size_t n = strlen(what);
    for (const char *p = list; p && *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] != '\0'))
        if (strncmp(p, what, n) == 0 && (p[n] == ',' || p[n] == '\0'))
            return 1;
    return 0;
}

/* EXPECT_CLASS, except that with the known deviation `dev` a call that
 * succeeds only prints a note (the other library does not check this). */
#define IU_EXPECT_CLASS_UNLESS(dev, call, want)                                                       \
    do {                                                                                            \
        int iu_rc_ = (call);                                                                        \
        if (iu_rc_ == MPI_SUCCESS && iu_known_deviation(dev))                                       \
            printf("NOTE %s: rank %d: %s succeeded (known deviation %s)\n", tu_prog, tu_rank, #call, \
                   dev);                                                                            \
        else                                                                                        \
            tu_expect_class(__FILE__, __LINE__, #call, iu_rc_, (want), #want);                      \
    } while (0)

/* Collective over MPI_COMM_WORLD: open (creating) scratch file `name`
 * for reading and writing. */
static inline MPI_File iu_open_rw(const char *name)
{
    MPI_File fh;
    MPICHK(MPI_File_open(MPI_COMM_WORLD, iu_path(name), MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    return fh;
}

/* Collective: what every rank wrote through fh visible to every rank's
 * reads (the standard's sync-barrier-sync, MPI 4.1 14.6.1). */
static inline void iu_sync_barrier(MPI_File fh)
{
    MPICHK(MPI_File_sync(fh));
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    MPICHK(MPI_File_sync(fh));
}

/* Collective: remove the scratch directory and its files. */
static inline void iu_finish(void)
{
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    if (tu_rank != 0)
        return;
    DIR *d = opendir(iu_dir);
    CHECK(d != NULL, "opendir %s failed", iu_dir);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char p[PATH_MAX + 300];
        snprintf(p, sizeof(p), "%s/%s", iu_dir, e->d_name);
        CHECK(unlink(p) == 0, "unlink %s failed", p);
    }
    closedir(d);
    CHECK(rmdir(iu_dir) == 0, "rmdir %s failed", iu_dir);
}

#endif
