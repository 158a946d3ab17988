/*
 * Independent blocking access (io/file.h): explicit offsets and the
 * individual file pointer, the checks every data access shares, the
 * system calls under every access, and atomic mode's byte-range locks.
 * An access is a walk (walk.c) stepped to its end in the call.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "io/file.h"
#include "runtime/api.h"

/* --- system calls ----------------------------------------------------------------- */

int bmpi_io_pread(struct bmpi_file *f, void *buf, size_t len, MPI_Offset off, size_t *done)
{
    size_t got = 0;
    while (got < len) {
        ssize_t n = pread(f->fd, (char *)buf + got, len - got, off + (MPI_Offset)got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            *done = got;
            return bmpi_io_errno(errno, "cannot read", f->path);
        }
        if (n == 0)
            break;
        got += (size_t)n;
    }
    *done = got;
    return BMPI_OK;
}

int bmpi_io_pwrite(struct bmpi_file *f, const void *buf, size_t len, MPI_Offset off)
{
    size_t put = 0;
    while (put < len) {
        ssize_t n = pwrite(f->fd, (const char *)buf + put, len - put, off + (MPI_Offset)put);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return bmpi_io_errno(errno, "cannot write", f->path);
        if (n == 0)
            return bmpi_err_set(MPI_ERR_IO, "cannot write %s: no progress at offset %lld", f->path,
                                (long long)(off + (MPI_Offset)put));
        put += (size_t)n;
    }
    return BMPI_OK;
}

int bmpi_io_pwritev(struct bmpi_file *f, struct iovec *iov, size_t n, MPI_Offset off)
{
    while (n) {
        ssize_t w = pwritev(f->fd, iov, n < IOV_MAX ? (int)n : IOV_MAX, off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return bmpi_io_errno(errno, "cannot write", f->path);
        if (w == 0)
            return bmpi_err_set(MPI_ERR_IO, "cannot write %s: no progress at offset %lld", f->path, (long long)off);
        off += w;
        for (; n && (size_t)w >= iov->iov_len; iov++, n--)
            w -= (ssize_t)iov->iov_len;
        if (n) {
            iov->iov_base = (char *)iov->iov_base + w;
            iov->iov_len -= (size_t)w;
        }
    }
    return BMPI_OK;
}

static int set_lock(struct bmpi_file *f, short type, MPI_Offset off, MPI_Offset len)
{
    struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = off, .l_len = len};
    while (fcntl(f->fd, F_SETLKW, &fl) < 0)
        if (errno != EINTR)
            return bmpi_io_errno(errno, "cannot lock a range of", f->path);
    return BMPI_OK;
}

int bmpi_io_lock(struct bmpi_file *f, MPI_Offset off, MPI_Offset len, enum bmpi_io_dir dir)
{
    if (len <= 0)
        return BMPI_OK;
    return set_lock(f, dir == BMPI_IO_WRITE ? F_WRLCK : F_RDLCK, off, len);
}

void bmpi_io_unlock(struct bmpi_file *f, MPI_Offset off, MPI_Offset len)
{
    if (len > 0)
        set_lock(f, F_UNLCK, off, len);
}

/* --- checks ------------------------------------------------------------------------- */

int bmpi_io_access_check(struct bmpi_file *f, const char *fn, enum bmpi_io_dir dir, const MPI_Offset *offset,
                         const void *buf, MPI_Count count, MPI_Datatype datatype, struct bmpi_io_access *a)
{
    int access = f->amode & (MPI_MODE_RDONLY | MPI_MODE_WRONLY | MPI_MODE_RDWR);
    if (dir == BMPI_IO_READ && access == MPI_MODE_WRONLY)
        return bmpi_err_file_obj(f, MPI_ERR_ACCESS, fn, "%s is open write-only", f->path);
    if (dir == BMPI_IO_WRITE && access == MPI_MODE_RDONLY)
        return bmpi_err_file_obj(f, MPI_ERR_READ_ONLY, fn, "%s is open read-only", f->path);
    if (offset && (f->amode & MPI_MODE_SEQUENTIAL))
        return bmpi_err_file_obj(f, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                                 "explicit offsets on %s, opened with MPI_MODE_SEQUENTIAL", f->path);
    if (offset && *offset < 0)
        return bmpi_err_file_obj(f, MPI_ERR_ARG, fn, "offset %lld is negative", (long long)*offset);
    if (count < 0)
        return bmpi_err_file_obj(f, MPI_ERR_COUNT, fn, "count %lld is negative", (long long)count);
    struct bmpi_datatype *dt;
    int err = bmpi_dt_check_usable(datatype, &dt);
    if (err)
        return bmpi_err_file_obj(f, err, fn, NULL);
    size_t bytes;
    if (!bmpi_dt_total(dt, (size_t)count, &bytes) || bytes > (size_t)INT64_MAX)
        return bmpi_err_file_obj(f, MPI_ERR_COUNT, fn, "count %lld of %s overflows", (long long)count,
                                 bmpi_dt_name(datatype));
    if (!bmpi_datarep_is_native(f->view.rep) && (err = bmpi_datarep_size(f->view.rep, dt, (size_t)count, &bytes)))
        return bmpi_err_file_obj(f, err, fn, NULL);
    /* Type matching is that of communication (MPI 4.1 14.6.5): the count
     * copies together must be whole etypes, not each copy (24 MPI_INT
     * under an etype of 2 ints are 12 etypes). */
    if (bytes % f->view.esize)
        return bmpi_err_file_obj(f, MPI_ERR_TYPE, fn, "%lld x %s hold %zu bytes, not whole etypes of %zu",
                                 (long long)count, bmpi_dt_name(datatype), bytes, f->view.esize);
    *a = (struct bmpi_io_access){
        .dir = dir, .buf = (void *)buf, .count = (size_t)count, .type = datatype, .dt = dt, .rep = f->view.rep,
        .bytes = bytes};
    return MPI_SUCCESS;
}

/* --- the blocking walk ------------------------------------------------------------------ */

int bmpi_io_independent(struct bmpi_file *f, const struct bmpi_io_access *a, MPI_Offset offset, size_t *done)
{
    struct bmpi_io_walk w;
    int err = bmpi_io_walk_init(&w, f, a, offset);
    while (!err && !bmpi_io_walk_done(&w))
        err = bmpi_io_walk_step(&w, SIZE_MAX);
    *done = w.done;
    bmpi_io_walk_release(&w);
    return err;
}

/* --- entry points ------------------------------------------------------------------------ */

static int access_at(MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count, MPI_Datatype datatype,
                     MPI_Status *status, enum bmpi_io_dir dir, const char *fn)
{
    struct bmpi_file *f;
    struct bmpi_io_access a;
    int err = bmpi_file_check(fh, fn, &f);
    if (err || (err = bmpi_io_access_check(f, fn, dir, &offset, buf, count, datatype, &a)))
        return err;
    size_t done = 0;
    err = bmpi_io_independent(f, &a, offset, &done);
    bmpi_io_status(status, &a, done);
    return err ? bmpi_err_file_obj(f, err, fn, NULL) : MPI_SUCCESS;
}

static int access_individual(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                             MPI_Status *status, enum bmpi_io_dir dir, const char *fn)
{
    struct bmpi_file *f;
    struct bmpi_io_access a;
    int err = bmpi_file_check(fh, fn, &f);
    if (err || (err = bmpi_io_access_check(f, fn, dir, NULL, buf, count, datatype, &a)))
        return err;
    if (f->amode & MPI_MODE_SEQUENTIAL)
        return bmpi_err_file_obj(f, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                                 "the individual file pointer of %s, opened with MPI_MODE_SEQUENTIAL", f->path);
    size_t done = 0;
    err = bmpi_io_independent(f, &a, f->pos, &done);
    f->pos += (MPI_Offset)(done / f->view.esize);
    bmpi_io_status(status, &a, done);
    return err ? bmpi_err_file_obj(f, err, fn, NULL) : MPI_SUCCESS;
}

BMPI_API(MPI_File_read_at)
int PMPI_File_read_at(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
                      MPI_Status *status)
{
    return access_at(fh, offset, buf, count, datatype, status, BMPI_IO_READ, "MPI_File_read_at");
}

BMPI_API(MPI_File_read_at_c)
int PMPI_File_read_at_c(MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count, MPI_Datatype datatype,
                        MPI_Status *status)
{
    return access_at(fh, offset, buf, count, datatype, status, BMPI_IO_READ, "MPI_File_read_at_c");
}

BMPI_API(MPI_File_write_at)
int PMPI_File_write_at(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype,
                       MPI_Status *status)
{
    return access_at(fh, offset, buf, count, datatype, status, BMPI_IO_WRITE, "MPI_File_write_at");
}

BMPI_API(MPI_File_write_at_c)
int PMPI_File_write_at_c(MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count,
                         MPI_Datatype datatype, MPI_Status *status)
{
    return access_at(fh, offset, buf, count, datatype, status, BMPI_IO_WRITE, "MPI_File_write_at_c");
}

BMPI_API(MPI_File_read)
int PMPI_File_read(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    return access_individual(fh, buf, count, datatype, status, BMPI_IO_READ, "MPI_File_read");
}

BMPI_API(MPI_File_read_c)
int PMPI_File_read_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status)
{
    return access_individual(fh, buf, count, datatype, status, BMPI_IO_READ, "MPI_File_read_c");
}

BMPI_API(MPI_File_write)
int PMPI_File_write(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    return access_individual(fh, buf, count, datatype, status, BMPI_IO_WRITE, "MPI_File_write");
}

BMPI_API(MPI_File_write_c)
int PMPI_File_write_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status)
{
    return access_individual(fh, buf, count, datatype, status, BMPI_IO_WRITE, "MPI_File_write_c");
}

/* --- the individual file pointer ----------------------------------------------------------- */

static int pointer_check(MPI_File fh, const char *fn, struct bmpi_file **f)
{
    int err = bmpi_file_check(fh, fn, f);
    if (!err && ((*f)->amode & MPI_MODE_SEQUENTIAL))
        return bmpi_err_file_obj(*f, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                                 "the individual file pointer of %s, opened with MPI_MODE_SEQUENTIAL", (*f)->path);
    return err;
}

/* The end of file in etypes of f's view: after the last whole etype
 * (MPI 4.1 14.4.3), as the shared pointer's MPI_SEEK_END counts it. */
static int end_position(struct bmpi_file *f, MPI_Offset *pos)
{
    struct stat st;
    if (fstat(f->fd, &st) < 0)
        return bmpi_io_errno(errno, "cannot stat", f->path);
    MPI_Offset stream = bmpi_io_map_stream_end(&f->view, st.st_size);
    *pos = stream / (MPI_Offset)f->view.esize;
    return BMPI_OK;
}

BMPI_API(MPI_File_seek)
int PMPI_File_seek(MPI_File fh, MPI_Offset offset, int whence)
{
    const char *fn = "MPI_File_seek";
    struct bmpi_file *f;
    int err = pointer_check(fh, fn, &f);
    if (err)
        return err;
    MPI_Offset base = 0;
    switch (whence) {
    case MPI_SEEK_SET:
        break;
    case MPI_SEEK_CUR:
        base = f->pos;
        break;
    case MPI_SEEK_END:
        if ((err = end_position(f, &base)))
            return bmpi_err_file_obj(f, err, fn, NULL);
        break;
    default:
        return bmpi_err_file_obj(f, MPI_ERR_ARG, fn, "whence %d is none of MPI_SEEK_SET, _CUR and _END", whence);
    }
    if (base + offset < 0)
        return bmpi_err_file_obj(f, MPI_ERR_ARG, fn, "offset %lld from %lld is before the start of the view",
                                 (long long)offset, (long long)base);
    f->pos = base + offset;
    return MPI_SUCCESS;
}

BMPI_API(MPI_File_get_position)
int PMPI_File_get_position(MPI_File fh, MPI_Offset *offset)
{
    const char *fn = "MPI_File_get_position";
    struct bmpi_file *f;
    int err = pointer_check(fh, fn, &f);
    if (err)
        return err;
    if (!offset)
        return bmpi_err_file_obj(f, MPI_ERR_ARG, fn, "offset is NULL");
    *offset = f->pos;
    return MPI_SUCCESS;
}

BMPI_API(MPI_File_get_byte_offset)
int PMPI_File_get_byte_offset(MPI_File fh, MPI_Offset offset, MPI_Offset *disp)
{
    const char *fn = "MPI_File_get_byte_offset";
    struct bmpi_file *f;
    int err = bmpi_file_check(fh, fn, &f);
    if (err)
        return err;
    if (offset < 0)
        return bmpi_err_file_obj(f, MPI_ERR_ARG, fn, "offset %lld is negative", (long long)offset);
    if (!disp)
        return bmpi_err_file_obj(f, MPI_ERR_ARG, fn, "disp is NULL");
    *disp = bmpi_io_map_byte(&f->view, offset * (MPI_Offset)f->view.esize);
    return MPI_SUCCESS;
}
