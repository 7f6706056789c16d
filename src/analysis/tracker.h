/* What each thread is doing: the calls it entered and has not left (and the frames, a signal
 * handler, a once routine, a timer's function, that run inside them), and the objects it holds.
 * Kept from the events' roles only (common/events.def), for every analysis that needs it: the
 * reader's unfinished calls, the statistics, the timeline, hang detection. Memory grows with the
 * threads, their nesting and the objects they hold, not with the events. */
#ifndef PTT_TRACKER_H
#define PTT_TRACKER_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "trace/reader.h"

/* A call entered and not left, or a frame begun and not ended. */
struct ptt_open {
    int frame;
    uint64_t object; /* the field playing the object, 0 if none */
    uint64_t site;   /* where the program called it, 0 if not recorded */
    /* How it blocked: from its start (a blocking WAIT), or since a CONTENDED event. */
    enum { PTT_OPEN_RUNNING, PTT_OPEN_WAITS, PTT_OPEN_CONTENDED } block;
    int64_t block_ns;  /* since when */
    int block_cls;     /* the class of what it waits for */
    int contended;     /* a CONTENDED event came inside it */
    int has_owner;     /* the last CONTENDED event named the holder */
    int before_attach; /* begun before ptt trace -p attached: its IN is as of the attach */
    uint64_t owner;    /* its tid */
    uint64_t holders;  /* the count the last CONTENDED event gave (a rwlock's readers), 0 if none */
    /* Its IN event (a frame: its FRAME_BEGIN event). Last, as in.args: the arguments past
     * in.nargs are not copied. */
    struct ptt_ev in;
};

/* An object a thread holds: locked (a mutex, a spinlock, a rwlock for writing or reading) and
 * not yet unlocked. count: how many times (a recursive mutex, read locks). */
struct ptt_held {
    uint64_t object;
    int cls;
    int shared; /* read locks of a rwlock */
    unsigned count;
    int64_t ns; /* held since */
    uint64_t ticks;
    uint64_t site; /* where it was taken (the acquire's or the condvar wait's site), 0 if unknown */
};

struct ptt_tthread {
    int32_t pid, tid;
    uint32_t key;           /* the serial or the tid, as the tracker was made */
    int calls_only;         /* PTT_TRACK_CALLS_ONLY: no objects held, IN events without args */
    int ended;              /* THREAD_END seen */
    uint16_t before_attach; /* CALL_BEFORE_ATTACH: the IN event it names, of a call begun
                               before the attach, comes next */
    struct ptt_open *open;  /* outermost first */
    unsigned nopen, ncalls; /* entries; of them, calls (not frames) */
    unsigned open_cap;
    struct ptt_held *held;
    unsigned nheld, held_cap;
};

/* How a tracker tells threads apart: the reader's streams and the live pool by the thread's
 * serial number in its process, the analyses of the merged stream by tid. */
enum ptt_tracker_key { PTT_TRACK_SERIAL, PTT_TRACK_TID };
/* Or'ed with the key: follow the calls only (which are open: of their IN events, in.id and
 * in.info alone are set; no arguments, objects, sites nor blocking; no result from
 * ptt_tracker_feed), for the reader, which needs no more and sees every event. */
#define PTT_TRACK_CALLS_ONLY 8

/* What one event did (the ptt_tracker_event flags). The pointers are valid until the next
 * event of the same tracker. */
#define PTT_TRK_OPENED 1u    /* opened: a call or a frame began */
#define PTT_TRK_CLOSED 2u    /* closed[0..nclosed): left, innermost last */
#define PTT_TRK_BLOCKED 4u   /* blocked: a CONTENDED event made this call block */
#define PTT_TRK_ACQUIRED 8u  /* acquired: an object held (once more) */
#define PTT_TRK_RELEASED 16u /* released: an object no longer held, as it was held */
struct ptt_track {
    unsigned what;
    struct ptt_tthread *th;
    struct ptt_open *opened;
    struct ptt_open *closed;
    unsigned nclosed;
    int unfinished; /* closed without returning: the thread or the trace ended inside */
    struct ptt_open *blocked;
    struct ptt_held *acquired;
    struct ptt_held released;
};

struct ptt_tracker;

/* Exits on out of memory, as the tables of the tools do. */
struct ptt_tracker *ptt_tracker_new(int key);
void ptt_tracker_free(struct ptt_tracker *t);
/* Follow ev (events of an unknown id do nothing); res (may be NULL) says what it did. An OUT
 * event closes the innermost call of its routine (the calls above it are dropped: their OUT
 * events were lost); THREAD_END and THREAD_CANCELLED close all, TRACE_UNFINISHED the innermost
 * call. CALL_BEFORE_ATTACH marks the call of the IN event after it as begun before the attach. */
unsigned ptt_tracker_event(struct ptt_tracker *t, const struct ptt_ev *ev, struct ptt_track *res);
/* The same, for ev's thread as ptt_tracker_get gave it: a caller that keeps the thread (one per
 * stream, per thread of its own) saves looking it up for every event. */
unsigned ptt_tracker_feed(struct ptt_tthread *th, const struct ptt_ev *ev, struct ptt_track *res);
/* ptt_tracker_feed(th, ev, NULL) for a PTT_TRACK_CALLS_ONLY tracker (the reader's: every
 * event), with what most events are done here, without a call: a call entered, the innermost
 * call left. ev->info is not NULL. */
static inline void ptt_tracker_calls(struct ptt_tthread *th, const struct ptt_ev *ev)
{
    const struct ptt_evinfo *e = ev->info;
    if (e->kind == PTT_KIND_OUT && th->nopen) {
        struct ptt_open *top = &th->open[th->nopen - 1];
        if (!top->frame && top->in.info->routine == e->routine) {
            th->nopen--;
            return;
        }
    } else if (e->kind == PTT_KIND_IN && !e->noreturn && th->nopen < th->open_cap) {
        struct ptt_open *o = &th->open[th->nopen++];
        o->in.id = ev->id;
        o->in.info = e;
        o->in.nargs = 0;
        o->frame = 0;
        return;
    }
    ptt_tracker_feed(th, ev, NULL);
}
/* ev's thread, made if new. */
struct ptt_tthread *ptt_tracker_get(struct ptt_tracker *t, const struct ptt_ev *ev);
/* A thread met, or NULL. */
struct ptt_tthread *ptt_tracker_thread(struct ptt_tracker *t, int32_t pid, uint32_t key);
/* Every thread met: start with *i = 0; NULL at the end. */
struct ptt_tthread *ptt_tracker_next(struct ptt_tracker *t, size_t *i);
/* The innermost open call of a thread (frames skipped), or NULL. */
struct ptt_open *ptt_tthread_call(struct ptt_tthread *th);
/* The object th holds, or NULL. In line: the checker asks for every lock and unlock. */
static inline struct ptt_held *ptt_tthread_holds(struct ptt_tthread *th, uint64_t object)
{
    for (unsigned i = 0; i < th->nheld; i++)
        if (th->held[i].object == object)
            return &th->held[i];
    return NULL;
}
/* Free what th keeps for its open calls when it has none (an ended thread: what it holds stays,
 * for the reports that name a holder). */
void ptt_tthread_trim(struct ptt_tthread *th);
/* Forget th whole (it is freed): an ended thread that holds nothing, which the caller no
 * longer needs. */
void ptt_tracker_forget(struct ptt_tracker *t, struct ptt_tthread *th);
/* Whether the open call has a time limit: it ends by itself, whatever the other threads do. */
int ptt_open_timed(const struct ptt_open *o);
/* Forget that th holds object (another thread unlocked it for th: glibc lets a default mutex be
 * unlocked by any thread). */
void ptt_tthread_drop(struct ptt_tthread *th, uint64_t object);
/* The threads of process pid that hold object for reading (a rwlock's read locks): their tids,
 * at most max of them into tids, in increasing order; returns how many there are. */
unsigned ptt_tracker_readers(struct ptt_tracker *t, int32_t pid, uint64_t object, int32_t *tids,
                             unsigned max);

#endif
