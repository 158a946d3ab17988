/*
 * The file object (MPI 4.1 sections 14.2, 14.6.4, 14.7 and 9.3.4): open,
 * close and delete with every access mode and the error classes the
 * standard gives for their failures, sizes and preallocation, amode,
 * group, info hints, atomicity, sync, Fortran handles, and file error
 * handlers (MPI_ERRORS_RETURN by default, MPI_FILE_NULL's handler for
 * open failures, user handlers, MPI_File_call_errhandler), and the
 * classes of invalid arguments.
 *
 * Files are opened on MPI_COMM_WORLD unless a case says otherwise; the
 * cases that touch a file alone (delete, permissions) run on rank 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "test/io/io_util.h"

/* What the user file error handler saw (a handler has no context
 * argument: file scope is the only place for it). */
static struct {
    int calls;
    MPI_File fh;
    int code;
} seen;

static void file_handler(MPI_File *fh, int *code, ...)
{
    seen.calls++;
    seen.fh = *fh;
    seen.code = *code;
}

static int error_class(int code)
{
    int cls;
    MPICHK(MPI_Error_class(code, &cls));
    return cls;
}

static char *path_copy(const char *name)
{
    char *p = strdup(iu_path(name));
    CHECK(p != NULL, "out of memory");
    return p;
}

/* Make path with n bytes of pattern, on every rank's view of it. */
static void make_file(const char *path, int n)
{
    MPI_File fh;
    MPICHK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    MPICHK(MPI_File_set_size(fh, 0));
    if (tu_rank == 0 && n > 0) {
        char *b = malloc((size_t)n);
        CHECK(b != NULL, "out of memory");
        tu_fill(b, (size_t)n, 77);
        MPICHK(MPI_File_write_at(fh, 0, b, n, MPI_BYTE, MPI_STATUS_IGNORE));
        free(b);
    }
    MPICHK(MPI_File_close(&fh));
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* --- open, amode, delete ------------------------------------------------------ */

static void open_errors(const char *path, const char *missing)
{
    MPI_File fh = MPI_FILE_NULL;
    make_file(path, 0);
    EXPECT_CLASS(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR,
                               MPI_INFO_NULL, &fh),
                 MPI_ERR_FILE_EXISTS);
    EXPECT_CLASS(MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDWR, MPI_INFO_NULL, &fh), MPI_ERR_NO_SUCH_FILE);
    EXPECT_CLASS(MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
                 MPI_ERR_NO_SUCH_FILE);
    EXPECT_CLASS(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY | MPI_MODE_CREATE, MPI_INFO_NULL, &fh),
                 MPI_ERR_AMODE);
    EXPECT_CLASS(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY | MPI_MODE_EXCL, MPI_INFO_NULL, &fh),
                 MPI_ERR_AMODE);
    EXPECT_CLASS(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
                 MPI_ERR_AMODE);
    EXPECT_CLASS(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh),
                 MPI_ERR_AMODE);
    EXPECT_CLASS(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_SEQUENTIAL, MPI_INFO_NULL, &fh),
                 MPI_ERR_AMODE);
    EXPECT_CLASS(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE, MPI_INFO_NULL, &fh), MPI_ERR_AMODE);
    CHECK(fh == MPI_FILE_NULL, "a failed open set the handle");
    CHECK(!exists(missing), "a failed open without MPI_MODE_CREATE made %s", missing);
}

/* Writing a file opened MPI_MODE_RDONLY: MPI_ERR_READ_ONLY or MPI_ERR_ACCESS
 * (the standard names neither for this; both describe it); reading one
 * opened MPI_MODE_WRONLY: MPI_ERR_ACCESS. */
static void access_errors(const char *path)
{
    MPI_File fh;
    char b[16] = {0};
    make_file(path, 64);
    MPICHK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    int rc = MPI_File_write_at(fh, 0, b, 16, MPI_BYTE, MPI_STATUS_IGNORE);
    CHECK(rc != MPI_SUCCESS && (error_class(rc) == MPI_ERR_READ_ONLY || error_class(rc) == MPI_ERR_ACCESS),
          "write_at on a RDONLY file: %s", tu_errstr(rc));
    rc = MPI_File_write(fh, b, 16, MPI_BYTE, MPI_STATUS_IGNORE);
    CHECK(rc != MPI_SUCCESS && (error_class(rc) == MPI_ERR_READ_ONLY || error_class(rc) == MPI_ERR_ACCESS),
          "write on a RDONLY file: %s", tu_errstr(rc));
    MPICHK(MPI_File_read_at(fh, 0, b, 16, MPI_BYTE, MPI_STATUS_IGNORE));
    MPICHK(MPI_File_close(&fh));

    MPICHK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    EXPECT_CLASS(MPI_File_read_at(fh, 0, b, 16, MPI_BYTE, MPI_STATUS_IGNORE), MPI_ERR_ACCESS);
    EXPECT_CLASS(MPI_File_read(fh, b, 16, MPI_BYTE, MPI_STATUS_IGNORE), MPI_ERR_ACCESS);
    MPICHK(MPI_File_close(&fh));
    /* the failed write left the file as it was */
    MPICHK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    char c[64];
    MPICHK(MPI_File_read_at(fh, 0, c, 64, MPI_BYTE, MPI_STATUS_IGNORE));
    CHECK(tu_verify(c, 64, 77) < 0, "the file changed after failed writes");
    MPICHK(MPI_File_close(&fh));
}

/* A file without permissions (mode 000): MPI_ERR_ACCESS. Root bypasses
 * permission checks, so as root the case cannot be made and is skipped. */
static void permission_denied(const char *path)
{
    if (geteuid() == 0) {
        if (tu_rank == 0)
            printf("SKIP-CASE io_file: permission denied (mode 000): running as root, which bypasses it\n");
        return;
    }
    make_file(path, 8);
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    if (tu_rank == 0)
        CHECK(chmod(path, 0) == 0, "chmod %s: %s", path, strerror(errno));
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_File fh;
    EXPECT_CLASS(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh), MPI_ERR_ACCESS);
    EXPECT_CLASS(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh), MPI_ERR_ACCESS);
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    if (tu_rank == 0)
        CHECK(chmod(path, 0600) == 0, "chmod %s: %s", path, strerror(errno));
}

static void delete_on_close(const char *path)
{
    MPI_File fh;
    MPICHK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                         MPI_INFO_NULL, &fh));
    int v = tu_rank;
    MPICHK(MPI_File_write_at(fh, tu_rank * (MPI_Offset)sizeof v, &v, 1, MPI_INT, MPI_STATUS_IGNORE));
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(exists(path), "%s is gone before the close", path);
    MPICHK(MPI_File_close(&fh));
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(!exists(path), "MPI_MODE_DELETE_ON_CLOSE: %s is still there after the close", path);
}

/* MPI_MODE_APPEND: the individual pointer starts at end of file; what is
 * written goes after the old contents. */
static void append(const char *path)
{
    MPI_File fh;
    MPI_Offset pos, size;
    make_file(path, 100);
    MPICHK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY | MPI_MODE_APPEND, MPI_INFO_NULL, &fh));
    MPICHK(MPI_File_get_position(fh, &pos));
    CHECK(pos == 100, "MPI_MODE_APPEND: the pointer starts at %lld, expected 100", (long long)pos);
    char b[10];
    memset(b, 'a' + tu_rank % 26, sizeof b);
    MPICHK(MPI_File_seek(fh, 10 * tu_rank, MPI_SEEK_CUR));
    MPICHK(MPI_File_write(fh, b, 10, MPI_BYTE, MPI_STATUS_IGNORE));
    MPICHK(MPI_File_sync(fh));
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    MPICHK(MPI_File_sync(fh));
    MPICHK(MPI_File_get_size(fh, &size));
    CHECK(size == 100 + 10 * tu_size, "after appending, the size is %lld, expected %d", (long long)size,
          100 + 10 * tu_size);
    MPICHK(MPI_File_close(&fh));
    MPICHK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    char c[100];
    MPICHK(MPI_File_read_at(fh, 0, c, 100, MPI_BYTE, MPI_STATUS_IGNORE));
    CHECK(tu_verify(c, 100, 77) < 0, "appending changed the old contents");
    MPICHK(MPI_File_read_at(fh, 100 + 10 * tu_rank, c, 10, MPI_BYTE, MPI_STATUS_IGNORE));
    CHECK(tu_verify_byte(c, 10, (unsigned char)('a' + tu_rank % 26)) < 0, "rank %d's appended bytes differ",
          tu_rank);
    MPICHK(MPI_File_close(&fh));
}

/* MPI_File_delete is not collective: rank 0 alone. */
static void delete_file(const char *path, const char *missing)
{
    make_file(path, 8);
    if (tu_rank == 0) {
        EXPECT_CLASS(MPI_File_delete(missing, MPI_INFO_NULL), MPI_ERR_NO_SUCH_FILE);
        MPICHK(MPI_File_delete(path, MPI_INFO_NULL));
        CHECK(!exists(path), "MPI_File_delete left %s", path);
        EXPECT_CLASS(MPI_File_delete(path, MPI_INFO_NULL), MPI_ERR_NO_SUCH_FILE);
    }
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
}

/* --- size, amode, group, info, atomicity, sync, handles ------------------------- */

static void check_size(MPI_File fh, const char *path, MPI_Offset want, const char *what)
{
    MPI_Offset size;
    MPICHK(MPI_File_get_size(fh, &size));
    CHECK(size == want, "%s: get_size %lld, expected %lld", what, (long long)size, (long long)want);
    struct stat st;
    CHECK(stat(path, &st) == 0 && st.st_size == want, "%s: stat says %lld bytes, expected %lld", what,
          (long long)st.st_size, (long long)want);
}

static void sizes(const char *path)
{
    MPI_File fh;
    MPICHK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPICHK(MPI_File_set_size(fh, 0));
    check_size(fh, path, 0, "set_size(0)");
    MPICHK(MPI_File_set_size(fh, 1000));
    check_size(fh, path, 1000, "set_size(1000)");
    char b[1000];
    MPICHK(MPI_File_read_at(fh, 0, b, 1000, MPI_BYTE, MPI_STATUS_IGNORE));
    CHECK(tu_verify_byte(b, 1000, 0) < 0, "the bytes set_size added are not zero");
    MPICHK(MPI_File_set_size(fh, 10));
    check_size(fh, path, 10, "set_size(10) truncates");
    MPICHK(MPI_File_preallocate(fh, 5000));
    check_size(fh, path, 5000, "preallocate(5000)");
    MPICHK(MPI_File_preallocate(fh, 100));
    check_size(fh, path, 5000, "preallocate(100) of a 5000-byte file");
    EXPECT_CLASS(MPI_File_set_size(fh, -1), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_File_preallocate(fh, -1), MPI_ERR_ARG);
    MPICHK(MPI_File_close(&fh));
}

static void amode_and_group(const char *path)
{
    MPI_Comm half;
    MPICHK(MPI_Comm_split(MPI_COMM_WORLD, tu_rank % 2, tu_size - tu_rank, &half));
    char name[PATH_MAX + 80];
    snprintf(name, sizeof name, "%s.%d", path, tu_rank % 2);
    int amodes[] = {MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_MODE_RDONLY, MPI_MODE_WRONLY | MPI_MODE_UNIQUE_OPEN,
                    MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL};
    for (size_t i = 0; i < sizeof amodes / sizeof amodes[0]; i++) {
        MPI_File fh;
        int got, cmp;
        MPI_Group g, cg;
        MPICHK(MPI_File_open(half, name, amodes[i], MPI_INFO_NULL, &fh));
        MPICHK(MPI_File_get_amode(fh, &got));
        CHECK(got == amodes[i], "get_amode 0x%x, opened with 0x%x", got, amodes[i]);
        MPICHK(MPI_File_get_group(fh, &g));
        MPICHK(MPI_Comm_group(half, &cg));
        MPICHK(MPI_Group_compare(g, cg, &cmp));
        CHECK(cmp == MPI_IDENT, "get_group compares %d with the communicator's group", cmp);
        MPICHK(MPI_Group_free(&g));
        MPICHK(MPI_Group_free(&cg));
        MPICHK(MPI_File_close(&fh));
    }
    MPICHK(MPI_Comm_free(&half));
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    if (tu_rank < 2)
        CHECK(unlink(name) == 0, "unlink %s", name);
}

static void check_hint(MPI_Info info, const char *key, const char *want)
{
    char v[MPI_MAX_INFO_VAL + 1];
    int flag;
    MPICHK(MPI_Info_get(info, key, MPI_MAX_INFO_VAL, v, &flag));
    CHECK(flag, "get_info: no hint %s", key);
    CHECK(strcmp(v, want) == 0, "get_info: %s is \"%s\", set to \"%s\"", key, v, want);
}

static void info_hints(const char *path)
{
    MPI_Info in, out;
    MPI_File fh;
    MPICHK(MPI_Info_create(&in));
    MPICHK(MPI_Info_set(in, "cb_buffer_size", "1048576"));
    MPICHK(MPI_Info_set(in, "cb_nodes", "1"));
    MPICHK(MPI_Info_set(in, "striping_unit", "65536"));
    MPICHK(MPI_Info_set(in, "romio_cb_write", "enable"));
    MPICHK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, in, &fh));
    MPICHK(MPI_Info_free(&in));
    MPICHK(MPI_File_get_info(fh, &out));
    check_hint(out, "cb_buffer_size", "1048576");
    check_hint(out, "cb_nodes", "1");
    check_hint(out, "striping_unit", "65536");
    check_hint(out, "romio_cb_write", "enable");
    MPICHK(MPI_Info_free(&out));

    MPICHK(MPI_Info_create(&in));
    MPICHK(MPI_Info_set(in, "cb_buffer_size", "2097152"));
    MPICHK(MPI_Info_set(in, "romio_cb_write", "disable"));
    MPICHK(MPI_File_set_info(fh, in));
    MPICHK(MPI_Info_free(&in));
    MPICHK(MPI_File_get_info(fh, &out));
    check_hint(out, "cb_buffer_size", "2097152");
    check_hint(out, "romio_cb_write", "disable");
    check_hint(out, "cb_nodes", "1");
    MPICHK(MPI_Info_free(&out));
    MPICHK(MPI_File_set_info(fh, MPI_INFO_NULL));
    MPICHK(MPI_File_close(&fh));
}

/* Without a cb_nodes hint, the file reports one aggregator per node, as
 * ROMIO does: the nodes counted here by MPI_Comm_split_type (on several
 * simulated hosts, test/io/io_netns.sh, more than one). */
static void default_aggregators(const char *path)
{
    MPI_Comm node;
    MPI_Info out;
    MPI_File fh;
    int node_rank, nodes;
    char want[16];
    MPICHK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    MPICHK(MPI_Comm_rank(node, &node_rank));
    MPICHK(MPI_Comm_free(&node));
    int leader = node_rank == 0;
    MPICHK(MPI_Allreduce(&leader, &nodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    snprintf(want, sizeof(want), "%d", nodes);
    MPICHK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPICHK(MPI_File_get_info(fh, &out));
    check_hint(out, "cb_nodes", want);
    MPICHK(MPI_Info_free(&out));
    MPICHK(MPI_File_close(&fh));
}

static void atomicity_and_sync(const char *path)
{
    MPI_File fh;
    int flag;
    MPICHK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPICHK(MPI_File_get_atomicity(fh, &flag));
    CHECK(flag == 0, "a new file is in atomic mode");
    MPICHK(MPI_File_set_atomicity(fh, 1));
    MPICHK(MPI_File_get_atomicity(fh, &flag));
    CHECK(flag == 1, "set_atomicity(1) then get_atomicity gives %d", flag);
    MPICHK(MPI_File_set_atomicity(fh, 0));
    MPICHK(MPI_File_get_atomicity(fh, &flag));
    CHECK(flag == 0, "set_atomicity(0) then get_atomicity gives %d", flag);

    /* sync-barrier-sync: a rank's write is seen by the next one */
    long v = 1000 + tu_rank, got = -1;
    MPICHK(MPI_File_write_at(fh, tu_rank * (MPI_Offset)sizeof v, &v, 1, MPI_LONG, MPI_STATUS_IGNORE));
    MPICHK(MPI_File_sync(fh));
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    MPICHK(MPI_File_sync(fh));
    int peer = (tu_rank + 1) % tu_size;
    MPICHK(MPI_File_read_at(fh, peer * (MPI_Offset)sizeof v, &got, 1, MPI_LONG, MPI_STATUS_IGNORE));
    CHECK(got == 1000 + peer, "after sync-barrier-sync rank %d's long reads %ld", peer, got);
    MPICHK(MPI_File_close(&fh));
}

static void fortran_handles(const char *path)
{
    MPI_File fh;
    MPICHK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPI_Fint f = MPI_File_c2f(fh);
    CHECK(MPI_File_f2c(f) == fh, "MPI_File_f2c(MPI_File_c2f(fh)) is another handle");
    MPI_Offset size;
    MPICHK(MPI_File_get_size(MPI_File_f2c(f), &size)); /* and it works */
    CHECK(MPI_File_f2c(MPI_File_c2f(MPI_FILE_NULL)) == MPI_FILE_NULL, "MPI_FILE_NULL does not round-trip");
    MPICHK(MPI_File_close(&fh));
    CHECK(fh == MPI_FILE_NULL, "MPI_File_close did not set the handle to MPI_FILE_NULL");
}

/* --- error handlers ----------------------------------------------------------------- */

static void default_handlers(const char *path, const char *missing)
{
    MPI_Errhandler eh;
    MPICHK(MPI_File_get_errhandler(MPI_FILE_NULL, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "MPI_FILE_NULL's default handler is not MPI_ERRORS_RETURN");
    MPICHK(MPI_Errhandler_free(&eh));

    MPI_File fh;
    MPICHK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPICHK(MPI_File_get_errhandler(fh, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "a new file's handler is not MPI_ERRORS_RETURN");
    MPICHK(MPI_Errhandler_free(&eh));

    /* errors on files return, whatever MPI_COMM_WORLD's handler is */
    MPICHK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    char b[4];
    EXPECT_CLASS(MPI_File_read_at(fh, -1, b, 4, MPI_BYTE, MPI_STATUS_IGNORE), MPI_ERR_ARG);
    MPI_File fh2;
    EXPECT_CLASS(MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh2),
                 MPI_ERR_NO_SUCH_FILE);
    MPICHK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPICHK(MPI_File_close(&fh));
}

/* MPI_FILE_NULL's handler is what a failing open calls: set a user one. */
static void file_null_handler(const char *missing)
{
    MPI_Errhandler eh, old;
    MPI_File fh;
    MPICHK(MPI_File_create_errhandler(file_handler, &eh));
    MPICHK(MPI_File_set_errhandler(MPI_FILE_NULL, eh));
    MPICHK(MPI_File_get_errhandler(MPI_FILE_NULL, &old));
    CHECK(old == eh, "get_errhandler(MPI_FILE_NULL) is not the handler set");
    MPICHK(MPI_Errhandler_free(&old));
    memset(&seen, 0, sizeof seen);
    int rc = MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    CHECK(seen.calls == 1, "the open failure called MPI_FILE_NULL's handler %d times", seen.calls);
    CHECK(seen.fh == MPI_FILE_NULL, "MPI_FILE_NULL's handler got another handle");
    CHECK(error_class(seen.code) == MPI_ERR_NO_SUCH_FILE, "MPI_FILE_NULL's handler got %s",
          tu_errstr(seen.code));
    CHECK(error_class(rc) == MPI_ERR_NO_SUCH_FILE, "the open returned %s", tu_errstr(rc));
    MPICHK(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN));
    MPICHK(MPI_Errhandler_free(&eh));
    memset(&seen, 0, sizeof seen);
    EXPECT_CLASS(MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
                 MPI_ERR_NO_SUCH_FILE);
    CHECK(seen.calls == 0, "MPI_ERRORS_RETURN restored, the user handler was still called");
}

/* A user handler on an open file: called with the handle and the code,
 * by errors and by MPI_File_call_errhandler. */
static void user_handler(const char *path)
{
    MPI_Errhandler eh, got;
    MPI_File fh;
    char b[4];
    MPICHK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPICHK(MPI_File_create_errhandler(file_handler, &eh));
    MPICHK(MPI_File_set_errhandler(fh, eh));
    MPICHK(MPI_Errhandler_free(&eh)); /* the file keeps it alive */
    MPICHK(MPI_File_get_errhandler(fh, &got));
    CHECK(got != MPI_ERRORS_RETURN && got != MPI_ERRORS_ARE_FATAL, "get_errhandler lost the user handler");
    MPICHK(MPI_Errhandler_free(&got));

    memset(&seen, 0, sizeof seen);
    int rc = MPI_File_read_at(fh, -5, b, 4, MPI_BYTE, MPI_STATUS_IGNORE);
    CHECK(seen.calls == 1 && seen.fh == fh, "the handler was called %d times, with %s handle", seen.calls,
          seen.fh == fh ? "the file's" : "another");
    CHECK(error_class(seen.code) == MPI_ERR_ARG, "the handler got %s", tu_errstr(seen.code));
    CHECK(rc == seen.code, "the call returned %d, the handler got %d", rc, seen.code);

    memset(&seen, 0, sizeof seen);
    MPICHK(MPI_File_call_errhandler(fh, MPI_ERR_OTHER));
    CHECK(seen.calls == 1 && seen.fh == fh && seen.code == MPI_ERR_OTHER,
          "MPI_File_call_errhandler: %d calls, code %d", seen.calls, seen.code);
    MPICHK(MPI_File_close(&fh));

    /* on a file with MPI_ERRORS_RETURN, call_errhandler returns */
    MPICHK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPICHK(MPI_File_call_errhandler(fh, MPI_ERR_OTHER));
    MPICHK(MPI_File_close(&fh));
}

/* --- invalid arguments ------------------------------------------------------------------ */

static void invalid_arguments(const char *path)
{
    MPI_File fh, null = MPI_FILE_NULL;
    MPI_Offset off;
    char b[16];
    EXPECT_CLASS(MPI_File_read_at(MPI_FILE_NULL, 0, b, 1, MPI_BYTE, MPI_STATUS_IGNORE), MPI_ERR_FILE);
    EXPECT_CLASS(MPI_File_write(MPI_FILE_NULL, b, 1, MPI_BYTE, MPI_STATUS_IGNORE), MPI_ERR_FILE);
    EXPECT_CLASS(MPI_File_get_size(MPI_FILE_NULL, &off), MPI_ERR_FILE);
    EXPECT_CLASS(MPI_File_seek(MPI_FILE_NULL, 0, MPI_SEEK_SET), MPI_ERR_FILE);
    EXPECT_CLASS(MPI_File_close(&null), MPI_ERR_FILE);

    MPICHK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    EXPECT_CLASS(MPI_File_read_at(fh, -1, b, 1, MPI_BYTE, MPI_STATUS_IGNORE), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_File_write_at(fh, -8, b, 1, MPI_BYTE, MPI_STATUS_IGNORE), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_File_read_at(fh, 0, b, -1, MPI_BYTE, MPI_STATUS_IGNORE), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_File_write(fh, b, -3, MPI_BYTE, MPI_STATUS_IGNORE), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_File_write_at(fh, 0, b, 1, MPI_DATATYPE_NULL, MPI_STATUS_IGNORE), MPI_ERR_TYPE);
    EXPECT_CLASS(MPI_File_seek(fh, 0, 12345), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_File_seek(fh, -1, MPI_SEEK_SET), MPI_ERR_ARG);
    IU_EXPECT_CLASS_UNLESS("byte-offset-unchecked", MPI_File_get_byte_offset(fh, -1, &off), MPI_ERR_ARG);
    MPICHK(MPI_File_get_position(fh, &off));
    CHECK(off == 0, "failed calls moved the pointer to %lld", (long long)off);
    MPICHK(MPI_File_close(&fh));
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv, "io_file");
    iu_init("io_file");
    char *a = path_copy("a"), *missing = path_copy("missing"), *b = path_copy("b"), *doc = path_copy("doc");

    default_handlers(a, missing);
    open_errors(a, missing);
    access_errors(a);
    permission_denied(b);
    delete_on_close(doc);
    append(a);
    delete_file(b, missing);
    sizes(a);
    amode_and_group(b);
    info_hints(a);
    default_aggregators(a);
    atomicity_and_sync(a);
    fortran_handles(a);
    file_null_handler(missing);
    user_handler(a);
    invalid_arguments(a);

    free(a);
    free(b);
    free(missing);
    free(doc);
    iu_finish();
    tu_finish();
    return 0;
}
