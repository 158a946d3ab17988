/*
 * Unit test of transport/ofi/ofi_order: per-peer delivery in send order
 * when a provider completes receives out of order. None of the providers
 * on this machine does, so this is where the holding path runs.
 */
#include "config.h"

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "transport/ofi/ofi_order.h"

static struct ofi_order order;

static void setup(void) { ck_assert_int_eq(ofi_order_init(&order, 3), 0); }
static void teardown(void) { ofi_order_fini(&order); }

/* A message whose bytes say which one it is. */
static void make_msg(char *buf, size_t len, uint16_t seq)
{
    for (size_t i = 0; i < len; i++)
        buf[i] = (char)(seq * 31 + i);
}

static bool arrive(int src, uint16_t seq, size_t len)
{
    char buf[256];
    make_msg(buf, len, seq);
    int err = 1;
    bool now = ofi_order_arrived(&order, src, seq, buf, len, &err);
    ck_assert_int_eq(err, 0);
    memset(buf, 0, sizeof(buf)); /* the receive buffer is reused at once */
    return now;
}

/* The next ready message from src must be seq, with its own bytes. */
static void expect_ready(int src, uint16_t seq, size_t len)
{
    struct ofi_held *h = ofi_order_pop_ready(&order, src);
    ck_assert_ptr_nonnull(h);
    ck_assert_uint_eq(h->seq, seq);
    ck_assert_uint_eq(h->len, len);
    ck_assert_uint_eq((uintptr_t)h->msg % 8, 0);
    char want[256];
    make_msg(want, len, seq);
    ck_assert_int_eq(memcmp(h->msg, want, len), 0);
    free(h);
}

START_TEST(in_order_passes_through)
{
    for (unsigned s = 0; s < 70000; s++) {
        ck_assert(arrive(1, (uint16_t)s, 16));
        ck_assert_ptr_null(ofi_order_pop_ready(&order, 1));
    }
    ck_assert_uint_eq(order.early, 0);
}
END_TEST

START_TEST(early_ones_wait_for_the_gap)
{
    ck_assert(!arrive(2, 3, 40));
    ck_assert(!arrive(2, 1, 24));
    ck_assert(!arrive(2, 2, 8));
    ck_assert_ptr_null(ofi_order_pop_ready(&order, 2)); /* 0 still missing */
    ck_assert(arrive(2, 0, 100));
    expect_ready(2, 1, 24);
    expect_ready(2, 2, 8);
    expect_ready(2, 3, 40);
    ck_assert_ptr_null(ofi_order_pop_ready(&order, 2));
    ck_assert(arrive(2, 4, 16));
    ck_assert_uint_eq(order.early, 3);
}
END_TEST

START_TEST(peers_are_independent)
{
    ck_assert(!arrive(0, 1, 16)); /* peer 0 waits for its 0 ... */
    ck_assert(arrive(1, 0, 16));  /* ... which does not hold up peer 1 */
    ck_assert(arrive(1, 1, 16));
    ck_assert_ptr_null(ofi_order_pop_ready(&order, 1));
    ck_assert(arrive(0, 0, 16));
    expect_ready(0, 1, 16);
}
END_TEST

START_TEST(a_message_twice_is_an_error)
{
    char buf[8] = {0};
    int err;
    ck_assert(arrive(0, 0, 8));
    ck_assert(!ofi_order_arrived(&order, 0, 0, buf, sizeof(buf), &err)); /* delivered already */
    ck_assert_int_eq(err, -1);
    ck_assert(!arrive(0, 2, 8));
    ck_assert(!ofi_order_arrived(&order, 0, 2, buf, sizeof(buf), &err)); /* held already */
    ck_assert_int_eq(err, -1);
}
END_TEST

START_TEST(numbers_wrap)
{
    order.next_rx[1] = UINT16_MAX - 1;
    ck_assert(!arrive(1, 1, 16));
    ck_assert(!arrive(1, UINT16_MAX, 16));
    ck_assert(!arrive(1, 0, 16));
    ck_assert(arrive(1, UINT16_MAX - 1, 16));
    expect_ready(1, UINT16_MAX, 16);
    expect_ready(1, 0, 16);
    expect_ready(1, 1, 16);
    ck_assert_ptr_null(ofi_order_pop_ready(&order, 1));
}
END_TEST

START_TEST(senders_number_each_peer)
{
    ck_assert_uint_eq(ofi_order_tx_seq(&order, 2), 0);
    ofi_order_sent(&order, 2);
    ofi_order_sent(&order, 2);
    ck_assert_uint_eq(ofi_order_tx_seq(&order, 2), 2);
    ck_assert_uint_eq(ofi_order_tx_seq(&order, 0), 0);
}
END_TEST

START_TEST(held_messages_are_freed_at_fini)
{
    /* Messages still held when the transport closes (a job cut short):
     * fini frees them (valgrind/ASan in CI would see a leak). */
    ck_assert(!arrive(0, 5, 64));
    ck_assert(!arrive(2, 9, 64));
}
END_TEST

static Suite *order_suite(void)
{
    Suite *s = suite_create("ofi_order");
    TCase *tc = tcase_create("order");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, in_order_passes_through);
    tcase_add_test(tc, early_ones_wait_for_the_gap);
    tcase_add_test(tc, peers_are_independent);
    tcase_add_test(tc, a_message_twice_is_an_error);
    tcase_add_test(tc, numbers_wrap);
    tcase_add_test(tc, senders_number_each_peer);
    tcase_add_test(tc, held_messages_are_freed_at_fini);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(order_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
