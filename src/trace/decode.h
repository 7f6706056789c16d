/* What the readers make of the records of a chunk beyond format 1's events (docs/format.md): the
 * compact encoding of format 2 (common/codec.h), and a call recorded as one record (PTT_CALL in
 * common/events.def), which stands for its IN and OUT events. */
#ifndef PTT_DECODE_H
#define PTT_DECODE_H

#include "../../common/codec.h"
#include "trace/reader.h"

/* A stream's state in a chunk of the compact encoding, and the arguments of its last record. */
struct ptt_dec {
    uint64_t base;
    uint64_t dict[PTT_DICT_SLOTS];
    unsigned nargs;
    uint64_t args[PTT_EVENT_MAX_ARGS];
};

/* At the start of a chunk whose base time is base_ts. */
void ptt_dec_start(struct ptt_dec *d, uint64_t base_ts);
/* A varint (common/codec.h), most of one byte: 0 when malformed. */
static inline int ptt_dec_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    const uint8_t *q = *p;
    if (__builtin_expect(q < end && q[0] < 0x80, 1)) {
        *v = q[0];
        *p = q + 1;
        return 1;
    }
    if (q + 1 < end && q[1] < 0x80) { /* the heads of most events */
        *v = (uint64_t)(q[0] & 0x7f) | (uint64_t)q[1] << 7;
        *p = q + 2;
        return 1;
    }
    return ptt_get_varint(p, end, v);
}

/* One value (common/codec.h), through the chunk's dictionary (*p < end): 0 when malformed. A
 * writer never puts a literal's value (0..0x5f) in a slot: a slot of 0 is one never defined, and
 * a use of it, or a definition of such a value, is damage (never a value 0). */
static inline int ptt_dec_value(struct ptt_dec *d, const uint8_t **p, const uint8_t *end,
                                uint64_t *v)
{
    uint8_t c = *(*p)++;
    if (c <= PTT_CODEC_LIT_MAX) {
        *v = c;
    } else if (c >= PTT_CODEC_REF) {
        if (c < PTT_CODEC_DEF) {
            if (!(*v = d->dict[c & (PTT_DICT_SLOTS - 1)]))
                return 0;
        } else {
            if (!ptt_dec_varint(p, end, v) || *v <= PTT_CODEC_LIT_MAX)
                return 0;
            d->dict[c & (PTT_DICT_SLOTS - 1)] = *v;
        }
    } else if (c == PTT_CODEC_BIG) {
        return ptt_get_varint(p, end, v);
    } else {
        return 0;
    }
    return 1;
}

/* The record at p, of which avail bytes are in the chunk: its size, with *h as format 1's header
 * would be (id, PTT_EVF_NEST, size) and *t its time, its arguments in d (a call's one record:
 * its duration first, as in format 1's encoding); 0 when the chunk's records end there (a zero
 * length); -1 when it is malformed. Inline: the readers decode every record through it. */
static inline __attribute__((always_inline)) int
ptt_dec_next(struct ptt_dec *d, const uint8_t *p, size_t avail, struct ptt_event *h, uint64_t *t)
{
    size_t size = ptt_codec_size(p, avail);
    if (!size)
        return avail && p[0] ? -1 : 0;
    const uint8_t *q = ptt_codec_body(p), *end = p + size;
    uint64_t head, x, v;
    if (size > UINT16_MAX || !ptt_dec_varint(&q, end, &head) || !(head >> 2) ||
        head >> 2 > PTT_EV_ID_MASK)
        return -1;
    uint16_t id = (uint16_t)(head >> 2);
    unsigned n = 0;
    *h = (struct ptt_event){id, (uint16_t)size, 0};
    if (id == PTT_EV_TRACE_PAD) { /* its bytes mean nothing */
        d->nargs = 0;
        *t = d->base;
        return (int)size;
    }
    if (!ptt_dec_varint(&q, end, &x))
        return -1;
    *t = x = head & PTT_CODEC_ABS ? x : d->base + x;
    if (id & PTT_EV_CALL) {
        if (!ptt_dec_varint(&q, end, &v))
            return -1;
        d->args[n++] = v;
    }
    while (q < end) {
        if (n == PTT_EVENT_MAX_ARGS || !ptt_dec_value(d, &q, end, &v))
            return -1;
        d->args[n++] = v;
    }
    d->nargs = n;
    if (head & PTT_CODEC_NEST)
        h->id |= PTT_EVF_NEST;
    else /* a call's one record: its end */
        d->base = x + (id & PTT_EV_CALL ? d->args[0] : 0);
    return (int)size;
}

/* When ev is a call's one record: ev becomes its IN, at the entry, and *out its OUT, at the
 * entry plus the duration; returns 1. Else 0, ev untouched (an id this table does not know, or
 * a record of the wrong length, stays an unknown event). */
int ptt_decode_call(struct ptt_ev *ev, struct ptt_ev *out);

#endif
