/* The carried state of a rotated trace (carry.h). Every event that names something is copied as
 * it is written; which copies still matter is decided by the events' times (a thread's chunks may
 * be written out of order), and at each new part what no later part needs is forgotten: memory
 * follows what is alive, and what one part's worth of events started. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "../../common/event.h"
#include "ptt_fields.h"
#include "session/carry.h"
#include "trace/decode.h"
#include "util/hmap.h"
#include "util/util.h"

/* A copy of one event: where it was recorded, its time, its argument words. */
struct cev {
    uint64_t ticks;
    int32_t pid, tid;
    uint32_t serial;
    uint16_t id, nw;
    uint64_t w[];
};

struct cproc {
    struct cev *start, *exit; /* PROCESS_START of its program (the last exec), PROCESS_EXIT */
    struct cev *args;         /* PROCESS_ARGS of that program */
    struct cev **mods;        /* MODULE_LOAD since that start, one per base address */
    unsigned nmods, cap;
    int needed; /* at a write: alive, or an ancestor whose modules a live one names code with */
    /* When ptt trace last listed its threads (THREAD_RUNNING of main, which comes first): a
     * thread not listed then had ended, though its end was not recorded (recording was off). */
    uint64_t listed;
};

struct cthr {
    int32_t pid;
    int ended;
    uint64_t end;      /* THREAD_END's time */
    struct cev *start; /* THREAD_START */
    /* THREAD_RUNNING or THREAD_ATTACHED that names it, the latest: what names a thread whose
     * start was not recorded (ptt ctl start, ptt trace -p) */
    struct cev *running;
};

struct cname { /* pthread_setname_np, by (pid, target pthread_t): its IN and its OUT */
    struct cev *in, *out;
};

struct cpend { /* the half of a pthread_setname_np that came first, by (pid, caller) */
    struct cev *in, *out;
};

struct cobjn { /* OBJECT_NAME, by (pid, object) */
    struct cev *ev;
};

struct ptt_carry {
    struct ptt_hmap procs, threads, names, pend, objs;
};

struct ptt_carry *ptt_carry_new(void)
{
    return ptt_must(calloc(1, sizeof(struct ptt_carry)));
}

static uint64_t arg(const struct cev *e, unsigned i, uint64_t def)
{
    return e && i < e->nw ? e->w[i] : def;
}

static void proc_clear(struct cproc *p)
{
    free(p->start);
    free(p->exit);
    free(p->args);
    for (unsigned i = 0; i < p->nmods; i++)
        free(p->mods[i]);
    free(p->mods);
    memset(p, 0, sizeof *p);
}

/* The process pid at time t: one that ended before t had its pid used again, and is forgotten. */
static struct cproc *proc_of(struct ptt_carry *c, int32_t pid, uint64_t t)
{
    struct cproc *p = ptt_hmap_get(&c->procs, (uint32_t)pid + 1ull, sizeof *p);
    if (p->exit && (int64_t)(p->exit->ticks - t) < 0)
        proc_clear(p);
    return p;
}

static uint64_t image(const struct cproc *p)
{
    return p && p->start ? p->start->ticks : 0;
}

/* Whether a is later than b (both may be NULL: then not). */
static int later(const struct cev *a, const struct cev *b)
{
    return a && b && (int64_t)(a->ticks - b->ticks) > 0;
}

static void process_start(struct ptt_carry *c, struct cev *e)
{
    struct cproc *p = proc_of(c, e->pid, e->ticks);
    if (later(p->start, e)) { /* the start of a program before the last exec, come late */
        free(e);
        return;
    }
    free(p->start);
    p->start = e;
    unsigned k = 0; /* an exec: the modules of the program before go */
    for (unsigned i = 0; i < p->nmods; i++) {
        if ((int64_t)(p->mods[i]->ticks - e->ticks) >= 0)
            p->mods[k++] = p->mods[i];
        else
            free(p->mods[i]);
    }
    p->nmods = k;
    if (p->args && (int64_t)(p->args->ticks - e->ticks) < 0) { /* the program before's */
        free(p->args);
        p->args = NULL;
    }
}

static void process_args(struct ptt_carry *c, struct cev *e)
{
    struct cproc *p = proc_of(c, e->pid, e->ticks);
    if (later(p->start, e) || later(p->args, e)) { /* a program's before the last exec */
        free(e);
        return;
    }
    free(p->args);
    p->args = e;
}

static void module_load(struct ptt_carry *c, struct cev *e)
{
    struct cproc *p = proc_of(c, e->pid, e->ticks);
    if (later(p->start, e)) {
        free(e);
        return;
    }
    uint64_t base = arg(e, PTT_F(MODULE_LOAD, base), 0);
    for (unsigned i = 0; i < p->nmods; i++)
        if (arg(p->mods[i], PTT_F(MODULE_LOAD, base), 0) == base) {
            if (later(p->mods[i], e)) {
                free(e);
            } else {
                free(p->mods[i]);
                p->mods[i] = e;
            }
            return;
        }
    if (p->nmods == p->cap) {
        p->cap = p->cap ? 2 * p->cap : 16;
        p->mods = ptt_must(realloc(p->mods, p->cap * sizeof *p->mods));
    }
    p->mods[p->nmods++] = e;
}

static void process_exit(struct ptt_carry *c, struct cev *e)
{
    struct cproc *p = ptt_hmap_get(&c->procs, (uint32_t)e->pid + 1ull, sizeof *p);
    if (p->exit && !later(e, p->exit)) {
        free(e);
        return;
    }
    free(p->exit);
    p->exit = e;
}

static struct cthr *thread_of(struct ptt_carry *c, int32_t pid, int32_t tid, uint64_t t)
{
    proc_of(c, pid, t);
    struct cthr *th = ptt_hmap_get(&c->threads, ptt_key2((uint32_t)pid, (uint32_t)tid), sizeof *th);
    th->pid = pid;
    return th;
}

static void thread_start(struct ptt_carry *c, struct cev *e)
{
    struct cthr *th = thread_of(c, e->pid, e->tid, e->ticks);
    if (later(th->start, e)) { /* a thread of this tid before, started earlier */
        free(e);
        return;
    }
    free(th->start);
    th->start = e;
}

static struct cproc *proc_find(struct ptt_carry *c, int32_t pid);

static void thread_running(struct ptt_carry *c, struct cev *e)
{
    _Static_assert(PTT_F(THREAD_RUNNING, thread) == PTT_F(THREAD_ATTACHED, thread),
                   "THREAD_RUNNING has THREAD_ATTACHED's fields");
    int32_t tid = (int32_t)arg(e, PTT_F(THREAD_RUNNING, thread), 0);
    struct cthr *th = thread_of(c, e->pid, tid, e->ticks);
    struct cproc *p = proc_find(c, e->pid);
    if (tid == e->pid && p && (int64_t)(e->ticks - p->listed) > 0)
        p->listed = e->ticks;
    if (later(th->running, e)) {
        free(e);
        return;
    }
    free(th->running);
    th->running = e;
}

static void thread_end(struct ptt_carry *c, struct cev *e)
{
    struct cthr *th = thread_of(c, e->pid, e->tid, e->ticks);
    if (!th->ended || (int64_t)(e->ticks - th->end) > 0)
        th->end = e->ticks;
    th->ended = 1;
    free(e);
}

/* A pthread_setname_np call whole: kept by its target if it succeeded. */
static void name_pair(struct ptt_carry *c, struct cev *in, struct cev *out)
{
    uint64_t target = arg(in, PTT_F(THREAD_SETNAME_NP_IN, thread), 0);
    struct cname *n = ptt_hmap_get(&c->names, ptt_key2((uint32_t)in->pid, target), sizeof *n);
    if (arg(out, PTT_F(THREAD_SETNAME_NP_OUT, ret), 1) != 0 || later(n->out, out)) {
        free(in);
        free(out);
        return;
    }
    free(n->in);
    free(n->out);
    n->in = in;
    n->out = out;
}

static struct cpend *pending(struct ptt_carry *c, const struct cev *e)
{
    proc_of(c, e->pid, e->ticks);
    return ptt_hmap_get(&c->pend, ptt_key2((uint32_t)e->pid, (uint32_t)e->tid),
                        sizeof(struct cpend));
}

static void setname_in(struct ptt_carry *c, struct cev *e)
{
    struct cpend *q = pending(c, e);
    if (q->out && !later(e, q->out)) { /* its OUT came first */
        struct cev *out = q->out;
        q->out = NULL;
        name_pair(c, e, out);
        return;
    }
    if (later(q->in, e)) {
        free(e);
        return;
    }
    free(q->in);
    q->in = e;
}

static void setname_out(struct ptt_carry *c, struct cev *e)
{
    struct cpend *q = pending(c, e);
    if (q->in && !later(q->in, e)) {
        struct cev *in = q->in;
        q->in = NULL;
        name_pair(c, in, e);
        return;
    }
    if (later(q->out, e)) {
        free(e);
        return;
    }
    free(q->out);
    q->out = e;
}

static void object_name(struct ptt_carry *c, struct cev *e)
{
    proc_of(c, e->pid, e->ticks);
    struct cobjn *o = ptt_hmap_get(
        &c->objs, ptt_key2((uint32_t)e->pid, arg(e, PTT_F(OBJECT_NAME, object), 0)), sizeof *o);
    if (later(o->ev, e)) {
        free(e);
        return;
    }
    free(o->ev);
    o->ev = e;
}

static int wanted(uint16_t id)
{
    return !(id & PTT_EV_CALL) &&
           (ptt_ev_names(id) || id == PTT_EV_THREAD_RUNNING || id == PTT_EV_THREAD_ATTACHED);
}

const uint8_t *ptt_carry_ids(void)
{
    static uint8_t ids[PTT_EV_ID_MASK + 1];
    if (!ids[PTT_EV_PROCESS_START])
        for (unsigned id = 0; id <= PTT_EV_ID_MASK; id++)
            ids[id] = (uint8_t)wanted((uint16_t)id);
    return ids;
}

static void take(struct ptt_carry *c, const struct ptt_rec_chunk *h, uint16_t id, uint64_t t,
                 const uint8_t *w, unsigned nw)
{
    if (16 + 8 * nw > UINT16_MAX) /* no room for its time stamp: no real event is that long */
        return;
    struct cev *e = ptt_must(malloc(sizeof *e + 8 * (size_t)nw));
    *e = (struct cev){t, h->pid, h->tid, h->serial, id, (uint16_t)nw};
    memcpy(e->w, w, 8 * (size_t)nw);
    switch (id) {
    case PTT_EV_PROCESS_START: process_start(c, e); break;
    case PTT_EV_PROCESS_EXIT: process_exit(c, e); break;
    case PTT_EV_MODULE_LOAD: module_load(c, e); break;
    case PTT_EV_PROCESS_ARGS: process_args(c, e); break;
    case PTT_EV_THREAD_START: thread_start(c, e); break;
    case PTT_EV_THREAD_END: thread_end(c, e); break;
    case PTT_EV_THREAD_RUNNING:
    case PTT_EV_THREAD_ATTACHED: thread_running(c, e); break;
    case PTT_EV_THREAD_SETNAME_NP_IN: setname_in(c, e); break;
    case PTT_EV_THREAD_SETNAME_NP_OUT: setname_out(c, e); break;
    default: object_name(c, e); break;
    }
}

/* A chunk of the compact encoding (a thread's: common/codec.h), record by record. */
static void compact_chunk(struct ptt_carry *c, const struct ptt_rec_chunk *h, const uint8_t *d,
                          uint32_t len)
{
    struct ptt_dec dec;
    ptt_dec_start(&dec, h->base_ts);
    for (uint32_t p = 0; p < len;) {
        struct ptt_event e;
        uint64_t t;
        int k = ptt_dec_next(&dec, d + p, len - p, &e, &t);
        if (k <= 0)
            break;
        uint16_t id = e.id & PTT_EV_ID_MASK;
        if (wanted(id))
            take(c, h, id, t, (const uint8_t *)dec.args, dec.nargs);
        p += (uint32_t)k;
    }
}

void ptt_carry_chunk(struct ptt_carry *c, const struct ptt_rec_chunk *h, const void *data,
                     uint32_t len)
{
    const uint8_t *d = data;
    if (h->flags & PTT_CHUNK_COMPACT) {
        compact_chunk(c, h, d, len);
        return;
    }
    uint64_t base = h->base_ts;
    for (uint32_t p = 0; p + 8 <= len;) {
        struct ptt_event e;
        memcpy(&e, d + p, 8);
        unsigned hdr = (e.id & PTT_EVF_ABS) ? 16 : 8;
        if (e.size < hdr || e.size % 8 || p + e.size > len)
            break;
        uint64_t t;
        if (e.id & PTT_EVF_ABS) {
            memcpy(&t, d + p + 8, 8);
            if (!(e.id & PTT_EVF_NEST))
                base = t;
        } else {
            t = base += e.dts;
        }
        uint16_t id = e.id & PTT_EV_ID_MASK;
        if (wanted(id))
            take(c, h, id, t, d + p + hdr, (e.size - hdr) / 8);
        p += e.size;
    }
}

/* ---- what is carried ---- */

static struct cproc *proc_find(struct ptt_carry *c, int32_t pid)
{
    return ptt_hmap_get(&c->procs, (uint32_t)pid + 1ull, 0);
}

/* Alive: its end not seen. */
static int alive(const struct cproc *p)
{
    return p && !p->exit;
}

/* The processes carried: the live ones, and the ancestors (up to the first with modules) of a
 * live one that has none of its own: a forked child names its code with its parent's. */
static void mark(struct ptt_carry *c)
{
    for (size_t i = 0; i < c->procs.cap; i++) {
        struct cproc *p = ptt_hmap_slot(&c->procs, i);
        if (!alive(p))
            continue;
        p->needed = 1;
        struct cproc *q = p;
        for (int depth = 0; depth < 32 && q->start && !q->nmods; depth++) {
            q = proc_find(c, (int32_t)arg(q->start, PTT_F(PROCESS_START, ppid), 0));
            if (!q)
                break;
            q->needed = 1;
        }
    }
}

/* Whether thread th was not in the last listing of its process's threads that came after
 * time t (it had ended). */
static int unlisted(const struct cproc *p, const struct cthr *th, uint64_t t)
{
    return p->listed && (int64_t)(p->listed - t) > 0 &&
           (!th->running || (int64_t)(th->running->ticks - p->listed) < 0);
}

static int thread_alive(struct ptt_carry *c, const struct cthr *th)
{
    const struct cproc *p = proc_find(c, th->pid);
    return th->start && alive(p) && (!th->ended || (int64_t)(th->end - th->start->ticks) < 0) &&
           (int64_t)(th->start->ticks - image(p)) >= 0 && !unlisted(p, th, th->start->ticks);
}

/* The names given to threads that have ended are not carried (another thread may get the same
 * pthread_t, and would be named after the ended one). */
static void drop_ended_names(struct ptt_carry *c)
{
    for (size_t i = 0; i < c->threads.cap; i++) {
        struct cthr *th = ptt_hmap_slot(&c->threads, i);
        if (!th || !th->start || !th->ended || (int64_t)(th->end - th->start->ticks) < 0)
            continue;
        uint64_t self = arg(th->start, PTT_F(THREAD_START, self), 0);
        struct cname *n = ptt_hmap_get(&c->names, ptt_key2((uint32_t)th->pid, self), 0);
        if (n && n->out && (int64_t)(n->out->ticks - th->end) <= 0) {
            free(n->in);
            free(n->out);
            n->in = n->out = NULL;
        }
    }
}

/* Whether an event of a live process's present program. */
static int current(struct ptt_carry *c, const struct cev *e)
{
    const struct cproc *p = e ? proc_find(c, e->pid) : NULL;
    return alive(p) && (int64_t)(e->ticks - image(p)) >= 0;
}

/* The kernel's name of a thread that has not ended since, in its process's present program. */
static int running_current(struct ptt_carry *c, const struct cthr *th)
{
    return th->running && current(c, th->running) &&
           !(th->ended && (int64_t)(th->end - th->running->ticks) >= 0) &&
           !unlisted(proc_find(c, th->pid), th, th->running->ticks);
}

struct list {
    struct cev **v;
    size_t n, cap;
};

static void add(struct list *l, struct cev *e)
{
    if (!e)
        return;
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 256;
        l->v = ptt_must(realloc(l->v, l->cap * sizeof *l->v));
    }
    l->v[l->n++] = e;
}

static void collect(struct ptt_carry *c, struct list *l)
{
    for (size_t i = 0; i < c->procs.cap; i++) {
        struct cproc *p = ptt_hmap_slot(&c->procs, i);
        if (!p || !p->needed)
            continue;
        add(l, p->start);
        add(l, p->args);
        for (unsigned k = 0; k < p->nmods; k++)
            add(l, p->mods[k]);
        add(l, p->exit); /* an ancestor's: it ended */
    }
    for (size_t i = 0; i < c->threads.cap; i++) {
        struct cthr *th = ptt_hmap_slot(&c->threads, i);
        if (th && thread_alive(c, th))
            add(l, th->start);
        if (th && running_current(c, th))
            add(l, th->running);
    }
    for (size_t i = 0; i < c->names.cap; i++) {
        struct cname *n = ptt_hmap_slot(&c->names, i);
        if (n && current(c, n->out)) {
            add(l, n->in);
            add(l, n->out);
        }
    }
    for (size_t i = 0; i < c->objs.cap; i++) {
        struct cobjn *o = ptt_hmap_slot(&c->objs, i);
        if (o && current(c, o->ev))
            add(l, o->ev);
    }
}

/* By stream, then time; at the same time by id (a call's IN before its OUT, a process's start
 * before its modules). */
static int by_stream(const void *a, const void *b)
{
    const struct cev *x = *(struct cev *const *)a, *y = *(struct cev *const *)b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->serial != y->serial)
        return x->serial < y->serial ? -1 : 1;
    if (x->ticks != y->ticks)
        return (int64_t)(x->ticks - y->ticks) < 0 ? -1 : 1;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return x < y ? -1 : x > y;
}

#define CARRY_CHUNK (64u << 10) /* bytes of events per carried chunk, at most */

/* One chunk of the events v[0..n) of one stream, each with its absolute time. */
static void write_chunk(struct ptt_writer *w, struct cev **v, size_t n, uint32_t seq, uint8_t *buf,
                        uint64_t *bytes)
{
    uint32_t len = 0;
    for (size_t i = 0; i < n; i++) {
        struct ptt_event h = {(uint16_t)(v[i]->id | PTT_EVF_ABS), (uint16_t)(16 + 8 * v[i]->nw), 0};
        memcpy(buf + len, &h, 8);
        memcpy(buf + len + 8, &v[i]->ticks, 8);
        memcpy(buf + len + 16, v[i]->w, 8 * (size_t)v[i]->nw);
        len += h.size;
    }
    /* ptt trace's own stream (serial 0): its tid is the pid, as in its other chunks */
    struct ptt_rec_chunk c = {
        {0, 0},      v[0]->pid,   v[0]->serial ? v[0]->tid : v[0]->pid, v[0]->serial, seq,
        v[0]->ticks, (uint32_t)n, PTT_CHUNK_DAEMON | PTT_CHUNK_CARRY};
    ptt_writer_record(w, PTT_REC_CHUNK, &c, sizeof c, buf, len);
    *bytes += len;
}

static void write_all(struct ptt_writer *w, struct list *l, uint64_t *bytes)
{
    uint8_t *buf = ptt_must(malloc(CARRY_CHUNK + (16 + 8 * 8192)));
    for (size_t i = 0; i < l->n;) {
        size_t j = i;
        uint32_t seq = 0, len = 0;
        for (; j < l->n && l->v[j]->pid == l->v[i]->pid && l->v[j]->serial == l->v[i]->serial;
             j++) {
            if (len + 16 + 8u * l->v[j]->nw > CARRY_CHUNK && j > i) {
                write_chunk(w, l->v + i, j - i, seq++, buf, bytes);
                i = j;
                len = 0;
            }
            len += 16 + 8u * l->v[j]->nw;
        }
        write_chunk(w, l->v + i, j - i, seq, buf, bytes);
        i = j;
    }
    free(buf);
}

/* ---- forgetting ---- */

static int keep_thread(struct ptt_carry *c, void *v)
{
    struct cthr *th = v;
    if (thread_alive(c, th) || running_current(c, th))
        return 1;
    /* its end came before its start: kept until the start comes, which is then known ended */
    if (!th->start && th->ended && alive(proc_find(c, th->pid)))
        return 1;
    free(th->start);
    free(th->running);
    return 0;
}

static int keep_name(struct ptt_carry *c, void *v)
{
    struct cname *n = v;
    if (current(c, n->out))
        return 1;
    free(n->in);
    free(n->out);
    return 0;
}

static int keep_pending(struct ptt_carry *c, void *v)
{
    struct cpend *q = v;
    if (current(c, q->in ? q->in : q->out))
        return 1;
    free(q->in);
    free(q->out);
    return 0;
}

static int keep_obj(struct ptt_carry *c, void *v)
{
    struct cobjn *o = v;
    if (current(c, o->ev))
        return 1;
    free(o->ev);
    return 0;
}

static int keep_proc(struct ptt_carry *c, void *v)
{
    (void)c;
    struct cproc *p = v;
    int k = p->needed;
    p->needed = 0;
    if (!k)
        proc_clear(p);
    return k;
}

/* The map m again with the records keep wants (keep frees what the others own). */
static void rebuild(struct ptt_carry *c, struct ptt_hmap *m, size_t size,
                    int (*keep)(struct ptt_carry *, void *))
{
    struct ptt_hmap n = {0};
    for (size_t i = 0; i < m->cap; i++) {
        void *v = m->vals[i];
        if (v && keep(c, v))
            memcpy(ptt_hmap_get(&n, m->keys[i], size), v, size);
        free(v);
    }
    free(m->keys);
    free(m->vals);
    *m = n;
}

uint64_t ptt_carry_write(struct ptt_carry *c, struct ptt_writer *w, uint64_t *bytes)
{
    mark(c);
    drop_ended_names(c);
    struct list l = {0};
    collect(c, &l);
    if (l.n)
        qsort(l.v, l.n, sizeof *l.v, by_stream);
    *bytes = 0;
    write_all(w, &l, bytes);
    free(l.v);
    /* the processes last: the others ask whether theirs is alive */
    rebuild(c, &c->threads, sizeof(struct cthr), keep_thread);
    rebuild(c, &c->names, sizeof(struct cname), keep_name);
    rebuild(c, &c->pend, sizeof(struct cpend), keep_pending);
    rebuild(c, &c->objs, sizeof(struct cobjn), keep_obj);
    rebuild(c, &c->procs, sizeof(struct cproc), keep_proc);
    return l.n;
}

int ptt_carry_ended(struct ptt_carry *c, int32_t pid)
{
    const struct cproc *p = proc_find(c, pid);
    return p && p->exit;
}

static void free_thread(void *v)
{
    free(((struct cthr *)v)->start);
    free(((struct cthr *)v)->running);
}

static void free_name(void *v)
{
    free(((struct cname *)v)->in);
    free(((struct cname *)v)->out);
}

static void free_obj(void *v)
{
    free(((struct cobjn *)v)->ev);
}

static void free_proc(void *v)
{
    proc_clear(v);
}

void ptt_carry_free(struct ptt_carry *c)
{
    if (!c)
        return;
    ptt_hmap_free(&c->threads, free_thread);
    ptt_hmap_free(&c->names, free_name);
    ptt_hmap_free(&c->pend, free_name); /* the same two pointers */
    ptt_hmap_free(&c->objs, free_obj);
    ptt_hmap_free(&c->procs, free_proc);
    free(c);
}
