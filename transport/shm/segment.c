/*
 * Shared segments: names, layout, creation, attachment and removal.
 *
 * Every segment of a job on a node is named "/bmpi.<nspace>.<nodeid>..."
 * (so /dev/shm/bmpi.<nspace>.*, which the launcher removes at teardown as a
 * backstop) and ends in a random tag that only the job's processes learn
 * (through PMIx or a message): another user cannot create a name first.
 * The creator uses O_EXCL and mode 0600; an opener maps a file only if it
 * belongs to this user and no one else may open it. Each segment is
 * unlinked as soon as every process that needs it has mapped it: a crash
 * afterwards leaves nothing behind.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
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

int bmpi_shm_ring_name(char *buf, size_t len, int sender, int receiver, const char *tag)
{
    char suffix[32 + SHM_TAG_LEN];
    snprintf(suffix, sizeof suffix, ".fp%d.%d.%s", sender, receiver, tag);
    return bmpi_shm_name(buf, len, bmpi_world.nspace, bmpi_world.nodeid, suffix);
}

int bmpi_shm_random_tag(char tag[SHM_TAG_LEN + 1])
{
    unsigned char r[SHM_TAG_LEN / 2];
    size_t got = 0;
    while (got < sizeof r) {
        ssize_t n = getrandom(r + got, sizeof r - got, 0);
        if (n < 0 && errno != EINTR)
            return bmpi_err_set(MPI_ERR_OTHER, "shm: getrandom: %m");
        got += n > 0 ? (size_t)n : 0;
    }
    for (size_t i = 0; i < sizeof r; i++)
        snprintf(tag + 2 * i, 3, "%02x", r[i]);
    return BMPI_OK;
}

/* "user (uid N)", or just the uid when it has no name here. */
static void owner_name(uid_t uid, char *buf, size_t len)
{
    struct passwd pw, *found = NULL;
    char strings[1024];
    if (getpwuid_r(uid, &pw, strings, sizeof strings, &found) == 0 && found)
        snprintf(buf, len, "%s (uid %u)", found->pw_name, (unsigned)uid);
    else
        snprintf(buf, len, "uid %u", (unsigned)uid);
}

int bmpi_shm_check_owner(int fd, const char *path, bool private_mode, struct stat *st, char *why,
                         size_t why_len)
{
    if (fstat(fd, st) != 0) {
        snprintf(why, why_len, "fstat(%s): %s", path, strerror(errno));
        return -1;
    }
    if (st->st_uid == geteuid() && S_ISREG(st->st_mode) &&
        !(private_mode && (st->st_mode & 077)))
        return 0;
    char owner[300];
    owner_name(st->st_uid, owner, sizeof owner);
    snprintf(why, why_len,
             "refusing to map %s: owned by %s, mode %04o, where this job's files belong to "
             "uid %u%s (another user's file in the way?)",
             path, owner, (unsigned)(st->st_mode & 07777), (unsigned)geteuid(),
             private_mode ? " with no access for others" : "");
    return -1;
}

/* The owner of a name that is in the way, for the message. */
static void existing_owner(const char *name, char *buf, size_t len)
{
    char path[300];
    struct stat st;
    snprintf(path, sizeof path, "/dev/shm%s", name);
    if (lstat(path, &st) == 0)
        owner_name(st.st_uid, buf, len);
    else
        snprintf(buf, len, "an owner it cannot see");
}

int bmpi_shm_create(const char *name, size_t len, void **addr)
{
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0) {
        if (errno == EEXIST) {
            char owner[300];
            existing_owner(name, owner, sizeof owner);
            return bmpi_err_set(MPI_ERR_OTHER,
                                "shm: /dev/shm%s already exists, owned by %s: its random tag "
                                "should make that impossible; remove it and run again",
                                name, owner);
        }
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
    char path[300];
    snprintf(path, sizeof path, "/dev/shm%s", name);
    struct stat st;
    char why[768];
    int rc = BMPI_OK;
    if (bmpi_shm_check_owner(fd, path, true, &st, why, sizeof why) != 0)
        rc = bmpi_err_set(MPI_ERR_OTHER, "shm: %s", why);
    else if (st.st_size <= 0)
        rc = bmpi_err_set(MPI_ERR_OTHER, "shm: /dev/shm%s is empty or unreadable", name);
    if (rc) {
        close(fd);
        return rc;
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

int bmpi_shm_unlink(const char *name)
{
    if (shm_unlink(name) != 0 && errno != ENOENT)
        return bmpi_err_set(MPI_ERR_OTHER, "shm: shm_unlink(%s): %m", name);
    return BMPI_OK;
}
