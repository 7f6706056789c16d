/* Who made others wait (blame.h): the waiting for a lock charged to its holders. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/blame.h"

/* A holder thread and the site where it took the object. */
struct who {
    int32_t tid;
    uint64_t take;
};

/* A thread waiting for the object: charged up to last_ns; last_entry: the entry of the last
 * release that charged it; seen: the holders it was charged to (a wait counts once for each).
 * The slots past nwaiters keep their seen array for the next waiter. */
struct ptt_blame_waiter {
    int32_t tid;
    int64_t last_ns;
    long last_entry; /* -1: none */
    struct who *seen;
    unsigned nseen, seen_cap;
};

/* Twice as many, first (at 0) first. */
static void *grow(void *p, size_t *cap, size_t size, size_t first)
{
    size_t n = *cap ? 2 * *cap : first;
    p = realloc(p, n * size);
    if (!p) {
        fprintf(stderr, "ptt: out of memory\n");
        exit(2);
    }
    *cap = n;
    return p;
}

static void *grow_u(void *p, unsigned *cap, size_t size, size_t first)
{
    size_t c = *cap;
    p = grow(p, &c, size, first);
    *cap = (unsigned)c;
    return p;
}

static int entry_is(const struct ptt_blame_entry *e, int32_t tid, uint64_t take, uint64_t release,
                    int end)
{
    return e->tid == tid && e->take == take && e->release == release && e->held_at_end == end;
}

/* The entry (tid, take, release, held_at_end), made if new: its index. The one found last is
 * tried first (a loop's holds), then from the last made. */
static long entry_of(struct ptt_blame *b, int32_t tid, uint64_t take, uint64_t release, int end)
{
    if (b->hint < b->ne && entry_is(&b->e[b->hint], tid, take, release, end))
        return (long)b->hint;
    for (size_t i = b->ne; i-- > 0;)
        if (entry_is(&b->e[i], tid, take, release, end))
            return (long)(b->hint = i);
    if (b->ne == b->ecap)
        b->e = grow(b->e, &b->ecap, sizeof *b->e, 4);
    b->e[b->ne] = (struct ptt_blame_entry){tid, end, take, release, 0, 0};
    return (long)(b->hint = b->ne++);
}

/* One hold first: a mutex has one holder at a time, and a trace may have a million mutexes
 * (ptt stat keeps this array for each: 4 holds made it 128 bytes). */
void ptt_blame_grow(struct ptt_blame *b)
{
    b->holds = grow_u(b->holds, &b->holds_cap, sizeof *b->holds, 1);
}

/* Whether w is charged to (tid, take) for the first time: a wait counts once per holder and
 * site, however many times that holder took the object meanwhile. */
static int first_charge(struct ptt_blame_waiter *w, int32_t tid, uint64_t take)
{
    for (unsigned i = 0; i < w->nseen; i++)
        if (w->seen[i].tid == tid && w->seen[i].take == take)
            return 0;
    if (w->nseen == w->seen_cap)
        w->seen = grow_u(w->seen, &w->seen_cap, sizeof *w->seen, 4);
    w->seen[w->nseen++] = (struct who){tid, take};
    return 1;
}

/* w's time since its last charge, split between the current holds (the first gets what the
 * division leaves). */
static void charge_holds(struct ptt_blame *b, struct ptt_blame_waiter *w, int64_t now)
{
    uint64_t d = now > w->last_ns ? (uint64_t)(now - w->last_ns) : 0, k = b->nholds;
    w->last_ns = now;
    if (k == 1) { /* mostly */
        b->holds[0].ns += d;
        b->holds[0].waits += first_charge(w, b->holds[0].tid, b->holds[0].take);
        return;
    }
    for (unsigned i = 0; i < b->nholds; i++) {
        struct ptt_blame_hold *h = &b->holds[i];
        h->ns += d / k + (i ? 0 : d % k);
        h->waits += first_charge(w, h->tid, h->take);
    }
}

/* The release of hold h (of tid, taken at take): the waiters charged until now, and h's share
 * added to its entry. Out of line: most releases have no waiter and no share. */
__attribute__((noinline)) static void charge_release(struct ptt_blame *b, struct ptt_blame_hold *h,
                                                     int32_t tid, uint64_t take, uint64_t release,
                                                     int64_t now)
{
    long x = entry_of(b, tid, take, release, 0);
    for (unsigned k = 0; k < b->nwaiters; k++) {
        struct ptt_blame_waiter *w = &b->waiters[k];
        if (b->nholds == 1) { /* mostly: the releaser alone, charged inline */
            h->ns += now > w->last_ns ? (uint64_t)(now - w->last_ns) : 0;
            h->waits += first_charge(w, tid, take);
            w->last_ns = now;
        } else
            charge_holds(b, w, now);
        w->last_entry = x;
    }
    b->e[x].ns += h->ns;
    b->e[x].waits += h->waits;
}

void ptt_blame_release_any(struct ptt_blame *b, int32_t tid, uint64_t release, int64_t now)
{
    unsigned i = b->nholds;
    while (i-- > 0 && b->holds[i].tid != tid)
        ;
    if (i == (unsigned)-1) { /* a hold not seen taken */
        ptt_blame_hold(b, tid, 0);
        i = b->nholds - 1;
    }
    struct ptt_blame_hold *h = &b->holds[i];
    uint64_t take = h->take;
    if (b->nwaiters || h->ns || h->waits) /* without waiters: charged by a wait that timed out */
        charge_release(b, h, tid, take, release, now);
    *h = b->holds[--b->nholds];
    b->last_tid = tid;
    b->last_take = take;
    b->last_release = release;
    b->last_ns = now;
}

static struct ptt_blame_waiter *waiter(const struct ptt_blame *b, int32_t tid)
{
    for (unsigned i = 0; i < b->nwaiters; i++)
        if (b->waiters[i].tid == tid)
            return &b->waiters[i];
    return NULL;
}

int ptt_blame_waiting(const struct ptt_blame *b, int32_t tid)
{
    return waiter(b, tid) != NULL;
}

void ptt_blame_wait(struct ptt_blame *b, int32_t tid, int64_t since)
{
    if (waiter(b, tid))
        return;
    if (b->nwaiters == b->waiters_cap) {
        unsigned was = b->waiters_cap;
        b->waiters = grow_u(b->waiters, &b->waiters_cap, sizeof *b->waiters, 4);
        memset(b->waiters + was, 0, (b->waiters_cap - was) * sizeof *b->waiters);
    }
    struct ptt_blame_waiter *w = &b->waiters[b->nwaiters++];
    w->tid = tid;
    w->last_ns = since;
    w->last_entry = -1;
    w->nseen = 0;
    /* Released after the call began, before the lock was seen taken: that release made it
     * wait until then. Nobody holding it: the last holder was still releasing it. */
    if (b->last_tid && (b->last_ns >= since || !b->nholds)) {
        long x = entry_of(b, b->last_tid, b->last_take, b->last_release, 0);
        if (b->last_ns > since) {
            b->e[x].ns += (uint64_t)(b->last_ns - since);
            w->last_ns = b->last_ns;
        }
        b->e[x].waits += first_charge(w, b->last_tid, b->last_take);
        w->last_entry = x;
    }
}

/* The waiter leaves: its slot, with its seen array, goes past the end. */
static void unwait(struct ptt_blame *b, struct ptt_blame_waiter *w)
{
    struct ptt_blame_waiter last = b->waiters[--b->nwaiters];
    b->waiters[b->nwaiters] = *w;
    *w = last;
}

void ptt_blame_wait_end(struct ptt_blame *b, int32_t tid, int64_t since, int64_t now, int acquired)
{
    struct ptt_blame_waiter *w = waiter(b, tid);
    if (!w) {
        ptt_blame_wait(b, tid, since);
        w = &b->waiters[b->nwaiters - 1];
    }
    uint64_t rest = now > w->last_ns ? (uint64_t)(now - w->last_ns) : 0;
    if (w->last_entry >= 0 && (acquired || !b->nholds)) {
        b->e[w->last_entry].ns += rest; /* woken by that release: counted then */
    } else if (b->nholds) {
        charge_holds(b, w, now);
    } else {
        long x = entry_of(b, 0, 0, 0, 0);
        b->e[x].ns += rest;
        b->e[x].waits++;
    }
    unwait(b, w);
}

void ptt_blame_forget(struct ptt_blame *b, int32_t tid)
{
    struct ptt_blame_waiter *w = waiter(b, tid);
    if (w)
        unwait(b, w);
}

const struct ptt_blame_entry *ptt_blame_entries(struct ptt_blame *b, size_t *n)
{
    for (unsigned i = 0; i < b->nholds; i++) {
        struct ptt_blame_hold *h = &b->holds[i];
        if (!h->ns && !h->waits)
            continue;
        long x = entry_of(b, h->tid, h->take, 0, 1);
        b->e[x].ns += h->ns;
        b->e[x].waits += h->waits;
        h->ns = h->waits = 0;
    }
    *n = b->ne;
    return b->e;
}

void ptt_blame_free(struct ptt_blame *b)
{
    free(b->holds);
    for (unsigned i = 0; i < b->waiters_cap; i++)
        free(b->waiters[i].seen);
    free(b->waiters);
    free(b->e);
}
