/*
 * The file object (io/file.h): open, close, delete, size, hints, sync,
 * atomicity, Fortran handles.
 *
 * Opening is collective, in ROMIO's order: rank 0 alone creates the file
 * (so that MPI_MODE_EXCL means what it says), then every rank opens it
 * without O_CREAT, and one allreduce of the error classes makes every rank
 * succeed or fail together; a rank that failed reports why, the others
 * that another rank failed.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/file.h"
#include "io/io.h"
#include "runtime/api.h"
#include "runtime/errhandler.h"
#include "runtime/info.h"
#include "runtime/progress.h"
#include "runtime/world.h"

/* Live files: validity checks, and the integers that stand for them in
 * Fortran (index + 1). */
struct bmpi_file_table {
    struct bmpi_file **objs;
    int cap;
};

static struct bmpi_file_table files;

#define AMODE_ACCESS (MPI_MODE_RDONLY | MPI_MODE_WRONLY | MPI_MODE_RDWR)
#define AMODE_ALL                                                                                        \
    (AMODE_ACCESS | MPI_MODE_CREATE | MPI_MODE_DELETE_ON_CLOSE | MPI_MODE_UNIQUE_OPEN | MPI_MODE_EXCL | \
     MPI_MODE_APPEND | MPI_MODE_SEQUENTIAL)

/* ROMIO's default is 16 MiB. Smaller rounds keep a round's data in the
 * caches between packing, the exchange, the aggregator's copy and the
 * write: docs/performance.md has the comparison that chose this. */
#define DEFAULT_CB_BUFFER_SIZE (4u << 20)
#define DEFAULT_IND_RD_BUFFER_SIZE (4u << 20)
#define DEFAULT_IND_WR_BUFFER_SIZE (512u << 10)

int bmpi_file_check(MPI_File fh, const char *fn, struct bmpi_file **f)
{
    *f = NULL;
    if (!bmpi_initialized())
        return bmpi_err_noobj(MPI_ERR_OTHER, fn, "MPI is not initialized");
    for (int i = 0; fh != MPI_FILE_NULL && i < files.cap; i++)
        if (files.objs[i] == fh && fh->magic == BMPI_FILE_MAGIC) {
            *f = fh;
            return MPI_SUCCESS;
        }
    return bmpi_err_file_obj(NULL, MPI_ERR_FILE, fn, "invalid file handle %p", (void *)fh);
}

static int table_add(struct bmpi_file *f)
{
    int slot = 0;
    while (slot < files.cap && files.objs[slot])
        slot++;
    if (slot == files.cap) {
        int cap = files.cap ? 2 * files.cap : 8;
        struct bmpi_file **objs = realloc(files.objs, (size_t)cap * sizeof(*objs));
        if (!objs)
            return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory for the file table");
        memset(objs + files.cap, 0, (size_t)(cap - files.cap) * sizeof(*objs));
        files.objs = objs;
        files.cap = cap;
    }
    files.objs[slot] = f;
    f->fhandle = slot + 1;
    return BMPI_OK;
}

/* --- hints --------------------------------------------------------------------- */

static void hint_size(const struct bmpi_info *info, const char *key, size_t *out)
{
    const char *v = bmpi_info_value(info, key);
    char *end;
    if (!v)
        return;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    /* the standard lets an implementation ignore a hint it cannot use */
    if (!errno && end != v && !*end && n > 0)
        *out = (size_t)n;
}

static void hint_toggle(const struct bmpi_info *info, const char *key, enum bmpi_io_toggle *out)
{
    const char *v = bmpi_info_value(info, key);
    if (!v)
        return;
    if (!strcmp(v, "enable"))
        *out = BMPI_IO_ENABLE;
    else if (!strcmp(v, "disable"))
        *out = BMPI_IO_DISABLE;
    else if (!strcmp(v, "automatic"))
        *out = BMPI_IO_AUTO;
}

static void hints_default(struct bmpi_file_hints *h)
{
    *h = (struct bmpi_file_hints){
        .cb_buffer_size = DEFAULT_CB_BUFFER_SIZE,
        .ind_rd_buffer_size = DEFAULT_IND_RD_BUFFER_SIZE,
        .ind_wr_buffer_size = DEFAULT_IND_WR_BUFFER_SIZE,
    };
}

static void hints_apply(struct bmpi_file_hints *h, const struct bmpi_info *info)
{
    if (!info)
        return;
    size_t n = 0;
    hint_size(info, "cb_buffer_size", &h->cb_buffer_size);
    hint_size(info, "cb_nodes", &n);
    if (n)
        h->cb_nodes = n > 1u << 20 ? 1 << 20 : (int)n;
    hint_toggle(info, "cb_read", &h->cb_read);
    hint_toggle(info, "cb_write", &h->cb_write);
    hint_toggle(info, "romio_cb_read", &h->cb_read);
    hint_toggle(info, "romio_cb_write", &h->cb_write);
    hint_toggle(info, "romio_ds_read", &h->ds_read);
    hint_toggle(info, "romio_ds_write", &h->ds_write);
    hint_size(info, "ind_rd_buffer_size", &h->ind_rd_buffer_size);
    hint_size(info, "ind_wr_buffer_size", &h->ind_wr_buffer_size);
    hint_size(info, "striping_unit", &h->striping_unit);
    const char *style = bmpi_info_value(info, "access_style");
    if (style)
        snprintf(h->access_style, sizeof(h->access_style), "%s", style);
}

/* Remember the user's hints (for keys we do not know, get_info gives them
 * back as set) and apply the ones we know. */
static int file_set_hints(struct bmpi_file *f, MPI_Info info)
{
    struct bmpi_info *given = info == MPI_INFO_NULL ? NULL : bmpi_info_lookup(info);
    if (info != MPI_INFO_NULL && !given)
        return bmpi_err_set(MPI_ERR_INFO, "invalid info 0x%x", (unsigned)info);
    if (!given)
        return BMPI_OK;
    struct bmpi_info *copy = bmpi_info_clone(given);
    if (!copy)
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory for the file's hints");
    if (f->info)
        bmpi_info_destroy(f->info);
    f->info = copy;
    hints_apply(&f->hints, copy);
    return BMPI_OK;
}

static const char *toggle_name(enum bmpi_io_toggle t)
{
    return t == BMPI_IO_ENABLE ? "enable" : t == BMPI_IO_DISABLE ? "disable" : "automatic";
}

static int info_set_size(MPI_Info info, const char *key, long long v)
{
    char s[32];
    snprintf(s, sizeof(s), "%lld", v);
    return PMPI_Info_set(info, key, s);
}

/* The hints in use: what the user set, with our values for the keys we
 * honour. */
static int hints_to_info(struct bmpi_file *f, MPI_Info *out)
{
    int err = MPI_SUCCESS;
    if (f->info) {
        struct bmpi_info *copy = bmpi_info_clone(f->info);
        if (!copy)
            return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory for the info");
        err = bmpi_info_make_handle(copy, out);
    } else {
        err = PMPI_Info_create(out);
    }
    const struct bmpi_file_hints *h = &f->hints;
    if (!err)
        err = info_set_size(*out, "cb_buffer_size", (long long)h->cb_buffer_size);
    int naggr = bmpi_io_coll_aggregators(f);
    if (!err && naggr)
        err = info_set_size(*out, "cb_nodes", naggr);
    if (!err)
        err = PMPI_Info_set(*out, "romio_cb_read", toggle_name(h->cb_read));
    if (!err)
        err = PMPI_Info_set(*out, "romio_cb_write", toggle_name(h->cb_write));
    if (!err)
        err = PMPI_Info_set(*out, "romio_ds_read", toggle_name(h->ds_read));
    if (!err)
        err = PMPI_Info_set(*out, "romio_ds_write", toggle_name(h->ds_write));
    if (!err)
        err = info_set_size(*out, "ind_rd_buffer_size", (long long)h->ind_rd_buffer_size);
    if (!err)
        err = info_set_size(*out, "ind_wr_buffer_size", (long long)h->ind_wr_buffer_size);
    if (!err && h->striping_unit)
        err = info_set_size(*out, "striping_unit", (long long)h->striping_unit);
    return err;
}

/* --- open ------------------------------------------------------------------------ */

static int check_amode(int amode)
{
    int access = amode & AMODE_ACCESS;
    if (amode & ~AMODE_ALL)
        return bmpi_err_set(MPI_ERR_AMODE, "amode 0x%x has unknown bits 0x%x", (unsigned)amode,
                            (unsigned)(amode & ~AMODE_ALL));
    if (access != MPI_MODE_RDONLY && access != MPI_MODE_WRONLY && access != MPI_MODE_RDWR)
        return bmpi_err_set(MPI_ERR_AMODE, "amode 0x%x must have exactly one of MPI_MODE_RDONLY, "
                            "MPI_MODE_WRONLY and MPI_MODE_RDWR", (unsigned)amode);
    if (access == MPI_MODE_RDONLY && (amode & (MPI_MODE_CREATE | MPI_MODE_EXCL)))
        return bmpi_err_set(MPI_ERR_AMODE, "amode 0x%x: MPI_MODE_RDONLY with MPI_MODE_%s", (unsigned)amode,
                            amode & MPI_MODE_CREATE ? "CREATE" : "EXCL");
    if (access == MPI_MODE_RDWR && (amode & MPI_MODE_SEQUENTIAL))
        return bmpi_err_set(MPI_ERR_AMODE, "amode 0x%x: MPI_MODE_RDWR with MPI_MODE_SEQUENTIAL", (unsigned)amode);
    return BMPI_OK;
}

/* ROMIO's file-system prefixes ("ufs:", "nfs:") name the driver; every
 * file here goes through POSIX calls. */
static const char *strip_prefix(const char *name)
{
    static const char *const prefixes[] = {"ufs:", "nfs:", "file:"};
    for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
        if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
            return name + strlen(prefixes[i]);
    return name;
}

/* Rank 0's part: create the file when asked to. */
static int create_file(const char *path, int amode)
{
    if (!(amode & MPI_MODE_CREATE))
        return BMPI_OK;
    int flags = O_CREAT | O_WRONLY | O_CLOEXEC | (amode & MPI_MODE_EXCL ? O_EXCL : 0);
    int fd = open(path, flags, 0666);
    if (fd < 0)
        return bmpi_io_errno(errno, "cannot create", path);
    close(fd);
    return BMPI_OK;
}

/* Every rank's part. A write-only file is opened for reading too when the
 * permissions allow, so that data sieving and collective buffering can
 * fill the holes of what they write. */
static int open_fd(struct bmpi_file *f)
{
    int access = f->amode & AMODE_ACCESS;
    int flags = O_CLOEXEC | (access == MPI_MODE_RDONLY ? O_RDONLY : O_RDWR);
    f->fd = open(f->path, flags);
    if (f->fd < 0 && access == MPI_MODE_WRONLY && errno == EACCES)
        f->fd = open(f->path, O_CLOEXEC | O_WRONLY);
    if (f->fd < 0)
        return bmpi_io_errno(errno, "cannot open", f->path);
    f->readable = access != MPI_MODE_WRONLY || (fcntl(f->fd, F_GETFL) & O_ACCMODE) == O_RDWR;
    struct stat st;
    if (fstat(f->fd, &st) == 0 && S_ISDIR(st.st_mode))
        return bmpi_err_set(MPI_ERR_BAD_FILE, "%s is a directory", f->path);
    return BMPI_OK;
}

static int append_position(struct bmpi_file *f)
{
    if (!(f->amode & MPI_MODE_APPEND))
        return BMPI_OK;
    struct stat st;
    if (fstat(f->fd, &st) < 0)
        return bmpi_io_errno(errno, "cannot stat", f->path);
    f->pos = st.st_size; /* the default view counts bytes */
    return BMPI_OK;
}

static void file_free(struct bmpi_file *f)
{
    if (f->fd >= 0)
        close(f->fd);
    if (f->fhandle)
        files.objs[f->fhandle - 1] = NULL;
    bmpi_io_coll_close(f);
    bmpi_view_release(&f->view);
    bmpi_io_shared_release(f);
    if (f->info)
        bmpi_info_destroy(f->info);
    bmpi_errhandler_release(f->errhandler);
    if (f->comm != MPI_COMM_NULL)
        PMPI_Comm_free(&f->comm);
    f->magic = 0;
    free(f->path);
    free(f);
}

static struct bmpi_file *file_new(const char *path, int amode)
{
    struct bmpi_file *f = calloc(1, sizeof(*f));
    if (!f)
        return NULL;
    f->magic = BMPI_FILE_MAGIC;
    f->fd = -1;
    f->comm = MPI_COMM_NULL;
    f->amode = amode;
    f->errhandler = bmpi_file_null_errhandler();
    bmpi_errhandler_retain(f->errhandler);
    hints_default(&f->hints);
    bmpi_view_init_default(&f->view);
    f->path = strdup(path);
    if (!f->path) {
        free(f);
        return NULL;
    }
    return f;
}

/* Each rank's steps after the communicator is duplicated; 0 or an error
 * class with the reason recorded. */
static int open_local(struct bmpi_file *f, MPI_Info info, int created)
{
    int err = created;
    if (!err)
        err = file_set_hints(f, info);
    if (!err)
        err = open_fd(f);
    if (!err)
        err = append_position(f);
    if (!err)
        err = table_add(f);
    return err;
}

/* The open's collective steps; *f is freed by the caller on error. */
static int open_collective(MPI_Comm comm, struct bmpi_file *f, MPI_Info info)
{
    int err = PMPI_Comm_dup(comm, &f->comm);
    if (err)
        return bmpi_err_set(err, "cannot duplicate the communicator");
    /* the layer's own collectives fail back to it, which reports through
     * the file's handler, not the user communicator's */
    PMPI_Comm_set_errhandler(f->comm, MPI_ERRORS_RETURN);
    PMPI_Comm_rank(f->comm, &f->rank);
    PMPI_Comm_size(f->comm, &f->size);
    int created = f->rank == 0 ? create_file(f->path, f->amode) : BMPI_OK;
    if ((err = PMPI_Bcast(&created, 1, MPI_INT, 0, f->comm)))
        return bmpi_err_set(err, "cannot share the result of creating the file");
    if (created && f->rank != 0)
        bmpi_err_set(created, "rank 0 could not create %s", f->path);
    int worst = bmpi_io_agree(f, open_local(f, info, created), "open");
    return worst ? worst : bmpi_io_shared_open(f);
}

int bmpi_io_agree(struct bmpi_file *f, int mine, const char *what)
{
    int worst = mine;
    int err = PMPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, f->comm);
    if (err)
        return bmpi_err_set(err, "cannot agree on the outcome of %s %s", what, f->path);
    if (worst && !mine)
        bmpi_err_set(worst, "another rank could not %s %s", what, f->path);
    return worst;
}

BMPI_API(MPI_File_open)
int PMPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh)
{
    const char *fn = "MPI_File_open";
    if (!bmpi_initialized())
        return bmpi_err_noobj(MPI_ERR_OTHER, fn, "MPI is not initialized");
    int inter = 0;
    if (comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS)
        return bmpi_err_comm(comm, MPI_ERR_COMM, fn, "invalid communicator 0x%x", (unsigned)comm);
    if (inter)
        return bmpi_err_comm(comm, MPI_ERR_COMM, fn, "communicator 0x%x is an intercommunicator",
                             (unsigned)comm);
    if (!fh)
        return bmpi_err_file_obj(NULL, MPI_ERR_ARG, fn, "fh is NULL");
    if (!filename || !*filename)
        return bmpi_err_file_obj(NULL, MPI_ERR_BAD_FILE, fn, "the file name is %s", filename ? "empty" : "NULL");
    int err = check_amode(amode);
    if (err)
        return bmpi_err_file_obj(NULL, err, fn, NULL);
    struct bmpi_file *f = file_new(strip_prefix(filename), amode);
    if (!f)
        return bmpi_err_file_obj(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    if ((err = open_collective(comm, f, info))) {
        int rc = bmpi_err_file_obj(NULL, err, fn, NULL);
        file_free(f);
        return rc;
    }
    *fh = f;
    return MPI_SUCCESS;
}

/* --- close and delete ------------------------------------------------------------- */

BMPI_API(MPI_File_close)
int PMPI_File_close(MPI_File *fh)
{
    const char *fn = "MPI_File_close";
    if (!fh)
        return bmpi_err_file_obj(NULL, MPI_ERR_ARG, fn, "fh is NULL");
    struct bmpi_file *f;
    int err = bmpi_file_check(*fh, fn, &f);
    if (err)
        return err;
    if (f->split || bmpi_io_shared_split_active(f))
        return bmpi_err_file_obj(f, MPI_ERR_OTHER, fn, "a split collective is still open on %s", f->path);
    /* what a program freed with MPI_Request_free still completes here */
    unsigned idle = 0;
    while (f->pending_ops)
        if (!bmpi_progress())
            bmpi_progress_idle(&idle);
    bmpi_io_shared_close(f);
    int mine = BMPI_OK;
    if (close(f->fd) < 0)
        mine = bmpi_io_errno(errno, "cannot close", f->path);
    f->fd = -1;
    /* every rank has closed before the file may go; an error of close(2)
     * is the rank's own (ROMIO reports it locally too) */
    err = PMPI_Barrier(f->comm);
    if (!err && f->rank == 0 && (f->amode & MPI_MODE_DELETE_ON_CLOSE) && unlink(f->path) < 0)
        mine = bmpi_io_errno(errno, "cannot delete", f->path);
    file_free(f);
    *fh = MPI_FILE_NULL;
    if (err || mine)
        return bmpi_err_file_obj(NULL, err ? err : mine, fn, NULL);
    return MPI_SUCCESS;
}

BMPI_API(MPI_File_delete)
int PMPI_File_delete(const char *filename, MPI_Info info)
{
    const char *fn = "MPI_File_delete";
    if (!bmpi_initialized())
        return bmpi_err_noobj(MPI_ERR_OTHER, fn, "MPI is not initialized");
    if (!filename || !*filename)
        return bmpi_err_file_obj(NULL, MPI_ERR_BAD_FILE, fn, "the file name is %s", filename ? "empty" : "NULL");
    if (info != MPI_INFO_NULL && !bmpi_info_lookup(info))
        return bmpi_err_file_obj(NULL, MPI_ERR_INFO, fn, "invalid info 0x%x", (unsigned)info);
    const char *path = strip_prefix(filename);
    if (unlink(path) < 0)
        return bmpi_err_file_obj(NULL, bmpi_io_errno(errno, "cannot delete", path), fn, NULL);
    return MPI_SUCCESS;
}

/* --- size ------------------------------------------------------------------------- */

/* A collective step that rank 0 performs alone: every rank gets its result. */
static int rank0_then_share(struct bmpi_file *f, int mine)
{
    int err = PMPI_Bcast(&mine, 1, MPI_INT, 0, f->comm);
    if (err)
        return err;
    if (mine && f->rank != 0)
        bmpi_err_set(mine, "rank 0 failed on %s", f->path);
    return mine;
}

/* Collective size argument: the same on every rank (MPI_ERR_NOT_SAME). */
static int check_same_size(struct bmpi_file *f, MPI_Offset size)
{
    MPI_Offset range[2] = {size, -size}, agreed[2];
    int err = PMPI_Allreduce(range, agreed, 2, MPI_OFFSET, MPI_MAX, f->comm);
    if (err)
        return err;
    if (agreed[0] != -agreed[1])
        return bmpi_err_set(MPI_ERR_NOT_SAME, "size %lld differs between ranks", (long long)size);
    return BMPI_OK;
}

static int size_op(MPI_File fh, MPI_Offset size, bool grow_only, const char *fn)
{
    struct bmpi_file *f;
    int err = bmpi_file_check(fh, fn, &f);
    if (err)
        return err;
    if (size < 0)
        return bmpi_err_file_obj(f, MPI_ERR_ARG, fn, "size %lld is negative", (long long)size);
    if ((f->amode & AMODE_ACCESS) == MPI_MODE_RDONLY)
        return bmpi_err_file_obj(f, MPI_ERR_ACCESS, fn, "%s is open read-only", f->path);
    if (f->amode & MPI_MODE_SEQUENTIAL)
        return bmpi_err_file_obj(f, MPI_ERR_UNSUPPORTED_OPERATION, fn, "%s is open with MPI_MODE_SEQUENTIAL",
                                 f->path);
    if ((err = check_same_size(f, size)))
        return bmpi_err_file_obj(f, err, fn, NULL);
    int mine = BMPI_OK;
    if (f->rank == 0) {
        int rc = grow_only ? posix_fallocate(f->fd, 0, size) : (ftruncate(f->fd, size) < 0 ? errno : 0);
        if (rc)
            mine = bmpi_io_errno(rc, grow_only ? "cannot preallocate" : "cannot resize", f->path);
    }
    if ((err = rank0_then_share(f, mine)))
        return bmpi_err_file_obj(f, err, fn, NULL);
    return MPI_SUCCESS;
}

BMPI_API(MPI_File_set_size)
int PMPI_File_set_size(MPI_File fh, MPI_Offset size)
{
    return size_op(fh, size, false, "MPI_File_set_size");
}

BMPI_API(MPI_File_preallocate)
int PMPI_File_preallocate(MPI_File fh, MPI_Offset size)
{
    return size_op(fh, size, true, "MPI_File_preallocate");
}

BMPI_API(MPI_File_get_size)
int PMPI_File_get_size(MPI_File fh, MPI_Offset *size)
{
    const char *fn = "MPI_File_get_size";
    struct bmpi_file *f;
    int err = bmpi_file_check(fh, fn, &f);
    if (err)
        return err;
    if (!size)
        return bmpi_err_file_obj(f, MPI_ERR_ARG, fn, "size is NULL");
    struct stat st;
    if (fstat(f->fd, &st) < 0)
        return bmpi_err_file_obj(f, bmpi_io_errno(errno, "cannot stat", f->path), fn, NULL);
    *size = st.st_size;
    return MPI_SUCCESS;
}

/* --- properties --------------------------------------------------------------------- */

BMPI_API(MPI_File_get_group)
int PMPI_File_get_group(MPI_File fh, MPI_Group *group)
{
    const char *fn = "MPI_File_get_group";
    struct bmpi_file *f;
    int err = bmpi_file_check(fh, fn, &f);
    if (err)
        return err;
    if (!group)
        return bmpi_err_file_obj(f, MPI_ERR_ARG, fn, "group is NULL");
    if ((err = PMPI_Comm_group(f->comm, group)))
        return bmpi_err_file_obj(f, err, fn, NULL);
    return MPI_SUCCESS;
}

BMPI_API(MPI_File_get_amode)
int PMPI_File_get_amode(MPI_File fh, int *amode)
{
    const char *fn = "MPI_File_get_amode";
    struct bmpi_file *f;
    int err = bmpi_file_check(fh, fn, &f);
    if (err)
        return err;
    if (!amode)
        return bmpi_err_file_obj(f, MPI_ERR_ARG, fn, "amode is NULL");
    *amode = f->amode;
    return MPI_SUCCESS;
}

BMPI_API(MPI_File_set_info)
int PMPI_File_set_info(MPI_File fh, MPI_Info info)
{
    const char *fn = "MPI_File_set_info";
    struct bmpi_file *f;
    int err = bmpi_file_check(fh, fn, &f);
    if (err)
        return err;
    if ((err = file_set_hints(f, info)))
        return bmpi_err_file_obj(f, err, fn, NULL);
    return MPI_SUCCESS;
}

BMPI_API(MPI_File_get_info)
int PMPI_File_get_info(MPI_File fh, MPI_Info *info_used)
{
    const char *fn = "MPI_File_get_info";
    struct bmpi_file *f;
    int err = bmpi_file_check(fh, fn, &f);
    if (err)
        return err;
    if (!info_used)
        return bmpi_err_file_obj(f, MPI_ERR_ARG, fn, "info_used is NULL");
    if ((err = hints_to_info(f, info_used)))
        return bmpi_err_file_obj(f, err, fn, NULL);
    return MPI_SUCCESS;
}

BMPI_API(MPI_File_sync)
int PMPI_File_sync(MPI_File fh)
{
    const char *fn = "MPI_File_sync";
    struct bmpi_file *f;
    int err = bmpi_file_check(fh, fn, &f);
    if (err)
        return err;
    if (f->pending_ops)
        return bmpi_err_file_obj(f, MPI_ERR_OTHER, fn, "%d nonblocking operations on %s are still pending",
                                 f->pending_ops, f->path);
    int mine = fsync(f->fd) < 0 ? bmpi_io_errno(errno, "cannot sync", f->path) : BMPI_OK;
    int worst = bmpi_io_agree(f, mine, "sync");
    if (worst)
        return bmpi_err_file_obj(f, worst, fn, NULL);
    return MPI_SUCCESS;
}

BMPI_API(MPI_File_set_atomicity)
int PMPI_File_set_atomicity(MPI_File fh, int flag)
{
    const char *fn = "MPI_File_set_atomicity";
    struct bmpi_file *f;
    int err = bmpi_file_check(fh, fn, &f);
    if (err)
        return err;
    if ((err = check_same_size(f, flag ? 1 : 0)))
        return bmpi_err_file_obj(f, err, fn, "flag %d differs between ranks", flag);
    f->atomic = flag != 0;
    return MPI_SUCCESS;
}

BMPI_API(MPI_File_get_atomicity)
int PMPI_File_get_atomicity(MPI_File fh, int *flag)
{
    const char *fn = "MPI_File_get_atomicity";
    struct bmpi_file *f;
    int err = bmpi_file_check(fh, fn, &f);
    if (err)
        return err;
    if (!flag)
        return bmpi_err_file_obj(f, MPI_ERR_ARG, fn, "flag is NULL");
    *flag = f->atomic;
    return MPI_SUCCESS;
}

/* --- Fortran handles ------------------------------------------------------------------ */

BMPI_API(MPI_File_c2f)
MPI_Fint PMPI_File_c2f(MPI_File file)
{
    for (int i = 0; file != MPI_FILE_NULL && i < files.cap; i++)
        if (files.objs[i] == file)
            return (MPI_Fint)(i + 1);
    return 0;
}

BMPI_API(MPI_File_f2c)
MPI_File PMPI_File_f2c(MPI_Fint file)
{
    if (file < 1 || file > files.cap)
        return MPI_FILE_NULL;
    return files.objs[file - 1] ? files.objs[file - 1] : MPI_FILE_NULL;
}

/* --- teardown -------------------------------------------------------------------------- */

void bmpi_io_finalize(void)
{
    bmpi_io_pending_finalize();
    for (int i = 0; i < files.cap; i++)
        if (files.objs[i]) {
            files.objs[i]->comm = MPI_COMM_NULL; /* the runtime frees communicators next */
            file_free(files.objs[i]);
        }
    free(files.objs);
    files = (struct bmpi_file_table){0};
    bmpi_io_coll_finalize();
    bmpi_datarep_finalize();
    bmpi_file_errhandler_finalize();
}
