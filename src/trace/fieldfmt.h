/* A field's value by its type alone, raw (stable, for programs) or human: every reader's one
 * wording of numbers, enumerations, errno values, signals, masks and statuses. Below the
 * analyses and the exports alike: what names objects and threads is above (export/textfmt.h). */
#ifndef PTT_FIELDFMT_H
#define PTT_FIELDFMT_H

#include <stddef.h>
#include <stdint.h>

#include "trace/events.h"

/* One field's value: raw or human. Returns buf. */
const char *ptt_fmt_field(char *buf, size_t len, enum ptt_ftype type, uint64_t v, int human);
/* Whether ptt_fmt_field writes a value of this type raw as "0x" and hexadecimal digits (an
 * address, flags, a mask): a writer of the raw form may write it itself. */
int ptt_ftype_raw_hex(enum ptt_ftype t);
/* What a call of entry `in` waits on when the field it is reported by (its object, else its
 * first) holds no object: "set 10,12" for a signal set, "mqd 3" for a queue's descriptor, as
 * view, stat and the hang reports say it. NULL for an object or a thread, which have names. */
const char *ptt_fmt_waits_on(char *buf, size_t len, const struct ptt_evinfo *in, uint64_t v);

#endif
