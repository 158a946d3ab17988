/*
 * Unit test of the strict parsing of BMPI_* variables (transport/env.c):
 * every spelling of a switch, numbers and sizes with their ranges and
 * suffixes, algorithm names, transport lists and device names; a bad value
 * makes bmpi_env_check() fail with MPI_ERR_ARG and one message naming the
 * variable, the value and what is accepted.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "test/unit/run_suite.h"
#include "test/unit/fake_world.h"

static const char *const checked[] = {"BMPI_SHM_CMA",    "BMPI_SHM_FASTPATH_MAX",
                                      "BMPI_SHM_RING_SIZE", "BMPI_COLL_BCAST",
                                      "BMPI_TRANSPORT",  "BMPI_VERBS_DEVICE"};

static void clear(void)
{
    for (size_t i = 0; i < sizeof checked / sizeof *checked; i++)
        unsetenv(checked[i]);
    err_reason[0] = 0;
}

static void accepted(const char *name, const char *value)
{
    setenv(name, value, 1);
    ck_assert_msg(bmpi_env_check() == BMPI_OK, "%s=%s refused: %s", name, value, err_reason);
}

/* Refused, with "NAME=value: ..." and the accepted values in the message. */
static void refused(const char *name, const char *value, const char *accepted_part)
{
    char head[160];
    setenv(name, value, 1);
    ck_assert_msg(bmpi_env_check() == MPI_ERR_ARG, "%s=%s accepted", name, value);
    snprintf(head, sizeof head, "%s=%s: ", name, value);
    ck_assert_msg(!strncmp(err_reason, head, strlen(head)), "message: %s", err_reason);
    ck_assert_msg(strstr(err_reason, accepted_part), "\"%s\" not in: %s", accepted_part,
                  err_reason);
    unsetenv(name);
}

START_TEST(unset_gives_defaults)
{
    ck_assert_int_eq(bmpi_env_check(), BMPI_OK);
    ck_assert_int_eq(bmpi_env_switch("BMPI_SHM_CMA"), -1);
    ck_assert_uint_eq(bmpi_env_uint("BMPI_SHM_FASTPATH_MAX", 16), 16);
    ck_assert_int_eq(bmpi_env_enum("BMPI_COLL_BCAST"), -1);
    ck_assert_ptr_null(bmpi_env_string("BMPI_TRANSPORT"));
}
END_TEST

START_TEST(switch_spellings)
{
    const char *off[] = {"0", "off", "no", "false", "OFF", "No", "False"};
    const char *on[] = {"1", "on", "yes", "true", "ON", "Yes", "TRUE"};
    for (size_t i = 0; i < sizeof off / sizeof *off; i++) {
        accepted("BMPI_SHM_CMA", off[i]);
        ck_assert_int_eq(bmpi_env_switch("BMPI_SHM_CMA"), 0);
        accepted("BMPI_SHM_CMA", on[i]);
        ck_assert_int_eq(bmpi_env_switch("BMPI_SHM_CMA"), 1);
    }
    accepted("BMPI_SHM_CMA", "auto");
    ck_assert_int_eq(bmpi_env_switch("BMPI_SHM_CMA"), -1);
    const char *bad[] = {"", "2", "-1", "maybe", "enable", "onn", " 1", "1 "};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        refused("BMPI_SHM_CMA", bad[i], "accepted: 0, 1, off, on, no, yes, false, true, auto");
}
END_TEST

START_TEST(numbers_in_range)
{
    accepted("BMPI_SHM_FASTPATH_MAX", "0");
    ck_assert_uint_eq(bmpi_env_uint("BMPI_SHM_FASTPATH_MAX", 16), 0);
    accepted("BMPI_SHM_FASTPATH_MAX", "4096");
    ck_assert_uint_eq(bmpi_env_uint("BMPI_SHM_FASTPATH_MAX", 16), 4096);
    const char *bad[] = {"", "4097", "-1", "abc", "1e3", "+5", " 5", "0x10", "5k", "3.0",
                         "99999999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        refused("BMPI_SHM_FASTPATH_MAX", bad[i], "accepted: 0 to 4096");
}
END_TEST

START_TEST(sizes_with_suffixes)
{
    struct {
        const char *v;
        unsigned long long want;
    } good[] = {{"4096", 4096}, {"64k", 64 << 10}, {"64K", 64 << 10}, {"2m", 2 << 20},
                {"1G", 1ull << 30}};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        accepted("BMPI_SHM_RING_SIZE", good[i].v);
        ck_assert_uint_eq(bmpi_env_uint("BMPI_SHM_RING_SIZE", 0), good[i].want);
    }
    const char *bad[] = {"",   "4095", "2g",  "-4k", "1e3", "64kb", "k",
                         "4 k", "64t", "18446744073709551616", "17179869184g"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        refused("BMPI_SHM_RING_SIZE", bad[i], "accepted: 4096 to 1073741824");
}
END_TEST

START_TEST(algorithm_names)
{
    accepted("BMPI_COLL_BCAST", "linear");
    ck_assert_int_eq(bmpi_env_enum("BMPI_COLL_BCAST"), 3);
    accepted("BMPI_COLL_BCAST", "binomial");
    ck_assert_int_eq(bmpi_env_enum("BMPI_COLL_BCAST"), 0);
    accepted("BMPI_COLL_BCAST", "auto");
    ck_assert_int_eq(bmpi_env_enum("BMPI_COLL_BCAST"), -1);
    const char *bad[] = {"", "ring", "lin", "linear,binomial", "1"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        refused("BMPI_COLL_BCAST", bad[i],
                "accepted: auto, binomial, scatter_allgather, pipeline, linear");
}
END_TEST

START_TEST(transport_lists)
{
    accepted("BMPI_TRANSPORT", "self,shm");
    ck_assert_str_eq(bmpi_env_string("BMPI_TRANSPORT"), "self,shm");
    accepted("BMPI_TRANSPORT", "ofi");
    accepted("BMPI_TRANSPORT", "self,shm,verbs,ofi");
    const char *bad[] = {"", "tcp", "shm,", ",shm", "shm,,self", "shm tcp"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        refused("BMPI_TRANSPORT", bad[i], "names from self, shm, verbs, ofi");
}
END_TEST

START_TEST(device_names)
{
    accepted("BMPI_VERBS_DEVICE", "mlx5_0");
    accepted("BMPI_VERBS_DEVICE", "mlx5_0:1");
    ck_assert_str_eq(bmpi_env_string("BMPI_VERBS_DEVICE"), "mlx5_0:1");
    const char *bad[] = {"", "mlx5_0:0", "mlx5_0:256", "mlx5_0:x", ":1", "mlx5_0:"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        refused("BMPI_VERBS_DEVICE", bad[i], "port 1 to 255");
}
END_TEST

int main(void)
{
    const TTest *const tests[] = {
        unset_gives_defaults,
        switch_spellings,
        numbers_in_range,
        sizes_with_suffixes,
        algorithm_names,
        transport_lists,
        device_names,
    };
    return run_suite("env", clear, NULL, tests, sizeof tests / sizeof *tests);
}
