/* The JSON string writer (json.h). */
#include "util/json.h"

#include <stdint.h>
#include <string.h>

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

static void escape(struct ptt_obuf *b, unsigned c)
{
    const char *e = c == '"'    ? "\\\""
                    : c == '\\' ? "\\\\"
                    : c == '\b' ? "\\b"
                    : c == '\f' ? "\\f"
                    : c == '\n' ? "\\n"
                    : c == '\r' ? "\\r"
                    : c == '\t' ? "\\t"
                                : NULL;
    if (e) {
        ptt_obuf_puts(b, e);
        return;
    }
    char *p = ptt_obuf_room(b, 6);
    memcpy(p, "\\u00", 4);
    p[4] = "0123456789abcdef"[c >> 4];
    p[5] = "0123456789abcdef"[c & 15];
    b->len += 6;
}

/* Whether byte c is written as it is: printable ASCII, not a quote nor a backslash nor DEL (nor,
 * with PTT_JSON_HTML, '<', '>', '&'); by table, [html][c]: every byte of every string comes
 * here. */
static unsigned char plain[2][256];

static void plain_init(void)
{
    for (unsigned c = 0x20; c < 0x7f; c++) {
        plain[0][c] = c != '"' && c != '\\';
        plain[1][c] = plain[0][c] && c != '<' && c != '>' && c != '&';
    }
}

void ptt_json_put(struct ptt_obuf *b, const char *s, size_t n, unsigned flags)
{
    const unsigned char *p = (const unsigned char *)s;
    const unsigned char *ok = plain[(flags & PTT_JSON_HTML) != 0];
    size_t i = 0;
    if (!plain[0]['a'])
        plain_init();
    ptt_obuf_putc(b, '"');
    while (i < n && p[i]) {
        size_t run = i;
        while (run < n && ok[p[run]]) /* NUL is not plain */
            run++;
        if (run > i) { /* the plain bytes, at once */
            ptt_obuf_write(b, p + i, run - i);
            i = run;
            continue;
        }
        unsigned c = p[i];
        if (c < 0x20 || c == '"' || c == '\\' || c == 0x7f ||
            ((flags & PTT_JSON_HTML) && (c == '<' || c == '>' || c == '&'))) {
            escape(b, c);
            i++;
            continue;
        }
        if (c == 0xc2 && i + 1 < n && p[i + 1] >= 0x80 && p[i + 1] < 0xa0) {
            escape(b, p[i + 1]); /* a C1 control, U+0080..U+009F: never raw to a terminal */
            i += 2;
            continue;
        }
        size_t bad, len = ptt_utf8_seq(p + i, n - i, &bad);
        if (len) {
            ptt_obuf_write(b, p + i, len);
            i += len;
        } else {
            ptt_obuf_puts(b, "\xef\xbf\xbd"); /* U+FFFD */
            i += bad;
        }
    }
    ptt_obuf_putc(b, '"');
}

void ptt_json_strn(FILE *f, const char *s, size_t n, unsigned flags)
{
    char buf[512];
    struct ptt_obuf b;
    ptt_obuf_on(&b, f, buf, sizeof buf);
    ptt_json_put(&b, s, n, flags);
    ptt_obuf_flush(&b);
}

void ptt_json_str(FILE *f, const char *s)
{
    ptt_json_strn(f, s, SIZE_MAX, 0);
}
