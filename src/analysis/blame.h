/* Who made others wait: the waiting for a lock (mutex, rwlock, spinlock) charged to the threads
 * that held it meanwhile, as Go's mutex profile and Java Flight Recorder's previous owner do.
 * One record per object (struct ptt_blame, kept by the statistics), fed in time order:
 *
 * - a waiter is known from its CONTENDED event; its wait runs from the entry of its lock call;
 * - whenever a holder releases the object, every waiter's time since its last charge (or its
 *   entry) is charged to the current holders, split equally between them (the readers of a
 *   rwlock share the blame); a release seen between a waiter's entry and its CONTENDED event
 *   is charged that part when it shows up;
 * - when the wait ends, the rest (the wake-up after the last release) goes to the last holder
 *   that released it; a wait that timed out or never ended (the trace or its thread ended
 *   inside) gives the rest to the holders at that time, else to the last one, else to nobody
 *   known (tid 0).
 *
 * So an object's charged time adds up to the time its lock calls waited, as ptt stat counts it.
 * A holder's share is kept on its hold until it releases, then added to its entry: (holder,
 * site where it took the object, site where it released it); a hold never released is added at
 * the end, marked so. Memory grows with the holders, waiters and entries of an object (threads,
 * sites), not with the events. */
#ifndef PTT_BLAME_H
#define PTT_BLAME_H

#include <stddef.h>
#include <stdint.h>

struct ptt_blame_entry {
    int32_t tid;            /* the holder; 0: none known */
    int held_at_end;        /* never released in the trace */
    uint64_t take, release; /* call sites: the lock, the unlock (0: not known, or none) */
    uint64_t waits, ns;     /* the waits it caused (each counted once), the time charged */
};

/* A hold of the object, and what it has been charged so far. */
struct ptt_blame_hold {
    int32_t tid;
    uint64_t take;
    uint64_t ns, waits;
};
struct ptt_blame_waiter;

struct ptt_blame {
    struct ptt_blame_hold *holds;
    struct ptt_blame_waiter *waiters;
    struct ptt_blame_entry *e;
    unsigned nholds, holds_cap, nwaiters, waiters_cap;
    size_t ne, ecap, hint;
    /* The last release: who, from where to where, when (its entry is looked up when needed). */
    int32_t last_tid;
    uint64_t last_take, last_release;
    int64_t last_ns;
};

/* The holds' array made bigger; ptt_blame_release past its common case. */
void ptt_blame_grow(struct ptt_blame *b);
void ptt_blame_release_any(struct ptt_blame *b, int32_t tid, uint64_t release, int64_t now);
/* tid takes the object at call site take. In line: every lock. */
static inline void ptt_blame_hold(struct ptt_blame *b, int32_t tid, uint64_t take)
{
    if (b->nholds == b->holds_cap)
        ptt_blame_grow(b);
    b->holds[b->nholds++] = (struct ptt_blame_hold){tid, take, 0, 0};
}
/* tid releases the object (a hold not seen taken: taken at site 0). In line, the common case:
 * the last hold is tid's, nobody waits, nothing was charged to it. */
static inline void ptt_blame_release(struct ptt_blame *b, int32_t tid, uint64_t release,
                                     int64_t now)
{
    struct ptt_blame_hold *h = b->nholds ? &b->holds[b->nholds - 1] : NULL;
    if (!h || h->tid != tid || b->nwaiters || h->ns || h->waits) {
        ptt_blame_release_any(b, tid, release, now);
        return;
    }
    b->nholds--;
    b->last_tid = tid;
    b->last_take = h->take;
    b->last_release = release;
    b->last_ns = now;
}
/* tid, in a lock call entered at since, is seen waiting. */
void ptt_blame_wait(struct ptt_blame *b, int32_t tid, int64_t since);
/* tid's lock call entered at since ends at now, a wait as ptt stat counts it; acquired: it got
 * the lock. A wait never seen (no CONTENDED event) is charged whole. */
void ptt_blame_wait_end(struct ptt_blame *b, int32_t tid, int64_t since, int64_t now, int acquired);
/* tid's wait is not counted after all (its thread ended without returning from it). */
void ptt_blame_forget(struct ptt_blame *b, int32_t tid);
/* Whether tid is known to be waiting. */
int ptt_blame_waiting(const struct ptt_blame *b, int32_t tid);
/* The entries; holds still open first become entries held_at_end (call once, at the end).
 * Unsorted; valid until the next call on b. */
const struct ptt_blame_entry *ptt_blame_entries(struct ptt_blame *b, size_t *n);
void ptt_blame_free(struct ptt_blame *b);

#endif
