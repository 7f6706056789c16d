/* Event filters of ptt view (and the other readers of a trace): --pid, --tid, --object,
 * --event, --kind, --from, --to. Options combine (all must hold); the values of one option are
 * alternatives (comma-separated). */
#ifndef PTT_FILTER_H
#define PTT_FILTER_H

#include <getopt.h>
#include <stdint.h>

#include "trace/reader.h"

struct ptt_filter;
struct ptt_names;

/* The options, the same in every command that reads a trace: getopt_long entries whose values
 * ptt_filter_option takes. */
enum {
    PTT_FOPT_PID = 0x1f00,
    PTT_FOPT_TID,
    PTT_FOPT_OBJECT,
    PTT_FOPT_EVENT,
    PTT_FOPT_KIND,
    PTT_FOPT_FROM,
    PTT_FOPT_TO
};
/* Laid out by hand: clang-format 14 breaks a braced list in a macro apart. */
// clang-format off
#define PTT_FILTER_OPTIONS                                                                         \
    {"pid", required_argument, 0, PTT_FOPT_PID}, {"tid", required_argument, 0, PTT_FOPT_TID},      \
        {"object", required_argument, 0, PTT_FOPT_OBJECT},                                         \
        {"event", required_argument, 0, PTT_FOPT_EVENT},                                           \
        {"from", required_argument, 0, PTT_FOPT_FROM}, {"to", required_argument, 0, PTT_FOPT_TO}
/* --kind: every reader but ptt stat, whose --kind (the objects shown) is its own. */
#define PTT_FILTER_KIND_OPTION {"kind", required_argument, 0, PTT_FOPT_KIND}
// clang-format on

struct ptt_filter *ptt_filter_new(void);
/* c, as getopt_long returned it: 1 when it is a filter option, its value added to f; -1 for a
 * bad value (one line on stderr, "ptt CMD: ..."); 0 for another option. */
int ptt_filter_option(struct ptt_filter *f, const char *cmd, int c, const char *arg);
/* Whether any option was given; the time span in ns (to: -1 for none). */
int ptt_filter_any(const struct ptt_filter *f);
int64_t ptt_filter_from(const struct ptt_filter *f);
/* Whether some events of a thread may be left out (--tid, --object, --event, --kind). */
int ptt_filter_selects(const struct ptt_filter *f);
int64_t ptt_filter_to(const struct ptt_filter *f);
/* Whether ev passes every criterion but the time span. */
int ptt_filter_select(const struct ptt_filter *f, const struct ptt_ev *ev);
/* The events a reader that skips what comes before --from still delivers: those that name
 * processes, threads, modules and the objects initialised (the names of docs/names.md). */
int ptt_filter_keep_before(uint16_t id);
/* ptt_reader_open with the span of f: when skip, the events before --from are not decoded but
 * those ptt_filter_keep_before wants (for a command that needs no state from before). */
struct ptt_reader *ptt_filter_open(const struct ptt_filter *f, const char *path, int skip,
                                   char *err, size_t errlen);
/* Add a criterion from a command-line option (pid, tid, object, event, kind, from, to); -1 with
 * a message in err for a bad value. */
int ptt_filter_add(struct ptt_filter *f, const char *what, const char *value, char *err,
                   size_t errlen);
/* Names (threads, objects) the filters may use; may be NULL. */
void ptt_filter_names(struct ptt_filter *f, const struct ptt_names *names);
int ptt_filter_match(const struct ptt_filter *f, const struct ptt_ev *ev);
/* Whether nothing after time ns can match (--to passed): readers may stop. */
int ptt_filter_done(const struct ptt_filter *f, int64_t ns);
/* One line on stderr ("ptt CMD: ...") for each --tid and --object value that no event read
 * matched: a name mistyped or cut (the kernel's 15 bytes) would otherwise just select nothing. */
void ptt_filter_unmatched(const struct ptt_filter *f, const char *cmd);
void ptt_filter_free(struct ptt_filter *f);

#endif
