/* The display width of names (src/util/width.c): what ptt stat pads its columns by. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/width.h"

static void widths(void **state)
{
    (void)state;
    assert_int_equal(ptt_display_width(""), 0);
    assert_int_equal(ptt_display_width("queue_lock"), 10);
    assert_int_equal(ptt_display_width("caf\xc3\xa9"), 4);      /* é, one code point */
    assert_int_equal(ptt_display_width("cafe\xcc\x81"), 4);     /* e + combining acute */
    assert_int_equal(ptt_display_width("\xe9\x8e\x96"), 2);     /* 鎖, wide */
    assert_int_equal(ptt_display_width("\xef\xbc\xa1"), 2);     /* Ａ, fullwidth */
    assert_int_equal(ptt_display_width("\xf0\x9f\x94\x92"), 2); /* 🔒 */
    assert_int_equal(ptt_display_width("a\u200Bb"), 2);         /* zero width space */
    assert_int_equal(ptt_display_width("bad\377name"), 8);      /* one replacement */
    assert_int_equal(ptt_display_width("\xe9\x8e"), 2);         /* cut short: 2 bytes, 2 */
    assert_int_equal(ptt_display_width("\xc0\xaf"), 2);         /* overlong */
    assert_int_equal(ptt_display_width("\xed\xa0\x80"), 3);     /* a surrogate */
}

static void padding(void **state)
{
    (void)state;
    char buf[64];
    FILE *f = fmemopen(buf, sizeof buf, "w");
    ptt_put_padded(f, "\xe9\x8e\x96", 5); /* 2 columns + 3 spaces */
    ptt_put_padded(f, "toolong", 3);
    fclose(f);
    assert_string_equal(buf, "\xe9\x8e\x96   toolong");
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(widths), cmocka_unit_test(padding)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
