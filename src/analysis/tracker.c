/* Each thread's open calls and held objects (tracker.h), from the events' roles. */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/hmap.h"
#include "analysis/tracker.h"
#include "ptt_fields.h"

/* What every event of the analyses goes through (ptt_tracker_feed), in line whatever the
 * compiler's estimate of its size. */
#define EVERY static inline __attribute__((always_inline))

struct ptt_tracker {
    enum ptt_tracker_key key;
    int calls_only;
    struct ptt_hmap threads;
};

static void *grow(void *p, unsigned *cap, size_t size)
{
    unsigned n = *cap ? 2 * *cap : 8;
    p = realloc(p, n * size);
    if (!p) {
        fprintf(stderr, "ptt: out of memory\n");
        exit(2);
    }
    *cap = n;
    return p;
}

struct ptt_tracker *ptt_tracker_new(int key)
{
    struct ptt_tracker *t = calloc(1, sizeof *t);
    if (!t) {
        fprintf(stderr, "ptt: out of memory\n");
        exit(2);
    }
    t->key = (enum ptt_tracker_key)(key & ~PTT_TRACK_CALLS_ONLY);
    t->calls_only = (key & PTT_TRACK_CALLS_ONLY) != 0;
    return t;
}

static void thread_free(void *p)
{
    struct ptt_tthread *th = p;
    free(th->open);
    free(th->held);
}

void ptt_tracker_free(struct ptt_tracker *t)
{
    if (!t)
        return;
    ptt_hmap_free(&t->threads, thread_free);
    free(t);
}

struct ptt_tthread *ptt_tracker_thread(struct ptt_tracker *t, int32_t pid, uint32_t key)
{
    return ptt_hmap_get(&t->threads, ptt_key2((uint64_t)(uint32_t)pid, key), 0);
}

struct ptt_tthread *ptt_tracker_next(struct ptt_tracker *t, size_t *i)
{
    while (*i < t->threads.cap) {
        struct ptt_tthread *th = ptt_hmap_slot(&t->threads, (*i)++);
        if (th)
            return th;
    }
    return NULL;
}

void ptt_tracker_reset(struct ptt_tracker *t, int32_t pid, uint32_t key)
{
    struct ptt_tthread *th = ptt_tracker_thread(t, pid, key);
    if (th)
        th->nopen = th->nheld = 0;
}

struct ptt_open *ptt_tthread_call(struct ptt_tthread *th)
{
    for (unsigned i = th->nopen; i-- > 0;)
        if (!th->open[i].frame)
            return &th->open[i];
    return NULL;
}

void ptt_tthread_drop(struct ptt_tthread *th, uint64_t object)
{
    struct ptt_held *h = ptt_tthread_holds(th, object);
    if (h)
        *h = th->held[--th->nheld];
}

unsigned ptt_tracker_readers(struct ptt_tracker *t, int32_t pid, uint64_t object, int32_t *tids,
                             unsigned max)
{
    unsigned n = 0;
    size_t i = 0;
    for (struct ptt_tthread *th; (th = ptt_tracker_next(t, &i));) {
        struct ptt_held *h = th->pid == pid ? ptt_tthread_holds(th, object) : NULL;
        if (!h || !h->shared)
            continue;
        if (n < max) { /* in order of tid: the same text whatever the table's order */
            unsigned k = n;
            for (; k > 0 && tids[k - 1] > th->tid; k--)
                tids[k] = tids[k - 1];
            tids[k] = th->tid;
        }
        n++;
    }
    return n;
}

/* The site field of an event (its return address), 0 if it has none. */
EVERY uint64_t site_of(const struct ptt_ev *ev)
{
    int i = ev->info ? ev->info->site : -1;
    return i >= 0 && (unsigned)i < ev->nargs ? ev->args[i] : 0;
}

/* Whether a call's OUT event says it succeeded, or failed with ok2 only. */
EVERY int status_ok(const struct ptt_ev *out, int64_t ok2)
{
    uint64_t r;
    return ptt_ev_role_get(out, PTT_RF_STATUS, &r) && (r == 0 || (int64_t)r == ok2);
}

/* Whether a call's OUT event says it failed with err. */
static int status_is(const struct ptt_ev *out, int64_t err)
{
    uint64_t r;
    return ptt_ev_role_get(out, PTT_RF_STATUS, &r) && (int64_t)r == err;
}

EVERY struct ptt_open *push(struct ptt_tthread *th, const struct ptt_ev *ev, int frame)
{
    if (th->nopen == th->open_cap)
        th->open = grow(th->open, &th->open_cap, sizeof *th->open);
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

EVERY void hold(struct ptt_tthread *th, const struct ptt_ev *ev, uint64_t obj, int cls, int shared,
                uint64_t site, struct ptt_track *res)
{
    struct ptt_held *h = ptt_tthread_holds(th, obj);
    if (h) {
        h->count++; /* a recursive mutex, or one more read lock */
    } else {
        if (th->nheld == th->held_cap)
            th->held = grow(th->held, &th->held_cap, sizeof *th->held);
        h = &th->held[th->nheld++];
        *h = (struct ptt_held){obj, cls, shared, 1, ev->ns, ev->ticks, site};
    }
    res->what |= PTT_TRK_ACQUIRED;
    res->acquired = h;
}

/* One unlock of obj; all: every hold of it (a condvar wait releases its mutex). */
EVERY void release(struct ptt_tthread *th, uint64_t obj, int all, struct ptt_track *res)
{
    struct ptt_held *h = ptt_tthread_holds(th, obj);
    if (!h || (!all && --h->count)) /* not taken in the trace, or still held */
        return;
    res->what |= PTT_TRK_RELEASED;
    res->released = *h;
    *h = th->held[--th->nheld];
}

/* What an IN event lets go: the object it unlocks, the mutex of a condvar wait. */
EVERY void release_in(struct ptt_tthread *th, const struct ptt_ev *ev, struct ptt_track *res)
{
    const struct ptt_evinfo *e = ev->info;
    uint64_t v;
    if (e->role == PTT_ROLE_RELEASE && ptt_ev_role_get(ev, PTT_RF_OBJECT, &v))
        release(th, v, 0, res);
    else if (e->role == PTT_ROLE_WAIT && ptt_ev_role_get(ev, PTT_RF_LOCK, &v))
        release(th, v, 1, res); /* the mutex is released while it waits */
}

EVERY void on_in(struct ptt_tthread *th, const struct ptt_ev *ev, struct ptt_track *res)
{
    const struct ptt_evinfo *e = ev->info;
    if (!th->calls_only)
        release_in(th, ev, res);
    if (e->noreturn)
        return;
    res->what |= PTT_TRK_OPENED;
    res->opened = push(th, ev, 0);
}

EVERY void on_out(struct ptt_tthread *th, const struct ptt_ev *ev, struct ptt_track *res)
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

/* Calls left without returning: the innermost one, or all (frames too). */
static void unwind(struct ptt_tthread *th, int all, struct ptt_track *res)
{
    unsigned i = 0;
    if (!all) {
        struct ptt_open *c = ptt_tthread_call(th);
        if (!c)
            return;
        i = (unsigned)(c - th->open);
    }
    if (i == th->nopen)
        return;
    res->what |= PTT_TRK_CLOSED;
    res->closed = &th->open[i];
    res->nclosed = all ? th->nopen - i : 1;
    res->unfinished = 1;
    th->nopen = i;
}

/* A CONTENDED event: the acquire it is inside must wait, from now on. */
static void contended(struct ptt_tthread *th, const struct ptt_ev *ev, struct ptt_track *res)
{
    if (!th->nopen || th->open[th->nopen - 1].frame)
        return;
    struct ptt_open *c = &th->open[th->nopen - 1];
    c->contended = 1;
    uint64_t owner;
    if (ptt_ev_role_get(ev, PTT_RF_OWNER, &owner))
        c->has_owner = 1, c->owner = owner;
    c->holders = ptt_ev_role(ev, PTT_RF_COUNT, 0);
    if (c->block != PTT_OPEN_RUNNING)
        return;
    c->block = PTT_OPEN_CONTENDED;
    c->block_ns = ev->ns;
    c->block_cls = ev->info->okind;
    res->what |= PTT_TRK_BLOCKED;
    res->blocked = c;
}

/* A frame ends: the innermost one (the calls inside it stay open: their OUT events close them). */
static void frame_end(struct ptt_tthread *th)
{
    unsigned i = th->nopen;
    while (i-- > 0 && !th->open[i].frame)
        ;
    if (i == (unsigned)-1)
        return;
    memmove(&th->open[i], &th->open[i + 1], (th->nopen - i - 1) * sizeof *th->open);
    th->nopen--;
}

static void on_state(struct ptt_tthread *th, const struct ptt_ev *ev, struct ptt_track *res)
{
    switch (ev->info->role) {
    case PTT_ROLE_CONTENDED:
        if (!th->calls_only)
            contended(th, ev, res);
        return;
    case PTT_ROLE_FRAME_BEGIN:
        res->what |= PTT_TRK_OPENED;
        res->opened = push(th, ev, 1);
        return;
    case PTT_ROLE_FRAME_END: frame_end(th); return;
    case PTT_ROLE_THREAD_START: th->ended = 0; return;
    case PTT_ROLE_THREAD_END:
        unwind(th, 1, res); /* unwound: cancelled, pthread_exit */
        th->ended = 1;
        return;
    default: break;
    }
    switch (ev->id) { /* written by the reader */
    case PTT_EV_TRACE_UNFINISHED: unwind(th, 0, res); break;
    case PTT_EV_THREAD_CANCELLED: unwind(th, 1, res); break;
    case PTT_EV_CALL_BEFORE_ATTACH: /* the IN event it names comes next */
        th->before_attach = (uint16_t)ptt_ev_arg(ev, PTT_F(CALL_BEFORE_ATTACH, call), 0);
        break;
    default: break;
    }
}

struct ptt_tthread *ptt_tracker_get(struct ptt_tracker *t, const struct ptt_ev *ev)
{
    uint32_t key = t->key == PTT_TRACK_TID ? (uint32_t)ev->tid : ev->serial;
    struct ptt_tthread *th =
        ptt_hmap_get(&t->threads, ptt_key2((uint64_t)(uint32_t)ev->pid, key), sizeof *th);
    th->pid = ev->pid;
    th->tid = ev->tid;
    th->key = key;
    th->calls_only = t->calls_only;
    return th;
}

unsigned ptt_tracker_event(struct ptt_tracker *t, const struct ptt_ev *ev, struct ptt_track *res)
{
    if (!ev->info) {
        if (res)
            memset(res, 0, sizeof *res);
        return 0;
    }
    return ptt_tracker_feed(ptt_tracker_get(t, ev), ev, res);
}

/* PTT_TRACK_CALLS_ONLY, for the reader (every event of every thread): a call's IN pushes its
 * header, its OUT pops it; the rest as for the others. (ptt_tracker_calls does the common cases
 * in line.) */
static unsigned calls_only(struct ptt_tthread *th, const struct ptt_ev *ev)
{
    const struct ptt_evinfo *e = ev->info;
    struct ptt_track res;
    if (e->kind == PTT_KIND_IN) {
        if (!e->noreturn)
            push(th, ev, 0);
        return 0;
    }
    res.what = 0;
    if (e->kind == PTT_KIND_OUT)
        on_out(th, ev, &res);
    else
        on_state(th, ev, &res);
    return 0;
}

unsigned ptt_tracker_feed(struct ptt_tthread *th, const struct ptt_ev *ev, struct ptt_track *res)
{
    if (th->calls_only && ev->info) /* the caller wants no result */
        return calls_only(th, ev);
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
        on_state(th, ev, res);
    return res->what;
}
