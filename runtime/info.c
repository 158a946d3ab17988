/*
 * MPI_Info: ordered (key, value) pairs, and MPI_INFO_ENV, filled on first
 * use with what the standard's reserved keys say about how the program was
 * started (command, argv, maxprocs, soft, host, arch, wdir, file,
 * thread_level).
 */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "runtime/api.h"
#include "runtime/handle.h"
#include "runtime/info.h"
#include "runtime/world.h"

struct kv {
    char *key, *value;
};

struct bmpi_info {
    int n, cap;
    struct kv *kv;
};

static struct {
    struct bmpi_handle_table table;
    struct bmpi_info env;
    int env_ready;
} infos = {.table = {.type = BMPI_OBJ_INFO}};

static int find(const struct bmpi_info *info, const char *key)
{
    for (int i = 0; i < info->n; i++)
        if (strcmp(info->kv[i].key, key) == 0)
            return i;
    return -1;
}

static int put(struct bmpi_info *info, const char *key, const char *value)
{
    int i = find(info, key);
    char *v = strdup(value);
    if (!v)
        return MPI_ERR_NO_MEM;
    if (i >= 0) {
        free(info->kv[i].value);
        info->kv[i].value = v;
        return BMPI_OK;
    }
    if (info->n == info->cap) {
        int cap = info->cap ? 2 * info->cap : 8;
        struct kv *kv = realloc(info->kv, (size_t)cap * sizeof(*kv));
        if (!kv) {
            free(v);
            return MPI_ERR_NO_MEM;
        }
        info->kv = kv;
        info->cap = cap;
    }
    char *k = strdup(key);
    if (!k) {
        free(v);
        return MPI_ERR_NO_MEM;
    }
    info->kv[info->n++] = (struct kv){k, v};
    return BMPI_OK;
}

static void clear(struct bmpi_info *info)
{
    for (int i = 0; i < info->n; i++) {
        free(info->kv[i].key);
        free(info->kv[i].value);
    }
    free(info->kv);
    info->kv = NULL;
    info->n = info->cap = 0;
}

static const char *thread_level_name(int level)
{
    switch (level) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    default: return "MPI_THREAD_MULTIPLE";
    }
}

/* MPI_INFO_ENV: MPI_Init does not keep argv, so the command line comes from
 * /proc/self/cmdline. */
static void env_fill(struct bmpi_info *env)
{
    char buf[8192];
    FILE *f = fopen("/proc/self/cmdline", "r");
    if (f) {
        size_t len = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[len] = '\0';
        if (len > 0) {
            put(env, "command", buf);
            /* argv: the arguments after the command, separated by spaces */
            char args[8192] = "";
            size_t at = 0;
            for (size_t p = strlen(buf) + 1; p < len; p += strlen(buf + p) + 1) {
                int w = snprintf(args + at, sizeof(args) - at, "%s%s", at ? " " : "", buf + p);
                if (w < 0 || (size_t)w >= sizeof(args) - at)
                    break;
                at += (size_t)w;
            }
            if (at)
                put(env, "argv", args);
        }
    }
    char num[32];
    snprintf(num, sizeof(num), "%d", bmpi_world.size > 0 ? bmpi_world.size : 1);
    put(env, "maxprocs", num);
    put(env, "soft", num);
    char host[MPI_MAX_PROCESSOR_NAME];
    if (bmpi_world.hostname[0])
        put(env, "host", bmpi_world.hostname);
    else if (gethostname(host, sizeof(host)) == 0)
        put(env, "host", host);
    struct utsname u;
    if (uname(&u) == 0)
        put(env, "arch", u.machine);
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof(cwd)))
        put(env, "wdir", cwd);
    put(env, "thread_level", thread_level_name(bmpi_world.thread_level));
}

struct bmpi_info *bmpi_info_lookup(MPI_Info h)
{
    if (h == MPI_INFO_ENV) {
        if (!infos.env_ready) {
            env_fill(&infos.env);
            infos.env_ready = 1;
        }
        return &infos.env;
    }
    return bmpi_handle_get(&infos.table, h);
}

struct bmpi_info *bmpi_info_clone(const struct bmpi_info *src)
{
    struct bmpi_info *info = calloc(1, sizeof(*info));
    if (!info)
        return NULL;
    for (int i = 0; src && i < src->n; i++) {
        if (put(info, src->kv[i].key, src->kv[i].value)) {
            bmpi_info_destroy(info);
            return NULL;
        }
    }
    return info;
}

void bmpi_info_destroy(struct bmpi_info *info)
{
    if (!info || info == &infos.env)
        return;
    clear(info);
    free(info);
}

/* MPI_Finalize: the info objects the program never freed, and the
 * environment's. */
void bmpi_info_finalize(void)
{
    for (int i = 0; i < infos.table.used; i++)
        bmpi_info_destroy(infos.table.objs[i]);
    bmpi_handle_table_free(&infos.table);
    clear(&infos.env);
    infos.env_ready = 0;
}

int bmpi_info_make_handle(struct bmpi_info *info, MPI_Info *out)
{
    int h = bmpi_handle_new(&infos.table, info);
    if (!h) {
        bmpi_info_destroy(info);
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of info handles");
    }
    *out = h;
    return BMPI_OK;
}

const char *bmpi_info_value(const struct bmpi_info *info, const char *key)
{
    int i = info ? find(info, key) : -1;
    return i >= 0 ? info->kv[i].value : NULL;
}

/* --- entry points: errors go to MPI_COMM_SELF's handler ------------------ */

static int check_info(MPI_Info h, const char *fn, struct bmpi_info **info)
{
    if (!(*info = bmpi_info_lookup(h)))
        return bmpi_err_noobj(MPI_ERR_INFO, fn, "invalid info 0x%x", (unsigned)h);
    return MPI_SUCCESS;
}

static int check_key(const char *key, const char *fn)
{
    if (!key)
        return bmpi_err_noobj(MPI_ERR_INFO_KEY, fn, "key is NULL");
    size_t n = strnlen(key, MPI_MAX_INFO_KEY + 1);
    if (n == 0)
        return bmpi_err_noobj(MPI_ERR_INFO_KEY, fn, "empty key");
    if (n > MPI_MAX_INFO_KEY)
        return bmpi_err_noobj(MPI_ERR_INFO_KEY, fn, "key \"%.40s...\" longer than MPI_MAX_INFO_KEY (%d)", key,
                              MPI_MAX_INFO_KEY);
    return MPI_SUCCESS;
}

BMPI_API(MPI_Info_create)
int PMPI_Info_create(MPI_Info *info)
{
    if (!info)
        return bmpi_err_noobj(MPI_ERR_ARG, "MPI_Info_create", "info is NULL");
    struct bmpi_info *i = bmpi_info_clone(NULL);
    if (!i)
        return bmpi_err_noobj(MPI_ERR_NO_MEM, "MPI_Info_create", "out of memory");
    int err = bmpi_info_make_handle(i, info);
    return err ? bmpi_err_noobj(err, "MPI_Info_create", NULL) : MPI_SUCCESS;
}

/* MPI_INFO_ENV's contents for an arbitrary command line, without MPI_Init. */
BMPI_API(MPI_Info_create_env)
int PMPI_Info_create_env(int argc, char *argv[], MPI_Info *info)
{
    if (!info)
        return bmpi_err_noobj(MPI_ERR_ARG, "MPI_Info_create_env", "info is NULL");
    /* filled afresh: before MPI_Init the world size is not known yet, and
     * MPI_INFO_ENV must not keep that */
    struct bmpi_info *i = bmpi_info_clone(NULL);
    if (!i)
        return bmpi_err_noobj(MPI_ERR_NO_MEM, "MPI_Info_create_env", "out of memory");
    env_fill(i);
    if (argc > 0 && argv && argv[0]) {
        put(i, "command", argv[0]);
        size_t len = 1;
        for (int a = 1; a < argc && argv[a]; a++)
            len += strlen(argv[a]) + 1;
        char *s = malloc(len);
        if (s) {
            s[0] = '\0';
            for (int a = 1; a < argc && argv[a]; a++) {
                if (a > 1)
                    strcat(s, " ");
                strcat(s, argv[a]);
            }
            if (s[0])
                put(i, "argv", s);
            free(s);
        }
    }
    int err = bmpi_info_make_handle(i, info);
    return err ? bmpi_err_noobj(err, "MPI_Info_create_env", NULL) : MPI_SUCCESS;
}

BMPI_API(MPI_Info_set)
int PMPI_Info_set(MPI_Info info, const char *key, const char *value)
{
    struct bmpi_info *i;
    int err;
    if ((err = check_info(info, "MPI_Info_set", &i)) || (err = check_key(key, "MPI_Info_set")))
        return err;
    if (info == MPI_INFO_ENV)
        return bmpi_err_noobj(MPI_ERR_INFO, "MPI_Info_set", "MPI_INFO_ENV is read-only");
    if (!value)
        return bmpi_err_noobj(MPI_ERR_INFO_VALUE, "MPI_Info_set", "value is NULL");
    if (strnlen(value, MPI_MAX_INFO_VAL + 1) > MPI_MAX_INFO_VAL)
        return bmpi_err_noobj(MPI_ERR_INFO_VALUE, "MPI_Info_set",
                              "value for key \"%s\" longer than MPI_MAX_INFO_VAL (%d)", key, MPI_MAX_INFO_VAL);
    if (put(i, key, value))
        return bmpi_err_noobj(MPI_ERR_NO_MEM, "MPI_Info_set", "out of memory");
    return MPI_SUCCESS;
}

BMPI_API(MPI_Info_delete)
int PMPI_Info_delete(MPI_Info info, const char *key)
{
    struct bmpi_info *i;
    int err;
    if ((err = check_info(info, "MPI_Info_delete", &i)) || (err = check_key(key, "MPI_Info_delete")))
        return err;
    if (info == MPI_INFO_ENV)
        return bmpi_err_noobj(MPI_ERR_INFO, "MPI_Info_delete", "MPI_INFO_ENV is read-only");
    int at = find(i, key);
    if (at < 0)
        return bmpi_err_noobj(MPI_ERR_INFO_NOKEY, "MPI_Info_delete", "key \"%s\" is not set", key);
    free(i->kv[at].key);
    free(i->kv[at].value);
    memmove(&i->kv[at], &i->kv[at + 1], (size_t)(i->n - at - 1) * sizeof(i->kv[0]));
    i->n--;
    return MPI_SUCCESS;
}

/* Deprecated in MPI 4.0: valuelen excludes the terminating null. */
BMPI_API(MPI_Info_get)
int PMPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag)
{
    struct bmpi_info *i;
    int err;
    if ((err = check_info(info, "MPI_Info_get", &i)) || (err = check_key(key, "MPI_Info_get")))
        return err;
    if (valuelen < 0)
        return bmpi_err_noobj(MPI_ERR_ARG, "MPI_Info_get", "negative valuelen %d", valuelen);
    if (!value || !flag)
        return bmpi_err_noobj(MPI_ERR_ARG, "MPI_Info_get", "value or flag is NULL");
    const char *v = bmpi_info_value(i, key);
    *flag = v != NULL;
    if (v) {
        size_t n = strnlen(v, (size_t)valuelen);
        memcpy(value, v, n);
        value[n] = '\0';
    }
    return MPI_SUCCESS;
}

BMPI_API(MPI_Info_get_string)
int PMPI_Info_get_string(MPI_Info info, const char *key, int *buflen, char *value, int *flag)
{
    struct bmpi_info *i;
    int err;
    if ((err = check_info(info, "MPI_Info_get_string", &i)) || (err = check_key(key, "MPI_Info_get_string")))
        return err;
    if (!buflen || !flag || *buflen < 0 || (*buflen > 0 && !value))
        return bmpi_err_noobj(MPI_ERR_ARG, "MPI_Info_get_string", "buflen, value or flag is NULL or negative");
    const char *v = bmpi_info_value(i, key);
    *flag = v != NULL;
    if (v) {
        int n = (int)strlen(v);
        if (*buflen > 0) {
            int c = n < *buflen - 1 ? n : *buflen - 1;
            memcpy(value, v, (size_t)c);
            value[c] = '\0';
        }
        *buflen = n + 1;
    }
    return MPI_SUCCESS;
}

BMPI_API(MPI_Info_get_valuelen)
int PMPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen, int *flag)
{
    struct bmpi_info *i;
    int err;
    if ((err = check_info(info, "MPI_Info_get_valuelen", &i)) || (err = check_key(key, "MPI_Info_get_valuelen")))
        return err;
    if (!valuelen || !flag)
        return bmpi_err_noobj(MPI_ERR_ARG, "MPI_Info_get_valuelen", "valuelen or flag is NULL");
    const char *v = bmpi_info_value(i, key);
    *flag = v != NULL;
    if (v)
        *valuelen = (int)strlen(v);
    return MPI_SUCCESS;
}

BMPI_API(MPI_Info_get_nkeys)
int PMPI_Info_get_nkeys(MPI_Info info, int *nkeys)
{
    struct bmpi_info *i;
    int err = check_info(info, "MPI_Info_get_nkeys", &i);
    if (err)
        return err;
    if (!nkeys)
        return bmpi_err_noobj(MPI_ERR_ARG, "MPI_Info_get_nkeys", "nkeys is NULL");
    *nkeys = i->n;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Info_get_nthkey)
int PMPI_Info_get_nthkey(MPI_Info info, int n, char *key)
{
    struct bmpi_info *i;
    int err = check_info(info, "MPI_Info_get_nthkey", &i);
    if (err)
        return err;
    if (!key)
        return bmpi_err_noobj(MPI_ERR_ARG, "MPI_Info_get_nthkey", "key is NULL");
    if (n < 0 || n >= i->n)
        return bmpi_err_noobj(MPI_ERR_ARG, "MPI_Info_get_nthkey", "n %d out of range (info has %d keys)", n,
                              i->n);
    strcpy(key, i->kv[n].key);
    return MPI_SUCCESS;
}

BMPI_API(MPI_Info_dup)
int PMPI_Info_dup(MPI_Info info, MPI_Info *newinfo)
{
    struct bmpi_info *i;
    int err = check_info(info, "MPI_Info_dup", &i);
    if (err)
        return err;
    if (!newinfo)
        return bmpi_err_noobj(MPI_ERR_ARG, "MPI_Info_dup", "newinfo is NULL");
    struct bmpi_info *c = bmpi_info_clone(i);
    if (!c)
        return bmpi_err_noobj(MPI_ERR_NO_MEM, "MPI_Info_dup", "out of memory");
    err = bmpi_info_make_handle(c, newinfo);
    return err ? bmpi_err_noobj(err, "MPI_Info_dup", NULL) : MPI_SUCCESS;
}

BMPI_API(MPI_Info_free)
int PMPI_Info_free(MPI_Info *info)
{
    if (!info)
        return bmpi_err_noobj(MPI_ERR_ARG, "MPI_Info_free", "info is NULL");
    struct bmpi_info *i;
    int err = check_info(*info, "MPI_Info_free", &i);
    if (err)
        return err;
    if (*info == MPI_INFO_ENV)
        return bmpi_err_noobj(MPI_ERR_INFO, "MPI_Info_free", "cannot free MPI_INFO_ENV");
    bmpi_handle_release(&infos.table, *info);
    bmpi_info_destroy(i);
    *info = MPI_INFO_NULL;
    return MPI_SUCCESS;
}
