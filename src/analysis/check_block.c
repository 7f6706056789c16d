/* What the threads were left waiting for, at the end of the trace or of their process: a cycle
 * of threads each waiting for the next (a deadlock: a lock held by the next, or its end for a
 * join), and waits no other thread will end (a hang: a condvar nobody signals any more, a barrier
 * that cannot fill, a semaphore nobody posts, a thread that never ends, a lock whose holder has
 * ended). Hangs are told only in a process that hung: ptt trace's hang detector reported it, or
 * every thread it had left was blocked in a call. A wait that only follows from another finding
 * (a join of a deadlocked thread) is not a finding of its own. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/check_int.h"
#include "util/util.h"

#define MAXOUT 8

struct bnode {
    struct cthread *th;
    const struct ptt_open *call;
    struct cthread *out[MAXOUT]; /* the threads it waits for */
    unsigned nout;
    int state;    /* the search: 0 new, 1 on the path, 2 done */
    int reported; /* in a deadlock or a hang already */
};

struct blocked {
    struct bnode *v;
    size_t n;
};

static const struct ptt_held *held_list(const struct cthread *th, unsigned *n)
{
    *n = th->final ? th->nfheld : th->tt->nheld;
    return th->final ? th->fheld : th->tt->held;
}

static const struct ptt_held *holds(const struct cthread *th, uint64_t obj)
{
    unsigned n;
    const struct ptt_held *h = held_list(th, &n);
    for (unsigned i = 0; i < n; i++)
        if (h[i].object == obj)
            return &h[i];
    return NULL;
}

/* A semaphore used as a lock (cobj.sem_lock) that th took and did not post: as held. */
static int took_sem(struct ptt_check *c, const struct cthread *th, const struct ptt_open *o,
                    struct ptt_held *as)
{
    if (o->in.info->okind != PTT_CLASS_sem)
        return 0;
    struct cobj *s = check_obj_find(c, th->pid, o->object);
    if (!s || s->sem_lock != 1 || s->taker != th->tid)
        return 0;
    *as = (struct ptt_held){.object = o->object,
                            .cls = PTT_CLASS_sem,
                            .count = 1,
                            .ns = s->taker_ns,
                            .site = s->taker_site};
    return 1;
}

/* What th holds of what o waits for: a lock, or a semaphore used as one (in *buf). */
static const struct ptt_held *holds_for(struct ptt_check *c, const struct cthread *th,
                                        const struct ptt_open *o, struct ptt_held *buf)
{
    return took_sem(c, th, o, buf) ? buf : holds(th, o->object);
}

static const struct ptt_open *blocked_call(const struct cthread *th)
{
    if (th->ended || !th->final)
        return NULL;
    return th->fcall.block != PTT_OPEN_RUNNING ? &th->fcall : NULL;
}

static int is_lock_wait(const struct ptt_open *o)
{
    const struct ptt_evinfo *e = o->in.info;
    return e->role == PTT_ROLE_ACQUIRE && !(e->rflags & PTT_ROLEF_COUNTED);
}

static int is_sem_wait(const struct ptt_open *o)
{
    const struct ptt_evinfo *e = o->in.info;
    return e->role == PTT_ROLE_ACQUIRE && e->okind == PTT_CLASS_sem;
}

static int is_join(const struct ptt_open *o)
{
    return o->in.info->role == PTT_ROLE_WAIT && o->in.info->okind == PTT_CLASS_thread;
}

/* The threads that b waits for: the holders of its lock, the thread it joins. */
static int hung(struct blocked *bl, struct cproc *p);

static void wait_for(struct ptt_check *c, struct blocked *bl, struct bnode *b)
{
    const struct ptt_open *o = b->call;
    if (is_join(o)) {
        struct cthread *t = check_thread_of(c, b->th->pid, o->object);
        if (t && !t->ended)
            b->out[b->nout++] = t;
        return;
    }
    struct ptt_held sem;
    if (is_sem_wait(o)) { /* one used as a lock: its taker, ended or not */
        struct cobj *s = check_obj_find(c, b->th->pid, o->object);
        struct cthread *t = s && s->taker ? check_thread(c, b->th->pid, s->taker) : NULL;
        /* A thread waiting for one it took itself is a relock only if it was used as a lock
         * before: a fresh one taken then waited for is how CPython's Condition waits (another
         * thread posts it). A wait with a time limit ends by itself. And only in a process that
         * hung: a semaphore is a lock by how it was used, and one thread may use one as a signal
         * to itself (CPython's SimpleQueue), left so by a program that exits. */
        if (t && took_sem(c, t, o, &sem) && (t != b->th || s->taker_posted) && !ptt_open_timed(o) &&
            hung(bl, b->th->proc))
            b->out[b->nout++] = t;
        return;
    }
    if (!is_lock_wait(o))
        return;
    int shared = (o->in.info->rflags & PTT_ROLEF_SHARED) != 0;
    for (struct cthread *t = b->th->proc->threads; t && b->nout < MAXOUT; t = t->next) {
        const struct ptt_held *h = holds(t, o->object);
        if (h && !(shared && h->shared))
            b->out[b->nout++] = t;
    }
}

static struct bnode *node_of(struct blocked *bl, const struct cthread *th)
{
    for (size_t i = 0; i < bl->n; i++)
        if (bl->v[i].th == th)
            return &bl->v[i];
    return NULL;
}

static void collect(struct ptt_check *c, struct blocked *bl)
{
    bl->v = ptt_must(calloc(c->threads.n + 1, sizeof *bl->v));
    for (size_t i = 0; i < c->threads.cap; i++) {
        struct cthread *th = ptt_hmap_slot(&c->threads, i);
        const struct ptt_open *o = th ? blocked_call(th) : NULL;
        if (o)
            bl->v[bl->n++] = (struct bnode){.th = th, .call = o};
    }
    for (size_t i = 0; i < bl->n; i++)
        wait_for(c, bl, &bl->v[i]);
}

/* ---- deadlocks ---- */

static int cls_of(const struct ptt_open *o)
{
    return o->in.info->okind;
}

static void deadlock(struct ptt_check *c, struct bnode **cyc, size_t n)
{
    struct ptt_finding *f = check_add(c, PTT_FK_DEADLOCK, "deadlock", 0, "");
    for (size_t i = 0; i < n; i++)
        check_fthread(f, cyc[i]->th->pid, cyc[i]->th->tid);
    int obj[PTT_FIND_MAX];
    for (size_t i = 0; i < n; i++) {
        const struct ptt_open *o = cyc[i]->call;
        obj[i] = is_join(o) ? check_fthread_obj(c, f, cyc[(i + 1) % n]->th)
                            : check_fobject(f, cyc[i]->th->pid, cls_of(o), o->object);
    }
    int w = 0, sems = 0;
    struct ptt_held buf;
    for (size_t i = 0; i < n && w < (int)sizeof f->summary; i++) {
        const struct ptt_open *o = cyc[i]->call;
        size_t next = (i + 1) % n;
        const struct ptt_held *h = is_join(o) ? NULL : holds_for(c, cyc[next]->th, o, &buf);
        sems += h && h->cls == PTT_CLASS_sem;
        if (is_join(o))
            w += snprintf(f->summary + w, sizeof f->summary - (size_t)w, "%s{t%zu} joins {t%zu}",
                          i ? "; " : "", i, next);
        else if (n == 1)
            w += snprintf(f->summary + w, sizeof f->summary - (size_t)w,
                          "{t0} waits for {o%d}, which it holds itself%s", obj[i],
                          h && h->shared ? " for reading" : "");
        else
            w += snprintf(f->summary + w, sizeof f->summary - (size_t)w,
                          "%s{t%zu} waits for {o%d}, held by {t%zu}", i ? "; " : "", i, obj[i],
                          next);
    }
    if (sems && w < (int)sizeof f->summary) /* why a semaphore is said held */
        snprintf(f->summary + w, sizeof f->summary - (size_t)w,
                 " (ptt takes a semaphore for a lock when it is never seen above 1 and only the "
                 "thread that took it posts it: held from its wait to its post)");
    for (size_t i = 0; i < n; i++) {
        const struct ptt_open *o = cyc[i]->call;
        struct cthread *th = cyc[i]->th;
        /* What it holds that the previous thread waits for, then its wait. */
        const struct ptt_open *prev = cyc[(i + n - 1) % n]->call;
        const struct ptt_held *h = is_join(prev) ? NULL : holds_for(c, th, prev, &buf);
        if (h)
            check_fstep(f, th->pid, th->tid, 0, h->shared ? "took for reading" : "took",
                        obj[(i + n - 1) % n], h->site, h->ns);
        check_fstep(f, th->pid, th->tid, o->in.id, "waits for", obj[i], o->site,
                    o->block_ns >= 0 ? o->block_ns : o->in.ns);
        cyc[i]->reported = 1;
    }
}

/* A copy of the cycle (on the search's path, which stays as it is) turned to start at its oldest
 * thread (the lowest id: a stable order to print). */
static struct bnode **first_thread(struct bnode *const *cyc, size_t n, struct bnode **out)
{
    size_t f = 0;
    for (size_t i = 1; i < n; i++)
        if (cyc[i]->th->tid < cyc[f]->th->tid)
            f = i;
    for (size_t i = 0; i < n; i++)
        out[i] = cyc[(f + i) % n];
    return out;
}

/* Depth-first search for cycles of waits; each found once (its threads are then reported). */
static void find_cycles(struct ptt_check *c, struct blocked *bl)
{
    struct bnode **path = ptt_must(malloc((bl->n + 1) * sizeof *path));
    unsigned *next = ptt_must(malloc((bl->n + 1) * sizeof *next));
    for (size_t r = 0; r < bl->n; r++) {
        if (bl->v[r].state)
            continue;
        size_t d = 0;
        path[d] = &bl->v[r];
        next[d++] = 0;
        bl->v[r].state = 1;
        while (d) {
            struct bnode *b = path[d - 1];
            if (next[d - 1] == b->nout) {
                b->state = 2;
                d--;
                continue;
            }
            struct bnode *w = node_of(bl, b->out[next[d - 1]++]);
            if (!w)
                continue;
            if (w->state == 1) { /* a cycle: from w to b on the path */
                size_t k = d;
                while (path[k - 1] != w)
                    k--;
                int fresh = 1;
                for (size_t i = k - 1; i < d; i++)
                    fresh &= !path[i]->reported;
                struct bnode *cyc[PTT_FIND_MAX];
                if (fresh && d - (k - 1) <= PTT_FIND_MAX)
                    deadlock(c, first_thread(&path[k - 1], d - (k - 1), cyc), d - (k - 1));
            } else if (!w->state) {
                w->state = 1;
                path[d] = w;
                next[d++] = 0;
            }
        }
    }
    free(path);
    free(next);
}

/* ---- hangs ---- */

/* Whether a process hung: the detector said so, or every thread it had left was blocked. */
static int hung(struct blocked *bl, struct cproc *p)
{
    if (p->hung)
        return 1;
    if (p->exited || p->crashed)
        return 0;
    for (struct cthread *th = p->threads; th; th = th->next)
        if (!th->ended && !node_of(bl, th))
            return 0;
    return 1;
}

static const char *hang_kind(const struct ptt_open *o)
{
    const struct ptt_evinfo *e = o->in.info;
    if (ptt_open_timed(o))
        return NULL;
    if (e->role == PTT_ROLE_WAIT && e->okind == PTT_CLASS_cond)
        return "condvar never signalled";
    if (e->role == PTT_ROLE_WAIT && e->okind == PTT_CLASS_barrier)
        return "barrier that never fills";
    if (e->role == PTT_ROLE_ACQUIRE && (e->rflags & PTT_ROLEF_COUNTED))
        return "semaphore never posted";
    return NULL;
}

/* Whether the trace holds another process than pid: one a shared semaphore's posts may come
 * from. */
static int other_process(struct ptt_check *c, int32_t pid)
{
    for (size_t i = 0; i < c->procs.cap; i++) {
        const struct cproc *p = ptt_hmap_slot(&c->procs, i);
        if (p && p->started && p->pid != pid)
            return 1;
    }
    return 0;
}

static void doing(struct ptt_finding *f, struct cthread *t, int object);

/* Every thread blocked on the same object as b joins b's finding. */
static void object_hang(struct ptt_check *c, struct blocked *bl, struct bnode *b, const char *what)
{
    const struct ptt_open *o = b->call;
    struct cobj *obj = check_obj(c, b->th->pid, o->object, cls_of(o));
    if (obj->cls == PTT_CLASS_sem && obj->shared && other_process(c, b->th->pid))
        return; /* other processes' posts are not this object's: no claim either way */
    struct ptt_finding *f = check_add(c, PTT_FK_HANG, what, 0, "");
    int k = check_fobject(f, obj->pid, obj->cls, obj->addr);
    unsigned waiters = 0, signaller = 0;
    int64_t first = INT64_MAX;
    for (size_t i = 0; i < bl->n; i++) {
        struct bnode *x = &bl->v[i];
        if (x->reported || x->th->pid != b->th->pid || x->call->object != o->object ||
            hang_kind(x->call) != what)
            continue;
        x->reported = 1;
        waiters++;
        signaller |= x->th->tid == obj->signal_tid;
        check_fthread(f, x->th->pid, x->th->tid);
        if (x->call->in.ns < first)
            first = x->call->in.ns;
        check_fstep(f, x->th->pid, x->th->tid, x->call->in.id, "waits on", k, x->call->site,
                    x->call->in.ns);
    }
    const char *many = waiters > 1 ? "{t0} and the others shown wait" : "{t0} waits";
    if (obj->cls == PTT_CLASS_barrier) {
        snprintf(f->summary, sizeof f->summary,
                 "%s at {o0} of count %llu: %u arrived, and no other thread will", many,
                 (unsigned long long)obj->bcount, waiters);
    } else if (obj->cls == PTT_CLASS_sem && b->nout) { /* used as a lock: who took it */
        struct cthread *t = b->out[0];
        int k2 = check_fthread(f, t->pid, t->tid);
        check_fstep(f, t->pid, t->tid, 0, "took", k, obj->taker_site, obj->taker_ns);
        if (!t->ended)
            doing(f, t, -1);
        snprintf(
            f->summary, sizeof f->summary,
            "%s on {o0}, which {t%d} took and never posted%s (ptt takes a semaphore for a lock "
            "when it is never seen above 1 and only the thread that took it posts it)",
            many, k2, t->ended ? ": it ended" : "");
    } else if (obj->cls == PTT_CLASS_sem) {
        snprintf(f->summary, sizeof f->summary,
                 "%s on {o0}, which no thread posts any more (%llu posts in all)", many,
                 (unsigned long long)obj->signals);
    } else if (obj->signals && obj->signal_ns <= first && obj->signal_unheard && !signaller) {
        /* lost: no thread waited when it came, and it came from another thread than these */
        int t = check_fthread(f, b->th->pid, obj->signal_tid);
        check_fstep(f, b->th->pid, obj->signal_tid, obj->signal_call, "signalled", k,
                    obj->signal_site, obj->signal_ns);
        snprintf(f->summary, sizeof f->summary,
                 "%s on {o0}, which {t%d} signalled before the wait began and no thread "
                 "signals since: a lost wake-up (a wait must follow a check of the condition, "
                 "under the mutex)",
                 many, t);
        f->what = "lost wake-up";
    } else {
        snprintf(f->summary, sizeof f->summary,
                 "%s on {o0}, which no thread signals after the wait began%s", many,
                 obj->signals ? "" : " (it is never signalled)");
    }
}

/* What a thread was doing at the end, as a step. */
static void doing(struct ptt_finding *f, struct cthread *t, int object)
{
    const struct ptt_open *o = t->final ? &t->fcall : ptt_tthread_call(t->tt);
    if (o)
        check_fstep(f, t->pid, t->tid, o->in.id, "is inside", -1, o->site, o->in.ns);
    else
        check_fstep(f, t->pid, t->tid, 0, "runs outside any traced call", object, 0, 0);
}

static void join_hang(struct ptt_check *c, struct blocked *bl, struct bnode *b)
{
    struct cthread *t = b->nout ? b->out[0] : NULL;
    struct bnode *tb = t ? node_of(bl, t) : NULL;
    if (!t || (tb && tb->reported))
        return; /* it ends the day the thread it waits for does: that is the finding */
    struct ptt_finding *f = check_add(c, PTT_FK_HANG, "join of a thread that never ends", 0,
                                      "{t0} joins {o0}, a thread that never ends");
    check_fthread(f, b->th->pid, b->th->tid);
    int k = check_fthread_obj(c, f, t);
    check_fstep(f, b->th->pid, b->th->tid, b->call->in.id, "joins", k, b->call->site,
                b->call->in.ns);
    doing(f, t, k);
    b->reported = 1;
}

/* A lock whose every holder has ended. */
static void orphan_hang(struct ptt_check *c, struct bnode *b)
{
    for (unsigned i = 0; i < b->nout; i++)
        if (!b->out[i]->ended)
            return;
    if (!b->nout)
        return;
    const struct ptt_open *o = b->call;
    struct ptt_finding *f =
        check_add(c, PTT_FK_HANG, "lock held by a thread that ended", 0,
                  "{t0} waits for {o0}, held by {t1}, which ended without unlocking it");
    check_fthread(f, b->th->pid, b->th->tid);
    check_fthread(f, b->out[0]->pid, b->out[0]->tid);
    int k = check_fobject(f, b->th->pid, cls_of(o), o->object);
    const struct ptt_held *h = holds(b->out[0], o->object);
    if (h)
        check_fstep(f, b->out[0]->pid, b->out[0]->tid, 0, "took", k, h->site, h->ns);
    check_fstep(f, b->th->pid, b->th->tid, o->in.id, "waits for", k, o->site, o->in.ns);
    b->reported = 1;
}

/* A wait for a semaphore-lock whose taker (blocked) is in a finding follows from it, as a join
 * would; to a fixed point, so that the order of the threads does not matter. */
static void follow_takers(struct blocked *bl)
{
    for (int changed = 1; changed;) {
        changed = 0;
        for (size_t i = 0; i < bl->n; i++) {
            struct bnode *b = &bl->v[i];
            struct bnode *t =
                !b->reported && is_sem_wait(b->call) && b->nout ? node_of(bl, b->out[0]) : NULL;
            if (t && t->reported)
                b->reported = changed = 1;
        }
    }
}

static void find_hangs(struct ptt_check *c, struct blocked *bl)
{
    for (int takers = 0; takers < 2; takers++) { /* the waits for a semaphore-lock's taker last */
        if (takers)
            follow_takers(bl);
        for (size_t i = 0; i < bl->n; i++) {
            struct bnode *b = &bl->v[i];
            const char *what = hang_kind(b->call);
            if (!b->reported && what && (is_sem_wait(b->call) && b->nout) == takers &&
                hung(bl, b->th->proc))
                object_hang(c, bl, b, what);
        }
    }
    for (size_t i = 0; i < bl->n; i++) { /* after the others: a join of a hung thread is not */
        struct bnode *b = &bl->v[i];
        if (b->reported || ptt_open_timed(b->call) || !hung(bl, b->th->proc))
            continue;
        if (is_join(b->call))
            join_hang(c, bl, b);
        else if (is_lock_wait(b->call))
            orphan_hang(c, b);
    }
}

void check_block_end(struct ptt_check *c)
{
    struct blocked bl = {0};
    collect(c, &bl);
    find_cycles(c, &bl);
    find_hangs(c, &bl);
    free(bl.v);
}
