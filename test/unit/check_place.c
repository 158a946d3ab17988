/*
 * Unit test of the host lists (launcher/hosts.c) and the placement
 * (launcher/placement.c): both hostfile dialects, -H, Slurm's node list,
 * --map-by slot and node, -N, oversubscription, and the error texts.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launcher/hosts.h"
#include "launcher/placement.h"
#include "test/unit/run_suite.h"

static struct bmpi_hostlist hl;
static struct bmpi_placement pl;

static void setup(void)
{
    hl = (struct bmpi_hostlist){0};
    pl = (struct bmpi_placement){0};
}

static void teardown(void)
{
    bmpi_hostlist_free(&hl);
    bmpi_placement_free(&pl);
}

/* The list as "name:slots[/max] ..." for one comparison. */
static const char *show(void)
{
    static char buf[1024];
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < hl.n; i++)
        len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s:%d", i ? " " : "", hl.hosts[i].name,
                                hl.hosts[i].slots);
    for (int i = 0; i < hl.n; i++)
        if (hl.hosts[i].max_slots)
            len += (size_t)snprintf(buf + len, sizeof(buf) - len, " max(%s)=%d", hl.hosts[i].name,
                                    hl.hosts[i].max_slots);
    return buf;
}

/* Each rank's "node.local_rank", then each node's rank list. */
static const char *show_placement(void)
{
    static char buf[1024];
    size_t len = 0;
    for (int r = 0; r < pl.nranks; r++)
        len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%d.%d ", pl.node[r], pl.local_rank[r]);
    len += (size_t)snprintf(buf + len, sizeof(buf) - len, "|");
    for (int i = 0; i < pl.nnodes; i++) {
        len += (size_t)snprintf(buf + len, sizeof(buf) - len, " ");
        for (int k = 0; k < pl.node_nranks[i]; k++)
            len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%d", k ? "," : "", pl.node_ranks[i][k]);
    }
    return buf;
}

static void add_lines(const char *const *lines)
{
    for (int i = 0; lines[i] != NULL; i++)
        ck_assert_msg(bmpi_hostlist_add_line(&hl, "hf", i + 1, lines[i]) == 0, "line %d: %s", i + 1, hl.error);
}

static void expect_line_error(const char *line, const char *error)
{
    bmpi_hostlist_free(&hl);
    ck_assert_int_eq(bmpi_hostlist_add_line(&hl, "hf", 7, line), -1);
    ck_assert_str_eq(hl.error, error);
}

START_TEST(host_list_repeats_add_slots)
{
    ck_assert_int_eq(bmpi_hostlist_add_list(&hl, "-H", "h1,h1,h2"), 0);
    ck_assert_str_eq(show(), "h1:2 h2:1");
    ck_assert_int_eq(bmpi_hostlist_add_list(&hl, "--host", "h2:3,h3:2,::1"), 0);
    ck_assert_str_eq(show(), "h1:2 h2:4 h3:2 ::1:1");
    ck_assert_int_eq(bmpi_hostlist_total_slots(&hl), 9);
}
END_TEST

START_TEST(host_list_errors)
{
    ck_assert_int_eq(bmpi_hostlist_add_list(&hl, "-H", "h1:2,h2:x"), -1);
    ck_assert_str_eq(hl.error, "-H 'h1:2,h2:x': 'h2:x': the number of slots after ':' must be a whole number "
                               "from 1 to 1048576");
    bmpi_hostlist_free(&hl);
    ck_assert_int_eq(bmpi_hostlist_add_list(&hl, "--host", "h1,,h2"), -1);
    ck_assert_str_eq(hl.error, "--host 'h1,,h2': '': not a host name");
    bmpi_hostlist_free(&hl);
    ck_assert_int_eq(bmpi_hostlist_add_list(&hl, "--host", "h1:0"), -1);
    bmpi_hostlist_free(&hl);
    ck_assert_int_eq(bmpi_hostlist_add_list(&hl, "--host", "h/1"), -1);
    ck_assert_str_eq(hl.error, "--host 'h/1': 'h/1': not a host name");
}
END_TEST

START_TEST(hostfile_open_mpi_dialect)
{
    static const char *const lines[] = {"# cluster\n", "\n", "  h1 slots=2\n", "h2\tslots=4   max_slots=6  # gpu\n",
                                        "h3\n", "h1 slots=1\r\n", "   \t\n", NULL};
    add_lines(lines);
    ck_assert_str_eq(show(), "h1:3 h2:4 h3:1 max(h2)=6");
}
END_TEST

START_TEST(hostfile_mpich_dialect)
{
    static const char *const lines[] = {"h1:2\n", "h2:4 # big one\n", "#h3:9\n", "h1\n", "h4", NULL};
    add_lines(lines);
    ck_assert_str_eq(show(), "h1:3 h2:4 h4:1");
}
END_TEST

START_TEST(hostfile_errors_name_file_line_and_text)
{
    expect_line_error("h1 slots=x\n", "hostfile 'hf' line 7: 'slots=x': the count must be a whole number from 1 "
                                      "to 1048576");
    expect_line_error("h1 cores=2\n", "hostfile 'hf' line 7: 'cores=2': unknown; a line is 'host slots=N "
                                      "[max_slots=M]' or 'host:N'");
    expect_line_error("h1:2 slots=2\n", "hostfile 'hf' line 7: 'h1:2 slots=2': slots given twice (':N' and "
                                        "slots=); give one");
    expect_line_error("h1 slots=4 max_slots=2 # x\n", "hostfile 'hf' line 7: 'h1 slots=4 max_slots=2': "
                                                      "max_slots=2 is less than the 4 slots");
    expect_line_error("h1:-1\n", "hostfile 'hf' line 7: 'h1:-1': the number of slots after ':' must be a whole "
                                 "number from 1 to 1048576");
    expect_line_error("h$1\n", "hostfile 'hf' line 7: 'h$1': not a host name");
}
END_TEST

START_TEST(hostfile_read_whole_file)
{
    char path[] = "/tmp/check_place.XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    fputs("# both dialects\nh1 slots=2\n\nh2:2\nh3 slots=two\n", f);
    fclose(f);
    ck_assert_int_eq(bmpi_hostlist_read_file(&hl, path), -1);
    char want[256];
    snprintf(want, sizeof(want), "hostfile '%s' line 5: 'slots=two': the count must be a whole number from 1 to "
                                 "1048576", path);
    ck_assert_str_eq(hl.error, want);
    unlink(path);
    bmpi_hostlist_free(&hl);
    ck_assert_int_eq(bmpi_hostlist_read_file(&hl, path), -1);
    ck_assert_ptr_nonnull(strstr(hl.error, "cannot read it: No such file or directory"));
}
END_TEST

START_TEST(slurm_node_list)
{
    ck_assert_msg(bmpi_hostlist_add_slurm(&hl, "node[01-04,07],gpu[1-2],login", "2(x3),1,4(x3),1") == 0, "%s",
                  hl.error);
    ck_assert_str_eq(show(), "node01:2 node02:2 node03:2 node04:1 node07:4 gpu1:4 gpu2:4 login:1");
    bmpi_hostlist_free(&hl);
    ck_assert_int_eq(bmpi_hostlist_add_slurm(&hl, "r[1-2]n[08-10]", NULL), 0);
    ck_assert_str_eq(show(), "r1n08:1 r1n09:1 r1n10:1 r2n08:1 r2n09:1 r2n10:1");
}
END_TEST

START_TEST(slurm_errors)
{
    ck_assert_int_eq(bmpi_hostlist_add_slurm(&hl, "node[01-04", NULL), -1);
    ck_assert_str_eq(hl.error, "SLURM_JOB_NODELIST 'node[01-04': 'node[01-04': '[' without ']'");
    bmpi_hostlist_free(&hl);
    ck_assert_int_eq(bmpi_hostlist_add_slurm(&hl, "node[4-1]", NULL), -1);
    ck_assert_str_eq(hl.error, "SLURM_JOB_NODELIST 'node[4-1]': '[4-1]': not a range of node numbers");
    bmpi_hostlist_free(&hl);
    ck_assert_int_eq(bmpi_hostlist_add_slurm(&hl, "n[1-3]", "2(x2)"), -1);
    ck_assert_str_eq(hl.error, "SLURM_TASKS_PER_NODE '2(x2)' counts 2 nodes, SLURM_JOB_NODELIST has 3");
    bmpi_hostlist_free(&hl);
    ck_assert_int_eq(bmpi_hostlist_add_slurm(&hl, "n[1-3]", "2(x3"), -1);
    ck_assert_str_eq(hl.error, "SLURM_TASKS_PER_NODE '2(x3': not a list like '2(x3),1'");
}
END_TEST

static int place(int n, int npernode, enum bmpi_map_by by, bool over)
{
    bmpi_placement_free(&pl);
    struct bmpi_place_request req = {.nprocs = n, .npernode = npernode, .map_by = by, .oversubscribe = over};
    return bmpi_place(&hl, &req, &pl);
}

START_TEST(map_by_slot_and_node)
{
    ck_assert_int_eq(bmpi_hostlist_add_list(&hl, "-H", "a:2,b:2,c:1"), 0);
    ck_assert_int_eq(place(0, 0, BMPI_MAP_SLOT, false), 0);
    ck_assert_str_eq(show_placement(), "0.0 0.1 1.0 1.1 2.0 | 0,1 2,3 4");
    ck_assert_int_eq(place(0, 0, BMPI_MAP_NODE, false), 0);
    ck_assert_str_eq(show_placement(), "0.0 1.0 2.0 0.1 1.1 | 0,3 1,4 2");
    ck_assert_int_eq(place(3, 0, BMPI_MAP_SLOT, false), 0);
    ck_assert_str_eq(show_placement(), "0.0 0.1 1.0 | 0,1 2 ");
    ck_assert_int_eq(place(3, 0, BMPI_MAP_NODE, false), 0);
    ck_assert_str_eq(show_placement(), "0.0 1.0 2.0 | 0 1 2");
}
END_TEST

START_TEST(npernode)
{
    ck_assert_int_eq(bmpi_hostlist_add_list(&hl, "-H", "a:4,b:4"), 0);
    ck_assert_int_eq(place(0, 2, BMPI_MAP_SLOT, false), 0);
    ck_assert_str_eq(show_placement(), "0.0 0.1 1.0 1.1 | 0,1 2,3");
    ck_assert_int_eq(place(3, 2, BMPI_MAP_NODE, false), 0);
    ck_assert_str_eq(show_placement(), "0.0 1.0 0.1 | 0,2 1");
    ck_assert_int_eq(place(5, 2, BMPI_MAP_SLOT, false), -1);
    ck_assert_str_eq(pl.error, "5 ranks asked for, but -N 2 on 2 host(s) places 4; give -n 4 or less, or more hosts");
    ck_assert_int_eq(place(0, 5, BMPI_MAP_SLOT, false), -1);
    ck_assert_str_eq(pl.error, "-N 5 places 5 ranks on host 'a', more than its 4 slots; give more slots or "
                               "--oversubscribe");
    ck_assert_int_eq(place(0, 5, BMPI_MAP_SLOT, true), 0);
    ck_assert_int_eq(pl.nranks, 10);
    bmpi_hostlist_free(&hl);
    /* only the hosts that get ranks must take them */
    ck_assert_int_eq(bmpi_hostlist_add_list(&hl, "-H", "a:2,b:2,c"), 0);
    ck_assert_int_eq(place(4, 2, BMPI_MAP_SLOT, false), 0);
    ck_assert_str_eq(show_placement(), "0.0 0.1 1.0 1.1 | 0,1 2,3 ");
    ck_assert_int_eq(place(6, 2, BMPI_MAP_SLOT, false), -1);
    ck_assert_str_eq(pl.error, "-N 2 places 2 ranks on host 'c', more than its 1 slots; give more slots or "
                               "--oversubscribe");
    bmpi_hostlist_free(&hl);
    static const char *const lines[] = {"a slots=1 max_slots=1", NULL};
    add_lines(lines);
    ck_assert_int_eq(place(0, 2, BMPI_MAP_SLOT, true), -1);
    ck_assert_str_eq(pl.error, "-N 2 places 2 ranks on host 'a', more than its max_slots=1");
}
END_TEST

START_TEST(oversubscription)
{
    ck_assert_int_eq(bmpi_hostlist_add_list(&hl, "-H", "a:2,b:1"), 0);
    ck_assert_int_eq(place(4, 0, BMPI_MAP_SLOT, false), -1);
    ck_assert_str_eq(pl.error, "4 ranks asked for, but the 2 host(s) have 3 slots; give -n 3 or less, more "
                               "slots, or --oversubscribe");
    ck_assert_int_eq(place(5, 0, BMPI_MAP_SLOT, true), 0);
    ck_assert_str_eq(show_placement(), "0.0 0.1 0.2 1.0 1.1 | 0,1,2 3,4");
    ck_assert_int_eq(place(5, 0, BMPI_MAP_NODE, true), 0);
    ck_assert_str_eq(show_placement(), "0.0 1.0 0.1 1.1 0.2 | 0,2,4 1,3");
    bmpi_hostlist_free(&hl);
    static const char *const lines[] = {"a slots=1 max_slots=2", "b slots=1 max_slots=1", NULL};
    add_lines(lines);
    ck_assert_int_eq(place(3, 0, BMPI_MAP_SLOT, true), 0);
    ck_assert_str_eq(show_placement(), "0.0 0.1 1.0 | 0,1 2");
    ck_assert_int_eq(place(4, 0, BMPI_MAP_SLOT, true), -1);
    ck_assert_str_eq(pl.error, "4 ranks asked for, but the 2 host(s) take at most 3 (max_slots), even with "
                               "--oversubscribe");
}
END_TEST

START_TEST(no_host_list_takes_what_is_asked)
{
    struct bmpi_place_request req = {.nprocs = 6};
    ck_assert_int_eq(bmpi_place(NULL, &req, &pl), 0);
    ck_assert_str_eq(show_placement(), "0.0 0.1 0.2 0.3 0.4 0.5 | 0,1,2,3,4,5");
    bmpi_placement_free(&pl);
    req = (struct bmpi_place_request){.npernode = 3};
    ck_assert_int_eq(bmpi_place(&hl, &req, &pl), 0);
    ck_assert_int_eq(pl.nranks, 3);
    bmpi_placement_free(&pl);
    req = (struct bmpi_place_request){0};
    ck_assert_int_eq(bmpi_place(NULL, &req, &pl), 0);
    ck_assert_int_eq(pl.nranks, 1);
}
END_TEST

int main(void)
{
    const TTest *const tests[] = {
        host_list_repeats_add_slots, host_list_errors, hostfile_open_mpi_dialect, hostfile_mpich_dialect,
        hostfile_errors_name_file_line_and_text, hostfile_read_whole_file, slurm_node_list, slurm_errors,
        map_by_slot_and_node, npernode, oversubscription, no_host_list_takes_what_is_asked,
    };
    return run_suite("place", setup, teardown, tests, sizeof(tests) / sizeof(tests[0]));
}
