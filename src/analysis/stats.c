/* Contention statistics (stats.h): one pass over the events, in time order. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/hmap.h"
#include "analysis/stats.h"

struct call {
    uint16_t id;
    uint64_t obj, obj2; /* the object; a condvar wait's mutex (has_lock) */
    int has_lock;
    uint64_t t_in;
    uint64_t site; /* where the program called it */
    int contended;
};

struct held {
    uint64_t obj;
    uint64_t since;
    unsigned depth;
};

#define MAX_OPEN 16
#define MAX_HELD 32
struct thread {
    struct ptt_stat_thread pub; /* first: the arrays handed out point at it */
    struct call open[MAX_OPEN];
    int nopen;
    struct held held[MAX_HELD];
    int nheld;
};

struct ptt_stats {
    struct ptt_hmap objects, threads;
};

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

static void hist_add(struct ptt_stat_hist *h, uint64_t v)
{
    h->n++;
    h->total += v;
    if (v > h->max)
        h->max = v;
    h->b[ptt_stat_bucket(v)]++;
}

uint64_t ptt_stat_pct(const struct ptt_stat_hist *h, double p)
{
    if (!h->n)
        return 0;
    uint64_t want = (uint64_t)(p * (double)h->n + 0.999999), seen = 0;
    for (unsigned b = 0; b < PTT_STAT_NBUCKETS; b++) {
        seen += h->b[b];
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
    return s;
}

void ptt_stats_free(struct ptt_stats *s)
{
    if (!s)
        return;
    ptt_hmap_free(&s->objects, NULL);
    ptt_hmap_free(&s->threads, NULL);
    free(s);
}

static struct ptt_stat_object *object_of(struct ptt_stats *s, int32_t pid, uint64_t addr, int cls)
{
    struct ptt_stat_object *o = ptt_hmap_get(&s->objects, ptt_key2((uint64_t)pid, addr), sizeof *o);
    if (!o->addr) {
        o->pid = pid;
        o->addr = addr;
        o->cls = cls;
    }
    return o;
}

static void add_user(struct ptt_stat_object *o, int32_t tid)
{
    for (unsigned i = 0; i < o->nusers; i++)
        if (o->users[i] == tid)
            return;
    if (o->nusers < PTT_STAT_MAX_USERS)
        o->users[o->nusers++] = tid;
    else
        o->more_users++;
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

static enum role role_of(uint16_t id)
{
    const struct ptt_evinfo *e = ptt_evinfo(id);
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

static void hold_start(struct thread *t, uint64_t obj, uint64_t now)
{
    for (int i = 0; i < t->nheld; i++)
        if (t->held[i].obj == obj) {
            t->held[i].depth++; /* recursive mutex, or more read locks */
            return;
        }
    if (t->nheld < MAX_HELD)
        t->held[t->nheld++] = (struct held){obj, now, 1};
}

static void hold_end(struct ptt_stats *s, struct thread *t, int32_t pid, uint64_t obj, uint64_t now,
                     int all)
{
    for (int i = 0; i < t->nheld; i++) {
        if (t->held[i].obj != obj)
            continue;
        if (!all && --t->held[i].depth)
            return;
        struct ptt_stat_object *o = ptt_hmap_get(&s->objects, ptt_key2((uint64_t)pid, obj), 0);
        if (o)
            hist_add(&o->hold, now - t->held[i].since);
        t->held[i] = t->held[--t->nheld];
        return;
    }
}

static void blocked_on(struct ptt_stat_thread *t, uint64_t obj, uint16_t call, uint64_t ns)
{
    t->blocked += ns;
    int min = 0;
    for (int i = 0; i < PTT_STAT_MAX_ON; i++) {
        if (t->on[i].ns && t->on[i].obj == obj && t->on[i].call == call) {
            t->on[i].ns += ns;
            return;
        }
        if (t->on[i].ns < t->on[min].ns)
            min = i;
    }
    if (ns > t->on[min].ns) /* keeps the biggest, approximately */
        t->on[min].obj = obj, t->on[min].ns = ns, t->on[min].call = call;
}

/* Whether the call succeeded (its OUT event), or with ok2 as well (a condvar's ETIMEDOUT). */
static int out_ok(const struct ptt_ev *ev, int64_t ok2)
{
    uint64_t r;
    return ptt_ev_role_get(ev, PTT_RF_STATUS, &r) && (r == 0 || (int64_t)r == ok2);
}

/* The site field of an event (its return address), 0 if it has none. */
static uint64_t site_of(const struct ptt_ev *ev)
{
    for (unsigned i = 0; ev->info && i < ev->info->nargs && i < ev->nargs; i++)
        if (ev->info->fields[i].type == PTT_F_SITE)
            return ev->args[i];
    return 0;
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

static void close_call(struct ptt_stats *s, struct thread *t, const struct ptt_ev *ev,
                       struct call *c, int ended)
{
    uint64_t now = (uint64_t)ev->ns, dur = now - c->t_in;
    enum role r = role_of(c->id);
    int ok = !ended && out_ok(ev, EOWNERDEAD);
    int cls = PTT_CLASS_OF(c->id);
    switch (r) {
    case R_LOCK:
    case R_TRYLOCK:
    case R_SEMWAIT: {
        struct ptt_stat_object *o = object_of(s, ev->pid, c->obj, cls);
        add_user(o, ev->tid);
        if (r != R_TRYLOCK || ok) /* a trylock that fails waits for nothing */
            hist_add(&o->wait, dur);
        if (ok) {
            o->acquisitions++;
            o->contended += c->contended;
            if (r != R_SEMWAIT)
                hold_start(t, c->obj, now);
        }
        if (r != R_TRYLOCK && (c->contended || ended)) {
            blocked_on(&t->pub, c->obj, c->id, dur);
            site_wait(o, c->site, dur);
        }
        break;
    }
    case R_OBJWAIT: { /* every call waits */
        struct ptt_stat_object *o = object_of(s, ev->pid, c->obj, cls);
        add_user(o, ev->tid);
        hist_add(&o->wait, dur);
        o->acquisitions++;
        o->contended++;
        blocked_on(&t->pub, c->obj, c->id, dur);
        site_wait(o, c->site, dur);
        if (c->has_lock && !ended && out_ok(ev, ETIMEDOUT))
            hold_start(t, c->obj2, now); /* a condvar's mutex, held again */
        break;
    }
    case R_BLOCK: blocked_on(&t->pub, c->obj, c->id, dur); break;
    default: break;
    }
}

/* A call begins: an unlock ends a hold, the calls that matter are followed until they return. */
static void call_in(struct ptt_stats *s, struct thread *t, const struct ptt_ev *ev)
{
    enum role r = role_of(ev->id);
    uint64_t obj = 0, lock = 0;
    int has_obj = ptt_ev_role_get(ev, PTT_RF_OBJECT, &obj);
    if (r == R_UNLOCK) {
        if (has_obj)
            hold_end(s, t, ev->pid, obj, (uint64_t)ev->ns, 0);
        return;
    }
    int has_lock = ptt_ev_role_get(ev, PTT_RF_LOCK, &lock);
    if (r == R_OBJWAIT && has_lock) /* releases the mutex while it waits */
        hold_end(s, t, ev->pid, lock, (uint64_t)ev->ns, 1);
    if (r != R_NONE && t->nopen < MAX_OPEN)
        t->open[t->nopen++] =
            (struct call){ev->id, obj, lock, has_lock, (uint64_t)ev->ns, site_of(ev), 0};
}

void ptt_stats_event(struct ptt_stats *s, const struct ptt_ev *ev)
{
    struct thread *t =
        ptt_hmap_get(&s->threads, ptt_key2((uint64_t)ev->pid, (uint64_t)ev->tid), sizeof *t);
    if (!t->pub.tid) {
        t->pub.pid = ev->pid;
        t->pub.tid = ev->tid;
        t->pub.first = ev->ns;
    }
    t->pub.last = ev->ns;
    const struct ptt_evinfo *info = ev->info;
    if (!info || ev->nested)
        return;
    if (info->kind == PTT_KIND_IN) {
        call_in(s, t, ev);
        return;
    }
    if (info->role == PTT_ROLE_CONTENDED) {
        if (t->nopen)
            t->open[t->nopen - 1].contended = 1;
        return;
    }
    switch (ev->id) {             /* events of their own kind */
    case PTT_EV_TRACE_UNFINISHED: /* blocked until the end */
    case PTT_EV_THREAD_CANCELLED:
        if (t->nopen) {
            struct call c = t->open[--t->nopen];
            close_call(s, t, ev, &c, 1);
        }
        return;
    default: break;
    }
    if (info->kind != PTT_KIND_OUT)
        return;
    for (int i = t->nopen - 1; i >= 0; i--) {
        const struct ptt_evinfo *in = ptt_evinfo(t->open[i].id);
        if (in && !strcmp(in->routine, info->routine)) {
            struct call c = t->open[i];
            t->nopen = i;
            close_call(s, t, ev, &c, 0);
            return;
        }
    }
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
        int32_t tid = ptt_names_pthread(names, t->pid, t->on[k].obj);
        if (tid) {
            char b[64];
            snprintf(buf, len, "thread %s", ptt_stat_thread_name(names, t->pid, tid, b, sizeof b));
            return buf;
        }
    }
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
        if (t)
            v[k++] = &t->pub;
    }
    qsort(v, k, sizeof *v, cmp_thread);
    *n = k;
    return v;
}
