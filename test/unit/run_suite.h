/*
 * The main() of a small Check unit test: one test case per test (so
 * CK_RUN_CASE=name runs one), each with the fixture and a 30 s timeout;
 * the exit status says whether all passed.
 */
#ifndef BMPI_TEST_UNIT_RUN_SUITE_H
#define BMPI_TEST_UNIT_RUN_SUITE_H

#include <check.h>
#include <stddef.h>

static int run_suite(const char *suite, void (*setup)(void), void (*teardown)(void),
                     const TTest *const *tests, size_t n)
{
    Suite *s = suite_create(suite);
    for (size_t i = 0; i < n; i++) {
        TCase *tc = tcase_create(tests[i]->name);
        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 30);
        tcase_add_test(tc, tests[i]);
        suite_add_tcase(s, tc);
    }
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}

#endif
