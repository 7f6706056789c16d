/* Event text: the raw (machine) and human formats of ptt view, reusable by other commands. */
#ifndef PTT_TEXTFMT_H
#define PTT_TEXTFMT_H

#include <stdio.h>

#include "trace/reader.h"

/* The one wording of a loss, in ptt trace's summary and ptt view --summary (docs/trace.md
 * quotes it): how many events were dropped, why (why[] by enum ptt_lost_why, NULL: not
 * recorded, a trace of format 1.0), and how many no TRACE_LOST event marks. Returns buf. */
const char *ptt_lost_text(char *buf, size_t len, uint64_t lost, const uint64_t *why,
                          uint64_t unmarked);

struct ptt_names;
/* Names to use in the human format (NULL: addresses and numbers). */
void ptt_textfmt_names(const struct ptt_names *names);
/* One field's value: raw (stable, for programs) or human. Returns buf. */
const char *ptt_fmt_field(char *buf, size_t len, enum ptt_ftype type, uint64_t v, int human);
/* Whether the event carries field i of its table entry. */
int ptt_ev_has_field(const struct ptt_ev *ev, unsigned i);
/* Field i of a known event (ev->info set), strings included. */
const char *ptt_fmt_ev_field(char *buf, size_t len, const struct ptt_ev *ev, unsigned i, int human);
/* "TIME:EVENT : PID : TID : ARG : ARG ..." */
void ptt_print_raw(FILE *f, const struct ptt_ev *ev);
/* "TIME : Pid P, Thread T <sentence>." */
void ptt_print_human(FILE *f, const struct ptt_ev *ev);
/* One JSON object per line: time, event, class, kind, pid, tid, thread (its name), fields (by
 * name: numbers, or strings for addresses and strings), names (of the fields that have one). */
void ptt_print_json(FILE *f, const struct ptt_ev *ev);
/* The event's name, or UNKNOWN_0xID for an id this ptt does not know. */
const char *ptt_ev_name(const struct ptt_ev *ev, char *buf, size_t len);

#endif
