/* Contention statistics (stats.h): one pass over the events, in time order. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptt_fields.h"
#include "trace/fieldfmt.h"
#include "util/hmap.h"
#include "util/util.h"
#include "analysis/blame.h"
#include "analysis/stats.h"
#include "analysis/tracker_feed.h"

/* A thread's statistics; its calls and holds are the tracker's. */
struct thread {
    struct ptt_stat_thread pub; /* first: the arrays handed out point at it */
    struct ptt_tthread *calls;
    /* Time waited for ptt's buffer (TRACE_BUFFER_WAIT): in all, and when its call began. */
    uint64_t bufwait, bufwait_in;
    int shown; /* an event in the window */
};

/* An object's statistics, and who made others wait for it (a lock's). */
struct object {
    struct ptt_stat_object pub; /* first: the arrays handed out point at it */
    struct ptt_blame blame;
    struct ptt_hmap more; /* the threads past users[]: +N counts threads, not calls */
};

struct ptt_stats {
    struct ptt_hmap objects, threads;
    struct ptt_tracker *calls;
    /* The objects and threads met last, by address and tid: the threads take turns, event by
     * event, and a look-up in the tables costs two multiplications and three loads in a row. */
    struct object *ocache[256];
    struct object *lobj; /* the object looked up last, or NULL */
    struct thread *tcache[64];
    struct thread *lthread;        /* the last event's */
    uint64_t bufwait_ns, bufwaits; /* TRACE_BUFFER_WAIT */
    uint64_t before_attach;        /* calls begun before ptt trace -p attached */
    void (*observe)(void *arg, const struct ptt_stat_interval *iv);
    void *observe_arg;
    int64_t from; /* ptt_stats_window */
    const struct ptt_names *names;
};

/* A time in the window: what began before counts from its start. */
static inline int64_t since(const struct ptt_stats *s, int64_t ns)
{
    return ns < s->from ? s->from : ns;
}

unsigned ptt_stat_bucket(uint64_t v)
{
    if (v < 4)
        return (unsigned)v;
    unsigned lg = 63 - (unsigned)__builtin_clzll(v);
    unsigned b = lg * 4 + (unsigned)((v >> (lg - 2)) & 3);
    return b < PTT_STAT_NBUCKETS ? b : PTT_STAT_NBUCKETS - 1;
}

uint64_t ptt_stat_bucket_mid(unsigned b)
{
    if (b < 4)
        return b;
    unsigned lg = b / 4, sub = b % 4;
    uint64_t lo = (1ull << lg) + ((uint64_t)sub << (lg - 2));
    return lo + (1ull << (lg - 2)) / 2;
}

/* The histogram's buckets made whole, with bucket k counted once more. */
__attribute__((noinline)) static void hist_spill(struct ptt_stat_hist *h, unsigned k)
{
    h->b = ptt_must(calloc(PTT_STAT_NBUCKETS, sizeof *h->b));
    for (unsigned i = 0; i < h->nin; i++)
        h->b[h->in_b[i]] = h->in_n[i];
    h->b[k]++;
}

static inline void hist_add(struct ptt_stat_hist *h, uint64_t v)
{
    h->n++;
    h->total += v;
    if (v > h->max)
        h->max = v;
    unsigned k = ptt_stat_bucket(v);
    if (h->b) {
        h->b[k]++;
        return;
    }
    for (unsigned i = 0; i < h->nin; i++)
        if (h->in_b[i] == k) {
            h->in_n[i]++;
            return;
        }
    if (h->nin < PTT_STAT_INLINE) {
        h->in_b[h->nin] = (uint8_t)k;
        h->in_n[h->nin++] = 1;
    } else
        hist_spill(h, k);
}

uint64_t ptt_stat_hist_at(const struct ptt_stat_hist *h, unsigned b)
{
    if (h->b)
        return h->b[b];
    for (unsigned i = 0; i < h->nin; i++)
        if (h->in_b[i] == b)
            return h->in_n[i];
    return 0;
}

uint64_t ptt_stat_pct(const struct ptt_stat_hist *h, double p)
{
    if (!h->n)
        return 0;
    uint64_t want = (uint64_t)(p * (double)h->n + 0.999999), seen = 0;
    for (unsigned b = 0; b < PTT_STAT_NBUCKETS; b++) {
        seen += ptt_stat_hist_at(h, b);
        if (seen >= want)
            return ptt_stat_bucket_mid(b) < h->max ? ptt_stat_bucket_mid(b) : h->max;
    }
    return h->max;
}

void ptt_stat_hist_json(FILE *f, const char *key, const struct ptt_stat_hist *h)
{
    fprintf(f,
            "\"%s\":{\"count\":%" PRIu64 ",\"total\":%" PRIu64 ",\"mean\":%" PRIu64
            ",\"p50\":%" PRIu64 ",\"p99\":%" PRIu64 ",\"max\":%" PRIu64 "}",
            key, h->n, h->total, h->n ? h->total / h->n : 0, ptt_stat_pct(h, 0.5),
            ptt_stat_pct(h, 0.99), h->max);
}

struct ptt_stats *ptt_stats_new(void)
{
    struct ptt_stats *s = calloc(1, sizeof *s);
    if (!s) {
        fprintf(stderr, "ptt: out of memory\n");
        exit(2);
    }
    s->calls = ptt_tracker_new(PTT_TRACK_TID);
    return s;
}

static void object_free(void *p)
{
    ptt_blame_free(&((struct object *)p)->blame);
    ptt_hmap_free(&((struct object *)p)->more, NULL);
    free(((struct object *)p)->pub.wait.b);
    free(((struct object *)p)->pub.hold.b);
}

void ptt_stats_free(struct ptt_stats *s)
{
    if (!s)
        return;
    ptt_hmap_free(&s->objects, object_free);
    ptt_hmap_free(&s->threads, NULL);
    ptt_tracker_free(s->calls);
    free(s);
}

void ptt_stats_observe(struct ptt_stats *s, void (*fn)(void *arg, const struct ptt_stat_interval *),
                       void *arg)
{
    s->observe = fn;
    s->observe_arg = arg;
}

static struct object **ocache(struct ptt_stats *s, int32_t pid, uint64_t addr)
{
    return &s->ocache[(addr >> 3 ^ addr >> 11 ^ (uint32_t)pid) % 256];
}

/* find_object and object_of past the cache: the object looked up in the table, made when add
 * (of class cls). Out of line: the cache answers nearly every time. */
__attribute__((noinline)) static struct object *object_table(struct ptt_stats *s, int32_t pid,
                                                             uint64_t addr, int add, int cls)
{
    struct object *o = ptt_hmap_get(&s->objects, ptt_key2((uint64_t)pid, addr), 0);
    if (!o && add) {
        o = ptt_hmap_get(&s->objects, ptt_key2((uint64_t)pid, addr), sizeof *o);
        o->pub.pid = pid;
        o->pub.addr = addr;
        o->pub.cls = cls;
    }
    if (o)
        *ocache(s, pid, addr) = o;
    return o;
}

/* An object met, or NULL. The last one first: a lock's events look it up again and again. */
static inline struct object *find_object(struct ptt_stats *s, int32_t pid, uint64_t addr)
{
    struct object *o = s->lobj;
    if (o && o->pub.addr == addr && o->pub.pid == pid)
        return o;
    o = *ocache(s, pid, addr);
    o = o && o->pub.addr == addr && o->pub.pid == pid ? o : object_table(s, pid, addr, 0, 0);
    if (o)
        s->lobj = o;
    return o;
}

/* An object, made if new (of class cls). */
static inline struct object *object_of(struct ptt_stats *s, int32_t pid, uint64_t addr, int cls)
{
    struct object *o = s->lobj;
    if (o && o->pub.addr == addr && o->pub.pid == pid)
        return o;
    o = *ocache(s, pid, addr);
    return s->lobj = o && o->pub.addr == addr && o->pub.pid == pid
                         ? o
                         : object_table(s, pid, addr, 1, cls);
}

/* add_user for a thread not among users[]. */
__attribute__((noinline)) static void add_new_user(struct object *ob, int32_t tid)
{
    struct ptt_stat_object *o = &ob->pub;
    if (o->nusers < PTT_STAT_MAX_USERS)
        o->users[o->nusers++] = tid;
    else if (!ptt_hmap_get(&ob->more, (uint32_t)tid, 0)) {
        ptt_hmap_get(&ob->more, (uint32_t)tid, 1);
        o->more_users++;
    }
}

/* tid a user of ob. In line: the users[] met already, for every lock call. */
static inline void add_user(struct object *ob, int32_t tid)
{
    struct ptt_stat_object *o = &ob->pub;
    for (unsigned i = 0; i < o->nusers; i++)
        if (o->users[i] == tid)
            return;
    add_new_user(ob, tid);
}

/* The classes whose objects have statistics: locks, semaphores, condvars, barriers. */
#define STAT_CLASSES                                                               \
    (1ull << PTT_CLASS_mutex | 1ull << PTT_CLASS_rwlock | 1ull << PTT_CLASS_spin | \
     1ull << PTT_CLASS_sem | 1ull << PTT_CLASS_cond | 1ull << PTT_CLASS_barrier)

/* What a call does for the statistics, from its IN event's role. */
enum role {
    R_NONE,
    R_LOCK,    /* a lock that may block */
    R_TRYLOCK, /* a lock that never blocks */
    R_SEMWAIT, /* takes a semaphore's unit: nobody holds it */
    R_UNLOCK,
    R_OBJWAIT, /* waits on a condvar or a barrier: every call waits */
    R_BLOCK    /* waits for something else: a thread, signals, a message queue, a once routine */
};

static inline enum role role_of(const struct ptt_evinfo *e)
{
    int blocks = e && (e->rflags & PTT_ROLEF_BLOCKS);
    switch (e ? e->role : PTT_ROLE_NONE) {
    case PTT_ROLE_ACQUIRE:
        return e->rflags & PTT_ROLEF_COUNTED ? R_SEMWAIT : blocks ? R_LOCK : R_TRYLOCK;
    case PTT_ROLE_RELEASE: return R_UNLOCK;
    case PTT_ROLE_WAIT:
        if (!blocks)
            return R_NONE;
        return (STAT_CLASSES >> e->okind) & 1 ? R_OBJWAIT : R_BLOCK;
    default: return R_NONE;
    }
}

/* The call site of the call an event opened (an unlock's), 0 if none. */
static uint64_t opened_site(const struct ptt_track *tr)
{
    return tr->what & PTT_TRK_OPENED ? tr->opened->site : 0;
}

/* An object no longer held: how long it was; the waits it caused, charged to this hold. */
static void hold_end(struct ptt_stats *s, const struct ptt_ev *ev, const struct ptt_track *tr)
{
    struct object *o = find_object(s, ev->pid, tr->released.object);
    if (!o)
        return;
    hist_add(&o->pub.hold, (uint64_t)ev->ns - (uint64_t)since(s, tr->released.ns));
    ptt_blame_release(&o->blame, ev->tid, opened_site(tr), ev->ns);
    if (s->observe) {
        struct ptt_stat_interval iv = {.what = PTT_STAT_IV_HOLD,
                                       .pid = ev->pid,
                                       .tid = ev->tid,
                                       .object = o->pub.addr,
                                       .cls = o->pub.cls,
                                       .site = tr->released.site,
                                       .release_site = opened_site(tr),
                                       .begin = since(s, tr->released.ns),
                                       .end = ev->ns};
        s->observe(s->observe_arg, &iv);
    }
}

/* An unlock of a lock the trace did not see this thread take (an inner unlock of a recursive
 * mutex is not one): its holder made the waiters wait, from a place unknown. */
static void unseen_release(struct ptt_stats *s, const struct ptt_ev *ev, const struct ptt_track *tr)
{
    uint64_t obj;
    struct object *o;
    if (!ptt_ev_role_get(ev, PTT_RF_OBJECT, &obj) || ptt_tthread_holds(tr->th, obj) ||
        !(o = find_object(s, ev->pid, obj)) || !o->blame.nwaiters)
        return;
    ptt_blame_release(&o->blame, ev->tid, opened_site(tr), ev->ns);
}

/* A hold begins: a lock, or a condvar wait that took its mutex again. */
static void hold_begin(struct ptt_stats *s, const struct ptt_ev *ev, const struct ptt_track *tr)
{
    if (tr->acquired->count != 1 || !(tr->what & PTT_TRK_CLOSED))
        return;
    struct object *o = object_of(s, ev->pid, tr->acquired->object, tr->acquired->cls);
    ptt_blame_hold(&o->blame, ev->tid, tr->closed[0].site);
}

static void blocked_on(struct ptt_stat_thread *t, uint64_t obj, int32_t joined, uint16_t call,
                       uint64_t ns)
{
    t->blocked += ns;
    int min = 0;
    for (int i = 0; i < PTT_STAT_MAX_ON; i++) {
        if (t->on[i].ns && t->on[i].obj == obj && t->on[i].call == call &&
            t->on[i].joined == joined) {
            t->on[i].ns += ns;
            return;
        }
        if (t->on[i].ns < t->on[min].ns)
            min = i;
    }
    if (ns > t->on[min].ns) { /* keeps the biggest, approximately */
        t->on[min].obj = obj, t->on[min].ns = ns, t->on[min].call = call;
        t->on[min].joined = joined;
    }
}

/* A join's thread, by its pthread_t now: glibc gives a joined thread's to the next one made. */
static int32_t joined_of(const struct ptt_stats *s, const struct ptt_ev *ev,
                         const struct ptt_open *c)
{
    const struct ptt_evinfo *in = c->in.info;
    return s->names && in && in->role == PTT_ROLE_WAIT && in->okind == PTT_CLASS_thread
               ? ptt_names_pthread(s->names, ev->pid, c->object)
               : 0;
}

/* Whether the call succeeded (its OUT event), or failed with ok2 only (EOWNERDEAD). */
static int out_ok(const struct ptt_ev *ev, int64_t ok2)
{
    uint64_t r;
    return ptt_ev_role_get(ev, PTT_RF_STATUS, &r) && (r == 0 || (int64_t)r == ok2);
}

/* Wait time by call site: the sites that waited most are kept (a few per object). */
static void site_wait(struct ptt_stat_object *o, uint64_t site, uint64_t ns)
{
    if (!site)
        return;
    int min = 0;
    for (int i = 0; i < PTT_STAT_MAX_SITES; i++) {
        if (o->sites[i].waits && o->sites[i].site == site) {
            o->sites[i].ns += ns;
            o->sites[i].waits++;
            return;
        }
        if (o->sites[i].ns < o->sites[min].ns)
            min = i;
    }
    if (!o->sites[min].waits || ns > o->sites[min].ns)
        o->sites[min].site = site, o->sites[min].ns = ns, o->sites[min].waits = 1;
}

/* A call that counted (what: PTT_STAT_IV_...), to the observer. */
/* begin: where the time counted began, so that end - begin is what was counted (dur). */
static void observe_wait(struct ptt_stats *s, const struct ptt_ev *ev, const struct ptt_open *c,
                         unsigned what, int ended, uint64_t dur)
{
    uint64_t r = 0;
    struct ptt_stat_interval iv = {.what = what | (ended ? PTT_STAT_IV_UNFINISHED : 0),
                                   .pid = ev->pid,
                                   .tid = ev->tid,
                                   .object = c->object,
                                   .cls = PTT_CLASS_OF(c->in.id),
                                   .call = c->in.id,
                                   .site = c->site,
                                   .begin = ev->ns - (int64_t)dur,
                                   .end = ev->ns,
                                   .has_result = !ended && ptt_ev_role_get(ev, PTT_RF_STATUS, &r),
                                   .joined = joined_of(s, ev, c)};
    iv.result = iv.has_result ? (int64_t)r : 0;
    s->observe(s->observe_arg, &iv);
}

/* A pthread_once that ran the init routine: the thread was not waiting, it was running it. */
static int ran_routine(const struct ptt_ev *ev)
{
    enum { RAN = PTT_F(THREAD_ONCE_OUT, ran) };
    return ev->id == PTT_EV_THREAD_ONCE_OUT && ev->nargs > RAN && ev->args[RAN];
}

static void close_call(struct ptt_stats *s, struct thread *t, const struct ptt_ev *ev,
                       const struct ptt_open *c, int ended)
{
    enum role r = role_of(c->in.info);
    s->before_attach += c->before_attach;
    if (r == R_NONE) /* an unlock, most calls: nothing counted */
        return;
    unsigned what = 0; /* for the observer */
    uint64_t now = (uint64_t)ev->ns, dur = now - (uint64_t)since(s, c->in.ns);
    uint64_t ptt_wait = t->bufwait - t->bufwait_in; /* ptt's, not the object's: left out */
    dur -= ptt_wait < dur ? ptt_wait : dur;
    uint16_t id = c->in.id;
    int ok = !ended && out_ok(ev, EOWNERDEAD);
    int cls = PTT_CLASS_OF(id);
    switch (r) {
    case R_LOCK:
    case R_TRYLOCK:
    case R_SEMWAIT: {
        struct object *ob = object_of(s, ev->pid, c->object, cls);
        struct ptt_stat_object *o = &ob->pub;
        add_user(ob, ev->tid);
        if (r != R_TRYLOCK || ok) { /* a trylock that fails waits for nothing */
            hist_add(&o->wait, dur);
            what |= PTT_STAT_IV_WAIT;
        }
        if (ok) {
            o->acquisitions++;
            o->contended += c->contended;
            what |= PTT_STAT_IV_ACQUIRED | (c->contended ? PTT_STAT_IV_CONTENDED : 0);
        }
        if (r != R_TRYLOCK && (c->contended || ended)) {
            what |= PTT_STAT_IV_BLOCKED;
            blocked_on(&t->pub, c->object, 0, id, dur);
            site_wait(o, c->site, dur);
            if (r == R_LOCK) /* a semaphore has no holder */
                ptt_blame_wait_end(&ob->blame, ev->tid, since(s, c->in.ns), ev->ns, ok);
        }
        break;
    }
    case R_OBJWAIT: { /* every call waits */
        struct object *ob = object_of(s, ev->pid, c->object, cls);
        struct ptt_stat_object *o = &ob->pub;
        add_user(ob, ev->tid);
        hist_add(&o->wait, dur);
        o->acquisitions += !ended; /* a wait still open at the end: a wait, no acquisition */
        o->contended += !ended;
        blocked_on(&t->pub, c->object, 0, id, dur);
        site_wait(o, c->site, dur);
        what = PTT_STAT_IV_WAIT | PTT_STAT_IV_BLOCKED |
               (ended ? 0 : PTT_STAT_IV_ACQUIRED | PTT_STAT_IV_CONTENDED);
        break;
    }
    case R_BLOCK:
        if (!ended && ran_routine(ev))
            break; /* its own work: what it waited for in there is counted on its own */
        blocked_on(&t->pub, c->object, joined_of(s, ev, c), id, dur);
        what = PTT_STAT_IV_BLOCKED;
        break;
    default: break;
    }
    if (what && s->observe)
        observe_wait(s, ev, c, what, ended, dur);
}

/* A lock call is seen waiting (a CONTENDED event): a waiter of the object from now on. */
static void blocked(struct ptt_stats *s, const struct ptt_ev *ev, const struct ptt_open *c)
{
    if (role_of(c->in.info) != R_LOCK)
        return;
    struct object *o = object_of(s, ev->pid, c->object, PTT_CLASS_OF(c->in.id));
    ptt_blame_wait(&o->blame, ev->tid, since(s, c->in.ns));
}

/* The waits of a thread that ended inside its lock calls are not counted: nor charged. */
static void forget_waits(struct ptt_stats *s, const struct ptt_ev *ev, const struct ptt_track *tr)
{
    if (!(tr->what & PTT_TRK_CLOSED))
        return;
    for (unsigned k = 0; k < tr->nclosed; k++) {
        const struct ptt_open *c = &tr->closed[k];
        struct object *o;
        if (!c->frame && role_of(c->in.info) == R_LOCK && (o = find_object(s, ev->pid, c->object)))
            ptt_blame_forget(&o->blame, ev->tid);
    }
}

void ptt_stats_names(struct ptt_stats *s, const struct ptt_names *names)
{
    s->names = names;
}

void ptt_stats_window(struct ptt_stats *s, int64_t from)
{
    s->from = from;
}

/* An event before the window: what its thread does and holds, nothing counted. */
static void state_only(struct ptt_stats *s, const struct ptt_ev *ev)
{
    if (!ev->info || ev->nested)
        return;
    struct thread *t =
        ptt_hmap_get(&s->threads, ptt_key2((uint64_t)ev->pid, (uint64_t)ev->tid), sizeof *t);
    if (!t->calls)
        t->calls = ptt_tracker_get(s->calls, ev);
    ptt_tracker_feed(t->calls, ev, NULL);
}

/* ev's thread, by the cache of threads by tid, else the table (made if new). */
static inline struct thread *thread_of(struct ptt_stats *s, const struct ptt_ev *ev)
{
    struct thread **slot = &s->tcache[(uint32_t)ev->tid % 64], *t = *slot;
    if (!t || t->pub.tid != ev->tid || t->pub.pid != ev->pid) {
        t = ptt_hmap_get(&s->threads, ptt_key2((uint64_t)ev->pid, (uint64_t)ev->tid), sizeof *t);
        if (!t->shown) {
            t->shown = 1;
            t->pub.pid = ev->pid;
            t->pub.tid = ev->tid;
            t->pub.first = ev->ns;
        }
        *slot = t;
    }
    return t;
}

/* ptt trace's events about the session (a switch of recording, a dump, a hang report): of no
 * thread of the program; ptt trace's pid is no process of it. */
void ptt_stats_event(struct ptt_stats *s, const struct ptt_ev *ev)
{
    if (ptt_ev_of_session(ev))
        return;
    if (ev->ns < s->from) {
        state_only(s, ev);
        return;
    }
    struct thread *t = s->lthread; /* mostly: the last event's thread */
    if (!t || t->pub.tid != ev->tid || t->pub.pid != ev->pid)
        s->lthread = t = thread_of(s, ev);
    t->pub.last = ev->ns;
    if (!ev->info || ev->nested) /* a signal handler's, inside another event */
        return;
    if ((ev->id & PTT_EV_ID_MASK) == PTT_EV_TRACE_BUFFER_WAIT) {
        uint64_t w = ptt_ev_arg(ev, PTT_F(TRACE_BUFFER_WAIT, waited), 0);
        s->bufwait_ns += w;
        s->bufwaits++;
        t->bufwait += w;
        return;
    }
    if (ev->info->kind == PTT_KIND_IN)
        t->bufwait_in = t->bufwait;
    struct ptt_track tr;
    if (!t->calls)
        t->calls = ptt_tracker_get(s->calls, ev);
    unsigned what = ptt_tracker_feed_inline(t->calls, ev, &tr);
    if (what & PTT_TRK_RELEASED) /* an unlock, or a condvar wait releasing its mutex */
        hold_end(s, ev, &tr);
    else if (ev->info->role == PTT_ROLE_RELEASE)
        unseen_release(s, ev, &tr);
    if (what & PTT_TRK_BLOCKED)
        blocked(s, ev, tr.blocked);
    /* A thread that ends inside calls (not cancelled: the reader says so before) lost their
     * OUT events: they are not counted. */
    if (ev->info->role == PTT_ROLE_THREAD_END) {
        forget_waits(s, ev, &tr);
        return;
    }
    if (what & PTT_TRK_CLOSED) {
        if (tr.nclosed == 1 && !tr.closed[0].frame) /* most: a call returned */
            close_call(s, t, ev, &tr.closed[0], tr.unfinished);
        else
            for (unsigned k = tr.nclosed; k-- > 0;)
                if (!tr.closed[k].frame)
                    close_call(s, t, ev, &tr.closed[k], tr.unfinished);
    }
    if (what & PTT_TRK_ACQUIRED) /* after the wait that led to it */
        hold_begin(s, ev, &tr);
}

/* Names */

const char *ptt_stat_object_name(const struct ptt_names *names, int32_t pid, uint64_t addr,
                                 char *buf, size_t len)
{
    const char *n = ptt_names_object(names, pid, addr);
    if (n)
        return n;
    snprintf(buf, len, "0x%" PRIx64, addr);
    return buf;
}

const char *ptt_stat_thread_name(const struct ptt_names *names, int32_t pid, int32_t tid, char *buf,
                                 size_t len)
{
    const char *n = ptt_names_thread(names, pid, tid);
    if (n)
        return n;
    snprintf(buf, len, "%d", tid);
    return buf;
}

const char *ptt_stat_on_name(const struct ptt_names *names, const struct ptt_stat_thread *t, int k,
                             char *buf, size_t len)
{
    const struct ptt_evinfo *in = ptt_evinfo(t->on[k].call);
    if (in && in->role == PTT_ROLE_WAIT && in->okind == PTT_CLASS_thread) { /* a join */
        int32_t tid =
            t->on[k].joined ? t->on[k].joined : ptt_names_pthread(names, t->pid, t->on[k].obj);
        if (tid) {
            char b[64];
            snprintf(buf, len, "thread %s", ptt_stat_thread_name(names, t->pid, tid, b, sizeof b));
            return buf;
        }
    }
    if (ptt_fmt_waits_on(buf, len, in, t->on[k].obj)) /* a signal set, a queue: as view */
        return buf;
    return ptt_stat_object_name(names, t->pid, t->on[k].obj, buf, len);
}

/* Sorting */

struct sort_ctx {
    enum ptt_stat_sort key;
    const struct ptt_names *names;
};

static int cmp_obj(const void *a, const void *b, void *arg)
{
    const struct sort_ctx *ctx = arg;
    const struct ptt_stat_object *x = *(const struct ptt_stat_object *const *)a,
                                 *y = *(const struct ptt_stat_object *const *)b;
    uint64_t u, v;
    switch (ctx->key) {
    case PTT_STAT_SORT_HOLD: u = x->hold.total, v = y->hold.total; break;
    case PTT_STAT_SORT_ACQ: u = x->acquisitions, v = y->acquisitions; break;
    case PTT_STAT_SORT_CONTENDED: u = x->contended, v = y->contended; break;
    case PTT_STAT_SORT_NAME: {
        char b1[64], b2[64];
        int c = strcmp(ptt_stat_object_name(ctx->names, x->pid, x->addr, b1, sizeof b1),
                       ptt_stat_object_name(ctx->names, y->pid, y->addr, b2, sizeof b2));
        if (c)
            return c;
        u = v = 0;
        break;
    }
    default: u = x->wait.total, v = y->wait.total; break;
    }
    if (u != v)
        return u < v ? 1 : -1;
    if (x->addr != y->addr)
        return x->addr > y->addr ? 1 : -1;
    return (x->pid > y->pid) - (x->pid < y->pid); /* the same address in two processes */
}

static int cmp_thread(const void *a, const void *b)
{
    const struct ptt_stat_thread *x = *(const struct ptt_stat_thread *const *)a,
                                 *y = *(const struct ptt_stat_thread *const *)b;
    if (x->blocked != y->blocked)
        return x->blocked < y->blocked ? 1 : -1;
    if (x->tid != y->tid)
        return x->tid > y->tid ? 1 : -1;
    return (x->pid > y->pid) - (x->pid < y->pid);
}

struct ptt_stat_object **ptt_stats_objects(const struct ptt_stats *s, enum ptt_stat_sort key,
                                           uint64_t kinds, const struct ptt_names *names, size_t *n)
{
    struct ptt_stat_object **v = malloc((s->objects.n + 1) * sizeof *v);
    if (!v) {
        fprintf(stderr, "ptt: out of memory\n");
        exit(2);
    }
    size_t k = 0;
    for (size_t i = 0; i < s->objects.cap; i++) {
        struct ptt_stat_object *o = ptt_hmap_slot(&s->objects, i);
        if (o && (!kinds || ((kinds >> o->cls) & 1)))
            v[k++] = o;
    }
    struct sort_ctx ctx = {key, names};
    qsort_r(v, k, sizeof *v, cmp_obj, &ctx);
    *n = k;
    return v;
}

void ptt_stats_bufwait(const struct ptt_stats *s, uint64_t *ns, uint64_t *waits)
{
    *ns = s->bufwait_ns;
    *waits = s->bufwaits;
}

uint64_t ptt_stats_before_attach(const struct ptt_stats *s)
{
    return s->before_attach;
}

struct ptt_stat_thread **ptt_stats_threads(const struct ptt_stats *s, size_t *n)
{
    struct ptt_stat_thread **v = malloc((s->threads.n + 1) * sizeof *v);
    if (!v) {
        fprintf(stderr, "ptt: out of memory\n");
        exit(2);
    }
    size_t k = 0;
    for (size_t i = 0; i < s->threads.cap; i++) {
        struct thread *t = ptt_hmap_slot(&s->threads, i);
        if (t && t->shown)
            v[k++] = &t->pub;
    }
    qsort(v, k, sizeof *v, cmp_thread);
    *n = k;
    return v;
}

/* Who made others wait */

struct named_blame {
    struct ptt_stat_blame b;
    const char *take, *release; /* the sites' names, NULL if not known */
};

/* Sites by name, the unnamed after, by address. */
static int cmp_site(const char *x, uint64_t a, const char *y, uint64_t b)
{
    if (x && y)
        return strcmp(x, y);
    if (x || y)
        return x ? -1 : 1;
    return (a > b) - (a < b);
}

/* The same holder, from the same line to the same line: one entry. */
static int cmp_holder(const void *p, const void *q)
{
    const struct named_blame *x = p, *y = q;
    if (x->b.tid != y->b.tid)
        return x->b.tid < y->b.tid ? -1 : 1;
    if (x->b.held_at_end != y->b.held_at_end)
        return x->b.held_at_end - y->b.held_at_end;
    int c = cmp_site(x->take, x->b.take, y->take, y->b.take);
    return c ? c : cmp_site(x->release, x->b.release, y->release, y->b.release);
}

static int cmp_blame(const void *p, const void *q)
{
    const struct ptt_stat_blame *x = p, *y = q;
    if (x->ns != y->ns)
        return x->ns < y->ns ? 1 : -1;
    if (x->waits != y->waits)
        return x->waits < y->waits ? 1 : -1;
    if (x->tid != y->tid)
        return x->tid > y->tid ? 1 : -1;
    if (x->take != y->take)
        return x->take > y->take ? 1 : -1;
    return (x->release > y->release) - (x->release < y->release);
}

struct ptt_stat_blame *ptt_stats_blame(struct ptt_stat_object *o, const struct ptt_names *names,
                                       size_t *n)
{
    size_t ne;
    const struct ptt_blame_entry *e = ptt_blame_entries(&((struct object *)o)->blame, &ne);
    struct named_blame *v = malloc((ne + 1) * sizeof *v);
    struct ptt_stat_blame *out = malloc((ne + 1) * sizeof *out);
    if (!v || !out) {
        fprintf(stderr, "ptt: out of memory\n");
        exit(2);
    }
    size_t k = 0;
    for (size_t i = 0; i < ne; i++) {
        if (!e[i].waits && !e[i].ns) /* a release that found waiters, charged nothing */
            continue;
        v[k].b = (struct ptt_stat_blame){e[i].tid,     e[i].held_at_end, e[i].take,
                                         e[i].release, e[i].waits,       e[i].ns};
        v[k].take = e[i].take ? ptt_names_site(names, o->pid, e[i].take) : NULL;
        v[k].release = e[i].release ? ptt_names_site(names, o->pid, e[i].release) : NULL;
        k++;
    }
    qsort(v, k, sizeof *v, cmp_holder);
    size_t m = 0;
    for (size_t i = 0; i < k; i++) {
        if (m && !cmp_holder(&v[i], &v[m - 1])) {
            v[m - 1].b.waits += v[i].b.waits;
            v[m - 1].b.ns += v[i].b.ns;
        } else
            v[m++] = v[i];
    }
    for (size_t i = 0; i < m; i++)
        out[i] = v[i].b;
    free(v);
    qsort(out, m, sizeof *out, cmp_blame);
    *n = m;
    return out;
}
