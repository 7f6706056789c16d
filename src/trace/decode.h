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
/* The record at p, of which avail bytes are in the chunk: its size, with *h as format 1's header
 * would be (id, PTT_EVF_NEST, size) and *t its time, its arguments in d (a call's one record:
 * its duration first, as in format 1.2); 0 when the chunk's records end there (a zero length);
 * -1 when it is malformed. */
int ptt_dec_next(struct ptt_dec *d, const uint8_t *p, size_t avail, struct ptt_event *h,
                 uint64_t *t);

/* When ev is a call's one record: ev becomes its IN, at the entry, and *out its OUT, at the
 * entry plus the duration; returns 1. Else 0, ev untouched (an id this table does not know, or
 * a record of the wrong length, stays an unknown event). */
int ptt_decode_call(struct ptt_ev *ev, struct ptt_ev *out);

#endif
