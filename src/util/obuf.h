/* An output buffer in front of a FILE, for the outputs that write millions of small pieces
 * (the exports, ptt view's lines): a piece costs a copy into the buffer, not a stdio call, and
 * integers are formatted by hand, not by printf. The buffer goes to the FILE when full, on
 * ptt_obuf_flush, and on ptt_obuf_close. */
#ifndef PTT_OBUF_H
#define PTT_OBUF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct ptt_obuf {
    FILE *f;
    char *buf; /* the caller's (ptt_obuf_on), or owned (ptt_obuf_open) */
    size_t len, cap;
    int owned;
};

/* A buffer of cap bytes (at least 64) in front of f; NULL-free: exits on out of memory. */
void ptt_obuf_open(struct ptt_obuf *b, FILE *f, size_t cap);
/* The same on the caller's buffer (a few hundred bytes on the stack, for one line). */
static inline void ptt_obuf_on(struct ptt_obuf *b, FILE *f, char *buf, size_t cap)
{
    *b = (struct ptt_obuf){f, buf, 0, cap, 0};
}
/* What is buffered, to the FILE (fwrite: its errors show in ferror). */
void ptt_obuf_flush(struct ptt_obuf *b);
/* Flush, and free an owned buffer (not the FILE). */
void ptt_obuf_close(struct ptt_obuf *b);

/* Room for n bytes (n at most cap): flushed first if need be. */
static inline char *ptt_obuf_room(struct ptt_obuf *b, size_t n)
{
    if (b->cap - b->len < n)
        ptt_obuf_flush(b);
    return b->buf + b->len;
}

void ptt_obuf_write_long(struct ptt_obuf *b, const void *p, size_t n);
static inline void ptt_obuf_write(struct ptt_obuf *b, const void *p, size_t n)
{
    if (n > b->cap - b->len) {
        ptt_obuf_write_long(b, p, n);
        return;
    }
    memcpy(b->buf + b->len, p, n);
    b->len += n;
}
static inline void ptt_obuf_puts(struct ptt_obuf *b, const char *s)
{
    ptt_obuf_write(b, s, strlen(s));
}
static inline void ptt_obuf_putc(struct ptt_obuf *b, char c)
{
    if (b->len == b->cap)
        ptt_obuf_flush(b);
    b->buf[b->len++] = c;
}

/* Integers as printf's %PRIu64, %PRId64, %PRIx64 (lower case, no 0x) write them: into p, which
 * has room for 20 bytes (21 for the signed); return the length. */
size_t ptt_fmt_u64(char *p, uint64_t v);
size_t ptt_fmt_i64(char *p, int64_t v);
size_t ptt_fmt_x64(char *p, uint64_t v);

static inline void ptt_obuf_u64(struct ptt_obuf *b, uint64_t v)
{
    char *p = ptt_obuf_room(b, 20);
    b->len += ptt_fmt_u64(p, v);
}
static inline void ptt_obuf_i64(struct ptt_obuf *b, int64_t v)
{
    char *p = ptt_obuf_room(b, 21);
    b->len += ptt_fmt_i64(p, v);
}
/* "0x" and the hexadecimal digits: "0x%" PRIx64. */
static inline void ptt_obuf_x64(struct ptt_obuf *b, uint64_t v)
{
    char *p = ptt_obuf_room(b, 18);
    p[0] = '0';
    p[1] = 'x';
    b->len += 2 + ptt_fmt_x64(p + 2, v);
}
/* v with at least width digits, zeros first ("%0*" PRIu64; width at most 20). */
void ptt_obuf_u64z(struct ptt_obuf *b, uint64_t v, unsigned width);
/* v / 10^decimals with that many decimals ("%" PRIu64 ".%03" PRIu64 for 3; at most 19), '-'
 * first when negative (the magnitude of INT64_MIN too). */
void ptt_obuf_fixed(struct ptt_obuf *b, int64_t v, unsigned decimals);

#endif
