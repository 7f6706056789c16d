/* Reading ahead on a second thread: the reader's merge and decoding (about half of what a
 * reader such as ptt stat spends per event) run beside the command's own work. One producer
 * thread fills batches with copies of the events in order; the command takes them from the
 * batches. What the command sees is what it would see without the thread: the same events in the
 * same order, and the reader's error only once the event read with it was taken. */
#ifndef PTT_READAHEAD_H
#define PTT_READAHEAD_H

#include "trace/reader.h"

struct ptt_readahead;

/* The producer's way to the events: get(r) until NULL; *err, the reader's first problem, is
 * written by the producer only, once, before the event it was met with is published. */
typedef const struct ptt_ev *(*ptt_readahead_fn)(struct ptt_reader *r);

/* Whether to read ahead: PTT_READ_AHEAD "0" never, "1" always; else when the command asks for it
 * (by default) and has more than one CPU to run on. */
int ptt_readahead_wanted(int asked);
/* Start the thread (NULL when it cannot be had: the caller reads on its own). */
struct ptt_readahead *ptt_readahead_start(struct ptt_reader *r, ptt_readahead_fn get,
                                          const char *err);
/* The next event, valid until the next call; NULL at the end. */
const struct ptt_ev *ptt_readahead_get(struct ptt_readahead *ra);
/* Whether the reader's error was met by the events taken so far (or the end was reached). */
int ptt_readahead_err_seen(const struct ptt_readahead *ra);
/* Stop the producer, wherever it is, and free everything. */
void ptt_readahead_stop(struct ptt_readahead *ra);

#endif
