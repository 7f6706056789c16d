/* ptt stat: contention, wait and hold times per object, blocked time per thread and process.
 * One pass over the trace, in time order; memory grows with the number of objects and threads,
 * not with the number of events: percentiles come from log-linear histograms (4 buckets per
 * power of two: within 19% of the true value), totals, means and maxima are exact. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "names.h"
#include "reader.h"
#include "util.h"

#define NBUCKETS 256

struct hist {
    uint64_t n, total, max;
    uint64_t b[NBUCKETS];
};

static unsigned bucket(uint64_t v)
{
    if (v < 4)
        return (unsigned)v;
    unsigned lg = 63 - (unsigned)__builtin_clzll(v);
    unsigned b = lg * 4 + (unsigned)((v >> (lg - 2)) & 3);
    return b < NBUCKETS ? b : NBUCKETS - 1;
}

static uint64_t bucket_mid(unsigned b)
{
    if (b < 4)
        return b;
    unsigned lg = b / 4, sub = b % 4;
    uint64_t lo = (1ull << lg) + ((uint64_t)sub << (lg - 2));
    return lo + (1ull << (lg - 2)) / 2;
}

static void hist_add(struct hist *h, uint64_t v)
{
    h->n++;
    h->total += v;
    if (v > h->max)
        h->max = v;
    h->b[bucket(v)]++;
}

static uint64_t hist_pct(const struct hist *h, double p)
{
    if (!h->n)
        return 0;
    uint64_t want = (uint64_t)(p * (double)h->n + 0.999999), seen = 0;
    for (unsigned b = 0; b < NBUCKETS; b++) {
        seen += h->b[b];
        if (seen >= want)
            return bucket_mid(b) < h->max ? bucket_mid(b) : h->max;
    }
    return h->max;
}

#define MAX_USERS 8
struct object {
    int32_t pid;
    uint64_t addr;
    int cls;
    uint64_t acquisitions, contended;
    struct hist wait, hold;
    int32_t users[MAX_USERS];
    unsigned nusers, more_users;
};

struct call {
    uint16_t id;
    uint64_t obj, obj2; /* the object; a condvar wait's mutex */
    uint64_t t_in;
    int contended;
};

struct held {
    uint64_t obj;
    uint64_t since;
    unsigned depth;
};

#define MAX_OPEN 16
#define MAX_HELD 32
#define MAX_ON 4
struct thread {
    int32_t pid, tid;
    int64_t first, last;
    uint64_t blocked;
    struct {
        uint64_t obj, ns;
        uint16_t call;
    } on[MAX_ON]; /* what it was blocked on most */
    struct call open[MAX_OPEN];
    int nopen;
    struct held held[MAX_HELD];
    int nheld;
};

/* An open-addressing table of records of one size, keyed by 64 bits. */
struct table {
    uint64_t *keys;
    void **vals;
    size_t n, cap;
};

static void *table_get(struct table *t, uint64_t key, size_t size)
{
    if ((t->n + 1) * 2 > t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 1024;
        uint64_t *k = calloc(cap, sizeof *k);
        void **v = calloc(cap, sizeof *v);
        if (!k || !v) {
            fprintf(stderr, "ptt stat: out of memory\n");
            exit(PTT_EXIT_USAGE);
        }
        for (size_t i = 0; i < t->cap; i++)
            if (t->vals[i]) {
                size_t j = t->keys[i] & (cap - 1);
                while (v[j])
                    j = (j + 1) & (cap - 1);
                k[j] = t->keys[i];
                v[j] = t->vals[i];
            }
        free(t->keys);
        free(t->vals);
        t->keys = k;
        t->vals = v;
        t->cap = cap;
    }
    size_t j = key & (t->cap - 1);
    while (t->vals[j] && t->keys[j] != key)
        j = (j + 1) & (t->cap - 1);
    if (!t->vals[j]) {
        if (!size)
            return NULL;
        t->vals[j] = calloc(1, size);
        if (!t->vals[j]) {
            fprintf(stderr, "ptt stat: out of memory\n");
            exit(PTT_EXIT_USAGE);
        }
        t->keys[j] = key;
        t->n++;
    }
    return t->vals[j];
}

static uint64_t key2(uint64_t a, uint64_t b)
{
    uint64_t k = a * 0x9e3779b97f4a7c15ull ^ b;
    k ^= k >> 31;
    k *= 0xbf58476d1ce4e5b9ull;
    return k ^ k >> 29;
}

static struct table objects, threads;

static struct object *object_of(int32_t pid, uint64_t addr, int cls)
{
    struct object *o = table_get(&objects, key2((uint64_t)pid, addr), sizeof *o);
    if (!o->addr) {
        o->pid = pid;
        o->addr = addr;
        o->cls = cls;
    }
    return o;
}

static void add_user(struct object *o, int32_t tid)
{
    for (unsigned i = 0; i < o->nusers; i++)
        if (o->users[i] == tid)
            return;
    if (o->nusers < MAX_USERS)
        o->users[o->nusers++] = tid;
    else
        o->more_users++;
}

/* What each call does, by its IN event. */
enum role {
    R_NONE,
    R_LOCK,
    R_TRYLOCK,
    R_UNLOCK,
    R_CONDWAIT,
    R_BARRIER,
    R_SEMWAIT,
    R_JOIN,
    R_BLOCK
};

static enum role role_of(uint16_t id)
{
    switch (id) {
    case PTT_EV_MUTEX_LOCK_IN:
    case PTT_EV_MUTEX_TIMEDLOCK_IN:
    case PTT_EV_MUTEX_CLOCKLOCK_IN:
    case PTT_EV_RWLOCK_RDLOCK_IN:
    case PTT_EV_RWLOCK_TIMEDRDLOCK_IN:
    case PTT_EV_RWLOCK_CLOCKRDLOCK_IN:
    case PTT_EV_RWLOCK_WRLOCK_IN:
    case PTT_EV_RWLOCK_TIMEDWRLOCK_IN:
    case PTT_EV_RWLOCK_CLOCKWRLOCK_IN:
    case PTT_EV_SPIN_LOCK_IN: return R_LOCK;
    case PTT_EV_MUTEX_TRYLOCK_IN:
    case PTT_EV_RWLOCK_TRYRDLOCK_IN:
    case PTT_EV_RWLOCK_TRYWRLOCK_IN:
    case PTT_EV_SPIN_TRYLOCK_IN: return R_TRYLOCK;
    case PTT_EV_MUTEX_UNLOCK_IN:
    case PTT_EV_RWLOCK_UNLOCK_IN:
    case PTT_EV_SPIN_UNLOCK_IN: return R_UNLOCK;
    case PTT_EV_COND_WAIT_IN:
    case PTT_EV_COND_TIMEDWAIT_IN:
    case PTT_EV_COND_CLOCKWAIT_IN: return R_CONDWAIT;
    case PTT_EV_BARRIER_WAIT_IN: return R_BARRIER;
    case PTT_EV_SEM_WAIT_IN:
    case PTT_EV_SEM_TRYWAIT_IN:
    case PTT_EV_SEM_TIMEDWAIT_IN:
    case PTT_EV_SEM_CLOCKWAIT_IN: return R_SEMWAIT;
    case PTT_EV_THREAD_JOIN_IN:
    case PTT_EV_THREAD_TIMEDJOIN_NP_IN: return R_JOIN;
    case PTT_EV_SIGNAL_WAIT_IN:
    case PTT_EV_SIGNAL_WAITINFO_IN:
    case PTT_EV_SIGNAL_TIMEDWAIT_IN:
    case PTT_EV_MQ_SEND_IN:
    case PTT_EV_MQ_TIMEDSEND_IN:
    case PTT_EV_MQ_RECEIVE_IN:
    case PTT_EV_MQ_TIMEDRECEIVE_IN:
    case PTT_EV_THREAD_ONCE_IN: return R_BLOCK;
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

static void hold_end(struct thread *t, int32_t pid, uint64_t obj, uint64_t now, int all)
{
    for (int i = 0; i < t->nheld; i++) {
        if (t->held[i].obj != obj)
            continue;
        if (!all && --t->held[i].depth)
            return;
        struct object *o = table_get(&objects, key2((uint64_t)pid, obj), 0);
        if (o)
            hist_add(&o->hold, now - t->held[i].since);
        t->held[i] = t->held[--t->nheld];
        return;
    }
}

static void blocked_on(struct thread *t, uint64_t obj, uint16_t call, uint64_t ns)
{
    t->blocked += ns;
    int min = 0;
    for (int i = 0; i < MAX_ON; i++) {
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

static int out_ok(const struct ptt_ev *ev)
{
    return ev->nargs && (ev->args[0] == 0 || (int64_t)ev->args[0] == EOWNERDEAD);
}

static void close_call(struct thread *t, const struct ptt_ev *ev, struct call *c, int ended)
{
    uint64_t now = (uint64_t)ev->ns, dur = now - c->t_in;
    enum role r = role_of(c->id);
    int ok = !ended && out_ok(ev);
    int cls = PTT_CLASS_OF(c->id);
    switch (r) {
    case R_LOCK:
    case R_TRYLOCK:
    case R_SEMWAIT: {
        struct object *o = object_of(ev->pid, c->obj, cls);
        add_user(o, ev->tid);
        if (r != R_TRYLOCK || ok) /* a trylock that fails waits for nothing */
            hist_add(&o->wait, dur);
        if (ok) {
            o->acquisitions++;
            o->contended += c->contended;
            if (r != R_SEMWAIT)
                hold_start(t, c->obj, now);
        }
        if (r != R_TRYLOCK && (c->contended || ended))
            blocked_on(t, c->obj, c->id, dur);
        break;
    }
    case R_CONDWAIT: {
        struct object *o = object_of(ev->pid, c->obj, cls);
        add_user(o, ev->tid);
        hist_add(&o->wait, dur);
        o->acquisitions++;
        o->contended++;
        blocked_on(t, c->obj, c->id, dur);
        if (!ended && ev->nargs && (ev->args[0] == 0 || ev->args[0] == ETIMEDOUT))
            hold_start(t, c->obj2, now); /* the mutex, held again */
        break;
    }
    case R_BARRIER: {
        struct object *o = object_of(ev->pid, c->obj, cls);
        add_user(o, ev->tid);
        hist_add(&o->wait, dur);
        o->acquisitions++;
        o->contended++;
        blocked_on(t, c->obj, c->id, dur);
        break;
    }
    case R_JOIN:
    case R_BLOCK: blocked_on(t, c->obj, c->id, dur); break;
    default: break;
    }
}

static void on_event(const struct ptt_ev *ev)
{
    struct thread *t = table_get(&threads, key2((uint64_t)ev->pid, (uint64_t)ev->tid), sizeof *t);
    if (!t->tid) {
        t->pid = ev->pid;
        t->tid = ev->tid;
        t->first = ev->ns;
    }
    t->last = ev->ns;
    const struct ptt_evinfo *info = ev->info;
    if (!info || ev->nested)
        return;
    if (info->kind == PTT_KIND_IN) {
        enum role r = role_of(ev->id);
        if (r == R_UNLOCK && ev->nargs) {
            hold_end(t, ev->pid, ev->args[0], (uint64_t)ev->ns, 0);
            return;
        }
        if (r == R_CONDWAIT && ev->nargs > 1) /* releases the mutex while it waits */
            hold_end(t, ev->pid, ev->args[1], (uint64_t)ev->ns, 1);
        if (r != R_NONE && t->nopen < MAX_OPEN)
            t->open[t->nopen++] =
                (struct call){ev->id, ev->nargs ? ev->args[0] : 0, ev->nargs > 1 ? ev->args[1] : 0,
                              (uint64_t)ev->ns, 0};
        return;
    }
    switch (ev->id) {
    case PTT_EV_MUTEX_WAIT:
    case PTT_EV_RWLOCK_WAIT:
    case PTT_EV_SPIN_WAIT:
    case PTT_EV_SEM_BLOCK:
        if (t->nopen)
            t->open[t->nopen - 1].contended = 1;
        return;
    case PTT_EV_TRACE_UNFINISHED: /* blocked until the end */
    case PTT_EV_THREAD_CANCELLED:
        if (t->nopen) {
            struct call c = t->open[--t->nopen];
            close_call(t, ev, &c, 1);
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
            close_call(t, ev, &c, 0);
            return;
        }
    }
}

/* Output */

enum { SORT_WAIT, SORT_HOLD, SORT_ACQ, SORT_CONTENDED, SORT_NAME };
static int sort_by;
static struct ptt_names *names;

static const char *obj_name(const struct object *o, char *buf, size_t len)
{
    const char *n = ptt_names_object(names, o->pid, o->addr);
    if (n)
        return n;
    snprintf(buf, len, "0x%" PRIx64, o->addr);
    return buf;
}

static const char *thread_name(int32_t pid, int32_t tid, char *buf, size_t len);

/* What a thread was blocked on: an object, or for a join the thread it waited for. */
static const char *on_name(const struct thread *t, int k, char *buf, size_t len)
{
    uint16_t call = t->on[k].call;
    if (role_of(call) == R_JOIN) {
        int32_t tid = ptt_names_pthread(names, t->pid, t->on[k].obj);
        if (tid) {
            char b[64];
            snprintf(buf, len, "thread %s", thread_name(t->pid, tid, b, sizeof b));
            return buf;
        }
    }
    struct object tmp = {.pid = t->pid, .addr = t->on[k].obj};
    return obj_name(&tmp, buf, len);
}

static int cmp_obj(const void *a, const void *b)
{
    const struct object *x = *(const struct object *const *)a,
                        *y = *(const struct object *const *)b;
    uint64_t u, v;
    switch (sort_by) {
    case SORT_HOLD: u = x->hold.total, v = y->hold.total; break;
    case SORT_ACQ: u = x->acquisitions, v = y->acquisitions; break;
    case SORT_CONTENDED: u = x->contended, v = y->contended; break;
    case SORT_NAME: {
        char b1[64], b2[64];
        int c = strcmp(obj_name(x, b1, sizeof b1), obj_name(y, b2, sizeof b2));
        return c ? c : (x->addr > y->addr) - (x->addr < y->addr);
    }
    default: u = x->wait.total, v = y->wait.total; break;
    }
    if (u != v)
        return u < v ? 1 : -1;
    return (x->addr > y->addr) - (x->addr < y->addr);
}

static int cmp_thread(const void *a, const void *b)
{
    const struct thread *x = *(const struct thread *const *)a,
                        *y = *(const struct thread *const *)b;
    if (x->blocked != y->blocked)
        return x->blocked < y->blocked ? 1 : -1;
    return x->tid - y->tid;
}

static const char *thread_name(int32_t pid, int32_t tid, char *buf, size_t len)
{
    const char *n = ptt_names_thread(names, pid, tid);
    if (n)
        return n;
    snprintf(buf, len, "%d", tid);
    return buf;
}

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', f);
        if ((unsigned char)*s < 0x20)
            fprintf(f, "\\u%04x", *s);
        else
            fputc(*s, f);
    }
    fputc('"', f);
}

static void json_hist(FILE *f, const char *key, const struct hist *h)
{
    fprintf(f,
            "\"%s\":{\"count\":%" PRIu64 ",\"total\":%" PRIu64 ",\"mean\":%" PRIu64
            ",\"p50\":%" PRIu64 ",\"p99\":%" PRIu64 ",\"max\":%" PRIu64 "}",
            key, h->n, h->total, h->n ? h->total / h->n : 0, hist_pct(h, 0.5), hist_pct(h, 0.99),
            h->max);
}

static void fmt_ns(char *buf, size_t len, uint64_t ns)
{
    if (ns < 10000)
        snprintf(buf, len, "%" PRIu64 "ns", ns);
    else if (ns < 10000000)
        snprintf(buf, len, "%.1fus", (double)ns / 1e3);
    else if (ns < 10000000000ull)
        snprintf(buf, len, "%.1fms", (double)ns / 1e6);
    else
        snprintf(buf, len, "%.2fs", (double)ns / 1e9);
}

static const char usage_text[] =
    "usage: ptt stat [OPTIONS] FILE\n"
    "Contention, wait and hold times of every mutex, rwlock, spinlock, semaphore, condvar and\n"
    "barrier; the time each thread spent blocked, and on what; per process.\n"
    "\n"
    "  -f, --format=FORMAT  text (default), json (docs/stat.md) or csv\n"
    "      --sort=KEY       wait (default: total wait), hold, acquisitions, contended, name\n"
    "      --top=N          the first N objects and threads only\n"
    "      --kind=KIND,...  objects of these kinds (mutex, rwlock, spin, sem, cond, barrier)\n"
    "      --names=FILE     names for objects: lines 'ADDRESS NAME' or 'SYMBOL NAME'\n";

int cmd_stat(int argc, char **argv)
{
    static const struct option opts[] = {{"format", required_argument, 0, 'f'},
                                         {"sort", required_argument, 0, 's'},
                                         {"top", required_argument, 0, 't'},
                                         {"kind", required_argument, 0, 'k'},
                                         {"names", required_argument, 0, 'N'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    int fmt = 0, c;
    long top = -1;
    uint64_t kinds = 0;
    const char *names_file = NULL;
    char err[600];
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "f:h", opts, NULL)) != -1) {
        switch (c) {
        case 'f':
            fmt = !strcmp(optarg, "text")   ? 0
                  : !strcmp(optarg, "json") ? 1
                  : !strcmp(optarg, "csv")  ? 2
                                            : -1;
            if (fmt < 0) {
                ptt_warn("stat", "--format=%s: use text, json or csv", optarg);
                return PTT_EXIT_USAGE;
            }
            break;
        case 's':
            sort_by = !strcmp(optarg, "wait")           ? SORT_WAIT
                      : !strcmp(optarg, "hold")         ? SORT_HOLD
                      : !strcmp(optarg, "acquisitions") ? SORT_ACQ
                      : !strcmp(optarg, "contended")    ? SORT_CONTENDED
                      : !strcmp(optarg, "name")         ? SORT_NAME
                                                        : -1;
            if (sort_by < 0) {
                ptt_warn("stat", "--sort=%s: use wait, hold, acquisitions, contended or name",
                         optarg);
                return PTT_EXIT_USAGE;
            }
            break;
        case 't': {
            char *end;
            top = strtol(optarg, &end, 10);
            if (*end || top < 1) {
                ptt_warn("stat", "--top=%s: give a number of at least 1", optarg);
                return PTT_EXIT_USAGE;
            }
            break;
        }
        case 'k': {
            char bad[32];
            if (ptt_parse_classes(optarg, &kinds, bad, sizeof bad)) {
                ptt_warn("stat", "--kind: unknown kind '%s'", bad);
                return PTT_EXIT_USAGE;
            }
            break;
        }
        case 'N': names_file = optarg; break;
        case 'h': fputs(usage_text, stdout); return 0;
        default: ptt_bad_option("stat", argv); return PTT_EXIT_USAGE;
        }
    }
    if (optind != argc - 1) {
        ptt_warn("stat", optind >= argc ? "no trace file given; usage: ptt stat [OPTIONS] FILE"
                                        : "one trace file at a time");
        return PTT_EXIT_USAGE;
    }
    const char *path = argv[optind];
    names = ptt_names_new();
    if (names_file && ptt_names_load(names, names_file, err, sizeof err)) {
        ptt_warn("stat", "%s", err);
        return PTT_EXIT_USAGE;
    }
    struct ptt_reader *r = ptt_reader_open(path, err, sizeof err);
    if (!r) {
        ptt_warn("stat", "%s", err);
        return PTT_EXIT_USAGE;
    }
    struct ptt_ev ev;
    uint64_t nevents = 0;
    int64_t end_ns = 0;
    while (ptt_reader_next(r, &ev)) {
        ptt_names_event(names, &ev);
        on_event(&ev);
        nevents++;
        end_ns = ev.ns;
    }

    /* Objects, sorted, filtered by kind. */
    size_t no = 0, nt = 0;
    struct object **ov = malloc((objects.n + 1) * sizeof *ov);
    struct thread **tv = malloc((threads.n + 1) * sizeof *tv);
    for (size_t i = 0; i < objects.cap; i++) {
        struct object *o = objects.vals ? objects.vals[i] : NULL;
        if (o && (!kinds || ((kinds >> o->cls) & 1)))
            ov[no++] = o;
    }
    for (size_t i = 0; i < threads.cap; i++)
        if (threads.vals && threads.vals[i])
            tv[nt++] = threads.vals[i];
    qsort(ov, no, sizeof *ov, cmp_obj);
    qsort(tv, nt, sizeof *tv, cmp_thread);
    size_t shown_o = top > 0 && (size_t)top < no ? (size_t)top : no;
    size_t shown_t = top > 0 && (size_t)top < nt ? (size_t)top : nt;
    unsigned ncls;
    const struct ptt_classinfo *cls = ptt_classes(&ncls);
    char b1[512], b2[64], w1[32], w2[32], w3[32], w4[32], w5[32];
    static char obuf[1 << 16];
    setvbuf(stdout, obuf, _IOFBF, sizeof obuf);

    if (fmt == 1) {
        printf("{\"trace\":");
        json_str(stdout, path);
        printf(",\"events\":%" PRIu64 ",\"duration_ns\":%" PRId64 ",\"objects\":[", nevents,
               end_ns);
        for (size_t i = 0; i < shown_o; i++) {
            struct object *o = ov[i];
            printf("%s{\"kind\":\"%s\",\"name\":", i ? "," : "", cls[o->cls].name);
            json_str(stdout, obj_name(o, b1, sizeof b1));
            printf(",\"address\":\"0x%" PRIx64 "\",\"pid\":%d,\"acquisitions\":%" PRIu64
                   ",\"contended\":%" PRIu64 ",",
                   o->addr, o->pid, o->acquisitions, o->contended);
            json_hist(stdout, "wait_ns", &o->wait);
            putchar(',');
            json_hist(stdout, "hold_ns", &o->hold);
            printf(",\"threads\":[");
            for (unsigned k = 0; k < o->nusers; k++) {
                if (k)
                    putchar(',');
                json_str(stdout, thread_name(o->pid, o->users[k], b2, sizeof b2));
            }
            printf("]}");
        }
        printf("],\"threads\":[");
        for (size_t i = 0; i < shown_t; i++) {
            struct thread *t = tv[i];
            printf("%s{\"tid\":%d,\"pid\":%d,\"name\":", i ? "," : "", t->tid, t->pid);
            json_str(stdout, thread_name(t->pid, t->tid, b2, sizeof b2));
            printf(",\"lifetime_ns\":%" PRId64 ",\"blocked_ns\":%" PRIu64 ",\"blocked_on\":[",
                   t->last - t->first, t->blocked);
            int k2 = 0;
            for (int k = 0; k < MAX_ON; k++) {
                if (!t->on[k].ns)
                    continue;
                const struct ptt_evinfo *in = ptt_evinfo(t->on[k].call);
                printf("%s{\"call\":\"%s\",\"object\":", k2++ ? "," : "", in ? in->routine : "?");
                json_str(stdout, on_name(t, k, b1, sizeof b1));
                printf(",\"ns\":%" PRIu64 "}", t->on[k].ns);
            }
            printf("]}");
        }
        printf("]}\n");
    } else if (fmt == 2) {
        printf("kind,name,address,pid,acquisitions,contended,wait_total_ns,wait_mean_ns,"
               "wait_p50_ns,wait_p99_ns,wait_max_ns,hold_total_ns,hold_mean_ns,hold_p50_ns,"
               "hold_p99_ns,hold_max_ns\n");
        for (size_t i = 0; i < shown_o; i++) {
            struct object *o = ov[i];
            const char *n = obj_name(o, b1, sizeof b1);
            int quote = strchr(n, ',') || strchr(n, '"');
            printf("%s,%s%s%s,0x%" PRIx64 ",%d,%" PRIu64 ",%" PRIu64, cls[o->cls].name,
                   quote ? "\"" : "", n, quote ? "\"" : "", o->addr, o->pid, o->acquisitions,
                   o->contended);
            const struct hist *hs[2] = {&o->wait, &o->hold};
            for (int k = 0; k < 2; k++)
                printf(",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64, hs[k]->total,
                       hs[k]->n ? hs[k]->total / hs[k]->n : 0, hist_pct(hs[k], 0.5),
                       hist_pct(hs[k], 0.99), hs[k]->max);
            putchar('\n');
        }
    } else {
        printf("%s: %" PRIu64 " events, %.6f s\n\n", path, nevents, (double)end_ns / 1e9);
        printf("%-8s %-24s %8s %8s %9s %9s %9s %9s %9s %9s  %s\n", "kind", "object", "acquired",
               "waited", "wait tot", "mean", "p99", "max", "hold tot", "hold p99", "threads");
        for (size_t i = 0; i < shown_o; i++) {
            struct object *o = ov[i];
            fmt_ns(w1, sizeof w1, o->wait.total);
            fmt_ns(w2, sizeof w2, o->wait.n ? o->wait.total / o->wait.n : 0);
            fmt_ns(w3, sizeof w3, hist_pct(&o->wait, 0.99));
            fmt_ns(w4, sizeof w4, o->wait.max);
            fmt_ns(w5, sizeof w5, o->hold.total);
            char h99[32];
            fmt_ns(h99, sizeof h99, hist_pct(&o->hold, 0.99));
            printf("%-8s %-24s %8" PRIu64 " %8" PRIu64 " %9s %9s %9s %9s %9s %9s  ",
                   cls[o->cls].name, obj_name(o, b1, sizeof b1), o->acquisitions, o->contended, w1,
                   w2, w3, w4, o->hold.n ? w5 : "-", o->hold.n ? h99 : "-");
            for (unsigned k = 0; k < o->nusers; k++)
                printf("%s%s", k ? "," : "", thread_name(o->pid, o->users[k], b2, sizeof b2));
            if (o->more_users)
                printf(",+%u", o->more_users);
            putchar('\n');
        }
        printf("\n%-8s %-20s %10s %10s  %s\n", "pid", "thread", "lifetime", "blocked",
               "blocked most on");
        for (size_t i = 0; i < shown_t; i++) {
            struct thread *t = tv[i];
            fmt_ns(w1, sizeof w1, (uint64_t)(t->last - t->first));
            fmt_ns(w2, sizeof w2, t->blocked);
            printf("%-8d %-20s %10s %10s  ", t->pid, thread_name(t->pid, t->tid, b2, sizeof b2), w1,
                   w2);
            int best = -1;
            for (int k = 0; k < MAX_ON; k++)
                if (t->on[k].ns && (best < 0 || t->on[k].ns > t->on[best].ns))
                    best = k;
            if (best >= 0) {
                const struct ptt_evinfo *in = ptt_evinfo(t->on[best].call);
                fmt_ns(w3, sizeof w3, t->on[best].ns);
                printf("%s %s (%s)", in ? in->routine : "?", on_name(t, best, b1, sizeof b1), w3);
            }
            putchar('\n');
        }
        /* per process */
        printf("\n%-8s %8s %10s\n", "pid", "threads", "blocked");
        for (size_t i = 0; i < nt; i++) {
            int32_t pid = tv[i]->pid;
            int seen = 0;
            for (size_t k = 0; k < i && !seen; k++)
                seen = tv[k]->pid == pid;
            if (seen)
                continue;
            uint64_t blocked = 0, n = 0;
            for (size_t k = 0; k < nt; k++)
                if (tv[k]->pid == pid)
                    blocked += tv[k]->blocked, n++;
            fmt_ns(w1, sizeof w1, blocked);
            printf("%-8d %8" PRIu64 " %10s\n", pid, n, w1);
        }
    }
    fflush(stdout);
    const char *e = ptt_reader_error(r);
    int rc = 0;
    if (e) {
        ptt_warn("stat", "%s: %s", path, e);
        rc = PTT_EXIT_USAGE;
    }
    ptt_reader_close(r);
    ptt_names_free(names);
    free(ov);
    free(tv);
    return rc;
}
