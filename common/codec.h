/* The compact encoding of the records in a sub-buffer, a chunk of format 2 (docs/format.md):
 * what libptt writes, what the drain walks and what the readers decode. Little endian.
 *
 *   record := len [len16] head time [duration] value*
 *   len     u8: the bytes after it (1..254); 255: a u16 follows, and counts the bytes after it;
 *           0: no record (a slot not yet written, or the end of the chunk's records)
 *   head    varint: id << 2 | NEST | ABS (id: the event, or a call's one record: IN | 0x80)
 *   time    varint: with ABS the time stamp, else the ticks since the base
 *   duration varint, a call's one record only
 *   value   one per argument, to the record's end:
 *           0x00..0x5f  the value itself
 *           0x60        a varint follows: the value
 *           0x80 | k    the value that dictionary slot k holds (k < 64)
 *           0xc0 | k    a varint follows: the value, which slot k holds from now on
 *
 * The base starts at the chunk's base_ts; a record without NEST moves it to its time (a call's
 * one record: to its time plus its duration, the call's end). The dictionary, 64 slots, starts
 * empty (zeros) in every chunk. TRACE_PAD records are padding. A record is at most
 * PTT_CODEC_MAX bytes. Varints are LEB128: 7 bits a byte, low first, the top bit set on every
 * byte but the last; at most 10 bytes. */
#ifndef PTT_CODEC_H
#define PTT_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "event.h"

#define PTT_CODEC_NEST 1u /* a signal handler's, inside another event: does not move the base */
#define PTT_CODEC_ABS 2u  /* the time is a time stamp, not a delta */
#define PTT_CODEC_LIT_MAX 0x5fu
#define PTT_CODEC_BIG 0x60u
#define PTT_CODEC_REF 0x80u
#define PTT_CODEC_DEF 0xc0u
#define PTT_DICT_SLOTS 64
#define PTT_CODEC_LONG 255 /* len: a u16 length follows */
/* len, len16, head, time, duration, and each argument as 0x60 or a slot and a varint */
#define PTT_CODEC_MAX (3 + 3 + 10 + 10 + 11 * PTT_EVENT_MAX_ARGS)

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
               "the encoders store several bytes of a record at once, low byte first");

static inline uint8_t *ptt_put_varint(uint8_t *q, uint64_t v)
{
    if (__builtin_expect(v < 0x4000, 1)) { /* heads, deltas and durations mostly: no loop */
        if (v < 0x80) {
            *q = (uint8_t)v;
            return q + 1;
        }
        uint16_t w = (uint16_t)((v & 0x7f) | 0x80 | (v >> 7) << 8); /* one store, not two */
        __builtin_memcpy(q, &w, 2);
        return q + 2;
    }
    while (v >= 0x80) {
        *q++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *q++ = (uint8_t)v;
    return q;
}

/* A record's head without flags (id << 2) as the bytes of its varint (ids are below 2^14: 3 at
 * most), their number in the top byte: for an id known at compile time, a constant. */
static inline uint32_t ptt_head_word(uint16_t id)
{
    uint32_t v = (uint32_t)id << 2;
    if (v < 0x80)
        return v | 1u << 24;
    if (v < 0x4000)
        return (v & 0x7f) | 0x80 | (v >> 7) << 8 | 2u << 24;
    return (v & 0x7f) | 0x80 | (((v >> 7) & 0x7f) | 0x80) << 8 | (v >> 14) << 16 | 3u << 24;
}

/* The varint at *p, before end: 1 and *p past it, or 0 when it does not end there or has more
 * than 64 bits. */
static inline int ptt_get_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    uint64_t x = 0;
    for (unsigned s = 0; *p < end && s < 64; s += 7) {
        uint8_t b = *(*p)++;
        if (s == 63 && b > 1)
            return 0;
        x |= (uint64_t)(b & 0x7f) << s;
        if (!(b & 0x80)) {
            *v = x;
            return 1;
        }
    }
    return 0;
}

/* The slot of the dictionary a value goes to. */
static inline unsigned ptt_dict_slot(uint64_t v)
{
    return (unsigned)((v * 0x9e3779b97f4a7c15ull) >> 58);
}

/* A value that no dictionary may hold (none is used, or the reader could not follow it). */
static inline uint8_t *ptt_put_lit(uint8_t *q, uint64_t v)
{
    if (v <= PTT_CODEC_LIT_MAX) {
        *q++ = (uint8_t)v;
        return q;
    }
    *q++ = PTT_CODEC_BIG;
    return ptt_put_varint(q, v);
}

/* A value through the dictionary dict (the writer's copy of what the reader's holds): in the
 * slot of its hash or the one next to it (two values of one hash do not evict each other). */
static inline uint8_t *ptt_put_val(uint8_t *q, uint64_t v, uint64_t *dict)
{
    if (v <= PTT_CODEC_LIT_MAX) {
        *q++ = (uint8_t)v;
        return q;
    }
    unsigned k = ptt_dict_slot(v);
    if (__builtin_expect(dict[k] == v, 1)) {
        *q++ = (uint8_t)(PTT_CODEC_REF | k);
        return q;
    }
    if (dict[k ^ 1] == v) {
        *q++ = (uint8_t)(PTT_CODEC_REF | (k ^ 1));
        return q;
    }
    if (dict[k] && !dict[k ^ 1]) /* 0 is no value's: a slot never used */
        k ^= 1;
    dict[k] = v;
    *q++ = (uint8_t)(PTT_CODEC_DEF | k);
    return ptt_put_varint(q, v);
}

/* The body encoded from body to q, the record is made whole: its length put before it (body
 * starts 3 bytes into the buffer). Returns where the record starts; *size its bytes. */
static inline uint8_t *ptt_codec_close(uint8_t *body, const uint8_t *q, uintptr_t *size)
{
    uintptr_t n = (uintptr_t)(q - body);
    if (n < PTT_CODEC_LONG) {
        body[-1] = (uint8_t)n;
        *size = n + 1;
        return body - 1;
    }
    body[-3] = PTT_CODEC_LONG;
    body[-2] = (uint8_t)n;
    body[-1] = (uint8_t)(n >> 8);
    *size = n + 3;
    return body - 3;
}

/* The bytes of the record at p, of which avail are there: 0 when there is none (a zero length)
 * or it does not fit. */
static inline size_t ptt_codec_size(const uint8_t *p, size_t avail)
{
    if (!avail || !p[0])
        return 0;
    size_t n = p[0] != PTT_CODEC_LONG ? (size_t)p[0] + 1
               : avail >= 3           ? 3 + ((size_t)p[1] | (size_t)p[2] << 8)
                                      : avail + 1;
    return n <= avail ? n : 0;
}

/* Where the body of a whole record at p starts. */
static inline const uint8_t *ptt_codec_body(const uint8_t *p)
{
    return p + (p[0] == PTT_CODEC_LONG ? 3 : 1);
}

#endif
