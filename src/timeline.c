/* The derived view of a trace: calls, blocked states, links, owners, counters. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hmap.h"
#include "timeline.h"

#define MAX_OPEN 8

struct open_call {
    struct ptt_ev in;
    int64_t block_from; /* -1: not blocked (yet) */
    enum ptt_tl_state state;
};

struct tthread {
    int32_t pid, tid;
    int begun, ended;
    int64_t last;
    int64_t last_create; /* its latest pthread_create */
    uint64_t self;       /* its pthread_t, from THREAD_START */
    struct open_call open[MAX_OPEN];
    int nopen;
};

struct tobj {
    int owner_depth;
    int32_t owner;
    int32_t readers; /* read locks of a rwlock held */
    int64_t waiters;
    int32_t unlock_tid, signal_tid, post_tid, arrive_tid;
    int64_t unlock_ns, signal_ns, post_ns, arrive_ns;
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
};

struct tl {
    const struct ptt_tl_callbacks *cb;
    void *arg;
    struct ptt_names *names;
    struct ptt_hmap threads, objects, ends, procs, created;
};

const char *ptt_tl_state_name(enum ptt_tl_state s)
{
    static const char *const n[] = {
#define PTT_STATE(id, name, rgb, cname) [PTT_TL_##id] = name,
#include "states.def"
    };
    return s < PTT_TL_NSTATES ? n[s] : "?";
}

uint32_t ptt_tl_state_rgb(enum ptt_tl_state s)
{
    static const uint32_t c[] = {
#define PTT_STATE(id, name, rgb, cname) [PTT_TL_##id] = rgb,
#include "states.def"
    };
    return s < PTT_TL_NSTATES ? c[s] : 0x808080;
}

const char *ptt_tl_state_cname(enum ptt_tl_state s)
{
    static const char *const n[] = {
#define PTT_STATE(id, name, rgb, cname) [PTT_TL_##id] = cname,
#include "states.def"
    };
    return s < PTT_TL_NSTATES ? n[s] : "generic_work";
}

const char *ptt_tl_link_name(enum ptt_tl_link k)
{
    static const char *n[] = {"create", "join", "wake", "handoff", "release", "post"};
    return k < PTT_TL_NLINKS ? n[k] : "?";
}

/* The state a call blocks in from its start (waits), or PTT_TL_RUNNING for calls that block
 * only once they report they must wait (locks: MUTEX_WAIT...), or that never block. */
static enum ptt_tl_state blocks_at_start(const struct ptt_ev *in)
{
    switch (in->id) {
    case PTT_EV_COND_WAIT_IN:
    case PTT_EV_COND_TIMEDWAIT_IN:
    case PTT_EV_COND_CLOCKWAIT_IN: return PTT_TL_COND;
    case PTT_EV_BARRIER_WAIT_IN: return PTT_TL_BARRIER;
    case PTT_EV_THREAD_JOIN_IN:
    case PTT_EV_THREAD_TIMEDJOIN_NP_IN: return PTT_TL_JOIN;
    case PTT_EV_SIGNAL_WAIT_IN:
    case PTT_EV_SIGNAL_WAITINFO_IN:
    case PTT_EV_SIGNAL_TIMEDWAIT_IN: return PTT_TL_SIGNAL;
    case PTT_EV_MQ_SEND_IN:
    case PTT_EV_MQ_TIMEDSEND_IN:
    case PTT_EV_MQ_RECEIVE_IN:
    case PTT_EV_MQ_TIMEDRECEIVE_IN: return PTT_TL_MQ;
    case PTT_EV_THREAD_ONCE_IN: /* state 1: another thread runs the routine: this one waits */
        return in->nargs > 2 && in->args[2] == 1 ? PTT_TL_ONCE : PTT_TL_RUNNING;
    default: return PTT_TL_RUNNING;
    }
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

/* A call ends (returns, or the thread ends inside it). */
static void close_call(struct tl *t, struct tthread *th, struct open_call *c, int64_t ns,
                       int unfinished)
{
    if (c->block_from >= 0) {
        if (t->cb->state)
            t->cb->state(t->arg, th->pid, th->tid, c->state, c->block_from, ns,
                         c->in.nargs ? c->in.args[0] : 0, c->in.id);
        if (c->state == PTT_TL_MUTEX || c->state == PTT_TL_RWLOCK || c->state == PTT_TL_SPIN ||
            c->state == PTT_TL_SEM)
            waiters(t, th->pid, c->in.args[0], PTT_CLASS_OF(c->in.id), ns, -1);
    }
    if (t->cb->call)
        t->cb->call(t->arg, &c->in, ns, unfinished);
}

static struct tthread *thread_of(struct tl *t, const struct ptt_ev *ev)
{
    struct tthread *th =
        ptt_hmap_get(&t->threads, ptt_key2((uint64_t)ev->pid, (uint64_t)ev->tid), sizeof *th);
    if (!th->begun) {
        th->begun = 1;
        th->pid = ev->pid;
        th->tid = ev->tid;
        struct tproc *p = ptt_hmap_get(&t->procs, (uint64_t)(uint32_t)ev->pid, sizeof *p);
        if (!p->begun) {
            p->begun = 1;
            p->pid = ev->pid;
            if (t->cb->process)
                t->cb->process(t->arg, ev->pid, ev->ns, 1);
        }
        if (t->cb->thread)
            t->cb->thread(t->arg, ev->pid, ev->tid, ev->ns, 1,
                          ptt_names_thread(t->names, ev->pid, ev->tid));
    }
    return th;
}

static void thread_end(struct tl *t, struct tthread *th, int64_t ns)
{
    while (th->nopen) /* unwound (cancel, pthread_exit) or never left */
        close_call(t, th, &th->open[--th->nopen], ns, 1);
    if (!th->ended && t->cb->thread)
        t->cb->thread(t->arg, th->pid, th->tid, ns, 0, NULL);
    th->ended = 1;
}

/* A semaphore's value, as its wait, post and getvalue events read it (their field "value"). in:
 * the call's IN event, whose first field is the semaphore (not sem_open's: its flags). */
static void sem_value(struct tl *t, const struct ptt_ev *ev, const struct ptt_ev *in)
{
    if (PTT_CLASS_OF(ev->id) != PTT_CLASS_sem || !t->cb->counter || !in->info || !in->nargs ||
        !in->info->nfields || in->info->fields[0].type != PTT_F_OBJ)
        return;
    for (unsigned i = 0; i < ev->info->nargs && i < ev->nargs; i++)
        if (ev->info->fields[i].name_len == 5 && !memcmp(ev->info->fields[i].name, "value", 5)) {
            t->cb->counter(t->arg, ev->pid, in->args[0], PTT_CLASS_sem, "value", ev->ns,
                           (int64_t)ev->args[i]);
            return;
        }
}

static int ok(const struct ptt_ev *ev)
{
    return ev->nargs && (ev->args[0] == 0 || (int64_t)ev->args[0] == EOWNERDEAD);
}

static void on_event(struct tl *t, const struct ptt_ev *ev)
{
    if (t->cb->event)
        t->cb->event(t->arg, ev);
    const struct ptt_evinfo *info = ev->info;
    if (!info)
        return;
    struct tthread *th = thread_of(t, ev);
    th->last = ev->ns;
    struct tproc *p = ptt_hmap_get(&t->procs, (uint64_t)(uint32_t)ev->pid, sizeof *p);
    p->last = ev->ns;
    /* A signal handler's calls nest inside the call they interrupted, like any other. */
    uint64_t a0 = ev->nargs ? ev->args[0] : 0;
    int cls = PTT_CLASS_OF(ev->id);
    if (info->kind == PTT_KIND_IN) {
        switch (ev->id) {
        case PTT_EV_THREAD_CREATE_IN: th->last_create = ev->ns; break;
        case PTT_EV_MUTEX_UNLOCK_IN:
        case PTT_EV_RWLOCK_UNLOCK_IN:
        case PTT_EV_SPIN_UNLOCK_IN: {
            struct tobj *o = obj(t, ev->pid, a0);
            o->unlock_tid = ev->tid;
            o->unlock_ns = ev->ns;
            if (ev->id == PTT_EV_RWLOCK_UNLOCK_IN && o->owner != ev->tid)
                readers(t, ev->pid, a0, ev->ns, -1); /* not its writer: one of its readers */
            else
                owner(t, ev->pid, a0, cls, ev->tid, ev->ns, 0);
            break;
        }
        case PTT_EV_COND_WAIT_IN:
        case PTT_EV_COND_TIMEDWAIT_IN:
        case PTT_EV_COND_CLOCKWAIT_IN:
            if (ev->nargs > 1) { /* the mutex is released while it waits */
                struct tobj *o = obj(t, ev->pid, ev->args[1]);
                o->owner_depth = 1;
                owner(t, ev->pid, ev->args[1], PTT_CLASS_mutex, ev->tid, ev->ns, 0);
            }
            break;
        case PTT_EV_COND_SIGNAL_IN:
        case PTT_EV_COND_BROADCAST_IN: {
            struct tobj *o = obj(t, ev->pid, a0);
            o->signal_tid = ev->tid;
            o->signal_ns = ev->ns;
            break;
        }
        case PTT_EV_SEM_POST_IN: {
            struct tobj *o = obj(t, ev->pid, a0);
            o->post_tid = ev->tid;
            o->post_ns = ev->ns;
            break;
        }
        case PTT_EV_BARRIER_WAIT_IN: {
            struct tobj *o = obj(t, ev->pid, a0);
            o->arrive_tid = ev->tid;
            o->arrive_ns = ev->ns;
            break;
        }
        default: break;
        }
        sem_value(t, ev, ev);
        if (info->noreturn)
            return;
        if (th->nopen < MAX_OPEN) {
            struct open_call *c = &th->open[th->nopen++];
            c->in = *ev;
            c->state = blocks_at_start(ev);
            c->block_from = c->state != PTT_TL_RUNNING ? ev->ns : -1;
        }
        return;
    }
    if (info->kind == PTT_KIND_OUT) {
        int i;
        for (i = th->nopen - 1; i >= 0; i--) {
            const struct ptt_evinfo *in = ptt_evinfo(th->open[i].in.id);
            if (in && !strcmp(in->routine, info->routine))
                break;
        }
        if (i < 0)
            return;
        struct open_call c = th->open[i];
        th->nopen = i;
        close_call(t, th, &c, ev->ns, 0);
        switch (c.in.id) {
        case PTT_EV_MUTEX_LOCK_IN:
        case PTT_EV_MUTEX_TRYLOCK_IN:
        case PTT_EV_MUTEX_TIMEDLOCK_IN:
        case PTT_EV_MUTEX_CLOCKLOCK_IN:
        case PTT_EV_RWLOCK_WRLOCK_IN:
        case PTT_EV_RWLOCK_TRYWRLOCK_IN:
        case PTT_EV_RWLOCK_TIMEDWRLOCK_IN:
        case PTT_EV_RWLOCK_CLOCKWRLOCK_IN:
        case PTT_EV_SPIN_LOCK_IN:
        case PTT_EV_SPIN_TRYLOCK_IN:
            if (ok(ev))
                owner(t, ev->pid, c.in.args[0], PTT_CLASS_OF(c.in.id), ev->tid, ev->ns, 1);
            break;
        case PTT_EV_RWLOCK_RDLOCK_IN:
        case PTT_EV_RWLOCK_TRYRDLOCK_IN:
        case PTT_EV_RWLOCK_TIMEDRDLOCK_IN:
        case PTT_EV_RWLOCK_CLOCKRDLOCK_IN:
            if (ok(ev))
                readers(t, ev->pid, c.in.args[0], ev->ns, 1);
            break;
        case PTT_EV_THREAD_CREATE_IN:
            if (ok(ev) && ev->nargs > 1) {
                struct created *cr =
                    ptt_hmap_get(&t->created, ptt_key2((uint64_t)ev->pid, ev->args[1]), sizeof *cr);
                cr->state = cr->state == 2 ? 0 : 1;
                cr->in_ns = c.in.ns;
            }
            break;
        case PTT_EV_THREAD_JOIN_IN:
        case PTT_EV_THREAD_TIMEDJOIN_NP_IN:
        case PTT_EV_THREAD_TRYJOIN_NP_IN:
            if (ok(ev)) {
                struct ended *e =
                    ptt_hmap_get(&t->ends, ptt_key2((uint64_t)ev->pid, c.in.args[0]), 0);
                if (e)
                    link(t, PTT_TL_JOIN_LINK, ev->pid, e->tid, e->ns, ev->tid, ev->ns,
                         c.in.args[0]);
            }
            break;
        default: break;
        }
        sem_value(t, ev, &c.in);
        return;
    }
    switch (ev->id) { /* STATE and META events */
    case PTT_EV_MUTEX_WAIT:
    case PTT_EV_RWLOCK_WAIT:
    case PTT_EV_SPIN_WAIT:
    case PTT_EV_SEM_BLOCK:
        if (th->nopen && th->open[th->nopen - 1].block_from < 0) {
            struct open_call *c = &th->open[th->nopen - 1];
            c->block_from = ev->ns;
            c->state = ev->id == PTT_EV_MUTEX_WAIT    ? PTT_TL_MUTEX
                       : ev->id == PTT_EV_RWLOCK_WAIT ? PTT_TL_RWLOCK
                       : ev->id == PTT_EV_SPIN_WAIT   ? PTT_TL_SPIN
                                                      : PTT_TL_SEM;
            waiters(t, ev->pid, a0, cls, ev->ns, 1);
        }
        break;
    case PTT_EV_MUTEX_ACQUIRED:
    case PTT_EV_RWLOCK_ACQUIRED:
    case PTT_EV_SPIN_ACQUIRED: {
        struct tobj *o = obj(t, ev->pid, a0);
        if (o->unlock_tid != ev->tid)
            link(t, PTT_TL_HANDOFF, ev->pid, o->unlock_tid, o->unlock_ns, ev->tid, ev->ns, a0);
        break;
    }
    case PTT_EV_SEM_ACQUIRED: {
        struct tobj *o = obj(t, ev->pid, a0);
        if (o->post_tid != ev->tid)
            link(t, PTT_TL_POST, ev->pid, o->post_tid, o->post_ns, ev->tid, ev->ns, a0);
        break;
    }
    case PTT_EV_COND_WOKEN: {
        struct tobj *o = obj(t, ev->pid, a0);
        if (ev->nargs > 2 && ev->args[2] == 0 && o->signal_tid != ev->tid)
            link(t, PTT_TL_WAKE, ev->pid, o->signal_tid, o->signal_ns, ev->tid, ev->ns, a0);
        if (ev->nargs > 1)
            owner(t, ev->pid, ev->args[1], PTT_CLASS_mutex, ev->tid, ev->ns, 1);
        break;
    }
    case PTT_EV_BARRIER_RELEASED: {
        struct tobj *o = obj(t, ev->pid, a0);
        if (o->arrive_tid != ev->tid)
            link(t, PTT_TL_RELEASE, ev->pid, o->arrive_tid, o->arrive_ns, ev->tid, ev->ns, a0);
        break;
    }
    case PTT_EV_THREAD_START:
        if (ev->nargs > 3) {
            th->self = ev->args[3];
            struct tthread *cr =
                ptt_hmap_get(&t->threads, ptt_key2((uint64_t)ev->pid, ev->args[2]), 0);
            struct created *made =
                ptt_hmap_get(&t->created, ptt_key2((uint64_t)ev->pid, ev->args[3]), sizeof *made);
            int64_t from = made->state == 1 ? made->in_ns : cr ? cr->last_create : 0;
            made->state = made->state == 1 ? 0 : 2;
            if (cr)
                link(t, PTT_TL_CREATE, ev->pid, cr->tid, from, ev->tid, ev->ns, ev->args[3]);
        }
        break;
    case PTT_EV_THREAD_END:
        if (th->self) {
            struct ended *e =
                ptt_hmap_get(&t->ends, ptt_key2((uint64_t)ev->pid, th->self), sizeof *e);
            e->tid = ev->tid;
            e->ns = ev->ns;
        }
        thread_end(t, th, ev->ns);
        break;
    case PTT_EV_TRACE_UNFINISHED:
        if (th->nopen) {
            struct open_call c = th->open[--th->nopen];
            close_call(t, th, &c, ev->ns, 1);
        }
        break;
    case PTT_EV_THREAD_CANCELLED:
        while (th->nopen) {
            struct open_call c = th->open[--th->nopen];
            close_call(t, th, &c, ev->ns, 1);
        }
        break;
    case PTT_EV_PROCESS_EXIT:
        if (!p->ended && t->cb->process)
            t->cb->process(t->arg, ev->pid, ev->ns, 0);
        p->ended = 1;
        break;
    default: break;
    }
}

int ptt_timeline_run(const char *path, struct ptt_names *names, const struct ptt_tl_callbacks *cb,
                     void *arg, char *err, size_t errlen)
{
    struct ptt_reader *r = ptt_reader_open(path, err, errlen);
    if (!r)
        return -1;
    struct tl t = {cb, arg, names, {0}, {0}, {0}, {0}, {0}};
    struct ptt_ev ev;
    int64_t end = 0;
    while (ptt_reader_next(r, &ev)) {
        ptt_names_event(names, &ev);
        on_event(&t, &ev);
        end = ev.ns;
    }
    /* What was still going on at the end: threads, then processes. */
    for (size_t i = 0; i < t.threads.cap; i++) {
        struct tthread *th = ptt_hmap_slot(&t.threads, i);
        if (th && !th->ended)
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
    return e ? -1 : 0;
}
