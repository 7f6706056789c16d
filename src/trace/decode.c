/* The readers' view of the compact encoding and of the records that stand for more than one
 * event (see decode.h). */
#include <stddef.h>
#include <string.h>

#include "trace/decode.h"

int ptt_decode_call(struct ptt_ev *ev, struct ptt_ev *out)
{
    if (!(ev->id & PTT_EV_CALL) || ev->info)
        return 0;
    const struct ptt_evinfo *in = ptt_evinfo((uint16_t)(ev->id & ~PTT_EV_CALL));
    const struct ptt_evinfo *o = in && in->call_out ? ptt_evinfo(in->call_out) : NULL;
    if (!o || ev->nargs != 1 + in->nargs + o->nargs)
        return 0;
    memcpy(out, ev, offsetof(struct ptt_ev, args));
    out->id = o->id;
    out->info = o;
    out->nargs = o->nargs;
    out->ticks = ev->ticks + ev->args[0];
    memcpy(out->args, ev->args + 1 + in->nargs, o->nargs * sizeof ev->args[0]);
    ev->id = in->id;
    ev->info = in;
    ev->nargs = in->nargs;
    memmove(ev->args, ev->args + 1, in->nargs * sizeof ev->args[0]);
    return 1;
}

void ptt_dec_start(struct ptt_dec *d, uint64_t base_ts)
{
    d->base = base_ts;
    memset(d->dict, 0, sizeof d->dict);
}

/* One value (common/codec.h), through the chunk's dictionary: 0 when malformed. */
static int get_value(struct ptt_dec *d, const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    uint8_t c = *(*p)++;
    if (c <= PTT_CODEC_LIT_MAX)
        *v = c;
    else if (c == PTT_CODEC_BIG)
        return ptt_get_varint(p, end, v);
    else if (c >= PTT_CODEC_DEF) {
        if (!ptt_get_varint(p, end, v))
            return 0;
        d->dict[c & (PTT_DICT_SLOTS - 1)] = *v;
    } else if (c >= PTT_CODEC_REF)
        *v = d->dict[c & (PTT_DICT_SLOTS - 1)];
    else
        return 0;
    return 1;
}

int ptt_dec_next(struct ptt_dec *d, const uint8_t *p, size_t avail, struct ptt_event *h,
                 uint64_t *t)
{
    size_t size = ptt_codec_size(p, avail);
    if (!size)
        return avail && p[0] ? -1 : 0;
    const uint8_t *q = ptt_codec_body(p), *end = p + size;
    uint64_t head, x, v;
    if (size > UINT16_MAX || !ptt_get_varint(&q, end, &head) || !(head >> 2) ||
        head >> 2 > PTT_EV_ID_MASK)
        return -1;
    uint16_t id = (uint16_t)(head >> 2);
    d->nargs = 0;
    *h = (struct ptt_event){id, (uint16_t)size, 0};
    if (id == PTT_EV_TRACE_PAD) { /* its bytes mean nothing */
        *t = d->base;
        return (int)size;
    }
    if (!ptt_get_varint(&q, end, &x))
        return -1;
    *t = x = head & PTT_CODEC_ABS ? x : d->base + x;
    if (id & PTT_EV_CALL) {
        if (!ptt_get_varint(&q, end, &v))
            return -1;
        d->args[d->nargs++] = v;
    }
    while (q < end) {
        if (d->nargs == PTT_EVENT_MAX_ARGS || !get_value(d, &q, end, &v))
            return -1;
        d->args[d->nargs++] = v;
    }
    if (head & PTT_CODEC_NEST)
        h->id |= PTT_EVF_NEST;
    else /* a call's one record: its end */
        d->base = x + (id & PTT_EV_CALL ? d->args[0] : 0);
    return (int)size;
}
