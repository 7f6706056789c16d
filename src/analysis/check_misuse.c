/* The rules checked as the events come: misuse of the API (unlocks, destroys, condvar waits,
 * joins, uses of objects never initialised or destroyed, locks held when a thread or process
 * ends) and calls that returned an error. A call that fails because of a misuse gives the misuse
 * only (th->explained). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "analysis/check_int.h"
#include "analysis/tracker_feed.h"
#include "ptt_fields.h"

/* A finding's path, out of the per-event one (its buffers would weigh on every event). */
#define RARE __attribute__((cold, noinline))

/* Finding keys: what the rule is, and where. */
static uint64_t fkey(char rule, int32_t pid, uint64_t a, uint64_t b)
{
    return ptt_key2(ptt_key2((uint32_t)pid * 131ull + (unsigned char)rule, a), b);
}

/* A misuse at the call ev of th about object o: the finding, with th and o first. */
static struct ptt_finding *misuse(struct ptt_check *c, struct cthread *th, const struct ptt_ev *ev,
                                  const struct cobj *o, char rule, const char *what,
                                  const char *summary)
{
    uint64_t site = check_site_of(ev);
    struct ptt_finding *f =
        check_add(c, PTT_FK_MISUSE, what, fkey(rule, ev->pid, o->addr, site), summary);
    th->explained = 1;
    if (f->count > 1)
        return NULL;
    check_fthread(f, th->pid, th->tid);
    check_fobject(f, o->pid, o->cls, o->addr);
    return f;
}

static void step_call(struct ptt_finding *f, const struct ptt_ev *ev, const char *action,
                      int object)
{
    check_fstep(f, ev->pid, ev->tid, ev->id, action, object, check_site_of(ev), ev->ns);
}

/* Where a thread took an object it holds, as a step. */
static void step_took(struct ptt_finding *f, struct cthread *owner, uint64_t obj, int object)
{
    struct ptt_held *h = owner ? ptt_tthread_holds(owner->tt, obj) : NULL;
    if (h)
        check_fstep(f, owner->pid, owner->tid, 0, "took", object, h->site, h->ns);
}

/* ---- where an object lives: a binary's data, a stack, or elsewhere (the heap) ---- */

static int on_stack_or_static(struct ptt_check *c, int32_t pid, uint64_t addr)
{
    struct cproc *p = check_proc(c, pid);
    for (size_t i = 0; i < p->nmods; i++)
        if (addr >= p->mods[i].lo && addr < p->mods[i].hi)
            return 1;
    if (!p->top || addr > p->top) /* the main thread's stack is above every mapped binary */
        return 1;
    for (struct cthread *th = p->threads; th; th = th->next) {
        if (!th->handle)
            continue;
        /* glibc puts a thread's descriptor (its pthread_t) at the top of its stack. */
        uint64_t size = th->stacksize > (16u << 20) ? th->stacksize : 16u << 20;
        if (addr <= th->handle + 65536 && addr + size >= th->handle)
            return 1;
    }
    return 0;
}

/* Whether a call site is in a system header (C++'s std::mutex and std::condition_variable call
 * through libstdc++'s inline wrappers, and are initialised without any call by design). */
static int system_site(struct ptt_check *c, int32_t pid, uint64_t site)
{
    const char *s = c->names && site ? ptt_names_site(c->names, pid, site) : NULL;
    return !s || ptt_names_site_in_system_header(c->names, pid, site);
}

/* The first use of an object no init reached: a static initialiser is fine in a binary's data
 * or on a stack; a barrier, a semaphore and a spinlock have none. */
RARE static void check_uninit(struct ptt_check *c, struct cthread *th, const struct ptt_ev *ev,
                              struct cobj *o)
{
    o->reported = 1;
    int static_ok =
        o->cls == PTT_CLASS_mutex || o->cls == PTT_CLASS_cond || o->cls == PTT_CLASS_rwlock;
    if (c->partial || !th->complete)
        return;
    if (static_ok && (th->proc->cxx || on_stack_or_static(c, ev->pid, o->addr) ||
                      system_site(c, ev->pid, check_site_of(ev))))
        return;
    char s[200];
    snprintf(s, sizeof s, "{t0} uses {o0}, which no %s reached%s",
             o->cls == PTT_CLASS_sem ? "sem_init" : "init call",
             static_ok ? " (it is not in static memory, where an initialiser would do)" : "");
    struct ptt_finding *f = misuse(c, th, ev, o, 'I', "use of an object never initialised", s);
    if (f)
        step_call(f, ev, "uses", 0);
}

RARE static void check_destroyed(struct ptt_check *c, struct cthread *th, const struct ptt_ev *ev,
                                 struct cobj *o)
{
    /* A condvar and a rwlock may be destroyed and their memory given to a new one set up by a
     * static initialiser (C++'s do): nothing tells the two apart. In a partial trace, the init
     * that made it new may be among the events not seen. */
    if (o->cls == PTT_CLASS_cond || o->cls == PTT_CLASS_rwlock || c->partial)
        return;
    char s[200];
    snprintf(s, sizeof s, "{t0} uses {o0} after it was destroyed");
    struct ptt_finding *f = misuse(c, th, ev, o, 'D', "use of a destroyed object", s);
    if (!f)
        return;
    check_fthread(f, ev->pid, o->destroy_tid);
    check_fstep(f, ev->pid, o->destroy_tid, 0, "destroyed", 0, o->destroy_site, o->destroy_ns);
    step_call(f, ev, "uses", 0);
}

/* Any call on an object other than its init. */
static inline void use(struct ptt_check *c, struct cthread *th, const struct ptt_ev *ev,
                       struct cobj *o)
{
    if (o->destroyed)
        check_destroyed(c, th, ev, o);
    else if (!o->inited && !o->reported)
        check_uninit(c, th, ev, o);
    o->reported = 1;
}

/* ---- unlocks ---- */

/* An unlock of a lock th does not hold. */
RARE static void unlock_not_held(struct ptt_check *c, struct cthread *th, const struct ptt_ev *ev,
                                 struct cobj *o)
{
    if (o->cls == PTT_CLASS_rwlock && o->readers && !o->owner)
        return; /* read locks: which thread holds which is not kept (a reader may unlock) */
    struct cthread *owner = o->owner ? check_thread(c, ev->pid, o->owner) : NULL;
    struct ptt_finding *f;
    char s[200];
    if (owner && owner != th) {
        th->foreign = o->addr;
        snprintf(s, sizeof s, "{t0} unlocks {o0}, which {t1} holds%s",
                 owner->ended ? " (it ended without unlocking it)" : "");
        f = misuse(c, th, ev, o, 'O', "unlock of a lock another thread holds", s);
        if (f) {
            check_fthread(f, owner->pid, owner->tid);
            step_took(f, owner, o->addr, 0);
        }
    } else if (o->cls == PTT_CLASS_mutex && o->mtype == 1) {
        f = misuse(c, th, ev, o, 'R', "recursive mutex unlocked more than locked",
                   "{t0} unlocks recursive {o0} once more than it locked it");
    } else if (o->last_unlock_ns) {
        f = misuse(c, th, ev, o, 'N', "double unlock",
                   "{t0} unlocks {o0} again: it was already unlocked");
    } else {
        snprintf(s, sizeof s, "{t0} unlocks {o0}, which no thread holds");
        f = misuse(c, th, ev, o, 'N', "unlock of a lock not held", s);
    }
    if (f) {
        if (o->last_unlock_ns)
            check_fstep(f, ev->pid, o->last_unlock_tid, 0, "unlocked", 0, o->last_unlock_site,
                        o->last_unlock_ns);
        step_call(f, ev, "unlocks", 0);
    }
}

static void unlock(struct ptt_check *c, struct cthread *th, const struct ptt_ev *ev, struct cobj *o)
{
    if (!ptt_tthread_holds(th->tt, o->addr) && !c->partial && th->complete)
        unlock_not_held(c, th, ev, o);
}

/* ---- condvar waits ---- */

static void cond_wait(struct ptt_check *c, struct cthread *th, const struct ptt_ev *ev,
                      struct cobj *cv)
{
    uint64_t m;
    if (!ptt_ev_role_get(ev, PTT_RF_LOCK, &m))
        return;
    struct cobj *mo = check_obj(c, ev->pid, m, PTT_CLASS_mutex);
    use(c, th, ev, mo);
    struct ptt_finding *f;
    if (!ptt_tthread_holds(th->tt, m) && !c->partial && th->complete) {
        f = misuse(c, th, ev, cv, 'W', "condvar wait without holding its mutex",
                   "{t0} waits on {o0} with {o1}, which it does not hold");
        if (f) {
            check_fobject(f, mo->pid, mo->cls, mo->addr);
            step_call(f, ev, "waits on", 0);
        }
    }
    if (cv->waiters && cv->wait_mutex && cv->wait_mutex != m) {
        struct cobj *old = check_obj(c, ev->pid, cv->wait_mutex, PTT_CLASS_mutex);
        f = misuse(c, th, ev, cv, '2', "one condvar waited on with two mutexes",
                   "{t0} waits on {o0} with {o2} while {t1} waits on it with {o1}: all the "
                   "waits of a condvar must use one mutex");
        if (f) {
            check_fthread(f, ev->pid, cv->wait_tid);
            check_fobject(f, old->pid, old->cls, old->addr);
            check_fobject(f, mo->pid, mo->cls, mo->addr);
            check_fstep(f, ev->pid, cv->wait_tid, 0, "waits with", 1, cv->wait_site, cv->wait_ns);
            step_call(f, ev, "waits with", 2);
        }
    }
}

/* ---- destroys ---- */

RARE static void destroy(struct ptt_check *c, struct cthread *th, const struct ptt_ev *ev,
                         struct cobj *o)
{
    struct ptt_finding *f;
    char s[200];
    if (o->owner || o->readers) {
        struct cthread *owner = o->owner ? check_thread(c, ev->pid, o->owner) : NULL;
        snprintf(s, sizeof s, "{t0} destroys {o0} while %s holds it",
                 owner && owner != th ? "{t1}"
                 : o->owner           ? "it"
                                      : "a reader");
        f = misuse(c, th, ev, o, 'B', "destroying a locked object", s);
        if (f) {
            if (owner)
                check_fthread(f, owner->pid, owner->tid);
            step_took(f, owner, o->addr, 0);
            step_call(f, ev, "destroys", 0);
        }
    } else if (o->waiters) {
        snprintf(s, sizeof s, "{t0} destroys {o0} while {t1} waits on it");
        f = misuse(c, th, ev, o, 'B', "destroying an object in use", s);
        if (f) {
            check_fthread(f, ev->pid, o->wait_tid);
            check_fstep(f, ev->pid, o->wait_tid, 0, "waits on", 0, o->wait_site, o->wait_ns);
            step_call(f, ev, "destroys", 0);
        }
    }
}

/* ---- joins ---- */

RARE static void join(struct ptt_check *c, struct cthread *th, const struct ptt_ev *ev)
{
    uint64_t handle = ptt_ev_role(ev, PTT_RF_OBJECT, 0);
    struct chandle *h = ptt_hmap_get(&c->handles, ptt_key2((uint32_t)ev->pid, handle), 0);
    if (!h)
        return;
    struct cthread *t = h->th;
    int detached = t ? t->detached : h->detached;
    if (!detached && !(t && t->joined))
        return;
    struct cobj key = {.pid = ev->pid, .cls = PTT_CLASS_thread, .addr = handle};
    struct ptt_finding *f =
        detached ? misuse(c, th, ev, &key, 'J', "join of a detached thread",
                          "{t0} joins {o0}, a detached thread: it cannot be joined")
                 : misuse(c, th, ev, &key, 'J', "second join of a thread",
                          "{t0} joins {o0} again: it was already joined, and its handle may "
                          "now be another thread's");
    if (!f)
        return;
    if (t)
        f->objects[0].tid = t->tid;
    step_call(f, ev, "joins", 0);
}

/* ---- errors ---- */

/* The errno a call's OUT event reports, 0 if it succeeded. */
static int call_errno(const struct ptt_ev *out)
{
    const struct ptt_evinfo *e = out->info;
    if (e->nargs == 1 && e->fields[0].type == PTT_F_RET) /* most: the result alone */
        return out->nargs && (int64_t)out->args[0] > 0 && (int64_t)out->args[0] < 4096
                   ? (int)out->args[0]
                   : 0;
    int64_t ret = 0;
    int has_ret = 0;
    for (unsigned i = 0; i < e->nargs && i < out->nargs; i++) {
        if (e->fields[i].type == PTT_F_RET && (int64_t)out->args[i] > 0 &&
            (int64_t)out->args[i] < 4096)
            return (int)out->args[i];
        if (e->fields[i].type == PTT_F_INT && !strncmp(e->fields[i].name, "ret", 3))
            ret = (int64_t)out->args[i], has_ret = 1;
        if (e->fields[i].type == PTT_F_ERRNO && has_ret && ret == -1)
            return (int)out->args[i];
    }
    return 0;
}

/* Whether an error is a call's ordinary answer: a try's EBUSY, a timed wait's timeout. */
static int ordinary(const struct ptt_evinfo *in, int err)
{
    if (err == EINTR || (err == EAGAIN && in->okind == PTT_CLASS_signal))
        return 1;
    int blocks = (in->rflags & PTT_ROLEF_BLOCKS) != 0;
    if ((err == EBUSY || err == EAGAIN) && !blocks &&
        (in->role == PTT_ROLE_ACQUIRE || in->role == PTT_ROLE_WAIT))
        return 1;
    /* A condvar's, a join's or a semaphore's timeout is how a periodic loop wakes; a timed lock
     * that gives up is worth a look. */
    return err == ETIMEDOUT && (in->role == PTT_ROLE_WAIT || (in->rflags & PTT_ROLEF_COUNTED));
}

static void error(struct ptt_check *c, const struct ptt_ev *in, int err, uint16_t out_id)
{
    (void)out_id;
    uint64_t site = check_site_of(in);
    struct ptt_finding *f = check_add(c, PTT_FK_ERROR, "error",
                                      fkey('E', in->pid, site ? site : in->id, (uint64_t)err), "");
    check_fthread(f, in->pid, in->tid);
    if (f->count > 1)
        return;
    f->err = err;
    uint64_t v;
    int k = -1;
    if (ptt_ev_role_get(in, PTT_RF_OBJECT, &v))
        k = check_fobject(f, in->pid, in->info->okind, v);
    if (ptt_ev_role_get(in, PTT_RF_LOCK, &v))
        check_fobject(f, in->pid, PTT_CLASS_mutex, v);
    snprintf(f->summary, sizeof f->summary, "%s%s returned %s", in->info->routine,
             k >= 0 ? " on {o0}" : "", strerrorname_np(err) ? strerrorname_np(err) : "an error");
    check_fstep(f, in->pid, in->tid, in->id, "fails on", k, site, in->ns);
}

/* A call returned: its error, unless a misuse explained it or it is the call's ordinary answer. */
static void call_returned(struct ptt_check *c, struct cthread *th, const struct ptt_ev *out,
                          const struct ptt_open *call, int err)
{
    const struct ptt_evinfo *in = call->in.info;
    int explained = th->explained;
    th->explained = 0;
    if (!err || explained || ordinary(in, err))
        return;
    if (in->okind < PTT_CLASS_thread || in->okind > PTT_CLASS_sched)
        return;              /* timers and message queues: not this checker's */
    if (err == EOWNERDEAD) { /* an error only if the program does not make it consistent */
        th->dead_obj = call->object;
        th->dead_site = call->site;
        th->dead_ns = call->in.ns;
        th->dead_call = call->in.id;
        return;
    }
    error(c, &call->in, err, out->id);
}

/* An EOWNERDEAD lock released (or its thread ended) without pthread_mutex_consistent. */
static void dead_ignored(struct ptt_check *c, struct cthread *th)
{
    struct ptt_ev in = {.pid = th->pid,
                        .tid = th->tid,
                        .id = th->dead_call,
                        .info = ptt_evinfo(th->dead_call),
                        .ns = th->dead_ns};
    if (!in.info)
        return;
    in.nargs = in.info->nargs;
    for (unsigned i = 0; i < in.nargs; i++)
        in.args[i] = in.info->fields[i].type == PTT_F_SITE      ? th->dead_site
                     : (int)i == in.info->rfield[PTT_RF_OBJECT] ? th->dead_obj
                                                                : 0;
    th->dead_obj = 0;
    error(c, &in, EOWNERDEAD, 0);
}

/* ---- locks held at the end of a thread or a process ---- */

static void held_at_end(struct ptt_check *c, struct cthread *th, const struct ptt_held *h,
                        int64_t ns, int process)
{
    struct cobj *o = check_obj(c, th->pid, h->object, h->cls);
    if (o->robust || c->partial)
        return; /* the next owner is told (EOWNERDEAD); the unlock may be among events not seen */
    char s[200];
    snprintf(s, sizeof s, "%s",
             process ? "the process ends while {t0} holds {o0}"
                     : "{t0} ends holding {o0}: no other thread can take it");
    struct ptt_finding *f = check_add(
        c, PTT_FK_MISUSE, process ? "process ends holding a lock" : "thread ends holding a lock",
        fkey(process ? 'P' : 'T', th->pid, h->object, h->site), s);
    if (f->count > 1)
        return;
    check_fthread(f, th->pid, th->tid);
    int k = check_fobject(f, o->pid, o->cls, o->addr);
    check_fstep(f, th->pid, th->tid, 0, "took", k, h->site, h->ns);
    check_fstep(f, th->pid, th->tid, 0, process ? "process ends" : "ends", -1, 0, ns);
}

void check_thread_end(struct ptt_check *c, struct cthread *th, const struct ptt_ev *ev)
{
    if (th->dead_obj)
        dead_ignored(c, th);
    for (unsigned i = 0; i < th->tt->nheld; i++)
        held_at_end(c, th, &th->tt->held[i], ev->ns, 0);
    th->ended = 1;
}

/* A process exited by itself: the locks its threads still hold, unless they are blocked (the
 * program is stopping them), or the thread was inside that lock's unlock (the exit cut it short:
 * lib/record.h, which may have unlocked). */
void check_process_end(struct ptt_check *c, int32_t pid, int64_t ns)
{
    for (struct cthread *th = check_proc(c, pid)->threads; th; th = th->next) {
        if (th->ended || !th->tt->nheld)
            continue;
        struct ptt_open *o = ptt_tthread_call(th->tt);
        if (o && o->block != PTT_OPEN_RUNNING)
            continue;
        for (unsigned k = 0; k < th->tt->nheld; k++)
            if (!o || o->object != th->tt->held[k].object || !o->in.info ||
                o->in.info->role != PTT_ROLE_RELEASE)
                held_at_end(c, th, &th->tt->held[k], ns, 1);
    }
}

/* ---- the dispatch ---- */

static void signal_call(const struct ptt_ev *ev, struct cobj *o)
{
    o->signals++;
    o->signal_unheard = !o->waiters;
    o->signal_ns = ev->ns;
    o->signal_site = check_site_of(ev);
    o->signal_tid = ev->tid;
    o->signal_call = ev->id;
}

static int lock_class(int cls)
{
    return cls == PTT_CLASS_mutex || cls == PTT_CLASS_rwlock || cls == PTT_CLASS_spin;
}

static int sync_class(int cls)
{
    return lock_class(cls) || cls == PTT_CLASS_cond || cls == PTT_CLASS_barrier ||
           cls == PTT_CLASS_sem;
}

static void check_misuse_before(struct ptt_check *c, struct cthread *th, const struct ptt_ev *ev)
{
    const struct ptt_evinfo *e = ev->info;
    if (e->kind != PTT_KIND_IN) {
        if (ev->id == PTT_EV_MUTEX_INIT) {
            struct cobj *o =
                check_obj(c, ev->pid, ptt_ev_arg(ev, PTT_F(MUTEX_INIT, mutex), 0), PTT_CLASS_mutex);
            o->mtype = (int)ptt_ev_arg(ev, PTT_F(MUTEX_INIT, type), 0);
            o->robust = ptt_ev_arg(ev, PTT_F(MUTEX_INIT, robust), 0) != 0;
        }
        return;
    }
    if (e->role == PTT_ROLE_WAIT && e->okind == PTT_CLASS_thread) {
        join(c, th, ev);
        return;
    }
    uint64_t addr;
    if (!sync_class(e->okind) || !ptt_ev_role_get(ev, PTT_RF_OBJECT, &addr))
        return;
    struct cobj *o = check_obj(c, ev->pid, addr, e->okind);
    if (e->role == PTT_ROLE_CREATE)
        return;
    if (e->role != PTT_ROLE_DESTROY || !o->destroyed)
        use(c, th, ev, o);
    else
        check_destroyed(c, th, ev, o);
    switch (e->role) {
    case PTT_ROLE_RELEASE: {
        struct ptt_held *h = ptt_tthread_holds(th->tt, addr);
        if (h && h->shared && o->readers)
            o->readers--;
        if (th->dead_obj == addr)
            dead_ignored(c, th);
        unlock(c, th, ev, o);
        break;
    }
    case PTT_ROLE_DESTROY: destroy(c, th, ev, o); break;
    case PTT_ROLE_SIGNAL: signal_call(ev, o); break;
    case PTT_ROLE_WAIT:
        if (e->okind == PTT_CLASS_cond)
            cond_wait(c, th, ev, o);
        break;
    case PTT_ROLE_ACQUIRE:
        if (lock_class(e->okind) && (e->rflags & PTT_ROLEF_BLOCKS) &&
            !ptt_tthread_holds(th->tt, addr))
            check_order_acquire(c->order, th, ev, addr, (e->rflags & PTT_ROLEF_SHARED) != 0);
        break;
    case PTT_ROLE_USE:
        if (ev->id == PTT_EV_MUTEX_CONSISTENT_IN && th->dead_obj == addr)
            th->dead_obj = 0;
        break;
    default: break;
    }
}

/* A wait that counts as a waiter of its object: on a condvar, a barrier, a semaphore. */
static inline int waiter_call(const struct ptt_open *o)
{
    const struct ptt_evinfo *e = o->in.info;
    return !o->frame && e && (e->rflags & PTT_ROLEF_BLOCKS) &&
           ((e->role == PTT_ROLE_WAIT &&
             (e->okind == PTT_CLASS_cond || e->okind == PTT_CLASS_barrier)) ||
            (e->role == PTT_ROLE_ACQUIRE && (e->rflags & PTT_ROLEF_COUNTED)));
}

static void waiter_opened(struct ptt_check *c, const struct ptt_open *w)
{
    struct cobj *o = check_obj(c, w->in.pid, w->object, w->in.info->okind);
    if (!o->waiters++) {
        o->wait_tid = w->in.tid;
        o->wait_site = w->site;
        o->wait_ns = w->in.ns;
        o->wait_mutex = ptt_ev_role(&w->in, PTT_RF_LOCK, 0);
    }
}

static void waiter_closed(struct ptt_check *c, const struct ptt_open *w)
{
    struct cobj *o = check_obj_find(c, w->in.pid, w->object);
    if (o && o->waiters && !--o->waiters)
        o->wait_mutex = 0;
}

/* An object initialized again: no signal of the ones before at its address is its. */
static void forget_signals(struct cobj *o)
{
    o->signals = 0;
    o->signal_ns = 0;
    o->signal_unheard = 0;
    o->signal_site = 0;
    o->signal_tid = 0;
    o->signal_call = 0;
}

/* A semaphore's wait or post returned without an error: who took it, and whether it is still used
 * as a lock (cobj.sem_lock). */
static void sem_done(struct cthread *th, const struct ptt_ev *out, const struct ptt_open *call,
                     struct cobj *o)
{
    const struct ptt_evinfo *in = call->in.info;
    if ((int64_t)ptt_ev_role(out, PTT_RF_VALUE, 0) > 1 || o->shared)
        o->sem_lock = -1; /* counts more than one: not a lock */
    if (in->role == PTT_ROLE_ACQUIRE) {
        o->taker = th->tid;
        o->taker_site = call->site;
        o->taker_ns = out->ns;
    } else if (in->role == PTT_ROLE_SIGNAL) {
        if (o->taker != th->tid)
            o->sem_lock = -1; /* posted by another thread than its taker: a signal */
        else if (!o->sem_lock)
            o->sem_lock = 1;
        o->taker_posted |= o->taker == th->tid;
        o->taker = 0;
    }
}

/* A call returned without an error: what it made of its object. */
static void call_done(struct ptt_check *c, struct cthread *th, const struct ptt_ev *out,
                      const struct ptt_open *call)
{
    const struct ptt_evinfo *in = call->in.info;
    if (in->role == PTT_ROLE_WAIT && in->okind == PTT_CLASS_thread) {
        struct cthread *t = check_thread_of(c, out->pid, call->object);
        if (t && (in->rflags & PTT_ROLEF_BLOCKS))
            t->joined = 1;
        return;
    }
    uint64_t obj = call->object;
    if (in->role == PTT_ROLE_CREATE && out->id == PTT_EV_SEM_OPEN_OUT)
        obj = ptt_ev_role(out, PTT_RF_OBJECT, 0);
    if (!sync_class(in->okind) || !obj)
        return;
    struct cobj *o = check_obj(c, out->pid, obj, in->okind);
    if (in->role == PTT_ROLE_CREATE) {
        o->inited = 1;
        o->destroyed = 0;
        o->shared = out->id == PTT_EV_SEM_OPEN_OUT ||
                    (call->in.id == PTT_EV_SEM_INIT_IN &&
                     ptt_ev_arg(&call->in, PTT_F(SEM_INIT_IN, pshared), 0));
        o->bcount = ptt_ev_role(&call->in, PTT_RF_COUNT, 0);
        o->opens = out->id == PTT_EV_SEM_OPEN_OUT ? o->opens + 1 : 0;
        /* A new object at the address: the posts and signals of the ones before are not its.
         * Not a sem_open: of a name already open, it gives the same semaphore again. */
        if (out->id != PTT_EV_SEM_OPEN_OUT)
            forget_signals(o);
        if (in->okind == PTT_CLASS_sem)
            o->sem_lock = !o->shared && ptt_ev_role(&call->in, PTT_RF_VALUE, 0) == 1 ? 1 : -1;
        o->taker = 0;
        o->taker_posted = 0;
    } else if (in->okind == PTT_CLASS_sem &&
               (in->role == PTT_ROLE_ACQUIRE || in->role == PTT_ROLE_SIGNAL)) {
        sem_done(th, out, call, o);
    } else if (call->in.id == PTT_EV_SEM_CLOSE_IN && o->opens > 1) {
        o->opens--; /* glibc maps a name once and counts its opens: another is still valid */
    } else if (in->role == PTT_ROLE_DESTROY) {
        o->opens = 0;
        o->destroyed = 1;
        o->destroy_ns = call->in.ns;
        o->destroy_site = call->site;
        o->destroy_tid = th->tid;
    } else if (in->role == PTT_ROLE_RELEASE) {
        th->foreign = 0;
        o->last_unlock_ns = call->in.ns;
        o->last_unlock_site = call->site;
        o->last_unlock_tid = th->tid;
        if (th->foreign == obj && o->owner && o->owner != th->tid) {
            /* glibc let another thread unlock it */
            struct cthread *owner = check_thread(c, out->pid, o->owner);
            ptt_tthread_drop(owner->tt, obj);
            c->last = th;
            o->owner = 0;
        }
    }
}

static void check_misuse_after(struct ptt_check *c, struct cthread *th, const struct ptt_ev *ev,
                               const struct ptt_track *res)
{
    if (res->what & PTT_TRK_RELEASED) {
        struct cobj *o = check_obj_find(c, ev->pid, res->released.object);
        if (o && o->owner == th->tid && !res->released.shared)
            o->owner = 0;
    }
    if (res->what & PTT_TRK_ACQUIRED) {
        struct cobj *o = check_obj(c, ev->pid, res->acquired->object, res->acquired->cls);
        if (res->acquired->shared)
            o->readers++;
        else
            o->owner = th->tid;
    }
    if ((res->what & PTT_TRK_OPENED) && waiter_call(res->opened))
        waiter_opened(c, res->opened);
    if (!(res->what & PTT_TRK_CLOSED))
        return;
    for (unsigned i = 0; i < res->nclosed; i++)
        if (waiter_call(&res->closed[i]))
            waiter_closed(c, &res->closed[i]);
    if (res->unfinished || res->closed[0].frame || !res->closed[0].in.info)
        return;
    int err = call_errno(ev);
    if (!err)
        call_done(c, th, ev, &res->closed[0]);
    call_returned(c, th, ev, &res->closed[0], err);
}

/* One event through the checker (check.h). Here, with the rules it runs before and after the
 * tracker, which the compiler then puts in line: every event comes here. */
void ptt_check_event(struct ptt_check *c, const struct ptt_ev *ev)
{
    if (!ev->info)
        return;
    c->end_ns = ev->ns;
    struct cthread *th = check_thread(c, ev->pid, ev->tid);
    if (th->proc->hung && ev->info->kind != PTT_KIND_META && ev->ns > th->proc->hung_ns)
        th->proc->hung = 0; /* it went on after a hang report (a server idle a while) */
    if (ev->info->kind == PTT_KIND_META) {
        if (ev->id == PTT_EV_TRACE_UNFINISHED)
            check_snapshot(th);
        if (check_meta_event(c, th, ev))
            return;
    }
    if (ev->info->role == PTT_ROLE_THREAD_START)
        check_thread_start(c, th, ev);
    else if (ev->info->role == PTT_ROLE_THREAD_END)
        check_thread_end(c, th, ev);
    if (ev->info->kind == PTT_KIND_IN || ev->id == PTT_EV_MUTEX_INIT) /* all it looks at */
        check_misuse_before(c, th, ev);
    struct ptt_track res;
    ptt_tracker_feed_inline(th->tt, ev, &res);
    if ((res.what & PTT_TRK_CLOSED) && !res.unfinished && ev->id == PTT_EV_THREAD_CREATE_OUT &&
        ptt_ev_arg(ev, PTT_F(THREAD_CREATE_OUT, ret), 1) == 0)
        check_thread_created(c, ev, res.closed);
    check_misuse_after(c, th, ev, &res);
}
