/* The output buffer (obuf.h). */
#include "util/obuf.h"

#include <stdlib.h>

void ptt_obuf_open(struct ptt_obuf *b, FILE *f, size_t cap)
{
    cap = cap < 64 ? 64 : cap;
    char *buf = malloc(cap);
    if (!buf) {
        fprintf(stderr, "ptt: out of memory\n");
        exit(2);
    }
    *b = (struct ptt_obuf){f, buf, 0, cap, 1};
}

void ptt_obuf_flush(struct ptt_obuf *b)
{
    if (b->len)
        fwrite(b->buf, 1, b->len, b->f);
    b->len = 0;
}

void ptt_obuf_close(struct ptt_obuf *b)
{
    ptt_obuf_flush(b);
    if (b->owned)
        free(b->buf);
    b->buf = NULL;
    b->cap = 0;
}

void ptt_obuf_write_long(struct ptt_obuf *b, const void *p, size_t n)
{
    ptt_obuf_flush(b);
    if (n > b->cap) {
        fwrite(p, 1, n, b->f);
        return;
    }
    memcpy(b->buf, p, n);
    b->len = n;
}

/* Two digits at a time: half the divisions. */
static const char pairs[] = "00010203040506070809101112131415161718192021222324252627282930313233"
                            "34353637383940414243444546474849505152535455565758596061626364656667"
                            "6869707172737475767778798081828384858687888990919293949596979899";

/* The number of decimal digits of v: from its bit length (log10(2) is about 1233 / 4096), one
 * comparison to settle. */
static unsigned ndigits(uint64_t v)
{
    static const uint64_t pow10[20] = {1ull,
                                       10ull,
                                       100ull,
                                       1000ull,
                                       10000ull,
                                       100000ull,
                                       1000000ull,
                                       10000000ull,
                                       100000000ull,
                                       1000000000ull,
                                       10000000000ull,
                                       100000000000ull,
                                       1000000000000ull,
                                       10000000000000ull,
                                       100000000000000ull,
                                       1000000000000000ull,
                                       10000000000000000ull,
                                       100000000000000000ull,
                                       1000000000000000000ull,
                                       10000000000000000000ull};
    unsigned n = ((64 - (unsigned)__builtin_clzll(v | 1)) * 1233) >> 12;
    n += n < 20 && v >= pow10[n];
    return n ? n : 1; /* 0 has one */
}

size_t ptt_fmt_u64(char *p, uint64_t v)
{
    unsigned n = ndigits(v), i = n;
    while (v >= 100) { /* from the end, two at a time */
        unsigned k = (unsigned)(v % 100) * 2;
        v /= 100;
        p[--i] = pairs[k + 1];
        p[--i] = pairs[k];
    }
    if (v >= 10) {
        p[--i] = pairs[v * 2 + 1];
        p[--i] = pairs[v * 2];
    } else {
        p[--i] = (char)('0' + v);
    }
    return n;
}

size_t ptt_fmt_i64(char *p, int64_t v)
{
    if (v >= 0)
        return ptt_fmt_u64(p, (uint64_t)v);
    *p = '-';
    return 1 + ptt_fmt_u64(p + 1, -(uint64_t)v);
}

size_t ptt_fmt_x64(char *p, uint64_t v)
{
    char t[16];
    size_t i = sizeof t;
    do {
        t[--i] = "0123456789abcdef"[v & 15];
        v >>= 4;
    } while (v);
    memcpy(p, t + i, sizeof t - i);
    return sizeof t - i;
}

void ptt_obuf_u64z(struct ptt_obuf *b, uint64_t v, unsigned width)
{
    char d[20];
    size_t n = ptt_fmt_u64(d, v);
    char *p = ptt_obuf_room(b, width > n ? width : n);
    size_t z = width > n ? width - n : 0;
    memset(p, '0', z);
    memcpy(p + z, d, n);
    b->len += z + n;
}

void ptt_obuf_fixed(struct ptt_obuf *b, int64_t v, unsigned decimals)
{
    uint64_t m = v < 0 ? -(uint64_t)v : (uint64_t)v, scale = 1;
    for (unsigned i = 0; i < decimals; i++)
        scale *= 10;
    if (v < 0)
        ptt_obuf_putc(b, '-');
    ptt_obuf_u64(b, m / scale);
    if (decimals) {
        ptt_obuf_putc(b, '.');
        ptt_obuf_u64z(b, m % scale, decimals);
    }
}
