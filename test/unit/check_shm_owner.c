/*
 * Unit test of the shared-memory names and the checks of an opened file
 * (transport/shm/segment.c): every name ends in a random tag, a file
 * another user owns or others may open is refused with a message naming
 * the file and its owner, and creating over a name in the way says whose
 * file is there.
 *
 * The cases about another user's file need root (to give the file to
 * `nobody`); run as anyone else they say so and pass without checking.
 */
#include "config.h"

#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test/unit/run_suite.h"
#include "test/unit/fake_world.h"
#include "transport/shm/shm.h"

static char name[128];

static void make_name(void)
{
    snprintf(name, sizeof name, "/bmpi.chkowner%d.0.t", (int)getpid());
    shm_unlink(name);
    err_reason[0] = 0;
}

static void drop_name(void) { shm_unlink(name); }

/* A file of 4 KiB under name, with mode and owner as given (-1: keep). */
static void plant(mode_t mode, uid_t uid, gid_t gid)
{
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(ftruncate(fd, 4096), 0);
    ck_assert_int_eq(fchmod(fd, mode), 0);
    ck_assert_int_eq(fchown(fd, uid, gid), 0);
    close(fd);
}

static void assert_reason_names(const char *what)
{
    ck_assert_msg(strstr(err_reason, what), "\"%s\" not in the message: %s", what, err_reason);
}

/* A private file under name that belongs to nobody; NULL (and a note)
 * where only root could make one. */
static const struct passwd *planted_for_nobody(void)
{
    const struct passwd *pw = getpwnam("nobody");
    if (geteuid() != 0 || !pw) {
        fprintf(stderr, "SKIP: another user's file needs root and a user nobody\n");
        return NULL;
    }
    plant(0600, pw->pw_uid, pw->pw_gid);
    return pw;
}

START_TEST(tags_are_random_hex)
{
    char a[SHM_TAG_LEN + 1], b[SHM_TAG_LEN + 1];
    ck_assert_int_eq(bmpi_shm_random_tag(a), BMPI_OK);
    ck_assert_int_eq(bmpi_shm_random_tag(b), BMPI_OK);
    ck_assert_uint_eq(strlen(a), SHM_TAG_LEN);
    ck_assert_uint_eq(strspn(a, "0123456789abcdef"), SHM_TAG_LEN);
    ck_assert_str_ne(a, b);
}
END_TEST

START_TEST(ring_names_carry_the_tag)
{
    snprintf(bmpi_world.nspace, sizeof bmpi_world.nspace, "job/1");
    bmpi_world.nodeid = 3;
    char buf[256];
    ck_assert_int_eq(bmpi_shm_ring_name(buf, sizeof buf, 1, 2, "00ff"), BMPI_OK);
    ck_assert_str_eq(buf, "/bmpi.job_1.3.fp1.2.00ff");
}
END_TEST

/* bmpi_shm_attach of name; what it mapped is unmapped at once. */
static int attach_planted(void)
{
    void *a;
    size_t len;
    int rc = bmpi_shm_attach(name, &a, &len);
    if (rc == BMPI_OK) {
        ck_assert_uint_eq(len, 4096);
        munmap(a, len);
    }
    return rc;
}

START_TEST(own_private_file_is_mapped)
{
    plant(0600, (uid_t)-1, (gid_t)-1);
    ck_assert_int_eq(attach_planted(), BMPI_OK);
}
END_TEST

START_TEST(file_others_may_open_is_refused)
{
    plant(0644, (uid_t)-1, (gid_t)-1);
    ck_assert_int_eq(attach_planted(), MPI_ERR_OTHER);
    char path[160];
    snprintf(path, sizeof path, "/dev/shm%s", name);
    assert_reason_names(path);
    assert_reason_names("mode 0644");
    assert_reason_names(getpwuid(geteuid())->pw_name);
}
END_TEST

START_TEST(file_of_another_user_is_refused)
{
    const struct passwd *pw = planted_for_nobody();
    if (!pw)
        return;
    ck_assert_int_eq(attach_planted(), MPI_ERR_OTHER);
    char path[160], owner[64];
    snprintf(path, sizeof path, "/dev/shm%s", name);
    snprintf(owner, sizeof owner, "owned by nobody (uid %u)", (unsigned)pw->pw_uid);
    assert_reason_names(path);
    assert_reason_names(owner);
}
END_TEST

START_TEST(create_names_the_squatter)
{
    const struct passwd *pw = planted_for_nobody();
    if (!pw)
        return;
    void *a;
    ck_assert_int_eq(bmpi_shm_create(name, 4096, &a), MPI_ERR_OTHER);
    assert_reason_names(name);
    assert_reason_names("owned by nobody");
}
END_TEST

/* A memfd is mode 0777 whoever made it: without private_mode only the
 * owner counts (the peer heap's check). */
START_TEST(memfd_of_this_user_passes_without_private_mode)
{
    int fd = memfd_create("bmpi-check", MFD_CLOEXEC);
    ck_assert_int_ge(fd, 0);
    struct stat st;
    char why[512] = "";
    ck_assert_int_eq(bmpi_shm_check_owner(fd, "memfd", false, &st, why, sizeof why), 0);
    ck_assert_int_ne(bmpi_shm_check_owner(fd, "memfd", true, &st, why, sizeof why), 0);
    ck_assert_ptr_nonnull(strstr(why, "memfd"));
    close(fd);
}
END_TEST

int main(void)
{
    const TTest *const tests[] = {
        tags_are_random_hex,
        ring_names_carry_the_tag,
        own_private_file_is_mapped,
        file_others_may_open_is_refused,
        file_of_another_user_is_refused,
        create_names_the_squatter,
        memfd_of_this_user_passes_without_private_mode,
    };
    return run_suite("shm_owner", make_name, drop_name, tests, sizeof tests / sizeof *tests);
}
