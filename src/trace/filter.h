/* Event filters of ptt view (and the other readers of a trace): --pid, --tid, --object,
 * --event, --kind, --from, --to. Options combine (all must hold); the values of one option are
 * alternatives (comma-separated). */
#ifndef PTT_FILTER_H
#define PTT_FILTER_H

#include <stdint.h>

#include "trace/reader.h"

struct ptt_filter;
struct ptt_names;

struct ptt_filter *ptt_filter_new(void);
/* Add a criterion from a command-line option (pid, tid, object, event, kind, from, to); -1 with
 * a message in err for a bad value. */
int ptt_filter_add(struct ptt_filter *f, const char *what, const char *value, char *err,
                   size_t errlen);
/* Names (threads, objects) the filters may use; may be NULL. */
void ptt_filter_names(struct ptt_filter *f, const struct ptt_names *names);
int ptt_filter_match(const struct ptt_filter *f, const struct ptt_ev *ev);
/* Whether nothing after time ns can match (--to passed): readers may stop. */
int ptt_filter_done(const struct ptt_filter *f, int64_t ns);
void ptt_filter_free(struct ptt_filter *f);

#endif
