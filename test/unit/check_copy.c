/*
 * Unit test of transport/copy.h: bmpi_copy() moves exactly the bytes
 * asked for whichever way it splits a copy (one memcpy, 128 KiB pieces,
 * or the small pieces it takes for short copies and where the destination
 * lies a few bytes after the source in the page), and which placements
 * count as such.
 */
#include "config.h"

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "test/unit/run_suite.h"
#include "transport/copy.h"

#define GUARD 64
#define PAGE 4096

static unsigned char *src_pages, *dst_pages;
static const size_t max_len = (300u << 10) + 2 * PAGE;

static void setup(void)
{
    src_pages = aligned_alloc(PAGE, max_len + 2 * PAGE);
    dst_pages = aligned_alloc(PAGE, max_len + 3 * PAGE);
    ck_assert_ptr_nonnull(src_pages);
    ck_assert_ptr_nonnull(dst_pages);
    for (size_t i = 0; i < max_len + 2 * PAGE; i++)
        src_pages[i] = (unsigned char)(i * 131 + 7);
}

static void teardown(void)
{
    free(src_pages);
    free(dst_pages);
}

/* Copy len bytes from src_off into dst_off (GUARD bytes or more into the
 * destination's pages) and check them and the untouched bytes around. */
static void copy_and_check(size_t src_off, size_t dst_off, size_t len)
{
    memset(dst_pages, 0xa5, dst_off + len + GUARD);
    bmpi_copy(dst_pages + dst_off, src_pages + src_off, len);
    ck_assert_msg(memcmp(dst_pages + dst_off, src_pages + src_off, len) == 0,
                  "%zu bytes from page offset %zu to %zu: not copied", len, src_off % PAGE, dst_off % PAGE);
    for (size_t i = dst_off - GUARD; i < dst_off; i++)
        ck_assert_msg(dst_pages[i] == 0xa5, "%zu bytes: byte %zu before the destination written", len,
                      dst_off - i);
    for (size_t i = dst_off + len; i < dst_off + len + GUARD; i++)
        ck_assert_msg(dst_pages[i] == 0xa5, "%zu bytes: byte %zu past the destination written", len,
                      i - dst_off - len);
}

START_TEST(aliased_placements)
{
    /* distance = (dst - src) mod 4 KiB */
    static const struct {
        uintptr_t distance;
        int aliased;
    } cases[] = {{0, 0}, {1, 1}, {16, 1}, {31, 1}, {63, 1}, {64, 0}, {65, 0}, {2048, 0}, {4095, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (uintptr_t src = 0; src < 3 * PAGE; src += 1000) {
            const char *s = (const char *)(uintptr_t)(0x10000 + src);
            const char *d = (const char *)(uintptr_t)(0x50000 + src + cases[i].distance + PAGE);
            ck_assert_msg(bmpi_copy_page_aliased(d, s) == cases[i].aliased,
                          "distance %ju from source %ju: expected aliased=%d", (uintmax_t)cases[i].distance,
                          (uintmax_t)src, cases[i].aliased);
        }
}
END_TEST

START_TEST(every_split_copies_exactly)
{
    static const size_t lens[] = {0,    1,    7,     8,     15,    16,        17,        100,
                                  1983, 1984, 1985,  2112,  4096,  4097,      3 * 1984 + 5,
                                  16u << 10, (16u << 10) + 1, (128u << 10) - 1, 128u << 10,
                                  (128u << 10) + 1, 300u << 10};
    static const size_t src_offs[] = {0, 3, 16, 64, 4000};
    static const size_t distances[] = {0, 1, 16, 31, 63, 64, 100, 4080};
    for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++)
        for (size_t s = 0; s < sizeof src_offs / sizeof src_offs[0]; s++)
            for (size_t d = 0; d < sizeof distances / sizeof distances[0]; d++)
                copy_and_check(src_offs[s], PAGE + src_offs[s] + distances[d], lens[l]);
}
END_TEST

int main(void)
{
    const TTest *const tests[] = {aliased_placements, every_split_copies_exactly};
    return run_suite("copy", setup, teardown, tests, sizeof tests / sizeof tests[0]);
}
