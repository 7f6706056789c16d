/* The JSON string writer (src/util/json.c): valid UTF-8 copied, each ill-formed part as one U+FFFD,
 * control characters, quotes and backslashes escaped, the HTML-safe variant, and the bound on
 * the bytes read. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "src/util/json.h"

#define FFFD "\xef\xbf\xbd"

/* What ptt_json_strn writes for s (n bytes at most), as a NUL-terminated string. */
static char *written(const char *s, size_t n, unsigned flags)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    ptt_json_strn(f, s, n, flags);
    assert_int_equal(fclose(f), 0);
    return buf;
}

static void check(const char *in, const char *want)
{
    char *got = written(in, SIZE_MAX, 0);
    if (strcmp(got, want))
        fail_msg("\"%s\": got %s, want %s", in, got, want);
    free(got);
    /* ptt_json_str is the same, unbounded and without flags. */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    ptt_json_str(f, in);
    assert_int_equal(fclose(f), 0);
    assert_string_equal(buf, want);
    free(buf);
}

static void test_ascii(void **state)
{
    (void)state;
    check("", "\"\"");
    check("mutex queue_lock", "\"mutex queue_lock\"");
    check("a/b <x> & 'y' ~", "\"a/b <x> & 'y' ~\"");    /* '/' stays */
    check("del\x7f c1\xc2\x9b\xc2\x80\xc2\x9f\xc2\xa0", /* DEL, C1 escaped; U+00A0 is not C1 */
          "\"del\\u007f c1\\u009b\\u0080\\u009f\xc2\xa0\"");
    check("q\"b\\", "\"q\\\"b\\\\\"");
}

static void test_utf8_copied(void **state)
{
    (void)state;
    check("w\xc3\xb6rker-\xc3\xbc", "\"w\xc3\xb6rker-\xc3\xbc\"");     /* 2 bytes */
    check("\xe7\xba\xbf\xe7\xa8\x8b", "\"\xe7\xba\xbf\xe7\xa8\x8b\""); /* 3 bytes */
    check("\xf0\x9f\x94\x92", "\"\xf0\x9f\x94\x92\"");                 /* 4 bytes */
    check("\xc2\xa0\xdf\xbf", "\"\xc2\xa0\xdf\xbf\"");                 /* U+00A0, U+07FF */
    check("\xe0\xa0\x80\xef\xbf\xbf", "\"\xe0\xa0\x80\xef\xbf\xbf\""); /* U+0800, U+FFFF */
    check("\xed\x9f\xbf\xee\x80\x80", "\"\xed\x9f\xbf\xee\x80\x80\""); /* around surrogates */
    check("\xf0\x90\x80\x80\xf4\x8f\xbf\xbf", "\"\xf0\x90\x80\x80\xf4\x8f\xbf\xbf\""); /* planes */
}

static void test_invalid_replaced(void **state)
{
    (void)state;
    check("lone\x80"
          "c",
          "\"lone" FFFD "c\"");              /* a continuation byte alone */
    check("\xbf\x80", "\"" FFFD FFFD "\"");  /* two of them: two */
    check("cut\xe4\xb8", "\"cut" FFFD "\""); /* cut by the end: one */
    check("cut\xf0\x9f\x94", "\"cut" FFFD "\"");
    check("cut\xc3", "\"cut" FFFD "\"");
    check("cut\xe4\xb8-x", "\"cut" FFFD "-x\"");               /* cut by ASCII */
    check("\xe4\xb8\xe4\xb8\x80", "\"" FFFD "\xe4\xb8\x80\""); /* cut by a lead byte */
    check("\xc0\xaf", "\"" FFFD FFFD "\"");                    /* overlong '/', 2 bytes */
    check("\xc1\xbf", "\"" FFFD FFFD "\"");
    check("\xe0\x80\xaf", "\"" FFFD FFFD FFFD "\"");          /* overlong, 3 bytes */
    check("\xf0\x80\x80\xaf", "\"" FFFD FFFD FFFD FFFD "\""); /* overlong, 4 bytes */
    check("\xed\xa0\x80", "\"" FFFD FFFD FFFD "\"");          /* U+D800 */
    check("\xed\xbf\xbf", "\"" FFFD FFFD FFFD "\"");          /* U+DFFF */
    check("\xf4\x90\x80\x80", "\"" FFFD FFFD FFFD FFFD "\""); /* U+110000 */
    check("\xf5\x80\x80\x80", "\"" FFFD FFFD FFFD FFFD "\""); /* never a lead byte */
    check("ff\xff-fe\xfe", "\"ff" FFFD "-fe" FFFD "\"");
}

static void test_controls_escaped(void **state)
{
    (void)state;
    check("\b\f\n\r\t", "\"\\b\\f\\n\\r\\t\"");
    check("\x01\x07\x1b\x1f", "\"\\u0001\\u0007\\u001b\\u001f\"");
    check("\xc3\n", "\"" FFFD "\\n\""); /* a control character cuts a sequence too */
}

static void test_html(void **state)
{
    (void)state;
    char *got = written("</script><!--&\x7f\xc3\xa9\"", SIZE_MAX, PTT_JSON_HTML);
    assert_string_equal(got, "\"\\u003c/script\\u003e\\u003c!--\\u0026\\u007f\xc3\xa9\\\"\"");
    free(got);
}

/* n bounds what is read: a string in an event's words need not end with a NUL, and a sequence
 * cut by the bound is replaced, never completed from beyond it. */
static void test_bound(void **state)
{
    (void)state;
    char *got = written("abc", 2, 0);
    assert_string_equal(got, "\"ab\"");
    free(got);
    got = written("x\xe7\xba\xbf", 3, 0);
    assert_string_equal(got, "\"x" FFFD "\"");
    free(got);
    got = written("a\0b", 3, 0); /* the NUL ends it */
    assert_string_equal(got, "\"a\"");
    free(got);
    got = written("", 0, 0);
    assert_string_equal(got, "\"\"");
    free(got);
}

/* UTF-8 decoded the other way round (the code point, then its range), to check the writer's
 * output with something else than the writer's own test: the length of the valid sequence at p,
 * or 0. */
static size_t decode(const unsigned char *p, size_t n)
{
    static const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
    unsigned c = p[0];
    if (c < 0x80)
        return 1;
    size_t len = c >= 0xf8 ? 0 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 0;
    if (!len || len > n)
        return 0;
    uint32_t cp = c & (0x7fu >> len);
    for (size_t k = 1; k < len; k++) {
        if ((p[k] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (p[k] & 0x3f);
    }
    if (cp < min[len] || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
        return 0;
    return len;
}

/* Well-formed UTF-8 with no raw control character (C0, DEL, or C1: U+0080..U+009F). */
static int well_formed(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        size_t len = decode(p + i, n - i);
        if (!len || p[i] < 0x20 || p[i] == 0x7f || (p[i] == 0xc2 && p[i + 1] < 0xa0))
            return 0;
        i += len;
    }
    return 1;
}

/* Every string of two bytes, alone and followed by a continuation byte (the lowest, the
 * highest), a byte that is neither, or an ASCII letter: the output is well-formed, and a valid
 * input without '"' or '\\' comes back whole. */
static void test_all_short(void **state)
{
    (void)state;
    for (unsigned a = 1; a < 256; a++) {
        for (unsigned b = 0; b < 256; b++) {
            static const unsigned char third[] = {0, 0x80, 0xbf, 0xc0, 'z'};
            for (unsigned k = 0; k < sizeof third; k++) {
                unsigned c = third[k];
                char in[4] = {(char)a, (char)b, (char)c, 0};
                char *got = written(in, SIZE_MAX, 0);
                if (!well_formed(got))
                    fail_msg("%02x %02x %02x: ill-formed output %s", a, b, c, got);
                size_t n = strlen(in);
                int plain = well_formed(in) && !strpbrk(in, "\"\\");
                if (plain && (strlen(got) != n + 2 || memcmp(got + 1, in, n)))
                    fail_msg("%02x %02x %02x: valid, yet written as %s", a, b, c, got);
                free(got);
            }
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ascii),
        cmocka_unit_test(test_utf8_copied),
        cmocka_unit_test(test_invalid_replaced),
        cmocka_unit_test(test_controls_escaped),
        cmocka_unit_test(test_html),
        cmocka_unit_test(test_bound),
        cmocka_unit_test(test_all_short),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
