/* The JSON string writer (json.h). */
#include "util/json.h"

#include <stdint.h>

size_t ptt_utf8_seq(const unsigned char *p, size_t n, size_t *bad)
{
    unsigned c = p[0];
    *bad = 1;
    if (c < 0x80)
        return 1;
    /* The sequence's length and the range of its second byte: no overlong form (0xe0, 0xf0),
     * no surrogate (0xed), nothing above U+10FFFF (0xf4). */
    size_t len = 0;
    unsigned lo = 0x80, hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        lo = c == 0xe0 ? 0xa0 : 0x80;
        hi = c == 0xed ? 0x9f : 0xbf;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        lo = c == 0xf0 ? 0x90 : 0x80;
        hi = c == 0xf4 ? 0x8f : 0xbf;
    } else {
        return 0; /* a continuation byte, 0xc0, 0xc1, 0xf5-0xff: never a lead byte */
    }
    size_t k = 1;
    for (; k < len && k < n; k++) {
        unsigned b = p[k];
        if (k == 1 ? b < lo || b > hi : b < 0x80 || b > 0xbf)
            break;
    }
    if (k == len)
        return len;
    *bad = k; /* the lead byte and the continuation bytes that fit: one replacement */
    return 0;
}

static void escape(FILE *f, unsigned c)
{
    const char *e = c == '"'    ? "\\\""
                    : c == '\\' ? "\\\\"
                    : c == '\b' ? "\\b"
                    : c == '\f' ? "\\f"
                    : c == '\n' ? "\\n"
                    : c == '\r' ? "\\r"
                    : c == '\t' ? "\\t"
                                : NULL;
    if (e)
        fputs(e, f);
    else
        fprintf(f, "\\u%04x", c);
}

void ptt_json_strn(FILE *f, const char *s, size_t n, unsigned flags)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    fputc('"', f);
    while (i < n && p[i]) {
        unsigned c = p[i];
        if (c < 0x20 || c == '"' || c == '\\' ||
            ((flags & PTT_JSON_HTML) && (c == '<' || c == '>' || c == '&' || c == 0x7f))) {
            escape(f, c);
            i++;
            continue;
        }
        size_t bad, len = ptt_utf8_seq(p + i, n - i, &bad);
        if (len) {
            fwrite(p + i, 1, len, f);
            i += len;
        } else {
            fputs("\xef\xbf\xbd", f); /* U+FFFD */
            i += bad;
        }
    }
    fputc('"', f);
}

void ptt_json_str(FILE *f, const char *s)
{
    ptt_json_strn(f, s, SIZE_MAX, 0);
}
