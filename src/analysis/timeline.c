/* The derived view of a trace: calls, blocked states, links, owners, counters. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/hmap.h"
#include "analysis/timeline.h"
#include "util/progress.h"
#include "analysis/tl_window.h"
#include "analysis/tracker.h"
#include "trace/filter.h"
#include "ptt_fields.h"

struct tthread {
    int32_t pid, tid;
    int begun, ended;
    int64_t last;
    int64_t last_create; /* its latest pthread_create */
    uint64_t self;       /* its pthread_t, from THREAD_START */
    struct ptt_tthread *calls;
    struct tthread *proc_next; /* the next thread of its process (tproc.threads) */
};

struct tobj {
    int owner_depth;
    int32_t owner;
    int32_t readers; /* read locks of a rwlock held */
    int64_t waiters;
    /* The last event that may end another thread's wait: a RELEASE, a SIGNAL or a WAIT that
     * wakes (a barrier's arrival), its thread and time. */
    enum ptt_role waker;
    int32_t waker_tid;
    int64_t waker_ns;
};

struct ended {
    int32_t tid;
    int64_t ns;
};

/* A pthread_create and the thread it made, met in either order: the thread may start before the
 * call returns its pthread_t, or after the creator entered another pthread_create. */
struct created {
    int state; /* 0 none, 1 returned (not started yet), 2 started (not returned yet) */
    int64_t in_ns;
};

struct tproc {
    int32_t pid;
    int begun, ended;
    int64_t last;
    struct tthread *threads; /* ended with it */
};

struct tl {
    const struct ptt_tl_callbacks *cb;
    void *arg;
    struct ptt_names *names;
    struct ptt_hmap threads, objects, ends, procs, created;
    struct ptt_tracker *calls; /* each thread's open calls */
};

const char *ptt_tl_state_name(enum ptt_tl_state s)
{
    static const char *const n[] = {
#define PTT_STATE(id, name, rgb, cname) [PTT_TL_##id] = name,
#include "analysis/states.def"
    };
    return s < PTT_TL_NSTATES ? n[s] : "?";
}

const char *ptt_tl_state_label(enum ptt_tl_state s)
{
    return s == PTT_TL_RUNNING      ? "outside pthread calls"
           : s == PTT_TL_PTT_BUFFER ? "waiting for ptt's buffer"
                                    : ptt_tl_state_name(s);
}

uint32_t ptt_tl_state_rgb(enum ptt_tl_state s)
{
    static const uint32_t c[] = {
#define PTT_STATE(id, name, rgb, cname) [PTT_TL_##id] = rgb,
#include "analysis/states.def"
    };
    return s < PTT_TL_NSTATES ? c[s] : 0x808080;
}

const char *ptt_tl_state_cname(enum ptt_tl_state s)
{
    static const char *const n[] = {
#define PTT_STATE(id, name, rgb, cname) [PTT_TL_##id] = cname,
#include "analysis/states.def"
    };
    return s < PTT_TL_NSTATES ? n[s] : "generic_work";
}

const char *ptt_tl_link_name(enum ptt_tl_link k)
{
    static const char *n[] = {"create", "join", "wake", "handoff", "release", "post"};
    return k < PTT_TL_NLINKS ? n[k] : "?";
}

enum ptt_tl_state ptt_tl_state_of_class(int cls)
{
    static const struct {
        int cls;
        enum ptt_tl_state state;
    } map[] = {
        {PTT_CLASS_mutex, PTT_TL_MUTEX},     {PTT_CLASS_rwlock, PTT_TL_RWLOCK},
        {PTT_CLASS_spin, PTT_TL_SPIN},       {PTT_CLASS_cond, PTT_TL_COND},
        {PTT_CLASS_barrier, PTT_TL_BARRIER}, {PTT_CLASS_sem, PTT_TL_SEM},
        {PTT_CLASS_thread, PTT_TL_JOIN},     {PTT_CLASS_once, PTT_TL_ONCE},
        {PTT_CLASS_signal, PTT_TL_SIGNAL},   {PTT_CLASS_mq, PTT_TL_MQ},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (map[i].cls == cls)
            return map[i].state;
    return PTT_TL_RUNNING;
}

static struct tobj *obj(struct tl *t, int32_t pid, uint64_t addr)
{
    return ptt_hmap_get(&t->objects, ptt_key2((uint64_t)pid, addr), sizeof(struct tobj));
}

static void owner(struct tl *t, int32_t pid, uint64_t addr, int cls, int32_t tid, int64_t ns,
                  int acquire)
{
    struct tobj *o = obj(t, pid, addr);
    if (acquire) {
        if (o->owner == tid && o->owner_depth) {
            o->owner_depth++; /* recursive */
            return;
        }
        /* Still held by another thread: its release is in the trace a few ns later (time
         * stamps of different CPUs) and will find it no longer the owner. Free it now. */
        if (o->owner && t->cb->owner)
            t->cb->owner(t->arg, pid, addr, cls, 0, ns);
        o->owner = tid;
        o->owner_depth = 1;
    } else {
        if (o->owner != tid || --o->owner_depth > 0)
            return;
        o->owner = 0;
        o->owner_depth = 0;
    }
    if (t->cb->owner)
        t->cb->owner(t->arg, pid, addr, cls, acquire ? tid : 0, ns);
}

/* A read lock of a rwlock taken (delta 1) or released (-1): the holder is then -readers. */
static void readers(struct tl *t, int32_t pid, uint64_t addr, int64_t ns, int delta)
{
    struct tobj *o = obj(t, pid, addr);
    if (delta < 0 && !o->readers)
        return; /* taken before the trace began */
    o->readers += delta;
    if (t->cb->owner)
        t->cb->owner(t->arg, pid, addr, PTT_CLASS_rwlock, -o->readers, ns);
}

static void waiters(struct tl *t, int32_t pid, uint64_t addr, int cls, int64_t ns, int delta)
{
    struct tobj *o = obj(t, pid, addr);
    o->waiters += delta;
    if (o->waiters < 0)
        o->waiters = 0;
    if (t->cb->counter)
        t->cb->counter(t->arg, pid, addr, cls, "waiters", ns, o->waiters);
}

static void link(struct tl *t, enum ptt_tl_link k, int32_t pid, int32_t from, int64_t from_ns,
                 int32_t to, int64_t to_ns, uint64_t addr)
{
    if (from && t->cb->link && from_ns <= to_ns)
        t->cb->link(t->arg, k, pid, from, from_ns, to, to_ns, addr);
}

/* What an open call has the thread blocked on since c->block_ns (PTT_TL_RUNNING: nothing). */
static enum ptt_tl_state blocked_on(const struct ptt_open *c)
{
    enum ptt_tl_state st = ptt_tl_state_of_class(c->block_cls);
    return c->block == PTT_OPEN_CONTENDED || c->block == PTT_OPEN_WAITS ? st : PTT_TL_RUNNING;
}

/* A call ends (returns, or the thread ends inside it). */
static void close_call(struct tl *t, struct tthread *th, const struct ptt_open *c, int64_t ns,
                       int unfinished)
{
    enum ptt_tl_state st = blocked_on(c);
    if (st != PTT_TL_RUNNING) {
        if (t->cb->state)
            t->cb->state(t->arg, th->pid, th->tid, st, c->block_ns, ns, c->object, c->in.id);
        if (c->block == PTT_OPEN_CONTENDED) /* it was one of the object's waiters */
            waiters(t, th->pid, c->object, PTT_CLASS_OF(c->in.id), ns, -1);
    }
    if (t->cb->call)
        t->cb->call(t->arg, &c->in, ns,
                    (unfinished ? PTT_TL_UNFINISHED : 0) |
                        (c->before_attach ? PTT_TL_BEFORE_ATTACH : 0));
}

/* libptt waited for a free sub-buffer before it recorded ev (TRACE_BUFFER_WAIT, at the wait's
 * end): a span of ptt's own. The program was not waiting then: the blocked span of the
 * innermost call blocking the thread stops where it began and goes on from its end. */
static void buffer_wait(struct tl *t, struct tthread *th, const struct ptt_ev *ev, int64_t prev)
{
    int64_t from = ev->ns - (int64_t)ptt_ev_arg(ev, PTT_F(TRACE_BUFFER_WAIT, waited), 0);
    if (prev && from < prev) /* it began after the thread's previous event: clocks differ */
        from = prev;
    for (unsigned k = th->calls ? th->calls->nopen : 0; k-- > 0;) {
        struct ptt_open *c = &th->calls->open[k];
        enum ptt_tl_state st = blocked_on(c);
        if (c->frame || st == PTT_TL_RUNNING)
            continue;
        if (from < c->block_ns) /* clocks of two CPUs */
            from = c->block_ns;
        if (t->cb->state && from > c->block_ns)
            t->cb->state(t->arg, th->pid, th->tid, st, c->block_ns, from, c->object, c->in.id);
        c->block_ns = ev->ns;
        break;
    }
    if (t->cb->state && from < ev->ns)
        t->cb->state(t->arg, th->pid, th->tid, PTT_TL_PTT_BUFFER, from, ev->ns, 0, 0);
}

/* Calls left without returning (the thread or the trace ended inside), innermost first. */
static void close_unfinished(struct tl *t, struct tthread *th, const struct ptt_open *c, unsigned n,
                             int64_t ns)
{
    while (n-- > 0)
        if (!c[n].frame)
            close_call(t, th, &c[n], ns, 1);
}

/* When a thread is first seen: at ev, or, when ev tells the time its thread waited for its
 * first sub-buffer (a TRACE_BUFFER_WAIT comes first in a sub-buffer), when that wait began. */
static int64_t first_seen(const struct ptt_ev *ev)
{
    if ((ev->id & PTT_EV_ID_MASK) != PTT_EV_TRACE_BUFFER_WAIT)
        return ev->ns;
    uint64_t w = ptt_ev_arg(ev, PTT_F(TRACE_BUFFER_WAIT, waited), 0);
    return w < (uint64_t)ev->ns ? ev->ns - (int64_t)w : 0;
}

static struct tthread *thread_of(struct tl *t, const struct ptt_ev *ev)
{
    struct tthread *th =
        ptt_hmap_get(&t->threads, ptt_key2((uint64_t)ev->pid, (uint64_t)ev->tid), sizeof *th);
    if (!th->begun) {
        int64_t ns = first_seen(ev);
        th->begun = 1;
        th->pid = ev->pid;
        th->tid = ev->tid;
        struct tproc *p = ptt_hmap_get(&t->procs, (uint64_t)(uint32_t)ev->pid, sizeof *p);
        th->proc_next = p->threads;
        p->threads = th;
        if (!p->begun) {
            p->begun = 1;
            p->pid = ev->pid;
            if (t->cb->process)
                t->cb->process(t->arg, ev->pid, ns, 1);
        }
        if (t->cb->thread)
            t->cb->thread(t->arg, ev->pid, ev->tid, ns, 1,
                          ptt_names_thread(t->names, ev->pid, ev->tid));
    }
    return th;
}

static void thread_end(struct tl *t, struct tthread *th, int64_t ns)
{
    if (!th->ended && t->cb->thread)
        t->cb->thread(t->arg, th->pid, th->tid, ns, 0, NULL);
    th->ended = 1;
}

/* A semaphore's value, as its init, wait, post and getvalue events read it (their value field).
 * in: the call's IN event, which names the semaphore (not sem_open's: it returns it). */
static void sem_value(struct tl *t, const struct ptt_ev *ev, const struct ptt_ev *in)
{
    uint64_t v, sem;
    if (t->cb->counter && ptt_ev_role_get(ev, PTT_RF_VALUE, &v) &&
        ptt_ev_role_get(in, PTT_RF_OBJECT, &sem))
        t->cb->counter(t->arg, ev->pid, sem, in->info->okind, "value", ev->ns, (int64_t)v);
}

/* Whether a call succeeded, by its OUT event. */
static int ok(const struct ptt_ev *ev)
{
    uint64_t r;
    return ptt_ev_role_get(ev, PTT_RF_STATUS, &r) && (r == 0 || (int64_t)r == EOWNERDEAD);
}

/* ev may end another thread's wait on object a (a WOKEN or ACQUIRED event links from it). */
static void set_waker(struct tl *t, const struct ptt_ev *ev, uint64_t a)
{
    struct tobj *o = obj(t, ev->pid, a);
    o->waker = ev->info->role;
    o->waker_tid = ev->tid;
    o->waker_ns = ev->ns;
}

/* A wait on object a ends with ev (WOKEN, ACQUIRED): the link from the thread that ended it. An
 * unlock hands a lock over, a sem_post or a condvar signal wakes, a barrier's arrival releases. */
static void woken(struct tl *t, const struct ptt_ev *ev, uint64_t a)
{
    struct tobj *o = obj(t, ev->pid, a);
    int acq = ev->info->role == PTT_ROLE_ACQUIRED;
    enum ptt_tl_link k;
    if (o->waker == PTT_ROLE_RELEASE && acq)
        k = PTT_TL_HANDOFF;
    else if (o->waker == PTT_ROLE_SIGNAL)
        k = acq ? PTT_TL_POST : PTT_TL_WAKE;
    else if (o->waker == PTT_ROLE_WAIT && !acq)
        k = PTT_TL_RELEASE;
    else
        return;
    if (o->waker_tid != ev->tid)
        link(t, k, ev->pid, o->waker_tid, o->waker_ns, ev->tid, ev->ns, a);
}

static void on_in(struct tl *t, struct tthread *th, const struct ptt_ev *ev)
{
    const struct ptt_evinfo *e = ev->info;
    uint64_t a = ptt_ev_role(ev, PTT_RF_OBJECT, 0), m;
    switch (e->role) {
    case PTT_ROLE_CREATE:
        if (e->okind == PTT_CLASS_thread)
            th->last_create = ev->ns;
        break;
    case PTT_ROLE_RELEASE:
        set_waker(t, ev, a);
        if ((e->rflags & PTT_ROLEF_SHARED) && obj(t, ev->pid, a)->owner != ev->tid)
            readers(t, ev->pid, a, ev->ns, -1); /* not its writer: one of its readers */
        else
            owner(t, ev->pid, a, e->okind, ev->tid, ev->ns, 0);
        break;
    case PTT_ROLE_WAIT:
        if (ptt_ev_role_get(ev, PTT_RF_LOCK, &m)) { /* the mutex is released while it waits */
            obj(t, ev->pid, m)->owner_depth = 1;
            owner(t, ev->pid, m, PTT_CLASS_mutex, ev->tid, ev->ns, 0);
        }
        if (e->rflags & PTT_ROLEF_WAKES)
            set_waker(t, ev, a);
        break;
    case PTT_ROLE_SIGNAL: set_waker(t, ev, a); break;
    default: break;
    }
    sem_value(t, ev, ev);
}

/* A pthread_create returned the new thread's pthread_t: its start links from the call. */
static void created(struct tl *t, const struct ptt_ev *out, const struct ptt_ev *in)
{
    uint64_t self;
    if (!ok(out) || !ptt_ev_role_get(out, PTT_RF_OBJECT, &self))
        return;
    struct created *cr = ptt_hmap_get(&t->created, ptt_key2((uint64_t)out->pid, self), sizeof *cr);
    cr->state = cr->state == 2 ? 0 : 1;
    cr->in_ns = in->ns;
}

/* A call returns (c: its record). */
static void on_out(struct tl *t, struct tthread *th, const struct ptt_ev *ev,
                   const struct ptt_open *c)
{
    close_call(t, th, c, ev->ns, 0);
    const struct ptt_evinfo *in = c->in.info;
    uint64_t a = c->object;
    if (in->role == PTT_ROLE_ACQUIRE && !(in->rflags & PTT_ROLEF_COUNTED) && ok(ev)) {
        if (in->rflags & PTT_ROLEF_SHARED)
            readers(t, ev->pid, a, ev->ns, 1);
        else
            owner(t, ev->pid, a, in->okind, ev->tid, ev->ns, 1);
    } else if (in->role == PTT_ROLE_CREATE && in->okind == PTT_CLASS_thread) {
        created(t, ev, &c->in);
    } else if (in->role == PTT_ROLE_WAIT && in->okind == PTT_CLASS_thread && ok(ev)) {
        struct ended *e = ptt_hmap_get(&t->ends, ptt_key2((uint64_t)ev->pid, a), 0);
        if (e) /* joined: from the thread's end */
            link(t, PTT_TL_JOIN_LINK, ev->pid, e->tid, e->ns, ev->tid, ev->ns, a);
    }
    sem_value(t, ev, &c->in);
}

/* A thread starts: the link from the pthread_create that made it. */
static void thread_start(struct tl *t, struct tthread *th, const struct ptt_ev *ev)
{
    uint64_t self;
    if (!ptt_ev_role_get(ev, PTT_RF_OBJECT, &self))
        return;
    th->self = self;
    uint64_t by = ptt_ev_role(ev, PTT_RF_BY, 0);
    struct tthread *cr = ptt_hmap_get(&t->threads, ptt_key2((uint64_t)ev->pid, by), 0);
    struct created *made =
        ptt_hmap_get(&t->created, ptt_key2((uint64_t)ev->pid, self), sizeof *made);
    int64_t from = made->state == 1 ? made->in_ns : cr ? cr->last_create : 0;
    made->state = made->state == 1 ? 0 : 2;
    if (cr)
        link(t, PTT_TL_CREATE, ev->pid, cr->tid, from, ev->tid, ev->ns, self);
}

/* A blocking call must wait (CONTENDED): one more waiter of the object. */
static void contended(struct tl *t, const struct ptt_ev *ev)
{
    waiters(t, ev->pid, ptt_ev_role(ev, PTT_RF_OBJECT, 0), ev->info->okind, ev->ns, 1);
}

/* STATE and META events. */
static void on_state(struct tl *t, struct tthread *th, struct tproc *p, const struct ptt_ev *ev,
                     const struct ptt_track *tr)
{
    uint64_t a = ptt_ev_role(ev, PTT_RF_OBJECT, 0), v;
    switch (ev->info->role) {
    case PTT_ROLE_CONTENDED:
        if (tr->what & PTT_TRK_BLOCKED)
            contended(t, ev);
        return;
    case PTT_ROLE_ACQUIRED: woken(t, ev, a); return;
    case PTT_ROLE_WOKEN:
        /* a condvar wait that timed out was woken by nobody */
        if (!ptt_role_has(ev->info, PTT_RF_STATUS) ||
            (ptt_ev_role_get(ev, PTT_RF_STATUS, &v) && v == 0))
            woken(t, ev, a);
        if (ptt_ev_role_get(ev, PTT_RF_LOCK, &v))
            owner(t, ev->pid, v, PTT_CLASS_mutex, ev->tid, ev->ns, 1);
        return;
    case PTT_ROLE_THREAD_START: thread_start(t, th, ev); return;
    case PTT_ROLE_THREAD_END:
        if (th->self) {
            struct ended *e =
                ptt_hmap_get(&t->ends, ptt_key2((uint64_t)ev->pid, th->self), sizeof *e);
            e->tid = ev->tid;
            e->ns = ev->ns;
        }
        /* unwound (cancel, pthread_exit) or never left */
        close_unfinished(t, th, tr->closed, tr->nclosed, ev->ns);
        thread_end(t, th, ev->ns);
        return;
    case PTT_ROLE_PROCESS_END:
        /* Its threads end with it: whatever they were in, they are in it no longer. */
        for (struct tthread *o = p->threads; o; o = o->proc_next)
            if (!o->ended) {
                if (o->calls)
                    close_unfinished(t, o, o->calls->open, o->calls->nopen, ev->ns);
                thread_end(t, o, ev->ns);
            }
        if (!p->ended && t->cb->process)
            t->cb->process(t->arg, ev->pid, ev->ns, 0);
        p->ended = 1;
        return;
    default: break;
    }
    /* TRACE_UNFINISHED (the innermost call), THREAD_CANCELLED (all of them) */
    close_unfinished(t, th, tr->closed, tr->nclosed, ev->ns);
}

static void on_event(struct tl *t, const struct ptt_ev *ev)
{
    if (t->cb->event)
        t->cb->event(t->arg, ev);
    if (!ev->info || ptt_ev_of_session(ev))
        return;
    struct tthread *th = thread_of(t, ev);
    int64_t prev = th->last; /* 0 before the thread's first event */
    th->last = ev->ns;
    struct tproc *p = ptt_hmap_get(&t->procs, (uint64_t)(uint32_t)ev->pid, sizeof *p);
    p->last = ev->ns;
    /* A signal handler's calls nest inside the call they interrupted, like any other. */
    struct ptt_track tr;
    if (!th->calls)
        th->calls = ptt_tracker_get(t->calls, ev);
    ptt_tracker_feed(th->calls, ev, &tr);
    if ((ev->id & PTT_EV_ID_MASK) == PTT_EV_TRACE_BUFFER_WAIT)
        buffer_wait(t, th, ev, prev);
    else if (ev->info->kind == PTT_KIND_IN)
        on_in(t, th, ev);
    else if (ev->info->kind == PTT_KIND_OUT) {
        if (tr.what & PTT_TRK_CLOSED)
            on_out(t, th, ev, tr.closed);
    } else
        on_state(t, th, p, ev, &tr);
}

static const struct ptt_filter *tl_filter;
static int tl_skip;

void ptt_timeline_filter(const struct ptt_filter *f, int skip)
{
    tl_filter = f;
    tl_skip = skip;
}

int64_t ptt_timeline_from(void)
{
    return tl_skip ? 0 : ptt_filter_from(tl_filter);
}

/* The trace's events the filter selects, up to --to, into t; the time of the last one read. */
static int64_t tl_read(struct tl *t, struct ptt_reader *r)
{
    const struct ptt_filter *f = tl_filter;
    int64_t from = ptt_filter_from(f), to = ptt_filter_to(f), end = 0;
    const struct ptt_ev *ev;
    while ((ev = ptt_reader_get(r))) {
        if (to >= 0 && ev->ns > to)
            break;
        ptt_progress_tick();
        ptt_names_event(t->names, ev);
        if (f && !ptt_filter_select(f, ev))
            continue;
        if (tl_skip && ev->ns < from) /* delivered for the names only */
            continue;
        on_event(t, ev);
        end = ev->ns;
    }
    return end;
}

int ptt_timeline_run(const char *path, struct ptt_names *names, const struct ptt_tl_callbacks *cb,
                     void *arg, char *err, size_t errlen)
{
    struct ptt_reader *r = ptt_filter_open(tl_filter, path, tl_skip, err, errlen);
    if (!r)
        return -1;
    /* Analyses that follow what came before the window see the callbacks through it. */
    struct tl_window w = {.cb = cb, .arg = arg, .from = ptt_filter_from(tl_filter)};
    if (w.from > 0 && !tl_skip)
        cb = &ptt_tl_window_callbacks, arg = &w;
    struct tl t = {cb, arg, names, {0}, {0}, {0}, {0}, {0}, ptt_tracker_new(PTT_TRACK_TID)};
    ptt_progress_start(NULL, r);
    int64_t end = tl_read(&t, r);
    ptt_progress_end();
    /* What was still going on at the end: threads, then processes. */
    for (size_t i = 0; i < t.threads.cap; i++) {
        struct tthread *th = ptt_hmap_slot(&t.threads, i);
        if (!th || th->ended)
            continue;
        if (th->calls) /* never left */
            close_unfinished(&t, th, th->calls->open, th->calls->nopen, end);
        thread_end(&t, th, end);
    }
    for (size_t i = 0; i < t.procs.cap; i++) {
        struct tproc *p = ptt_hmap_slot(&t.procs, i);
        if (p && !p->ended && cb->process)
            cb->process(arg, p->pid, end, 0);
    }
    const char *e = ptt_reader_error(r);
    if (e)
        snprintf(err, errlen, "%s: %s", path, e);
    ptt_reader_close(r);
    ptt_hmap_free(&t.threads, NULL);
    ptt_hmap_free(&t.objects, NULL);
    ptt_hmap_free(&t.ends, NULL);
    ptt_hmap_free(&t.procs, NULL);
    ptt_hmap_free(&t.created, NULL);
    ptt_tracker_free(t.calls);
    ptt_tl_window_free(&w);
    return e ? -1 : 0;
}
