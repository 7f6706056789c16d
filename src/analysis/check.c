/* ptt check's pass over the trace (check.h): the threads, their handles and the objects, fed to
 * the call tracker and to the rules of check_misuse.c and check_order.c; check_block.c looks at
 * what is left blocked at the end. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>

#include "analysis/check_int.h"
#include "ptt_fields.h"
#include "util/util.h"

const char *ptt_fkind_name(enum ptt_fkind k)
{
    static const char *const names[] = {"deadlock", "lock-order", "hang", "misuse", "error"};
    return (unsigned)k < sizeof names / sizeof *names ? names[k] : "?";
}

struct ptt_check *ptt_check_new(const struct ptt_names *names)
{
    struct ptt_check *c = ptt_must(calloc(1, sizeof *c));
    c->names = names;
    c->tracker = ptt_tracker_new(PTT_TRACK_TID);
    c->order = check_order_new();
    return c;
}

static void proc_free(void *p)
{
    free(((struct cproc *)p)->mods);
}

static void thread_free(void *p)
{
    free(((struct cthread *)p)->fheld);
}

void ptt_check_free(struct ptt_check *c)
{
    if (!c)
        return;
    ptt_tracker_free(c->tracker);
    check_order_free(c->order);
    ptt_hmap_free(&c->threads, thread_free);
    ptt_hmap_free(&c->handles, NULL);
    ptt_hmap_free(&c->objects, NULL);
    ptt_hmap_free(&c->dedup, NULL);
    ptt_hmap_free(&c->procs, proc_free);
    for (size_t i = 0; i < c->nf; i++)
        free(c->f[i]);
    free(c->f);
    free(c->scratch);
    free(c);
}

void ptt_check_partial(struct ptt_check *c)
{
    c->partial = 1;
}

int ptt_check_attached(const struct ptt_check *c)
{
    return c->attached;
}

struct cthread *check_thread_table(struct ptt_check *c, int32_t pid, int32_t tid)
{
    struct cthread *th =
        ptt_hmap_get(&c->threads, ptt_key2((uint32_t)pid, (uint32_t)tid), sizeof *th);
    if (!th->tt) {
        th->pid = pid;
        th->tid = tid;
        th->proc = check_proc(c, pid);
        th->next = th->proc->threads;
        th->proc->threads = th;
        struct ptt_ev key = {.pid = pid, .tid = tid};
        th->tt = ptt_tracker_get(c->tracker, &key);
    }
    return c->last = *check_tcache(c, tid) = th;
}

struct cthread *check_thread_of(struct ptt_check *c, int32_t pid, uint64_t handle)
{
    struct chandle *h = ptt_hmap_get(&c->handles, ptt_key2((uint32_t)pid, handle), 0);
    return h ? h->th : NULL;
}

struct cproc *check_proc(struct ptt_check *c, int32_t pid)
{
    if (c->last_proc && c->last_proc->pid == pid)
        return c->last_proc;
    struct cproc *p = ptt_hmap_get(&c->procs, (uint32_t)pid + 1ull, sizeof *p);
    p->pid = pid;
    return c->last_proc = p;
}

/* A process's objects, per program it ran: an exec starts with none. */
static uint64_t obj_key(struct ptt_check *c, int32_t pid, uint64_t addr)
{
    return ptt_key2((uint32_t)pid | (uint64_t)check_proc(c, pid)->gen << 32, addr);
}

/* check_obj and check_obj_find past their cache. */
/* What a forked child inherits of an object its parent had at the fork: its initialisation and
 * type (the memory was copied), not its holders or waiters (the child's thread is another one).
 * Returns 0 when the parent, or its own parent, never met the object. */
static int inherited(struct ptt_check *c, int32_t pid, uint64_t addr, struct cobj *into)
{
    for (int depth = 0; depth < 64; depth++) {
        struct cproc *p = check_proc(c, pid);
        if (!p->ppid)
            return 0;
        uint64_t key = ptt_key2((uint32_t)p->ppid | (uint64_t)p->pgen << 32, addr);
        const struct cobj *o = ptt_hmap_get(&c->objects, key, 0);
        if (o) {
            into->cls = o->cls;
            into->inited = o->inited;
            into->destroyed = o->destroyed;
            into->robust = o->robust;
            into->shared = o->shared;
            into->mtype = o->mtype;
            into->bcount = o->bcount;
            return 1;
        }
        pid = p->ppid;
    }
    return 0;
}

struct cobj *check_obj_table(struct ptt_check *c, int32_t pid, uint64_t addr, int cls, int make)
{
    uint64_t key = obj_key(c, pid, addr);
    struct cobj *o = ptt_hmap_get(&c->objects, key, 0);
    if (!o && make) {
        struct cobj from = {.cls = cls};
        int had = inherited(c, pid, addr, &from); /* before the table may move */
        o = ptt_hmap_get(&c->objects, key, sizeof *o);
        if (had) {
            *o = from;
            o->seen = 1;
            o->key = key;
            o->pid = pid;
            o->addr = addr;
        }
    }
    if (!o)
        return NULL;
    *check_ocache(c, pid, addr) = o;
    if (!o->seen) {
        o->seen = 1;
        o->key = key;
        o->pid = pid;
        o->addr = addr;
        o->cls = cls;
    }
    return o;
}

void ptt_check_window(struct ptt_check *c, int64_t from, int no_end)
{
    c->from = from;
    c->no_end = no_end;
}

/* A finding of an event before the window: filled, then forgotten (the same finding inside the
 * window is a new one). */
static struct ptt_finding *scratch(struct ptt_check *c, enum ptt_fkind kind, const char *what)
{
    if (!c->scratch)
        c->scratch = ptt_must(malloc(sizeof *c->scratch));
    memset(c->scratch, 0, sizeof *c->scratch);
    c->scratch->kind = kind;
    c->scratch->what = what;
    c->scratch->count = 1;
    return c->scratch;
}

struct ptt_finding *check_add(struct ptt_check *c, enum ptt_fkind kind, const char *what,
                              uint64_t key, const char *summary)
{
    if (c->end_ns < c->from)
        return scratch(c, kind, what);
    struct ptt_finding **slot = NULL;
    if (key) {
        slot = ptt_hmap_get(&c->dedup, key, sizeof *slot);
        if (*slot) {
            (*slot)->count++;
            return *slot;
        }
    }
    struct ptt_finding *f = ptt_must(calloc(1, sizeof *f));
    f->kind = kind;
    f->what = what;
    f->key = key;
    f->count = 1;
    snprintf(f->summary, sizeof f->summary, "%s", summary);
    if (c->nf == c->fcap) {
        c->fcap = c->fcap ? 2 * c->fcap : 16;
        c->f = ptt_must(realloc(c->f, c->fcap * sizeof *c->f));
    }
    c->f[c->nf++] = f;
    if (slot)
        *slot = f;
    return f;
}

int check_fthread(struct ptt_finding *f, int32_t pid, int32_t tid)
{
    for (unsigned i = 0; i < f->nthreads; i++)
        if (f->threads[i].pid == pid && f->threads[i].tid == tid)
            return (int)i;
    if (f->nthreads == PTT_FIND_MAX)
        return -1;
    f->threads[f->nthreads] = (struct ptt_fthread){pid, tid};
    return (int)f->nthreads++;
}

int check_fobject(struct ptt_finding *f, int32_t pid, int cls, uint64_t addr)
{
    for (unsigned i = 0; i < f->nobjects; i++)
        if (f->objects[i].pid == pid && f->objects[i].addr == addr && f->objects[i].cls == cls)
            return (int)i;
    if (f->nobjects == PTT_FIND_MAX)
        return -1;
    f->objects[f->nobjects] = (struct ptt_fobject){pid, cls, addr, 0};
    return (int)f->nobjects++;
}

/* A thread as an object (what a join waits for). */
int check_fthread_obj(struct ptt_check *c, struct ptt_finding *f, struct cthread *th)
{
    (void)c;
    int i = check_fobject(f, th->pid, PTT_CLASS_thread, th->handle);
    if (i >= 0)
        f->objects[i].tid = th->tid;
    return i;
}

void check_fstep(struct ptt_finding *f, int32_t pid, int32_t tid, uint16_t call, const char *action,
                 int object, uint64_t site, int64_t ns)
{
    if (f->nsteps == PTT_FIND_MAX)
        return;
    f->steps[f->nsteps++] = (struct ptt_fstep){pid, tid, call, action, object, site, ns};
}

uint64_t check_site_of(const struct ptt_ev *ev)
{
    int i = ev->info ? ev->info->site : -1;
    return i >= 0 && (unsigned)i < ev->nargs ? ev->args[i] : 0;
}

/* A thread starts: map its handle to it, with what its creation asked (detached). */
void check_thread_start(struct ptt_check *c, struct cthread *th, const struct ptt_ev *ev)
{
    if (th->ended) { /* a new thread with an old id */
        struct ptt_tthread *tt = th->tt;
        free(th->fheld);
        *th = (struct cthread){
            .pid = th->pid, .tid = th->tid, .proc = th->proc, .next = th->next, .tt = tt};
    }
    th->complete = 1;
    th->start_ns = ev->ns;
    th->handle = ptt_ev_arg(ev, PTT_F(THREAD_START, self), 0);
    struct chandle *h =
        ptt_hmap_get(&c->handles, ptt_key2((uint32_t)ev->pid, th->handle), sizeof *h);
    if (!h->th && h->created_ns) /* its creation returned first */
        th->detached = h->detached;
    h->th = th;
    h->created_ns = 0;
}

/* pthread_create returned a handle: the thread already started, or is yet to. */
void check_thread_created(struct ptt_check *c, const struct ptt_ev *ev, const struct ptt_open *in)
{
    uint64_t handle = ptt_ev_arg(ev, PTT_F(THREAD_CREATE_OUT, thread), 0);
    int det = (int)ptt_ev_arg(&in->in, PTT_F(THREAD_CREATE_IN, detached), 0);
    struct chandle *h = ptt_hmap_get(&c->handles, ptt_key2((uint32_t)ev->pid, handle), sizeof *h);
    if (h->th && h->th->handle == handle && h->th->start_ns >= in->in.ns) {
        /* Started during the call (THREAD_START came first; it may even have ended). */
        h->th->detached |= det;
        h->th->stacksize = ptt_ev_arg(&in->in, PTT_F(THREAD_CREATE_IN, stacksize), 0);
        return;
    }
    h->th = NULL;
    h->detached = det;
    h->created_ns = ev->ns ? ev->ns : 1;
}

static void module_load(struct ptt_check *c, const struct ptt_ev *ev)
{
    struct cproc *p = check_proc(c, ev->pid);
    if (p->nmods == p->modcap) {
        p->modcap = p->modcap ? 2 * p->modcap : 8;
        p->mods = ptt_must(realloc(p->mods, p->modcap * sizeof *p->mods));
    }
    uint64_t base = ptt_ev_arg(ev, PTT_F(MODULE_LOAD, base), 0);
    struct cmodule *m = &p->mods[p->nmods++];
    *m = (struct cmodule){base, base + ptt_ev_arg(ev, PTT_F(MODULE_LOAD, size), 0)};
    if (m->hi > p->top)
        p->top = m->hi;
    /* The path, a string after the fixed arguments: is it C++'s runtime? */
    unsigned from = PTT_F(MODULE_LOAD, path);
    size_t max = from < ev->nargs ? (ev->nargs - from) * 8 : 0;
    if (memmem(&ev->args[from], strnlen((const char *)&ev->args[from], max), "libstdc++", 9))
        p->cxx = 1;
}

/* A process starts: forked from a traced one, its thread holds what the forking thread held,
 * which this trace does not say (its unlocks cannot be judged); an exec (a pid seen before)
 * leaves one thread and no object, no binary of the old program. */
static void process_start(struct ptt_check *c, struct cthread *th, const struct ptt_ev *ev)
{
    int32_t ppid = (int32_t)ptt_ev_arg(ev, PTT_F(PROCESS_START, ppid), 0);
    struct cproc *p = check_proc(c, ev->pid);
    if (p->started) {
        p->gen++;
        memset(c->ocache, 0, sizeof c->ocache); /* the old program's objects */
        c->lobj = NULL;
        p->nmods = 0;
        p->top = 0;
        for (struct cthread *t = p->threads; t; t = t->next)
            if (t != th) {
                t->ended = 1;
                t->final = 0;
                t->tt->nopen = t->tt->nheld = 0;
            }
        th->tt->nopen = th->tt->nheld = 0;
    } else {
        p->started = 1;
        struct cproc *parent = ptt_hmap_get(&c->procs, (uint32_t)ppid + 1ull, 0);
        th->complete = !(parent && parent->started);
        if (parent && parent->started && ppid != ev->pid) {
            p->ppid = ppid;
            p->pgen = parent->gen;
        }
    }
}

/* A signal a process gets for its own fault: it crashed, whatever its threads were doing. */
static int crash_signal(int sig)
{
    return sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL || sig == SIGABRT ||
           sig == SIGSYS || sig == SIGTRAP;
}

/* Events about the trace and the processes rather than a thread's calls. */
int check_meta_event(struct ptt_check *c, struct cthread *th, const struct ptt_ev *ev)
{
    switch (ev->id) {
    case PTT_EV_MODULE_LOAD: module_load(c, ev); return 1;
    case PTT_EV_HANG_BLOCKED: {
        struct cproc *p = check_proc(c, ev->pid);
        p->hung = 1;
        p->hung_ns = ev->ns;
        return 1;
    }
    case PTT_EV_TRACE_LOST:
        /* What it held may have been unlocked among the events lost: held no longer, rather
         * than held for ever (a false lock order, deadlock or lock held at its end). */
        th->complete = 0;
        th->tt->nheld = 0;
        c->partial = 1;
        return 1;
    case PTT_EV_TRACE_CONTROL:
    case PTT_EV_THREAD_RUNNING: c->partial = 1; return 1;
    case PTT_EV_THREAD_ATTACHED: /* objects made, locks taken before it: not in the trace */
        c->partial = c->attached = 1;
        return 1;
    case PTT_EV_CALL_BEFORE_ATTACH: /* what it did before the attach is not in the trace */
        th->complete = 0;
        return 0; /* the tracker marks the call */
    case PTT_EV_PROCESS_START: process_start(c, th, ev); return 1;
    case PTT_EV_PROCESS_EXIT: {
        int st = (int)ptt_ev_arg(ev, PTT_F(PROCESS_EXIT, status), 0);
        if (WIFEXITED(st)) {
            check_proc(c, ev->pid)->exited = 1;
            check_process_end(c, ev->pid, ev->ns);
        } else if (crash_signal(WTERMSIG(st))) {
            check_proc(c, ev->pid)->crashed = 1;
        } else {
            check_proc(c, ev->pid)->hung = 1; /* killed from outside while it waited */
        }
        return 1;
    }
    default: return 0;
    }
}

/* Keep what a thread was doing when it was left inside a call: the end of the trace, or of its
 * process. */
void check_snapshot(struct cthread *th)
{
    struct ptt_open *o = ptt_tthread_call(th->tt);
    if (th->final || !o)
        return;
    th->final = 1;
    th->fcall = *o;
    th->nfheld = th->tt->nheld;
    if (th->nfheld) {
        th->fheld = ptt_must(malloc(th->nfheld * sizeof *th->fheld));
        memcpy(th->fheld, th->tt->held, th->nfheld * sizeof *th->fheld);
    }
}

static int finding_cmp(const void *a, const void *b)
{
    const struct ptt_finding *x = *(struct ptt_finding *const *)a,
                             *y = *(struct ptt_finding *const *)b;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    int64_t tx = x->nsteps ? x->steps[0].ns : 0, ty = y->nsteps ? y->steps[0].ns : 0;
    return tx < ty ? -1 : tx > ty;
}

/* Whether a finding made at the end has no step inside the window. */
static int before_window(const struct ptt_check *c, const struct ptt_finding *f)
{
    for (unsigned i = 0; i < f->nsteps; i++)
        if (f->steps[i].ns >= c->from)
            return 0;
    return f->nsteps > 0;
}

struct ptt_finding **ptt_check_end(struct ptt_check *c, size_t *n)
{
    size_t during = c->nf;
    if (!c->no_end) {
        for (size_t i = 0; i < c->threads.cap; i++) {
            struct cthread *th = ptt_hmap_slot(&c->threads, i);
            if (th && !th->ended)
                check_snapshot(th);
        }
        check_block_end(c);
    }
    check_order_end(c, c->order);
    size_t k = during; /* those made at the end (keys 0: not in dedup) */
    for (size_t i = during; i < c->nf; i++) {
        if (before_window(c, c->f[i]))
            free(c->f[i]);
        else
            c->f[k++] = c->f[i];
    }
    c->nf = k;
    if (c->nf) /* qsort wants an array, even of none */
        qsort(c->f, c->nf, sizeof *c->f, finding_cmp);
    *n = c->nf;
    return c->f;
}
