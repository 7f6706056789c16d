/* Reading a trace file: an index of every thread's chunks, then a k-way merge of the threads'
 * event streams into one chronological stream. Memory: one chunk buffer and a small state per
 * thread, plus 16 bytes per chunk of index (a chunk holds a sub-buffer: thousands of events). */
#ifndef PTT_READER_H
#define PTT_READER_H

#include <stdint.h>

#include "../../common/format.h"
#include "trace/events.h"

struct ptt_reader;

struct ptt_ev {
    uint64_t ticks; /* on the trace clock */
    int64_t ns;     /* since the trace start */
    int32_t pid;
    int32_t tid;
    uint32_t serial; /* thread number within the process; 0 for ptt trace's own events */
    uint16_t id;
    uint16_t nested; /* written by a signal handler inside another event */
    unsigned nargs;
    const struct ptt_evinfo *info;     /* NULL for an id this reader does not know */
    uint64_t offset;                   /* in the file; 0 for events the reader synthesized */
    uint64_t args[PTT_EVENT_MAX_ARGS]; /* last: copies take the recorded ones only */
};

/* The field that plays part f of ev's role (events.h), def when it has none. */
static inline uint64_t ptt_ev_role(const struct ptt_ev *ev, enum ptt_rfield f, uint64_t def)
{
    return ptt_role_arg(ev->info, ev->args, ev->nargs, f, def);
}
/* Whether ev recorded the field that plays part f, and its value into *v. */
static inline int ptt_ev_role_get(const struct ptt_ev *ev, enum ptt_rfield f, uint64_t *v)
{
    return ptt_role_get(ev->info, ev->args, ev->nargs, f, v);
}
/* Field number i of ev (a PTT_F(EVENT, field) constant: ptt_fields.h), def if not recorded. */
/* An event ptt trace wrote about the session (a control request, a dump, a hang report), under
 * its own pid or a traced one's: no thread's, nor does it make its pid a process of the trace. */
static inline int ptt_ev_of_session(const struct ptt_ev *ev)
{
    uint16_t id = ev->id & PTT_EV_ID_MASK;
    return !ev->serial && (id == PTT_EV_TRACE_CONTROL || id == PTT_EV_TRACE_DUMP ||
                           id == PTT_EV_HANG_DETECTED || id == PTT_EV_HANG_BLOCKED);
}

static inline uint64_t ptt_ev_arg(const struct ptt_ev *ev, unsigned i, uint64_t def)
{
    return i < ev->nargs ? ev->args[i] : def;
}

/* The descriptor a reader reads path from: a regular file; for "-" (standard input), a pipe or
 * a FIFO, a memfd holding the whole stream, read once (a FIFO waited for 10 s at most) and
 * given again to later calls with the same path. -1 with one line in err. */
int ptt_reader_fd(const char *path, char *err, size_t errlen);
/* Open and index path (as ptt_reader_fd). When no file path exists but its parts path.1,
 * path.2, ... do (ptt trace --max-size), they are read as one trace: those of the set of the
 * highest-numbered part, their chunks in one index; the parts missing before the first one read
 * (deleted by --max-files) are said in one line on stderr, one missing between two read is the
 * reader's error (ptt_reader_error). On a fatal error (unreadable, not a trace, another major
 * version) returns NULL and puts one line into err. */
struct ptt_reader *ptt_reader_open(const char *path, char *err, size_t errlen);
/* The next event in time order: 1, or 0 at the end. */
int ptt_reader_next(struct ptt_reader *r, struct ptt_ev *ev);
/* The same without a copy: the event, valid until the next call; NULL at the end. */
const struct ptt_ev *ptt_reader_get(struct ptt_reader *r);
/* Whether the readers opened from now on may merge and decode on a second thread, ahead of the
 * command (the default; they do when there are two CPUs, or PTT_READ_AHEAD says). Off for a
 * command whose own work per event is so light that copying the events over costs more. */
void ptt_reader_set_ahead(int on);
/* Before the first event: the calls' events before from_ns (since the start) are passed over,
 * not decoded (but those keep, which may be NULL, wants); the others still come, and a few
 * events just before from_ns. The calls left unfinished are told as without it. */
void ptt_reader_skip(struct ptt_reader *r, int64_t from_ns, int (*keep)(uint16_t id));
/* The first problem met in the file (truncated, corrupt), or NULL: the events before it were
 * delivered. */
const char *ptt_reader_error(const struct ptt_reader *r);
/* Value of an INFO key, or NULL. */
const char *ptt_reader_info(const struct ptt_reader *r, const char *key);
/* The END record, or NULL if the session did not end cleanly. */
const struct ptt_rec_end *ptt_reader_end(const struct ptt_reader *r);
/* The threads that recorded, by pid and tid (a thread that execs is one). */
uint64_t ptt_reader_nthreads(const struct ptt_reader *r);
void ptt_reader_close(struct ptt_reader *r);
/* The parts of a rotated trace that are read. */
struct ptt_reader_parts {
    unsigned nread;       /* parts read */
    unsigned first, last; /* the numbers of the first and the last one read */
    unsigned before;      /* parts before the first one read: deleted (--max-files), or not read */
    unsigned gaps;        /* parts missing between the first and the last one read */
    int continued;        /* the last one read is not its set's last */
    char set[24];         /* the set's id (INFO key set) */
    char read[96];        /* the numbers read ("6-7"), */
    char missing[96];     /* and those not read up to the last one read ("1-5") */
};
/* How many threads' streams miss a chunk between two the file holds (a damaged or cut file, a
 * part of a rotated trace missing): their events there are not read. */
unsigned ptt_reader_seq_gaps(const struct ptt_reader *r);
/* NULL for a trace of one file that is no part. */
const struct ptt_reader_parts *ptt_reader_parts(const struct ptt_reader *r);
/* The first file read: the trace itself, or the first part read. */
const char *ptt_reader_path(const struct ptt_reader *r);
/* How far the reading has got, for a progress line: the bytes of the event chunks read so far
 * and of all of them (the merge reads the threads' chunks in time order, not file order). Costs
 * a walk over the index: call it now and then. */
void ptt_reader_progress(const struct ptt_reader *r, uint64_t *done, uint64_t *total);

#endif
