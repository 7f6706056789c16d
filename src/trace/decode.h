/* What the readers make of a record beyond its bytes (docs/format.md): a call recorded as one
 * record (PTT_CALL in common/events.def) stands for its IN and OUT events. */
#ifndef PTT_DECODE_H
#define PTT_DECODE_H

#include "trace/reader.h"

/* When ev is a call's one record: ev becomes its IN, at the entry, and *out its OUT, at the
 * entry plus the duration; returns 1. Else 0, ev untouched (an id this table does not know, or
 * a record of the wrong length, stays an unknown event). */
int ptt_decode_call(struct ptt_ev *ev, struct ptt_ev *out);

#endif
