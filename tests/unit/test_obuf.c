/* The output buffer (src/util/obuf.c): its integers and fixed-point times are what printf writes,
 * byte for byte (the exports' golden outputs depend on it), and what it buffers reaches the FILE
 * in order, whatever the sizes written. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "src/util/obuf.h"

static const uint64_t edges[] = {0,
                                 1,
                                 9,
                                 10,
                                 99,
                                 100,
                                 999,
                                 1000,
                                 9999,
                                 10000,
                                 99999999,
                                 100000000,
                                 999999999,
                                 1000000000,
                                 4294967295u,
                                 4294967296u,
                                 999999999999999999u,
                                 1000000000000000000u,
                                 9999999999999999999u,
                                 10000000000000000000u,
                                 (uint64_t)INT64_MAX,
                                 (uint64_t)INT64_MAX + 1,
                                 UINT64_MAX};

static void check_one(uint64_t v)
{
    char got[32], want[32];
    got[ptt_fmt_u64(got, v)] = 0;
    snprintf(want, sizeof want, "%" PRIu64, v);
    assert_string_equal(got, want);
    got[ptt_fmt_x64(got, v)] = 0;
    snprintf(want, sizeof want, "%" PRIx64, v);
    assert_string_equal(got, want);
    got[ptt_fmt_i64(got, (int64_t)v)] = 0;
    snprintf(want, sizeof want, "%" PRId64, (int64_t)v);
    assert_string_equal(got, want);
}

static void test_integers(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
        check_one(edges[i]);
        check_one(edges[i] - 1);
    }
    /* Every length, both signs, from a fixed pseudo-random sequence. */
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 200000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        check_one(x >> (i % 64));
    }
}

/* What the buffer wrote, through a FILE, for fn's pieces. */
static char *through(void (*fn)(struct ptt_obuf *), size_t cap)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    struct ptt_obuf b;
    ptt_obuf_open(&b, f, cap);
    fn(&b);
    ptt_obuf_close(&b);
    assert_int_equal(fclose(f), 0);
    return buf;
}

static const int64_t times[] = {0, 1, -1, 999, 1000, -1000, 1234567890123, INT64_MIN, INT64_MAX};

static void times_fixed(struct ptt_obuf *b)
{
    for (size_t i = 0; i < sizeof times / sizeof times[0]; i++) {
        ptt_obuf_fixed(b, times[i], 3);
        ptt_obuf_putc(b, ' ');
        ptt_obuf_fixed(b, times[i], 9);
        ptt_obuf_putc(b, ' ');
        ptt_obuf_u64z(b, (uint64_t)times[i] % 1000000000, 9);
        ptt_obuf_putc(b, '\n');
    }
}

static void test_fixed(void **state)
{
    (void)state;
    char want[2048] = "";
    for (size_t i = 0; i < sizeof times / sizeof times[0]; i++) {
        int64_t t = times[i];
        uint64_t m = t < 0 ? -(uint64_t)t : (uint64_t)t;
        const char *sign = t < 0 ? "-" : "";
        size_t n = strlen(want);
        snprintf(want + n, sizeof want - n,
                 "%s%" PRIu64 ".%03" PRIu64 " %s%" PRIu64 ".%09" PRIu64 " %09" PRIu64 "\n", sign,
                 m / 1000, m % 1000, sign, m / 1000000000, m % 1000000000,
                 (uint64_t)t % 1000000000);
    }
    for (size_t cap = 64; cap <= 4096; cap *= 4) { /* flushed in the middle, or not */
        char *got = through(times_fixed, cap);
        assert_string_equal(got, want);
        free(got);
    }
}

static void pieces(struct ptt_obuf *b)
{
    char big[300];
    memset(big, 'x', sizeof big);
    for (int i = 0; i < 50; i++) {
        ptt_obuf_puts(b, "ab");
        ptt_obuf_write(b, big, (size_t)i * 6); /* up to larger than the buffer */
        ptt_obuf_x64(b, (uint64_t)i);
        ptt_obuf_i64(b, -i);
        ptt_obuf_putc(b, '\n');
    }
}

static void test_order(void **state)
{
    (void)state;
    char *want = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&want, &len);
    for (int i = 0; i < 50; i++)
        fprintf(f, "ab%*s0x%x%d\n", i * 6, "", i, -i);
    fclose(f);
    for (char *p = want; *p; p++)
        if (*p == ' ')
            *p = 'x';
    char *got = through(pieces, 64);
    assert_string_equal(got, want);
    free(got);
    free(want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_integers),
        cmocka_unit_test(test_fixed),
        cmocka_unit_test(test_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
