/* What every event of the analyses goes through (ptt_tracker_feed), for the files that feed the
 * tracker every event (the statistics, the checker): in line there, without a call, the results
 * in the caller's registers. The rare cases stay out of line in tracker.c. */
#ifndef PTT_TRACKER_FEED_H
#define PTT_TRACKER_FEED_H

#include <errno.h>
#include <string.h>

#include "analysis/tracker.h"

#define PTT_TRK_EVERY static inline __attribute__((always_inline))

/* tracker.c: an array twice as big (exits when out of memory); an event that is neither an IN
 * nor an OUT. */
void *ptt_tracker_grow(void *p, unsigned *cap, size_t size);
void ptt_tracker_state(struct ptt_tthread *th, const struct ptt_ev *ev, struct ptt_track *res);

/* The site field of an event (its return address), 0 if it has none. */
PTT_TRK_EVERY uint64_t site_of(const struct ptt_ev *ev)
{
    int i = ev->info ? ev->info->site : -1;
    return i >= 0 && (unsigned)i < ev->nargs ? ev->args[i] : 0;
}

/* Whether a call's OUT event says it succeeded, or failed with ok2 only. */
PTT_TRK_EVERY int status_ok(const struct ptt_ev *out, int64_t ok2)
{
    uint64_t r;
    return ptt_ev_role_get(out, PTT_RF_STATUS, &r) && (r == 0 || (int64_t)r == ok2);
}

/* Whether a call's OUT event says it failed with err. */
PTT_TRK_EVERY int status_is(const struct ptt_ev *out, int64_t err)
{
    uint64_t r;
    return ptt_ev_role_get(out, PTT_RF_STATUS, &r) && (int64_t)r == err;
}

PTT_TRK_EVERY struct ptt_open *push(struct ptt_tthread *th, const struct ptt_ev *ev, int frame)
{
    if (th->nopen == th->open_cap)
        th->open = ptt_tracker_grow(th->open, &th->open_cap, sizeof *th->open);
    struct ptt_open *o = &th->open[th->nopen++];
    if (th->calls_only) { /* what PTT_TRACK_CALLS_ONLY keeps */
        o->in.id = ev->id;
        o->in.info = ev->info;
        o->in.nargs = 0;
        o->frame = frame;
        return o;
    }
    /* The event's recorded arguments only: not the whole array, for every call. */
    unsigned n = ev->nargs < PTT_EVENT_MAX_ARGS ? ev->nargs : PTT_EVENT_MAX_ARGS;
    memcpy(&o->in, ev, offsetof(struct ptt_ev, args));
    if (n <= 6) /* most: a copy of fixed size, inlined (ev->args has room) */
        memcpy(o->in.args, ev->args, 6 * sizeof *ev->args);
    else
        memcpy(o->in.args, ev->args, n * sizeof *ev->args);
    o->frame = frame;
    o->object = ptt_ev_role(ev, PTT_RF_OBJECT, 0);
    o->site = site_of(ev);
    o->block = PTT_OPEN_RUNNING;
    o->block_ns = -1;
    o->block_cls = 0;
    o->contended = o->has_owner = 0;
    o->owner = o->holders = 0;
    o->before_attach = !frame && th->before_attach == ev->id;
    th->before_attach = 0;
    const struct ptt_evinfo *e = ev->info;
    /* A blocking WAIT waits from its start; pthread_once only when another thread runs the
     * routine. */
    if (!frame && e->role == PTT_ROLE_WAIT && (e->rflags & PTT_ROLEF_BLOCKS) &&
        (!ptt_role_has(e, PTT_RF_BUSY) || ptt_ev_role(ev, PTT_RF_BUSY, 0) == 1)) {
        o->block = PTT_OPEN_WAITS;
        o->block_ns = ev->ns;
        o->block_cls = e->okind;
    }
    return o;
}

PTT_TRK_EVERY void hold(struct ptt_tthread *th, const struct ptt_ev *ev, uint64_t obj, int cls,
                        int shared, uint64_t site, struct ptt_track *res)
{
    struct ptt_held *h = ptt_tthread_holds(th, obj);
    if (h) {
        h->count++; /* a recursive mutex, or one more read lock */
    } else {
        if (th->nheld == th->held_cap)
            th->held = ptt_tracker_grow(th->held, &th->held_cap, sizeof *th->held);
        h = &th->held[th->nheld++];
        *h = (struct ptt_held){obj, cls, shared, 1, ev->ns, ev->ticks, site};
    }
    res->what |= PTT_TRK_ACQUIRED;
    res->acquired = h;
}

/* One unlock of obj; all: every hold of it (a condvar wait releases its mutex). */
PTT_TRK_EVERY void release(struct ptt_tthread *th, uint64_t obj, int all, struct ptt_track *res)
{
    struct ptt_held *h = ptt_tthread_holds(th, obj);
    if (!h || (!all && --h->count)) /* not taken in the trace, or still held */
        return;
    res->what |= PTT_TRK_RELEASED;
    res->released = *h;
    *h = th->held[--th->nheld];
}

/* What an IN event lets go: the object it unlocks, the mutex of a condvar wait. */
PTT_TRK_EVERY void release_in(struct ptt_tthread *th, const struct ptt_ev *ev,
                              struct ptt_track *res)
{
    const struct ptt_evinfo *e = ev->info;
    uint64_t v;
    if (e->role == PTT_ROLE_RELEASE && ptt_ev_role_get(ev, PTT_RF_OBJECT, &v))
        release(th, v, 0, res);
    else if (e->role == PTT_ROLE_WAIT && ptt_ev_role_get(ev, PTT_RF_LOCK, &v))
        release(th, v, 1, res); /* the mutex is released while it waits */
}

PTT_TRK_EVERY void on_in(struct ptt_tthread *th, const struct ptt_ev *ev, struct ptt_track *res)
{
    const struct ptt_evinfo *e = ev->info;
    if (!th->calls_only)
        release_in(th, ev, res);
    if (e->noreturn)
        return;
    res->what |= PTT_TRK_OPENED;
    res->opened = push(th, ev, 0);
}

PTT_TRK_EVERY void on_out(struct ptt_tthread *th, const struct ptt_ev *ev, struct ptt_track *res)
{
    unsigned i = th->nopen;
    while (i-- > 0) {
        struct ptt_open *o = &th->open[i];
        if (o->frame || !o->in.info)
            continue;
        const char *a = o->in.info->routine, *b = ev->info->routine;
        if (a == b || !strcmp(a, b)) /* the table's strings: mostly the same pointer */
            break;
    }
    if (i == (unsigned)-1)
        return;
    th->nopen = i;
    struct ptt_open *c = &th->open[i];
    res->what |= PTT_TRK_CLOSED;
    res->closed = c;
    res->nclosed = 1;
    if (th->calls_only)
        return;
    const struct ptt_evinfo *in = c->in.info;
    uint64_t lock;
    if (in->role == PTT_ROLE_ACQUIRE && !(in->rflags & PTT_ROLEF_COUNTED) &&
        status_ok(ev, EOWNERDEAD))
        hold(th, ev, c->object, in->okind, (in->rflags & PTT_ROLEF_SHARED) != 0, c->site, res);
    else if (in->role == PTT_ROLE_WAIT && ptt_ev_role_get(&c->in, PTT_RF_LOCK, &lock) && lock &&
             !status_is(ev, EPERM)) /* returned: the mutex is held again, or was never let go */
        hold(th, ev, lock, PTT_CLASS_mutex, 0, c->site, res); /* a condvar's mutex, again */
}

/* ptt_tracker_feed of a tracker that is not PTT_TRACK_CALLS_ONLY. */
PTT_TRK_EVERY unsigned ptt_tracker_feed_inline(struct ptt_tthread *th, const struct ptt_ev *ev,
                                               struct ptt_track *res)
{
    struct ptt_track none;
    if (!res)
        res = &none;
    /* The members the flags name are set below (not a memset: every event comes here). */
    res->what = 0;
    res->nclosed = 0;
    res->unfinished = 0;
    res->th = th;
    if (!ev->info)
        return 0;
    if (ev->info->kind == PTT_KIND_IN)
        on_in(th, ev, res);
    else if (ev->info->kind == PTT_KIND_OUT)
        on_out(th, ev, res);
    else
        ptt_tracker_state(th, ev, res);
    return res->what;
}

#endif
