/* Event text: the raw (machine) and human formats of ptt view, reusable by other commands. */
#ifndef PTT_TEXTFMT_H
#define PTT_TEXTFMT_H

#include <stdio.h>

#include "trace/fieldfmt.h"
#include "trace/reader.h"

/* The one wording of a loss, in ptt trace's summary and ptt view --summary (docs/trace.md
 * quotes it): how many events were dropped, why (why[] by enum ptt_lost_why, NULL: not
 * recorded, a trace of format 1.0), and how many no TRACE_LOST event marks. Returns buf. */
const char *ptt_lost_text(char *buf, size_t len, uint64_t lost, const uint64_t *why,
                          uint64_t unmarked);

struct ptt_names;
struct ptt_tracker;
/* Names to use in the human format (NULL: addresses and numbers). */
void ptt_textfmt_names(const struct ptt_names *names);
/* ptt trace -p's process (INFO keys pid and attached=yes): its first PROCESS_START is said as
 * the attach it is, not as a start (0: none). */
void ptt_textfmt_attached(int32_t pid);
/* The calls and held objects of every thread, fed each event before it is printed (NULL: none):
 * the human sentence of a wait for a rwlock then names the threads reading it. */
void ptt_textfmt_tracker(struct ptt_tracker *t);
/* A thread as every output names it: "NAME (TID)", or "TID" when it has no name. Returns buf. */
const char *ptt_fmt_thread(char *buf, size_t len, const struct ptt_names *n, int32_t pid,
                           int32_t tid);
/* Who holds object (a rwlock of process pid) for reading, as the tracker knows: "held for reading
 * by thread r1 (123)", "... by threads r1 (123), r2 (124)", with ", and N more" when count (the
 * readers the lock recorded, 0: unknown) says more; "" when it knows none. Returns buf. */
const char *ptt_fmt_readers(char *buf, size_t len, const struct ptt_names *n, struct ptt_tracker *t,
                            int32_t pid, uint64_t object, uint64_t count);
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
