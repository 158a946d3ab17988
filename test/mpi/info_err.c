/*
 * MPI_Info (every function, MPI_INFO_ENV, Info_create_env, bad keys and
 * values) and user error classes, codes and strings (MPI_Error_class and
 * MPI_Error_string on them, MPI_LASTUSEDCODE, the MPI 4.1 removals, raising
 * a user code through an error handler).
 */
#include "testutil.h"

static void test_info(void)
{
    MPI_Info info, dup;
    int n, flag, len;
    char key[MPI_MAX_INFO_KEY + 1], val[MPI_MAX_INFO_VAL + 1];
    MPICHK(MPI_Info_create(&info));
    MPICHK(MPI_Info_get_nkeys(info, &n));
    CHECK(n == 0, "new info has %d keys", n);
    MPICHK(MPI_Info_set(info, "alpha", "1"));
    MPICHK(MPI_Info_set(info, "beta", "twenty two"));
    MPICHK(MPI_Info_set(info, "gamma", "333"));
    MPICHK(MPI_Info_set(info, "alpha", "one")); /* replaces, keeps its place */
    MPICHK(MPI_Info_get_nkeys(info, &n));
    CHECK(n == 3, "nkeys %d", n);
    const char *order[] = {"alpha", "beta", "gamma"};
    for (int i = 0; i < 3; i++) {
        MPICHK(MPI_Info_get_nthkey(info, i, key));
        CHECK(strcmp(key, order[i]) == 0, "nthkey %d = \"%s\"", i, key);
    }
    MPICHK(MPI_Info_get_valuelen(info, "beta", &len, &flag));
    CHECK(flag && len == 10, "valuelen of beta %d", len);
    MPICHK(MPI_Info_get_valuelen(info, "delta", &len, &flag));
    CHECK(!flag, "valuelen of a missing key");
    MPICHK(MPI_Info_get(info, "alpha", MPI_MAX_INFO_VAL, val, &flag));
    CHECK(flag && strcmp(val, "one") == 0, "Info_get alpha \"%s\"", val);
    MPICHK(MPI_Info_get(info, "beta", 6, val, &flag)); /* truncated to 6 chars */
    CHECK(flag && strcmp(val, "twenty") == 0, "Info_get truncated \"%s\"", val);
    /* get_string: buflen in and out */
    int buflen = 0;
    MPICHK(MPI_Info_get_string(info, "gamma", &buflen, NULL, &flag));
    CHECK(flag && buflen == 4, "get_string length query %d", buflen);
    buflen = 3;
    MPICHK(MPI_Info_get_string(info, "gamma", &buflen, val, &flag));
    CHECK(flag && strcmp(val, "33") == 0 && buflen == 4, "get_string truncated \"%s\" %d", val, buflen);
    buflen = sizeof val;
    MPICHK(MPI_Info_get_string(info, "nope", &buflen, val, &flag));
    CHECK(!flag, "get_string of a missing key");
    /* dup is deep */
    MPICHK(MPI_Info_dup(info, &dup));
    MPICHK(MPI_Info_delete(info, "beta"));
    MPICHK(MPI_Info_get_nkeys(info, &n));
    CHECK(n == 2, "nkeys after delete %d", n);
    MPICHK(MPI_Info_get_nthkey(info, 1, key));
    CHECK(strcmp(key, "gamma") == 0, "order after delete \"%s\"", key);
    MPICHK(MPI_Info_get_nkeys(dup, &n));
    CHECK(n == 3, "dup changed with the original: %d keys", n);
    MPICHK(MPI_Info_free(&dup));
    CHECK(dup == MPI_INFO_NULL, "Info_free did not reset the handle");

    /* errors */
    char longkey[MPI_MAX_INFO_KEY + 10];
    memset(longkey, 'k', sizeof longkey - 1);
    longkey[sizeof longkey - 1] = '\0';
    EXPECT_CLASS(MPI_Info_set(info, longkey, "v"), MPI_ERR_INFO_KEY);
    EXPECT_CLASS(MPI_Info_set(info, "", "v"), MPI_ERR_INFO_KEY);
    static char longval[MPI_MAX_INFO_VAL + 10];
    memset(longval, 'v', sizeof longval - 1);
    EXPECT_CLASS(MPI_Info_set(info, "k", longval), MPI_ERR_INFO_VALUE);
    EXPECT_CLASS(MPI_Info_delete(info, "beta"), MPI_ERR_INFO_NOKEY);
    EXPECT_CLASS(MPI_Info_get_nthkey(info, 2, key), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Info_get_nkeys(MPI_INFO_NULL, &n), MPI_ERR_INFO);
    EXPECT_CLASS(MPI_Info_set((MPI_Info)0x9c000777, "a", "b"), MPI_ERR_INFO);
    MPICHK(MPI_Info_free(&info));
    EXPECT_CLASS(MPI_Info_get_nkeys(info, &n), MPI_ERR_INFO);

    /* MPI_INFO_ENV */
    MPICHK(MPI_Info_get_nkeys(MPI_INFO_ENV, &n));
    CHECK(n >= 3, "MPI_INFO_ENV has %d keys", n);
    MPICHK(MPI_Info_get(MPI_INFO_ENV, "command", MPI_MAX_INFO_VAL, val, &flag));
    CHECK(flag && strstr(val, "info_err"), "MPI_INFO_ENV command \"%s\"", flag ? val : "");
    MPICHK(MPI_Info_get(MPI_INFO_ENV, "maxprocs", MPI_MAX_INFO_VAL, val, &flag));
    CHECK(flag && atoi(val) == tu_size, "MPI_INFO_ENV maxprocs \"%s\"", flag ? val : "");
    MPICHK(MPI_Info_get(MPI_INFO_ENV, "thread_level", MPI_MAX_INFO_VAL, val, &flag));
    CHECK(flag && strncmp(val, "MPI_THREAD_", 11) == 0, "thread_level \"%s\"", flag ? val : "");
    MPI_Info env = MPI_INFO_ENV;
    EXPECT_CLASS(MPI_Info_free(&env), MPI_ERR_INFO);
    char *args[] = {"prog", "-x", "y", NULL};
    MPICHK(MPI_Info_create_env(3, args, &info));
    MPICHK(MPI_Info_get(info, "command", MPI_MAX_INFO_VAL, val, &flag));
    CHECK(flag && strcmp(val, "prog") == 0, "create_env command \"%s\"", val);
    MPICHK(MPI_Info_get(info, "argv", MPI_MAX_INFO_VAL, val, &flag));
    CHECK(flag && strcmp(val, "-x y") == 0, "create_env argv \"%s\"", val);
    MPICHK(MPI_Info_free(&info));
}

static int handler_calls, handler_code;
static void handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    handler_calls++;
    handler_code = *code;
}

static void test_errors(void)
{
    int cls, code, code2, cls2, len, got;
    char s[MPI_MAX_ERROR_STRING];
    MPICHK(MPI_Add_error_class(&cls));
    CHECK(cls > MPI_ERR_LASTCODE, "user class %d not above MPI_ERR_LASTCODE", cls);
    MPICHK(MPI_Add_error_code(cls, &code));
    MPICHK(MPI_Add_error_code(MPI_ERR_ARG, &code2));
    CHECK(code != cls && code2 != code, "codes %d %d %d", cls, code, code2);
    MPICHK(MPI_Error_class(code, &got));
    CHECK(got == cls, "class of user code %d, expected %d", got, cls);
    MPICHK(MPI_Error_class(cls, &got));
    CHECK(got == cls, "class of user class %d", got);
    MPICHK(MPI_Error_class(code2, &got));
    CHECK(got == MPI_ERR_ARG, "class of code in MPI_ERR_ARG: %d", got);
    MPICHK(MPI_Add_error_string(cls, "my class"));
    MPICHK(MPI_Add_error_string(code, "my code"));
    MPICHK(MPI_Error_string(cls, s, &len));
    CHECK(strcmp(s, "my class") == 0 && len == 8, "class string \"%s\"", s);
    MPICHK(MPI_Error_string(code, s, &len));
    CHECK(strcmp(s, "my code") == 0, "code string \"%s\"", s);
    MPICHK(MPI_Add_error_string(code, "my code, again"));
    MPICHK(MPI_Error_string(code, s, &len));
    CHECK(strcmp(s, "my code, again") == 0, "replaced string \"%s\"", s);
    MPICHK(MPI_Error_string(code2, s, &len));
    CHECK(len == 0, "code without a string has \"%s\"", s);
    int *last, flag;
    MPICHK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
    CHECK(flag && *last >= code2 && *last >= code && *last >= cls, "MPI_LASTUSEDCODE %d", *last);

    /* a user code through a user error handler, and through MPI_ERRORS_RETURN */
    MPI_Errhandler eh;
    MPI_Comm c;
    MPICHK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    MPICHK(MPI_Comm_create_errhandler(handler, &eh));
    MPICHK(MPI_Comm_set_errhandler(c, eh));
    MPICHK(MPI_Comm_call_errhandler(c, code));
    CHECK(handler_calls == 1 && handler_code == code, "handler saw %d calls, code %d", handler_calls,
          handler_code);
    MPICHK(MPI_Errhandler_free(&eh));
    MPICHK(MPI_Comm_free(&c));

    /* removal (MPI 4.1) */
    EXPECT_CLASS(MPI_Remove_error_class(cls), MPI_ERR_ARG); /* still has a code */
    MPICHK(MPI_Remove_error_string(code));
    EXPECT_CLASS(MPI_Remove_error_string(code), MPI_ERR_ARG);
    MPICHK(MPI_Remove_error_code(code));
    MPICHK(MPI_Remove_error_class(cls));
    EXPECT_CLASS(MPI_Error_class(cls, &got), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Add_error_code(cls, &code), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Add_error_string(MPI_ERR_ARG, "no"), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Remove_error_code(MPI_ERR_ARG), MPI_ERR_ARG);
    MPICHK(MPI_Remove_error_code(code2));
    (void)cls2;
}

/* "abort": an error under MPI_ERRORS_ABORT must end the job (the shell
 * test expects a failure exit and the message naming the call). */
static void abort_mode(void)
{
    MPI_Comm c;
    MPICHK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    MPICHK(MPI_Comm_set_errhandler(c, MPI_ERRORS_ABORT));
    tu_barrier();
    if (tu_rank == tu_size - 1) {
        int bad = tu_size; /* out of range */
        MPI_Send(&bad, 1, MPI_INT, bad, 0, c);
        printf("MPI_ERRORS_ABORT returned\n");
        exit(0);
    }
    /* the others wait to be killed */
    MPI_Recv(&c, 1, MPI_INT, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    exit(0);
}

int main(int argc, char **argv)
{
    /* allowed before MPI_Init; must not freeze MPI_INFO_ENV's pre-init view */
    MPI_Info early;
    int nk = 0;
    if (MPI_Info_create_env(argc, argv, &early) != MPI_SUCCESS || MPI_Info_get_nkeys(early, &nk) != MPI_SUCCESS ||
        nk < 1 || MPI_Info_free(&early) != MPI_SUCCESS) {
        fprintf(stderr, "FAIL info_err: MPI_Info_create_env before MPI_Init\n");
        return 1;
    }
    tu_init(&argc, &argv, "info_err");
    if (argc > 1 && strcmp(argv[1], "abort") == 0)
        abort_mode();
    test_info();
    test_errors();
    tu_finish();
    return 0;
}
