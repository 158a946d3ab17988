/*
 * Unit test of a daemon's bootstrap text (launcher/bootstrap.c): what the
 * head writes (bmpi_bootstrap_text from the head's job) is read back
 * through a pipe (bmpi_bootstrap_read into a daemon's fresh job) field by
 * field, with blanks, '%', newlines and bytes beyond ASCII in the values;
 * a wrong magic line, another version and every truncation are refused
 * with a reason; the node is found by --node or by SLURMD_NODENAME.
 */
#include "config.h"

#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launcher/bootstrap.h"
#include "launcher/job.h"
#include "test/unit/run_suite.h"

#define NNODES 3
#define NRANKS 5

/* A host name longer than HOST_NAME_MAX: a host list may name hosts by
 * long domain names. */
#define LONG_NAME                                                                                                   \
    "node-b.rack-17.row-4.hall-2.datacenter-west.cluster.department.university.example.org"

static const char *const node_names[NNODES] = {"node-a", LONG_NAME, "node-c"};
static const int rank_node[NRANKS] = {0, 0, 1, 2, 2};
static const int rank_local[NRANKS] = {0, 1, 0, 0, 1};
static const char *const env[] = {
    "A=1", "B=two words", "C=100%", "D=line1\nline2", "E=caf\xc3\xa9\x7f\x01\tend", "F=", "G= %41 %%",
};
static const char *const args[] = {"a.out", "", " lead and trail ", "x%41y", "new\nline\r", "\xff\xfe\x80", "--"};
#define NENV ((int)(sizeof(env) / sizeof(env[0])))
#define NARGS ((int)(sizeof(args) / sizeof(args[0])))
#define HEAD_ADDRS "192.0.2.1:4000 [2001:db8::1]:4000"

/* The head's side: its job as bmpi_bootstrap_text reads it. */
struct head {
    struct bmpi_job job;
    char *names[NNODES];
    int node_vertex[NNODES];
    struct bmpi_rank ranks[NRANKS];
    char *env[NENV];
    char *argv[NARGS + 1];
    uint8_t secret[BMPI_TREE_SECRET_LEN];
};

/* The daemon's side: what bmpi_bootstrap_read fills. */
struct daemon_side {
    int dummy_daemon;
    struct bmpi_job job;
    struct bmpi_boot_info info;
    struct bmpi_linebuf lb;
    char why[2048];
};

static struct head *head;
static struct daemon_side *dmn;

static void setup(void)
{
    head = calloc(1, sizeof(*head));
    dmn = calloc(1, sizeof(*dmn));
    ck_assert_ptr_nonnull(head);
    ck_assert_ptr_nonnull(dmn);
    struct bmpi_job *j = &head->job;
    snprintf(j->nspace, sizeof(j->nspace), "bmpi-job.4242.7");
    j->opt.tree_fanout = 2;
    j->nvertices = NNODES;
    j->nnodes = NNODES;
    for (int n = 0; n < NNODES; n++) {
        head->names[n] = (char *)node_names[n];
        head->node_vertex[n] = n;
    }
    j->node_names = head->names;
    j->node_vertex = head->node_vertex;
    j->nranks = NRANKS;
    j->ranks = head->ranks;
    for (int r = 0; r < NRANKS; r++) {
        head->ranks[r].rank = r;
        head->ranks[r].node = rank_node[r];
        head->ranks[r].local_rank = rank_local[r];
        head->ranks[r].vertex = rank_node[r];
    }
    j->opt.bind = BMPI_BIND_CORE;
    j->opt.report_bindings = true;
    j->opt.no_mpich_abi = true;
    j->opt.wdir = (char *)"/srv/dir with blank/100%/\xc3\xa9t\xc3\xa9";
    for (int i = 0; i < NENV; i++)
        head->env[i] = (char *)env[i];
    j->opt.nenv = NENV;
    j->opt.env = head->env;
    j->opt.program = (char *)"/opt/my prog/a.out";
    for (int i = 0; i < NARGS; i++)
        head->argv[i] = (char *)args[i];
    j->opt.argv = head->argv;
    for (int i = 0; i < BMPI_TREE_SECRET_LEN; i++)
        head->secret[i] = (uint8_t)(0xa5 ^ (i * 37));
    /* bmpirun --daemon has its daemon struct before reading the text. */
    dmn->job.daemon = (struct bmpi_daemon *)&dmn->dummy_daemon;
}

/* What the daemon's bmpi_options_free would free (options.c is not linked:
 * it needs the PMIx server). */
static void free_daemon_side(void)
{
    struct bmpi_options *o = &dmn->job.opt;
    for (int i = 0; i < o->nenv; i++)
        free(o->env[i]);
    free(o->env);
    for (char **a = o->argv; a != NULL && *a != NULL; a++)
        free(*a);
    free(o->argv);
    free(o->program);
    free(o->wdir);
    bmpi_hostlist_free(&o->hosts);
    bmpi_placement_free(&o->place);
    free(dmn->info.head_addrs);
    free(dmn->lb.buf);
    int dummy = dmn->dummy_daemon;
    *dmn = (struct daemon_side){.dummy_daemon = dummy};
    dmn->job.daemon = (struct bmpi_daemon *)&dmn->dummy_daemon;
}

static void teardown(void)
{
    free_daemon_side();
    free(dmn);
    free(head);
}

static char *head_text(size_t *len)
{
    char *text = bmpi_bootstrap_text(&head->job, head->secret, HEAD_ADDRS, len);
    ck_assert_ptr_nonnull(text);
    ck_assert_uint_eq(strlen(text), *len); /* text: no NUL inside */
    return text;
}

/* Hand len bytes of text to the daemon's reader through a pipe (closed
 * after them, as the launch agent's stdin is) and read. */
static int daemon_reads(const char *text, size_t len, int node)
{
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    ck_assert_uint_lt(len, 65536); /* fits the pipe: no writer process needed */
    ck_assert_int_eq(write(p[1], text, len), (ssize_t)len);
    close(p[1]);
    dmn->lb.fd = p[0];
    int rc = bmpi_bootstrap_read(&dmn->lb, &dmn->job, node, &dmn->info, dmn->why, sizeof(dmn->why));
    close(p[0]);
    return rc;
}

/* The head's text with the first line that starts with key replaced by
 * line (or line inserted before it when insert). */
static char *edited_text(const char *key, const char *line, bool insert, size_t *len)
{
    size_t tlen;
    char *text = head_text(&tlen);
    size_t klen = strlen(key);
    char *at = text;
    while (strncmp(at, key, klen) != 0) {
        at = strchr(at, '\n');
        ck_assert_ptr_nonnull(at);
        at++;
    }
    size_t skip = insert ? 0 : (size_t)(strchr(at, '\n') + 1 - at);
    char *out = malloc(tlen + strlen(line) + 2);
    ck_assert_ptr_nonnull(out);
    *len = (size_t)sprintf(out, "%.*s%s\n%s", (int)(at - text), text, line, at + skip);
    free(text);
    return out;
}

static void assert_job_read_back(void)
{
    const struct bmpi_job *j = &dmn->job;
    const struct bmpi_options *o = &j->opt;
    ck_assert_mem_eq(dmn->info.secret, head->secret, BMPI_TREE_SECRET_LEN);
    ck_assert_str_eq(dmn->info.head_addrs, HEAD_ADDRS);
    ck_assert_int_eq(dmn->info.fanout, 2);
    ck_assert_int_eq(dmn->info.nvertices, NNODES);
    ck_assert_str_eq(j->nspace, "bmpi-job.4242.7");
    ck_assert_int_eq(o->hosts.n, NNODES);
    ck_assert_int_eq(o->place.nnodes, NNODES);
    for (int n = 0; n < NNODES; n++)
        ck_assert_str_eq(o->hosts.hosts[n].name, node_names[n]);
    ck_assert_int_eq(o->nprocs, NRANKS);
    ck_assert_int_eq(o->place.nranks, NRANKS);
    for (int r = 0; r < NRANKS; r++) {
        ck_assert_int_eq(o->place.node[r], rank_node[r]);
        ck_assert_int_eq(o->place.local_rank[r], rank_local[r]);
    }
    ck_assert_int_eq(o->place.node_nranks[0], 2);
    ck_assert_int_eq(o->place.node_nranks[1], 1);
    ck_assert_int_eq(o->place.node_nranks[2], 2);
    ck_assert_int_eq(o->bind, BMPI_BIND_CORE);
    ck_assert(o->report_bindings);
    ck_assert(o->no_mpich_abi);
    ck_assert_int_eq(o->nenv, NENV);
    for (int i = 0; i < NENV; i++)
        ck_assert_str_eq(o->env[i], env[i]);
    ck_assert_ptr_null(o->env[NENV]);
    ck_assert_str_eq(o->program, head->job.opt.program);
    for (int i = 0; i < NARGS; i++) {
        ck_assert_ptr_nonnull(o->argv[i]);
        ck_assert_str_eq(o->argv[i], args[i]);
    }
    ck_assert_ptr_null(o->argv[NARGS]);
}

START_TEST(round_trip_keeps_every_field)
{
    size_t len;
    char *text = head_text(&len);
    ck_assert_int_eq(daemon_reads(text, len, 1), 0);
    free(text);
    assert_job_read_back();
    ck_assert_str_eq(dmn->job.opt.wdir, head->job.opt.wdir);
    ck_assert_int_eq(dmn->job.self_node, 1);
    ck_assert_int_eq(dmn->job.opt.local_host, 0); /* node-a is served by vertex 0, the head */
}
END_TEST

/* What the head says is binary-safe only through the encoding: no raw
 * blank, '%', control or non-ASCII byte may reach the text's values. */
START_TEST(text_is_lines_of_printable_ascii)
{
    size_t len;
    char *text = head_text(&len);
    ck_assert_str_eq(strtok(text, "\n"), BMPI_BOOTSTRAP_MAGIC);
    for (const char *p = text + strlen(text) + 1; p < text + len; p++)
        ck_assert_msg(*p == '\n' || (*p >= ' ' && *p < 0x7f), "byte 0x%02x at %zu", (unsigned char)*p,
                      (size_t)(p - text));
    ck_assert_str_eq(text + len - 4, "end\n");
    free(text);
}
END_TEST

START_TEST(without_wdir_the_heads_directory)
{
    char cwd[PATH_MAX];
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
    head->job.opt.wdir = NULL;
    head->job.opt.bind = BMPI_BIND_NONE;
    head->job.opt.report_bindings = false;
    head->job.opt.no_mpich_abi = false;
    size_t len;
    char *text = head_text(&len);
    ck_assert_int_eq(daemon_reads(text, len, 2), 0);
    free(text);
    ck_assert_str_eq(dmn->job.opt.wdir, cwd);
    ck_assert_int_eq(dmn->job.opt.bind, BMPI_BIND_NONE);
    ck_assert(!dmn->job.opt.report_bindings);
    ck_assert(!dmn->job.opt.no_mpich_abi);
    ck_assert_int_eq(dmn->job.self_node, 2);
}
END_TEST

START_TEST(head_without_ranks_has_no_local_host)
{
    for (int n = 0; n < NNODES; n++)
        head->node_vertex[n] = n + 1;
    head->job.nvertices = NNODES + 1;
    head->job.opt.bind = BMPI_BIND_AUTO;
    size_t len;
    char *text = head_text(&len);
    ck_assert_int_eq(daemon_reads(text, len, 0), 0);
    free(text);
    ck_assert_int_eq(dmn->info.nvertices, NNODES + 1);
    ck_assert_int_eq(dmn->job.opt.local_host, -1);
    ck_assert_int_eq(dmn->job.opt.bind, BMPI_BIND_AUTO);
    ck_assert_int_eq(dmn->job.self_node, 0);
}
END_TEST

/* A host list takes names of any length; so does the daemon (a name
 * longer than 255 bytes is not a DNS name, but the head would send it). */
START_TEST(node_names_of_any_length)
{
    char name[301];
    for (int i = 0; i < 300; i++)
        name[i] = i % 64 == 63 ? '.' : (char)('a' + i % 26);
    name[300] = '\0';
    head->names[2] = name;
    size_t len;
    char *text = head_text(&len);
    ck_assert_int_eq(setenv("SLURMD_NODENAME", name, 1), 0);
    ck_assert_int_eq(daemon_reads(text, len, -1), 0);
    free(text);
    ck_assert_str_eq(dmn->job.opt.hosts.hosts[1].name, LONG_NAME);
    ck_assert_str_eq(dmn->job.opt.hosts.hosts[2].name, name);
    ck_assert_int_eq(dmn->job.self_node, 2);
}
END_TEST

/* Later lines ("parent VERTEX ADDR:PORT") stay buffered for the daemon. */
START_TEST(parent_lines_follow_the_text)
{
    size_t len;
    char *text = head_text(&len);
    char line[128];
    int n = bmpi_bootstrap_parent_line(line, sizeof(line), 4, "198.51.100.7:40312");
    ck_assert_str_eq(line, "parent 4 198.51.100.7:40312\n");
    ck_assert_int_eq(n, (int)strlen(line));
    char *both = malloc(len + (size_t)n + 1);
    ck_assert_ptr_nonnull(both);
    memcpy(both, text, len);
    memcpy(both + len, line, (size_t)n + 1);
    ck_assert_int_eq(daemon_reads(both, len + (size_t)n, 1), 0);
    free(both);
    free(text);
    char *next = bmpi_linebuf_next(&dmn->lb);
    ck_assert_pstr_eq(next, "parent 4 198.51.100.7:40312");
    free(next);
    ck_assert_ptr_null(bmpi_linebuf_next(&dmn->lb));
}
END_TEST

START_TEST(slurm_node_name_picks_the_node)
{
    size_t len;
    char *text = head_text(&len);
    ck_assert_int_eq(setenv("SLURMD_NODENAME", LONG_NAME, 1), 0);
    ck_assert_int_eq(daemon_reads(text, len, -1), 0);
    ck_assert_int_eq(dmn->job.self_node, 1);
    free_daemon_side();
    ck_assert_int_eq(setenv("SLURMD_NODENAME", "node-c", 1), 0);
    ck_assert_int_eq(daemon_reads(text, len, -1), 0);
    ck_assert_int_eq(dmn->job.self_node, 2);
    free_daemon_side();
    /* --node wins over Slurm's name */
    ck_assert_int_eq(daemon_reads(text, len, 0), 0);
    ck_assert_int_eq(dmn->job.self_node, 0);
    free_daemon_side();
    ck_assert_int_eq(setenv("SLURMD_NODENAME", "node-x", 1), 0);
    ck_assert_int_eq(daemon_reads(text, len, -1), -1);
    ck_assert_str_eq(dmn->why, "cannot tell which of the job's 3 nodes this host is (--node -1, "
                               "SLURMD_NODENAME=node-x)");
    free_daemon_side();
    ck_assert_int_eq(unsetenv("SLURMD_NODENAME"), 0);
    ck_assert_int_eq(daemon_reads(text, len, 3), -1);
    ck_assert_str_eq(dmn->why, "cannot tell which of the job's 3 nodes this host is (--node 3, "
                               "SLURMD_NODENAME=unset)");
    free(text);
}
END_TEST

START_TEST(wrong_magic_is_refused)
{
    size_t len;
    char *text = edited_text(BMPI_BOOTSTRAP_MAGIC, "bmpi-daemon-bootstrap 2", false, &len);
    ck_assert_int_eq(daemon_reads(text, len, 1), -1);
    ck_assert_str_eq(dmn->why, "stdin does not start with '" BMPI_BOOTSTRAP_MAGIC
                               "': bmpirun --daemon is started by bmpirun, not by hand");
    free(text);
    free_daemon_side();
    ck_assert_int_eq(daemon_reads("hello\n", 6, 1), -1);
    ck_assert_ptr_nonnull(strstr(dmn->why, "does not start with"));
}
END_TEST

START_TEST(other_version_is_refused)
{
    size_t len;
    char *text = edited_text("version ", "version 0.0.0-other", false, &len);
    ck_assert_int_eq(daemon_reads(text, len, 1), -1);
    ck_assert_str_eq(dmn->why, "bmpi version mismatch: this host runs bmpi " PACKAGE_VERSION
                               ", the head bmpirun runs bmpi 0.0.0-other; install the same bmpi on every host");
    free(text);
}
END_TEST

/* Every prefix of the text, cut anywhere (also inside a line and just
 * before the last newline), is refused: only the "end" line completes it. */
START_TEST(truncated_text_is_refused)
{
    size_t len;
    char *text = head_text(&len);
    for (size_t cut = 0; cut < len; cut++) {
        int rc = daemon_reads(text, cut, 1);
        ck_assert_msg(rc == -1, "a text cut after %zu of %zu bytes was taken", cut, len);
        ck_assert_msg(strstr(dmn->why, "ended after") != NULL, "cut %zu: %s", cut, dmn->why);
        free_daemon_side();
    }
    ck_assert_int_eq(daemon_reads(text, 0, 1), -1);
    ck_assert_str_eq(dmn->why, "the bootstrap from the head ended after 0 lines");
    free_daemon_side();
    size_t upto_ranks = (size_t)(strstr(text, "\nranks") + 1 - text);
    ck_assert_int_eq(daemon_reads(text, upto_ranks, 1), -1);
    char want[128];
    snprintf(want, sizeof(want), "the bootstrap from the head ended after %d lines", 8 + NNODES);
    ck_assert_str_eq(dmn->why, want);
    free(text);
}
END_TEST

START_TEST(text_without_program_is_refused)
{
    size_t len;
    char *text = edited_text("program ", "", false, &len);
    ck_assert_int_eq(daemon_reads(text, len, 1), -1);
    ck_assert_str_eq(dmn->why, "the bootstrap from the head lacks the program or the ranks");
    free(text);
}
END_TEST

START_TEST(bad_lines_are_named)
{
    static const char *const bad[][2] = {
        {"secret ", "secret 00ff"},
        {"secret ", "secret +1+2+3+4+5+6+7+8+9+a+b+c+d+e+f+0+1+2+3+4+5+6+7+8+9+a+b+c+d+e+f+0"},
        {"fanout ", "fanout 0"},
        {"vertices ", "vertices 1"},
        {"nodes ", "nodes 0"},
        {"node ", "node 0"},
        {"node ", "node x node-a"},
        {"ranks", "ranks 0:0 7:0"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        size_t len;
        char *text = edited_text(bad[i][0], bad[i][1], false, &len);
        ck_assert_msg(daemon_reads(text, len, 1) == -1, "'%s' was taken", bad[i][1]);
        ck_assert_msg(strstr(dmn->why, "bad bootstrap line") && strstr(dmn->why, bad[i][1]), "'%s': %s",
                      bad[i][1], dmn->why);
        free(text);
        free_daemon_side();
    }
}
END_TEST

/* The head never writes a '%' without two hex digits, but a reader must
 * not read past a value that ends in one. */
START_TEST(malformed_escapes_stay_literal)
{
    static const char *const in[] = {"arg %4", "arg %", "arg %4g", "arg %zz", "arg a%41%2"};
    static const char *const out[] = {"%4", "%", "%4g", "%zz", "aA%2"};
    for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
        size_t len;
        char *text = edited_text("end", in[i], true, &len);
        ck_assert_int_eq(daemon_reads(text, len, 1), 0);
        ck_assert_str_eq(dmn->job.opt.argv[NARGS], out[i]);
        ck_assert_ptr_null(dmn->job.opt.argv[NARGS + 1]);
        free(text);
        free_daemon_side();
    }
}
END_TEST

int main(void)
{
    const TTest *const tests[] = {
        round_trip_keeps_every_field,     text_is_lines_of_printable_ascii, without_wdir_the_heads_directory,
        head_without_ranks_has_no_local_host, node_names_of_any_length, parent_lines_follow_the_text, slurm_node_name_picks_the_node,
        wrong_magic_is_refused,           other_version_is_refused,         truncated_text_is_refused,
        text_without_program_is_refused,  bad_lines_are_named,              malformed_escapes_stay_literal,
    };
    return run_suite("bootstrap", setup, teardown, tests, sizeof(tests) / sizeof(tests[0]));
}
