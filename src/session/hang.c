/* Hang detection: every event of every thread read in order, into the tracker (each thread's
 * open calls and held objects) and the names: a sub-buffer a thread is writing as far as it is
 * written, without taking it, and the rest of it when ptt trace drains it. A writer writes an
 * event's header last (lib/record.h), so a header read as non-zero means a whole event. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../common/clock.h"
#include "trace/decode.h"
#include "trace/events.h"
#include "trace/fieldfmt.h"
#include "session/hang.h"
#include "analysis/names.h"
#include "analysis/tracker.h"
#include "export/textfmt.h"
#include "ptt_fields.h"
#include "util/hmap.h"
#include "util/util.h"

/* One thread's events (pid, serial), read in the order of its sub-buffers. */
struct stream {
    int32_t pid, tid;
    uint32_t serial;
    uint32_t seq;      /* the sub-buffer being read */
    uint32_t off;      /* read up to here in it */
    int started, done; /* done: sub-buffer seq read whole, the next one is seq + 1 */
    int ended;         /* its THREAD_END read */
    /* Of a program its process left (exec), or of an earlier process that had its pid: holds
     * nothing, waits for nothing. */
    int stale;
    /* Out of the table once the thread ended and its last sub-buffer was drained (retire);
     * freed when no peek names it any more. */
    int gone;
    unsigned peeks; /* live peeks naming it */
    /* Its sub-buffer seq, read whole, was handed over by the thread as it blocked in a call
     * (PTT_DESC_BLOCKED): the thread holds none, and is in that call until it takes another. */
    int handed_blocked;
    uint64_t starved; /* the pool's starvations then (see each_blocked) */
    /* Sub-buffers read whole from the pool ahead of the drain (catch_up): the drain takes them
     * in pool order, not in the thread's, and each is still to come to ptt_hang_drained. The
     * stream is not retired before, or one of them would be read again into a new stream. */
    unsigned pending;
    struct ptt_tthread *calls; /* NULL once gone */
    /* The sub-buffer's decoding (its base time, its dictionary): 1 KB, freed once the thread
     * ended and its sub-buffer was read whole, so that a program that makes threads all along
     * costs the watch little for each that ended (made again if a sub-buffer of it comes). */
    struct ptt_dec *dec;
    /* A sub-buffer still owned when a later one of the thread was met: a signal handler parked
     * it around the slot of the event it interrupted (record_nested in lib/buffer.c). Read as
     * far as written; its rest, that event first, before any later event of the thread's own,
     * which the thread writes only once that event is done. pdec: its decoding, NULL: none. */
    struct ptt_dec *pdec;
    uint32_t pseq, poff;
    /* The semaphores it took and did not post, of those that may be locks (sem_taken). */
    struct ptt_held *sems;
    unsigned nsems, sems_cap;
    /* Its THREAD_START: it names the thread again where an older image of its pid had its tid
     * (image_new), for a thread's first name is kept. NULL: none read. */
    struct ptt_ev *start;
};

/* A sub-buffer of the pool as last looked at. */
struct peek {
    struct stream *s;
    uint32_t seq;
    int live; /* OWNED at the last look */
    /* The sub-buffer last given to ptt_hang_drained here: still in the pool until the drain's
     * batch is written, and never to be read again (find_slot). */
    int32_t drained_pid;
    uint32_t drained_serial, drained_seq;
};

/* A thread whose name is forgotten once its tid is gone: its THREAD_END comes before its key
 * destructors, in which it may still block (a join then waits for it, named). */
struct tid {
    int32_t pid, tid;
};

/* A thread's CPU time when the watch of --kill-on-hang began. */
struct task {
    int32_t pid, tid;
    uint64_t cpu;
};

struct ptt_hang {
    struct ptt_pool_geom pool; /* the daemon's copy of the layout (common/pool.h) */
    char stopped[160];         /* ptt_hang_stopped */
    struct ptt_tracker *calls; /* by pid and serial */
    struct ptt_names *names;
    struct ptt_hmap streams; /* (pid, serial) -> struct stream */
    int fed;                 /* events read from drained sub-buffers since the last look */
    /* THREAD_START events read before their process's modules (threads are read one after the
     * other, not in time order): their threads are named by start routine at the report. */
    struct ptt_ev *unnamed;
    unsigned nunnamed, unnamed_cap;
    struct task *tasks;
    unsigned ntasks, cap;
    struct tid *forget; /* names to forget once their thread is gone (retire) */
    unsigned nforget, forget_cap, forget_look;
    /* (pid, tid) -> how many of the tracker's threads are kept without a stream: they ended
     * holding something, and are named for good, until their process is known to be gone. */
    struct ptt_hmap kept;
    struct ptt_hmap images;  /* pid -> struct image */
    struct ptt_hmap blocked; /* (pid, tid) of threads blocked in a call, at the last settled look */
    struct ptt_hmap cycles;  /* (pid, tid) of the deadlocks reported, by their first thread */
    /* (pid, sem) -> struct sem_kind. As ptt check's cobj.sem_lock, but from each thread's own
     * events, which the watch reads thread by thread, not in time order. */
    struct ptt_hmap sem_kind;
    uint32_t n;
    struct peek p[];
};

struct ptt_hang *ptt_hang_new(const struct ptt_pool_geom *pool)
{
    struct ptt_hang *h = calloc(1, sizeof *h + pool->nbufs * sizeof(struct peek));
    if (h) {
        h->pool = *pool;
        h->n = pool->nbufs;
        h->calls = ptt_tracker_new(PTT_TRACK_SERIAL);
        h->names = ptt_names_new();
    }
    return h;
}

/* The field a call is reported by: its object, else its first field. */
static int shown_field(const struct ptt_evinfo *in)
{
    return in->rfield[PTT_RF_OBJECT] >= 0 ? in->rfield[PTT_RF_OBJECT] : 0;
}

/* Whether a call waits for a thread to end (the object it reports is a pthread_t). */
static int is_join(const struct ptt_evinfo *in)
{
    return in && in->role == PTT_ROLE_WAIT && in->okind == PTT_CLASS_thread;
}

static void stream_new(struct ptt_hang *h, struct stream *s);

static struct stream *stream_of(struct ptt_hang *h, const struct ptt_desc *d)
{
    struct stream *s =
        ptt_hmap_get(&h->streams, ptt_key2((uint64_t)(uint32_t)d->pid, d->serial), sizeof *s);
    if (!s->calls) {
        s->pid = d->pid;
        s->tid = d->tid;
        s->serial = d->serial;
        stream_new(h, s);
    }
    return s;
}

/* Threads kept to be named later, at most: a program without symbols has only unnamed threads. */
#define MAX_UNNAMED 4096

static void name_later(struct ptt_hang *h, const struct ptt_ev *ev)
{
    if (h->nunnamed == MAX_UNNAMED)
        return;
    if (h->nunnamed == h->unnamed_cap) {
        unsigned cap = h->unnamed_cap ? 2 * h->unnamed_cap : 16;
        struct ptt_ev *u = realloc(h->unnamed, cap * sizeof *u);
        if (!u)
            return;
        h->unnamed = u;
        h->unnamed_cap = cap;
    }
    h->unnamed[h->nunnamed++] = *ev;
}

/* The threads started before their modules were read: named now, when they can be. */
static void name_started(struct ptt_hang *h)
{
    unsigned k = 0;
    for (unsigned i = 0; i < h->nunnamed; i++) {
        struct ptt_ev *ev = &h->unnamed[i];
        if (!ptt_names_thread(h->names, ev->pid, ev->tid))
            ptt_names_event(h->names, ev);
        if (!ptt_names_thread(h->names, ev->pid, ev->tid))
            h->unnamed[k++] = *ev; /* its modules still unknown */
    }
    h->nunnamed = k;
}

/* ---- semaphores used as locks (CPython's): who took one, for a wait on it ---- */

enum { SEM_LOCK = 1, SEM_NOT_LOCK = 2, MAX_SEMS = 64 };

/* SEM_LOCK: made with the value 1 (at ticks), a lock as far as seen; SEM_NOT_LOCK: made with
 * another value or shared, or posted (at ticks) by a thread that had not taken it. The threads'
 * events come thread by thread: the time says which of a sem_init and a post came last. init:
 * its last sem_init (a take before is of the semaphore that was at the address before); posted:
 * a taker posted it (used as a lock, not only made as one); gone_taker: the thread that took it
 * (at gone_ticks) and ended without posting it, 0 once anything else happened to it. */
struct sem_kind {
    int32_t pid;     /* first, then serial: the records of an image are found by them */
    uint32_t serial; /* the newest thread that made or changed it (forget_pid) */
    int32_t gone_taker;
    uint64_t kind, ticks, init, gone_ticks;
    int posted;
};

/* sem's record in pid; by (the serial of) a thread that changes it: made if absent. */
static struct sem_kind *sem_kind(struct ptt_hang *h, int32_t pid, uint64_t sem, uint32_t by)
{
    struct sem_kind *k = ptt_hmap_get(&h->sem_kind, ptt_key2((uint64_t)(uint32_t)pid, sem),
                                      by ? sizeof(struct sem_kind) : 0);
    if (k && by) {
        k->pid = pid;
        k->serial = by > k->serial ? by : k->serial;
    }
    return k;
}

/* What a sem_init (kind, at ticks), or a post by a thread that had not taken it (SEM_NOT_LOCK),
 * tells of sem, unless a later one told otherwise. */
static void sem_learn(struct ptt_hang *h, const struct stream *s, uint64_t sem, uint64_t kind,
                      uint64_t ticks)
{
    struct sem_kind *k = sem_kind(h, s->pid, sem, s->serial);
    if (!k->kind || (int64_t)(ticks - k->ticks) >= 0) {
        k->kind = kind;
        k->ticks = ticks;
    }
}

/* Whether x, a semaphore a thread of pid took, is a lock it holds: taken since its last sem_init
 * (a take before is of the semaphore that was at the address before). */
static int sem_holds(struct ptt_hang *h, int32_t pid, const struct ptt_held *x)
{
    const struct sem_kind *k = sem_kind(h, pid, x->object, 0);
    return k && k->kind == SEM_LOCK && (int64_t)(x->ticks - k->init) >= 0;
}

static struct ptt_held *sem_held(struct stream *s, uint64_t sem)
{
    for (unsigned i = 0; i < s->nsems; i++)
        if (s->sems[i].object == sem)
            return &s->sems[i];
    return NULL;
}

/* The semaphores that s, which ends, took and did not post, unless known not to be locks:
 * marked as left by it, for a thread that waits for one later (join_owner, which looks at what
 * is known of it then: the other threads' events may come later, its sem_init too). Whether it
 * left one, for which it stays named (one destroyed meanwhile by another thread, which only
 * that thread's list forgets, keeps it named too). */
static int sems_left(struct ptt_hang *h, const struct stream *s)
{
    int any = 0;
    for (unsigned i = 0; i < s->nsems; i++) {
        struct sem_kind *k = sem_kind(h, s->pid, s->sems[i].object, s->serial);
        if (k->kind != SEM_NOT_LOCK) {
            k->gone_taker = s->tid;
            k->gone_ticks = s->sems[i].ticks;
            any = 1;
        }
    }
    return any;
}

/* Something happened to k's semaphore at ticks: a thread that ended before does not hold it. */
static void sem_touched(struct sem_kind *k, uint64_t ticks)
{
    if (k && k->gone_taker && (int64_t)(ticks - k->gone_ticks) > 0)
        k->gone_taker = 0;
}

/* s took sem (a wait returned 0): kept unless known not to be a lock; the list is pruned of
 * those found not to be since, and bounded (the oldest go). */
static void sem_taken(struct ptt_hang *h, struct stream *s, const struct ptt_open *c,
                      uint64_t ticks)
{
    struct sem_kind *k = sem_kind(h, s->pid, c->object, 0);
    struct ptt_held *had = sem_held(s, c->object);
    sem_touched(k, ticks);
    if (had && !sem_holds(h, s->pid, had)) { /* of the semaphore the address had before */
        *had = s->sems[--s->nsems];
        had = NULL;
    }
    if ((k && k->kind == SEM_NOT_LOCK) || had)
        return;
    unsigned j = 0;
    for (unsigned i = 0; i < s->nsems; i++)
        if (!(k = sem_kind(h, s->pid, s->sems[i].object, 0)) || k->kind != SEM_NOT_LOCK)
            s->sems[j++] = s->sems[i];
    s->nsems = j;
    if (s->nsems == MAX_SEMS)
        memmove(s->sems, s->sems + 1, --s->nsems * sizeof *s->sems);
    if (s->nsems == s->sems_cap) {
        unsigned cap = s->sems_cap ? 2 * s->sems_cap : 4;
        struct ptt_held *v = realloc(s->sems, cap * sizeof *v);
        if (!v)
            return; /* not followed: no holder said */
        s->sems = v;
        s->sems_cap = cap;
    }
    s->sems[s->nsems++] = (struct ptt_held){
        .object = c->object, .cls = PTT_CLASS_sem, .count = 1, .ticks = ticks, .site = c->site};
}

/* A semaphore call of s returned 0 (c: the call, out: its OUT). */
static void sem_call(struct ptt_hang *h, struct stream *s, const struct ptt_open *c,
                     const struct ptt_ev *out)
{
    const struct ptt_evinfo *in = c->in.info;
    if (c->in.id == PTT_EV_SEM_INIT_IN) {
        int lock = ptt_ev_arg(&c->in, PTT_F(SEM_INIT_IN, value), 0) == 1 &&
                   !ptt_ev_arg(&c->in, PTT_F(SEM_INIT_IN, pshared), 0);
        sem_learn(h, s, c->object, lock ? SEM_LOCK : SEM_NOT_LOCK, c->in.ticks);
        struct sem_kind *k = sem_kind(h, s->pid, c->object, s->serial);
        if ((int64_t)(c->in.ticks - k->init) > 0) {
            k->init = c->in.ticks;
            k->posted = 0;
        }
        sem_touched(k, c->in.ticks);
    } else if (c->in.id == PTT_EV_SEM_DESTROY_IN) {
        /* Not one read after a later sem_init at the address (another thread's); the destroying
         * thread took it last, often (CPython frees a lock where its last reference goes). */
        struct sem_kind *k = sem_kind(h, s->pid, c->object, 0);
        struct ptt_held *x = sem_held(s, c->object);
        if (x)
            *x = s->sems[--s->nsems];
        if (k && (int64_t)(c->in.ticks - k->init) >= 0)
            free(ptt_hmap_del(&h->sem_kind, ptt_key2((uint64_t)(uint32_t)s->pid, c->object)));
    } else if (in->role == PTT_ROLE_ACQUIRE) {
        sem_taken(h, s, c, out->ticks);
    } else if (in->role == PTT_ROLE_SIGNAL) {
        struct ptt_held *x = sem_held(s, c->object);
        struct sem_kind *k = sem_kind(h, s->pid, c->object, 0);
        sem_touched(k, c->in.ticks);
        if (x && k && (int64_t)(x->ticks - k->init) >= 0)
            k->posted = 1;
        if (x)
            *x = s->sems[--s->nsems];
        else /* posted by a thread that had not taken it: a signal, not an unlock */
            sem_learn(h, s, c->object, SEM_NOT_LOCK, c->in.ticks);
    }
}

/* The thread (of the watch's) that holds sem, a semaphore used as a lock, for waiter w, or NULL.
 * A thread waiting for one it took itself waits for itself only if it was used as a lock: a
 * fresh one taken then waited for is how CPython's Condition waits (another thread posts it). */
static struct stream *sem_holder(struct ptt_hang *h, const struct stream *w, uint64_t sem)
{
    const struct sem_kind *k = sem_kind(h, w->pid, sem, 0);
    for (size_t i = 0; k && i < h->streams.cap; i++) {
        struct stream *s = ptt_hmap_slot(&h->streams, i);
        const struct ptt_held *x = s && s->pid == w->pid && !s->stale ? sem_held(s, sem) : NULL;
        if (x && sem_holds(h, w->pid, x))
            return s == w && !k->posted ? NULL : s;
    }
    return NULL;
}

static void track_ev(struct ptt_hang *h, struct stream *s, struct ptt_ev *ev)
{
    if (!ev->nested && ev->info && ev->info->role == PTT_ROLE_THREAD_END)
        s->ended = 1;
    if (s->stale) /* read late: its old image's names and holds are not the pid's now */
        return;
    ptt_names_event(h->names, ev);
    if (ev->id == PTT_EV_THREAD_START && !s->start && (s->start = malloc(sizeof *ev)))
        *s->start = *ev;
    if (ev->id == PTT_EV_THREAD_START && !ptt_names_thread(h->names, ev->pid, ev->tid))
        name_later(h, ev);
    if (ev->nested) /* a signal handler's calls return before its thread goes on */
        return;
    struct ptt_track res;
    ptt_tracker_feed(s->calls, ev, &res);
    if ((res.what & PTT_TRK_CLOSED) && !res.unfinished && res.nclosed && !res.closed[0].frame &&
        res.closed[0].in.info && res.closed[0].in.info->okind == PTT_CLASS_sem &&
        ev->info->kind == PTT_KIND_OUT && ptt_ev_role(ev, PTT_RF_STATUS, 1) == 0)
        sem_call(h, s, &res.closed[0], ev);
}

static void track(struct ptt_hang *h, struct stream *s, const struct ptt_dec *dec,
                  const struct ptt_event *e, uint64_t ticks)
{
    struct ptt_ev ev, out;
    memset(&ev, 0, offsetof(struct ptt_ev, args));
    ev.id = e->id & PTT_EV_ID_MASK;
    ev.info = ptt_evinfo(ev.id);
    ev.nested = (e->id & PTT_EVF_NEST) != 0;
    ev.ticks = ticks;
    ev.pid = s->pid;
    ev.tid = s->tid;
    ev.serial = s->serial;
    ev.nargs = dec->nargs;
    memcpy(ev.args, dec->args, ev.nargs * sizeof ev.args[0]);
    int call = ptt_decode_call(&ev, &out); /* a whole call: its IN and its OUT */
    if (!ev.info)
        return;
    track_ev(h, s, &ev);
    if (call)
        track_ev(h, s, &out);
}

/* Read sub-buffer i of stream s with dec from *off up to len bytes, up to the first record not
 * written yet (its length byte, written last, still 0), and with *nested_only up to the first
 * record of the thread's own (not a signal handler's), where it is cleared; how many records. */
static unsigned feed_from(struct ptt_hang *h, struct stream *s, struct ptt_dec *dec, uint32_t *off,
                          uint32_t i, uint32_t len, int *nested_only)
{
    const uint8_t *data = ptt_geom_data(&h->pool, i);
    unsigned n = 0;
    if (len > h->pool.buf_size)
        len = h->pool.buf_size;
    while (*off < len && __atomic_load_n(data + *off, __ATOMIC_ACQUIRE)) {
        const uint8_t *p = data + *off;
        if (*nested_only && ptt_codec_size(p, len - *off) &&
            !(ptt_codec_body(p)[0] & PTT_CODEC_NEST)) {
            *nested_only = 0;
            break;
        }
        struct ptt_event e;
        uint64_t t;
        int k = ptt_dec_next(dec, p, len - *off, &e, &t);
        if (k <= 0)
            break;
        if ((e.id & PTT_EV_ID_MASK) != PTT_EV_TRACE_PAD)
            track(h, s, dec, &e, t);
        *off += (uint32_t)k;
        n++;
    }
    return n;
}

/* Whether sub-buffer j of the pool holds one of stream s, not drained yet: its number, else
 * PTT_SEQ_UNSET. */
static uint32_t seq_of(struct ptt_hang *h, const struct stream *s, uint32_t j)
{
    struct ptt_desc *d = ptt_geom_desc(&h->pool, j);
    const struct peek *k = &h->p[j];
    if (atomic_load_explicit(&d->state, memory_order_acquire) != PTT_BUF_FREE && d->pid == s->pid &&
        d->serial == s->serial &&
        !(k->drained_pid == d->pid && k->drained_serial == d->serial && k->drained_seq == d->seq))
        return d->seq;
    return PTT_SEQ_UNSET;
}

/* The sub-buffer of the pool holding sub-buffer seq of stream s, or -1. */
static int64_t find_slot(struct ptt_hang *h, const struct stream *s, uint32_t seq)
{
    for (uint32_t j = 0; j < h->n; j++)
        if (seq_of(h, s, j) == seq)
            return j;
    return -1;
}

/* The rest of s's parked sub-buffer, as far as written, all of it once handed over (it is let
 * go then: its drain is still counted as pending). 1 while it is still parked: the thread is
 * inside the handler, and its own next event is not to be read before the interrupted one. */
static int parked_first(struct ptt_hang *h, struct stream *s, unsigned *n)
{
    if (!s->pdec)
        return 0;
    int64_t j = find_slot(h, s, s->pseq);
    int ready = 1, all = 0;
    if (j >= 0) {
        struct ptt_desc *d = ptt_geom_desc(&h->pool, (uint32_t)j);
        ready = atomic_load_explicit(&d->state, memory_order_acquire) == PTT_BUF_READY;
        *n += feed_from(h, s, s->pdec, &s->poff, (uint32_t)j,
                        ready ? atomic_load_explicit(&d->committed, memory_order_acquire)
                              : h->pool.buf_size,
                        &all);
    }
    if (ready) {
        free(s->pdec);
        s->pdec = NULL;
    }
    return !ready;
}

/* Read the sub-buffer s is in, slot i, up to len bytes: see feed_from. While one is parked, its
 * thread's own record in this one means the interrupted event was written before it (the thread
 * writes its records in turn, the length last): the parked one's rest is read first. (The event
 * it interrupted may be a call's IN written for a later event, which then comes here before the
 * parked sub-buffer is handed over, at the end of that event.) */
static unsigned feed(struct ptt_hang *h, struct stream *s, uint32_t i, uint32_t len)
{
    unsigned n = 0;
    int parked = parked_first(h, s, &n);
    n += feed_from(h, s, s->dec, &s->off, i, len, &parked);
    if (s->pdec && !parked) { /* stopped at the thread's own record */
        parked_first(h, s, &n);
        n += feed_from(h, s, s->dec, &s->off, i, len, &parked);
    }
    return n;
}

/* The sub-buffer s is in, still owned, has a later one: parked. Read as far as written, it is
 * set aside with its decoding. (A thread parks one at a time: one parked before was handed
 * over, and is read whole first.) */
static void park(struct ptt_hang *h, struct stream *s)
{
    unsigned n = 0;
    if (s->pdec && parked_first(h, s, &n)) {
        free(s->pdec); /* found still owned, which a thread never does: let go */
        s->pdec = NULL;
    }
    s->pdec = s->dec;
    s->dec = NULL;
    s->pseq = s->seq;
    s->poff = s->off;
    s->done = 1;
}

/* Sub-buffer seq of s was read whole: an ended thread's decoding and calls are let go. */
static void read_whole(struct stream *s)
{
    s->done = 1;
    if (s->ended) {
        free(s->dec);
        s->dec = NULL;
        ptt_tthread_trim(s->calls);
    }
}

/* Begin reading the sub-buffer d of stream s. */
static void enter(struct stream *s, const struct ptt_desc *d)
{
    s->seq = d->seq;
    s->off = 0;
    if (!s->dec)
        s->dec = ptt_must(malloc(sizeof *s->dec));
    ptt_dec_start(s->dec, d->base_ts);
    s->done = 0;
    s->started = 1;
    s->handed_blocked = 0;
}

static uint32_t next_seq(const struct stream *s)
{
    return s->done ? s->seq + 1 : s->seq;
}

/* The sub-buffer of the pool holding the lowest-numbered sub-buffer of s from `from` and below
 * `below`, or -1. */
static int64_t find_after(struct ptt_hang *h, const struct stream *s, uint32_t from, uint32_t below)
{
    int64_t best = -1;
    for (uint32_t j = 0; j < h->n; j++) {
        uint32_t seq = seq_of(h, s, j);
        if (seq != PTT_SEQ_UNSET && seq >= from && seq < below) {
            best = j;
            below = seq;
        }
    }
    return best;
}

/* Before sub-buffer seq of s: read whole the ones before it still in the pool (handed over and
 * not drained yet), from its first for a stream not started (the drain met a later one first).
 * One still owned is parked (park). A number no sub-buffer has is one the thread left unused
 * (number in lib/buffer.c), or gave one a moment before taking it back (install_first): every
 * sub-buffer passes through the watch, read whole when drained, so none is missing. */
static void catch_up(struct ptt_hang *h, struct stream *s, uint32_t seq)
{
    while (next_seq(s) < seq) {
        int64_t j = find_slot(h, s, next_seq(s));
        if (j < 0 && (j = find_after(h, s, next_seq(s), seq)) < 0)
            return;
        struct ptt_desc *d = ptt_geom_desc(&h->pool, (uint32_t)j);
        if (!s->started || d->seq != s->seq)
            enter(s, d);
        int ready = atomic_load_explicit(&d->state, memory_order_acquire) == PTT_BUF_READY;
        feed(h, s, (uint32_t)j,
             ready ? atomic_load_explicit(&d->committed, memory_order_acquire) : h->pool.buf_size);
        if (ready)
            read_whole(s);
        else
            park(h, s);
        s->pending++;
    }
}

/* Read sub-buffer i up to len bytes (whole: complete); how many events were new. */
static unsigned read_slot(struct ptt_hang *h, uint32_t i, uint32_t len, int complete)
{
    struct ptt_desc *d = ptt_geom_desc(&h->pool, i);
    if (d->seq == PTT_SEQ_UNSET)
        return 0; /* taken, not numbered yet: read at the next look */
    struct stream *s = stream_of(h, d);
    if (s->pdec && d->seq == s->pseq) {
        unsigned n = 0;
        parked_first(h, s, &n);
        return n;
    }
    if (s->started && (d->seq < s->seq || (d->seq == s->seq && s->done)))
        return 0; /* read already */
    if (!s->started || d->seq != s->seq) {
        catch_up(h, s, d->seq);
        enter(s, d);
    }
    unsigned n = feed(h, s, i, len);
    if (complete)
        read_whole(s);
    return n;
}

/* An ended thread whose last sub-buffer was drained, or a thread of a process that ended: what
 * the watch kept of it goes, but what it holds (a lock it never unlocked), which a report may name,
 * with its name. The stream leaves the table at once (a later sub-buffer of the thread, events
 * after its end, makes a new one), and is freed once no peek names it. */

/* The thread's entries among those to name later: named now, they would come back. */
static void unname(struct ptt_hang *h, int32_t pid, int32_t tid)
{
    unsigned k = 0;
    for (unsigned i = 0; i < h->nunnamed; i++)
        if (h->unnamed[i].pid != pid || h->unnamed[i].tid != tid)
            h->unnamed[k++] = h->unnamed[i];
    h->nunnamed = k;
}

/* The names waiting for their thread to go: forgotten for those gone (but a holder's, whose tid
 * a later thread may have had since). Looked at when their number doubled: each thread is
 * looked at a few times at most. */
static void forget_names(struct ptt_hang *h)
{
    unsigned k = 0;
    for (unsigned i = 0; i < h->nforget; i++) {
        struct tid t = h->forget[i];
        uint64_t key = ptt_key2((uint64_t)(uint32_t)t.pid, (uint64_t)(uint32_t)t.tid);
        if (ptt_hmap_get(&h->kept, key, 0))
            continue;
        if (ptt_thread_gone(t.pid, t.tid)) {
            unname(h, t.pid, t.tid);
            ptt_names_forget_thread(h->names, t.pid, t.tid);
        } else
            h->forget[k++] = t;
    }
    h->nforget = k;
    h->forget_look = 2 * k > 64 ? 2 * k : 64;
}

static void forget_later(struct ptt_hang *h, int32_t pid, int32_t tid)
{
    if (h->nforget == h->forget_cap) {
        unsigned cap = h->forget_cap ? 2 * h->forget_cap : 64;
        struct tid *f = realloc(h->forget, cap * sizeof *f);
        if (!f)
            return; /* the name stays */
        h->forget = f;
        h->forget_cap = cap;
    }
    h->forget[h->nforget++] = (struct tid){pid, tid};
    if (h->nforget >= h->forget_look)
        forget_names(h);
}

/* What the watch knows of a pid's images (the processes that had it, the programs each ran):
 * first, the first thread number of the newest one announced (lib/init.c numbers a process's or
 * a new program's threads after the `before` it announces), 0 if none was; renewed: an older
 * one was known, whose threads, numbered below first, hold nothing now. The first image known is
 * left alone: ptt trace -p may number threads in a call before the announcement. nkept: the
 * pid's threads kept for what they held. */
struct image {
    uint32_t first;
    int renewed;
    unsigned nkept;
};

static struct image *image_of(struct ptt_hang *h, int32_t pid, int add)
{
    return ptt_hmap_get(&h->images, ptt_key2((uint64_t)(uint32_t)pid, 0),
                        add ? sizeof(struct image) : 0);
}

/* Count th, of a thread that ended holding something, as kept without a stream (keep 1), or as
 * no longer (keep 0: forgotten, or met again by a stream of its thread). */
static void kept_count(struct ptt_hang *h, const struct ptt_tthread *th, int keep)
{
    uint64_t key = ptt_key2((uint64_t)(uint32_t)th->pid, (uint64_t)(uint32_t)th->tid);
    uint32_t *n = ptt_hmap_get(&h->kept, key, keep ? sizeof *n : 0);
    struct image *im = image_of(h, th->pid, keep);
    if (keep) {
        ++*n;
        im->nkept++;
    } else if (n) {
        if (!--*n)
            free(ptt_hmap_del(&h->kept, key));
        if (im && im->nkept)
            im->nkept--;
    }
}

static void retire(struct ptt_hang *h, struct stream *s)
{
    if (s->stale) /* what its last records say it held went with its program */
        s->calls->nopen = s->calls->nheld = s->nsems = 0;
    int left = sems_left(h, s); /* whatever else it holds */
    if (!s->calls->nheld && !left) {
        forget_later(h, s->pid, s->tid);
        ptt_tracker_forget(h->calls, s->calls);
    } else
        kept_count(h, s->calls, 1);
    s->calls = NULL;
    free(s->sems);
    s->sems = NULL;
    s->nsems = s->sems_cap = 0;
    free(s->dec);
    s->dec = NULL;
    free(s->pdec);
    s->pdec = NULL;
    free(s->start);
    s->start = NULL;
    ptt_hmap_del(&h->streams, ptt_key2((uint64_t)(uint32_t)s->pid, s->serial));
    s->gone = 1;
    if (!s->peeks)
        free(s);
}

static struct stream *stream_find(struct ptt_hang *h, const struct ptt_desc *d)
{
    return ptt_hmap_get(&h->streams, ptt_key2((uint64_t)(uint32_t)d->pid, d->serial), 0);
}

/* Events dropped by threads that waited 10 s for a sub-buffer, in the whole session. */
static uint64_t starvations(const struct ptt_hang *h)
{
    return atomic_load_explicit(&h->pool.base->lost_why[PTT_LOST_STARVED], memory_order_relaxed);
}

void ptt_hang_drained(void *arg, uint32_t index, uint32_t len)
{
    struct ptt_hang *h = arg;
    const struct ptt_desc *d = ptt_geom_desc(&h->pool, index);
    if (d->seq == PTT_SEQ_UNSET)
        return; /* taken, never numbered: nothing in it */
    h->p[index].drained_pid = d->pid;
    h->p[index].drained_serial = d->serial;
    h->p[index].drained_seq = d->seq;
    struct stream *s = stream_find(h, d);
    if (s && s->pdec && d->seq == s->pseq) { /* parked, read by catch_up as far as written */
        int all = 0;
        h->fed |= feed_from(h, s, s->pdec, &s->poff, index, len, &all) > 0;
        free(s->pdec);
        s->pdec = NULL;
        if (s->pending)
            s->pending--;
    } else if (s && s->started && (d->seq < s->seq || (d->seq == s->seq && s->done))) {
        if (s->pending) /* read by catch_up, and now drained */
            s->pending--;
    } else {
        h->fed |= read_slot(h, index, len, 1) > 0;
        s = stream_find(h, d);
    }
    if (s && s->started && d->seq == s->seq && s->done) {
        s->handed_blocked = (d->flags & PTT_DESC_BLOCKED) != 0;
        s->starved = starvations(h);
    }
    if (s && s->ended && s->done && !s->pending)
        retire(h, s);
}

/* Retire the streams of pid that pick(s, x) chooses (it may mark them). Out of the table after
 * the loop over it; without memory for the list they stay. */
static void retire_where(struct ptt_hang *h, int32_t pid, int (*pick)(struct stream *, uint32_t),
                         uint32_t x)
{
    size_t n = 0, k = 0;
    for (size_t i = 0; i < h->streams.cap; i++) {
        struct stream *s = ptt_hmap_slot(&h->streams, i);
        n += s && s->pid == pid;
    }
    struct stream **list = n ? malloc(n * sizeof *list) : NULL;
    for (size_t i = 0; i < h->streams.cap; i++) {
        struct stream *s = ptt_hmap_slot(&h->streams, i);
        if (s && s->pid == pid && pick(s, x) && list)
            list[k++] = s;
    }
    for (size_t i = 0; i < k; i++)
        retire(h, list[i]);
    free(list);
}

/* Drop the threads of pid kept to be named later that drop(ev, x) chooses. */
static void unname_where(struct ptt_hang *h, int32_t pid,
                         int (*drop)(const struct ptt_ev *, uint32_t), uint32_t x)
{
    unsigned m = 0;
    for (unsigned i = 0; i < h->nunnamed; i++)
        if (h->unnamed[i].pid != pid || !drop(&h->unnamed[i], x))
            h->unnamed[m++] = h->unnamed[i];
    h->nunnamed = m;
}

static int stream_gone(struct stream *s, uint32_t x)
{
    (void)x;
    if (!ptt_thread_gone(s->pid, s->tid))
        return 0;
    s->nsems = 0; /* its process ended: no thread waits for its semaphores (never shared ones) */
    return 1;
}

static int ev_gone(const struct ptt_ev *ev, uint32_t x)
{
    (void)x;
    return ptt_thread_gone(ev->pid, ev->tid);
}

static int kept_any(const struct ptt_tthread *th, uint32_t x)
{
    (void)th;
    (void)x;
    return 1;
}

static int kept_before(const struct ptt_tthread *th, uint32_t serial)
{
    return th->key < serial;
}

/* Forget the kept threads of pid (those with no stream in the table) that pick(th, x) chooses;
 * how many of pid's stay kept. Out of the tracker after the loop over it; without memory for the
 * list they stay. */
static unsigned forget_kept(struct ptt_hang *h, int32_t pid,
                            int (*pick)(const struct ptt_tthread *, uint32_t), uint32_t x)
{
    struct image *im = image_of(h, pid, 0);
    if (!im || !im->nkept) /* most processes: no scan */
        return 0;
    size_t i = 0, k = 0, n = im->nkept;
    struct ptt_tthread **list = malloc(n * sizeof *list), *th;
    while (list && k < n && (th = ptt_tracker_next(h->calls, &i)))
        if (th->pid == pid &&
            !ptt_hmap_get(&h->streams, ptt_key2((uint64_t)(uint32_t)pid, th->key), 0) &&
            pick(th, x))
            list[k++] = th;
    for (i = 0; i < k; i++) {
        kept_count(h, list[i], 0);
        forget_later(h, pid, list[i]->tid);
        ptt_tracker_forget(h->calls, list[i]);
    }
    free(list);
    return im->nkept;
}

/* s is of an older image of its pid: what it holds and waits for went with it. */
static void stream_stale(struct stream *s)
{
    s->stale = 1;
    s->calls->nopen = s->calls->nheld = s->nsems = 0;
}

/* Whether record v of m (first a pid, then a thread's serial) is pid's, of a thread numbered
 * before first. */
static int of_image(const void *v, int32_t pid, uint32_t first)
{
    const uint32_t *r = v;
    return r && (int32_t)r[0] == pid && r[1] < first;
}

/* Free the records of m of pid's threads numbered before first. Out of the map after the loop
 * over it; without memory for the list they stay. */
static void forget_pid(struct ptt_hmap *m, int32_t pid, uint32_t first)
{
    size_t n = 0, k = 0;
    for (size_t i = 0; i < m->cap; i++)
        n += of_image(m->vals[i], pid, first);
    uint64_t *keys = n ? malloc(n * sizeof *keys) : NULL;
    for (size_t i = 0; keys && i < m->cap; i++)
        if (of_image(m->vals[i], pid, first))
            keys[k++] = m->keys[i];
    for (size_t i = 0; i < k; i++)
        free(ptt_hmap_del(m, keys[i]));
    free(keys);
}

static int ev_old(const struct ptt_ev *ev, uint32_t before);

/* The names of pid's threads numbered before first go now, but main's (the new image's main is
 * "main" too): a thread's first name is kept, and a thread of the new image may have the tid of
 * an old one. Those of the new image already read are named again from their THREAD_START. */
static void rename_image(struct ptt_hang *h, int32_t pid, uint32_t first)
{
    for (size_t i = 0; i < h->streams.cap; i++) {
        struct stream *s = ptt_hmap_slot(&h->streams, i);
        if (s && s->pid == pid && s->serial < first && s->tid != pid)
            ptt_names_forget_thread(h->names, pid, s->tid);
    }
    size_t i = 0;
    struct ptt_tthread *th;
    while ((th = ptt_tracker_next(h->calls, &i)))
        if (th->pid == pid && th->key < first && th->tid != pid)
            ptt_names_forget_thread(h->names, pid, th->tid);
    unname_where(h, pid, ev_old, first - 1);
    unsigned k = 0; /* threads retired, their names waiting for their tid to go: now */
    for (unsigned j = 0; j < h->nforget; j++)
        if (h->forget[j].pid == pid && h->forget[j].tid != pid)
            ptt_names_forget_thread(h->names, pid, h->forget[j].tid);
        else
            h->forget[k++] = h->forget[j];
    h->nforget = k;
    for (i = 0; i < h->streams.cap; i++) {
        struct stream *s = ptt_hmap_slot(&h->streams, i);
        if (s && s->pid == pid && s->serial >= first && s->start &&
            !ptt_names_thread(h->names, pid, s->tid))
            ptt_names_event(h->names, s->start);
    }
}

/* A new image of pid, whose threads are numbered from first. Those of the older ones, if one was
 * known, hold nothing and wait for nothing from now on: their streams (one read late, whose tid
 * the new image may have again) and the threads kept for what they held. */
static void image_new(struct ptt_hang *h, int32_t pid, uint32_t first)
{
    struct image *im = image_of(h, pid, 1);
    if (!im->first) { /* the first known of pid */
        im->first = first;
        return;
    }
    im->renewed = 1;
    if (first > im->first)
        im->first = first;
    for (size_t i = 0; i < h->streams.cap; i++) {
        struct stream *s = ptt_hmap_slot(&h->streams, i);
        if (s && s->pid == pid && s->serial < im->first && s->calls)
            stream_stale(s);
    }
    rename_image(h, pid, im->first); /* before the kept threads go: their names too */
    forget_kept(h, pid, kept_before, im->first);
    forget_pid(&h->cycles, pid, im->first); /* the new image's deadlocks are reported too */
    forget_pid(&h->sem_kind, pid, im->first);
}

/* A stream met first: its tracker thread (a kept one again, for events after its end), and
 * whether it is of an older image of its pid. */
static void stream_new(struct ptt_hang *h, struct stream *s)
{
    struct ptt_ev ev = {.pid = s->pid, .tid = s->tid, .serial = s->serial};
    struct ptt_tthread *kept = ptt_tracker_thread(h->calls, s->pid, s->serial);
    if (kept)
        kept_count(h, kept, 0);
    s->calls = ptt_tracker_get(h->calls, &ev);
    const struct image *im = image_of(h, s->pid, 0);
    if (im && im->renewed && s->serial < im->first)
        stream_stale(s);
}

void ptt_hang_started(void *arg, int32_t pid, uint32_t before)
{
    image_new(arg, pid, before + 1);
}

void ptt_hang_exited(void *arg, int32_t pid)
{
    /* Only threads gone: a process reaped by its parent is told of after the reap, when its pid
     * may be another's already. Those kept to be named once their modules are read never will
     * be (but a new process's, with the pid again). Of the threads kept for what they held,
     * those of older images go; the newest image's too once the pid is no process's (else they
     * go when the next image is announced: this end may be an older process's, told late). */
    struct ptt_hang *h = arg;
    retire_where(h, pid, stream_gone, 0);
    unname_where(h, pid, ev_gone, 0);
    struct image *im = image_of(h, pid, 0);
    int free_pid = kill(pid, 0) && errno == ESRCH;
    if (im && forget_kept(h, pid, free_pid ? kept_any : kept_before, im->first))
        return; /* kept threads stay (no memory for the list) */
    if (!free_pid)
        return;
    free(ptt_hmap_del(&h->images, ptt_key2((uint64_t)(uint32_t)pid, 0)));
    forget_pid(&h->cycles, pid, UINT32_MAX);
    forget_pid(&h->sem_kind, pid, UINT32_MAX);
}

/* A stream of the program its process left: it holds nothing, waits for nothing. */
static int stream_old(struct stream *s, uint32_t before)
{
    if (s->serial > before)
        return 0;
    s->stale = s->ended = 1;
    return 1;
}

static int ev_old(const struct ptt_ev *ev, uint32_t before)
{
    return ev->serial <= before;
}

void ptt_hang_execd(void *arg, int32_t pid, uint32_t before)
{
    /* The drain took all they left in the pool: each is retired now. Without memory for the
     * list, marked: retired by a drain, or the process's end, holding nothing. */
    retire_where(arg, pid, stream_old, before);
    unname_where(arg, pid, ev_old, before);
    image_new(arg, pid, before + 1);
}

/* The peek of a sub-buffer no longer owned, or owned by another stream now. */
static void unpeek(struct peek *k)
{
    if (!k->live)
        return;
    k->live = 0;
    if (!--k->s->peeks && k->s->gone)
        free(k->s);
    k->s = NULL;
}

static void peek_at(struct peek *k, struct stream *s, uint32_t seq)
{
    unpeek(k);
    k->s = s; /* the drained_ fields stay: they are the slot's, not the peek's */
    k->seq = seq;
    k->live = 1;
    s->peeks++;
}

/* The call a live sub-buffer's thread is in, or NULL. A thread owns one sub-buffer, the one it
 * writes (and perhaps one parked before it, not counted). */
static struct ptt_open *call_of(const struct peek *k)
{
    return k->live && k->s->calls && !k->s->stale && k->s->seq == k->seq
               ? ptt_tthread_call(k->s->calls)
               : NULL;
}

/* The call of a thread that holds no sub-buffer, or NULL: it handed its last one over as it
 * blocked in that call (PTT_BLOCKS in lib/libptt.h, while threads hold most of the pool), and the
 * watch read it whole when it was drained. (A thread that holds none because its events were
 * dropped, or because it ended, is in no call the watch knows of.) */
static struct ptt_open *unheld_call(const struct stream *s)
{
    return !s->peeks && s->handed_blocked && s->calls && !s->stale && !s->ended
               ? ptt_tthread_call(s->calls)
               : NULL;
}

/* unheld_call, for a thread that still exists and whose events no starvation may have dropped
 * since (starved: the pool's count now). Threads that waited 10 s for a sub-buffer dropped their
 * events and went on: one that holds none may have left its call since, which no event tells. */
static struct ptt_open *unheld_blocked(const struct stream *s, uint64_t starved)
{
    struct ptt_open *c = s && s->starved == starved ? unheld_call(s) : NULL;
    return c && !ptt_thread_gone(s->pid, s->tid) ? c : NULL; /* gone: its THREAD_END dropped */
}

typedef void each_fn(struct ptt_hang *h, struct stream *s, struct ptt_open *c, void *arg);

/* f for each thread blocked in a call as the watch sees it: those that hold a sub-buffer in pool
 * order, then those that hold none. How many there are. */
static unsigned each_blocked(struct ptt_hang *h, each_fn *f, void *arg)
{
    unsigned n = 0;
    uint64_t starved = starvations(h);
    for (uint32_t i = 0; i < h->n; i++) {
        struct ptt_open *c = call_of(&h->p[i]);
        if (c) {
            n++;
            if (f)
                f(h, h->p[i].s, c, arg);
        }
    }
    for (size_t i = 0; i < h->streams.cap; i++) {
        struct stream *s = ptt_hmap_slot(&h->streams, i);
        struct ptt_open *c = unheld_blocked(s, starved);
        if (c) {
            n++;
            if (f)
                f(h, s, c, arg);
        }
    }
    return n;
}

int ptt_hang_progress(struct ptt_hang *h)
{
    int progress = h->fed;
    h->fed = 0;
    for (uint32_t i = 0; i < h->n; i++) {
        struct ptt_desc *d = ptt_geom_desc(&h->pool, i);
        struct peek *k = &h->p[i];
        uint32_t st = atomic_load_explicit(&d->state, memory_order_acquire);
        if (st != PTT_BUF_OWNED || d->seq == PTT_SEQ_UNSET) {
            if (k->live)
                progress = 1; /* handed over: its thread went on */
            unpeek(k);
            continue;
        }
        struct stream *s = stream_of(h, d);
        if (!k->live || k->s != s || k->seq != d->seq) {
            peek_at(k, s, d->seq);
            progress = 1;
        }
        progress |= read_slot(h, i, h->pool.buf_size, 0) > 0;
    }
    return progress;
}

/* "mutex b": the field a call is reported by, named as ptt view names it. */
static const char *object_text(struct ptt_hang *h, int32_t pid, const struct ptt_evinfo *in,
                               uint64_t object, char *buf, size_t len)
{
    if (ptt_fmt_waits_on(buf, len, in, object)) /* a signal set: as ptt view says it */
        return buf;
    const struct ptt_field *f = in && in->nfields ? &in->fields[shown_field(in)] : NULL;
    const char *name = f && f->type == PTT_F_OBJ ? ptt_names_object(h->names, pid, object) : NULL;
    if (name)
        snprintf(buf, len, "%.*s %s", f ? f->name_len : 6, f ? f->name : "object", name);
    else
        snprintf(buf, len, "%.*s 0x%llx", f ? f->name_len : 6, f ? f->name : "object",
                 (unsigned long long)object);
    return buf;
}

/* " at FILE:LINE" of a call's site, "" when it has none. */
static const char *site_text(struct ptt_hang *h, int32_t pid, uint64_t site, char *buf, size_t len)
{
    const char *at = site ? ptt_names_site(h->names, pid, site) : NULL;
    if (at)
        snprintf(buf, len, " at %s", at);
    else if (site)
        snprintf(buf, len, " at 0x%llx", (unsigned long long)site);
    else
        buf[0] = 0;
    return buf;
}

/* Who a blocked call waits for: ", held by thread t2 (123)", ", waiting for thread ...", and
 * for a rwlock the threads reading it. */
static void print_owner(FILE *f, struct ptt_hang *h, const struct ptt_open *c, int32_t pid)
{
    char tb[300], rb[1100];
    const struct ptt_evinfo *in = c->in.info;
    if (c->owner)
        fprintf(f, is_join(in) ? ", waiting for thread %s" : ", held by thread %s",
                ptt_fmt_thread(tb, sizeof tb, h->names, pid, (int32_t)c->owner));
    if (in && in->okind == PTT_CLASS_rwlock && !is_join(in) &&
        *ptt_fmt_readers(rb, sizeof rb, h->names, h->calls, pid, c->object, c->holders))
        fprintf(f, ", %s", rb);
}

static const char *class_name(int number)
{
    unsigned n;
    const struct ptt_classinfo *c = ptt_classes(&n);
    for (unsigned i = 0; i < n; i++)
        if ((int)c[i].number == number)
            return c[i].name;
    return "object";
}

/* One line of what a blocked thread holds: "holds mutex a, taken at abba.c:11". */
static void print_one_held(FILE *f, struct ptt_hang *h, int32_t pid, const struct ptt_held *x)
{
    const char *name = ptt_names_object(h->names, pid, x->object);
    char ob[300], sb[300];
    if (name)
        snprintf(ob, sizeof ob, "%s %s", class_name(x->cls), name);
    else
        snprintf(ob, sizeof ob, "%s 0x%llx", class_name(x->cls), (unsigned long long)x->object);
    fprintf(f, "ptt:     holds %s%s", ob, x->shared ? " for reading" : "");
    if (x->count > 1)
        fprintf(f, " (%u times)", x->count);
    fprintf(f, "%s%s\n", x->site ? ", taken" : "", site_text(h, pid, x->site, sb, sizeof sb));
}

/* Whether a thread of pid other than s is in a wait for sem. */
static int sem_waited(struct ptt_hang *h, const struct stream *s, uint64_t sem)
{
    for (size_t i = 0; i < h->streams.cap; i++) {
        struct stream *t = ptt_hmap_slot(&h->streams, i);
        const struct ptt_open *c = t && t != s && t->pid == s->pid && t->calls && !t->stale
                                       ? ptt_tthread_call(t->calls)
                                       : NULL;
        if (c && c->in.info && c->in.info->okind == PTT_CLASS_sem &&
            c->in.info->role == PTT_ROLE_ACQUIRE && c->object == sem)
            return 1;
    }
    return 0;
}

/* What a blocked thread holds, one line each: its locks, then the semaphores it took that are
 * used as locks: posted by a taker before, or waited for by another thread (one taken and never
 * posted, which nobody waits for, may be a thread's lifelong one, CPython's thread state lock,
 * or the one a Condition waits on: it would only say what the line above says). */
static void print_held(FILE *f, struct ptt_hang *h, struct stream *s)
{
    for (unsigned i = 0; i < s->calls->nheld; i++)
        print_one_held(f, h, s->pid, &s->calls->held[i]);
    for (unsigned i = 0; i < s->nsems; i++) {
        const struct ptt_held *x = &s->sems[i];
        const struct sem_kind *k = sem_kind(h, s->pid, x->object, 0);
        if (sem_holds(h, s->pid, x) && (k->posted || sem_waited(h, s, x->object)))
            print_one_held(f, h, s->pid, x);
    }
}

/* A join's owner: the thread it waits for, as its pthread_t names it now. A semaphore's, when
 * it is used as a lock: the thread that holds it now. */
static void join_owner(struct ptt_hang *h, const struct stream *s, struct ptt_open *c)
{
    const struct ptt_evinfo *in = c->in.info;
    if (!c->owner && is_join(in))
        c->owner = (uint64_t)(int64_t)ptt_names_pthread(
            h->names, s->pid, ptt_ev_arg(&c->in, (unsigned)shown_field(in), 0));
    if (in && in->okind == PTT_CLASS_sem && in->role == PTT_ROLE_ACQUIRE) {
        const struct stream *t = ptt_open_timed(c) ? NULL : sem_holder(h, s, c->object);
        c->owner = t ? (uint64_t)(int64_t)t->tid : 0;
        const struct sem_kind *k = sem_kind(h, s->pid, c->object, 0);
        if (!t && !ptt_open_timed(c) && k && k->kind == SEM_LOCK && k->gone_taker &&
            (int64_t)(k->gone_ticks - k->init) >= 0) /* its taker ended holding it */
            c->owner = (uint64_t)(int64_t)k->gone_taker;
    }
}

struct report {
    struct ptt_daemon *d;
    FILE *f;
    uint64_t now;
    double ns_per_tick;
};

/* One blocked thread: its line and what it holds on f, and its HANG_BLOCKED event. */
static void report_thread(struct ptt_hang *h, struct stream *s, struct ptt_open *c, void *arg)
{
    const struct report *r = arg;
    struct ptt_daemon *d = r->d;
    FILE *f = r->f;
    const struct ptt_evinfo *in = c->in.info;
    uint64_t object = ptt_ev_arg(&c->in, (unsigned)shown_field(in), 0);
    join_owner(h, s, c);
    uint64_t since = (uint64_t)((double)(r->now - c->in.ticks) * r->ns_per_tick);
    char tb[300], ob[600], sb[300];
    fprintf(f, "ptt:   pid %d thread %s: in %s (%s)%s for %.1f s", s->pid,
            ptt_fmt_thread(tb, sizeof tb, h->names, s->pid, s->tid), in ? in->routine : "?",
            object_text(h, s->pid, in, object, ob, sizeof ob),
            site_text(h, s->pid, c->site, sb, sizeof sb), (double)since / 1e9);
    print_owner(f, h, c, s->pid);
    fputc('\n', f);
    print_held(f, h, s);
    uint16_t id = PTT_EV_HANG_BLOCKED;
    unsigned na = 5;
    uint64_t b[5] = {(uint64_t)(int64_t)s->tid, c->in.id, object, c->owner, since};
    ptt_daemon_events(d, s->pid, 1, &id, &na, b);
}

unsigned ptt_hang_report(struct ptt_hang *h, struct ptt_daemon *d, FILE *f, uint64_t idle_ns,
                         double ns_per_tick)
{
    unsigned blocked = each_blocked(h, NULL, NULL);
    if (!blocked)
        return 0;
    name_started(h);
    fprintf(f, "ptt: hang: no traced thread recorded an event for %.1f s; %u blocked in a call:\n",
            (double)idle_ns / 1e9, blocked);
    uint16_t id = PTT_EV_HANG_DETECTED;
    unsigned na = 2;
    uint64_t a[2] = {idle_ns, blocked};
    ptt_daemon_events(d, (int)getpid(), 1, &id, &na, a);
    struct report r = {d, f, ptt_ticks(d->clock_tsc), ns_per_tick};
    each_blocked(h, report_thread, &r);
    fflush(f);
    return blocked;
}

/* ---- deadlocks: threads that wait for each other, whatever the others do ---- */

/* A thread blocked in an untimed call on something a thread holds (a lock) or is (a join). */
struct waiter {
    struct stream *s;
    struct ptt_open *c;
    int32_t next; /* the waiter it waits for, -1: none blocked so */
    int mark;     /* the search's: 0 not seen, k + 1 seen from waiter k */
};

struct waiters {
    struct waiter *v;
    unsigned n, cap;
    struct ptt_hmap at; /* (pid, tid) -> index + 1 */
    int oom;
};

static void add_waiter(struct ptt_hang *h, struct stream *s, struct ptt_open *c, void *arg)
{
    struct waiters *w = arg;
    join_owner(h, s, c);
    if (!c->owner || ptt_open_timed(c) || w->oom)
        return;
    if (w->n == w->cap) {
        unsigned cap = w->cap ? 2 * w->cap : 64;
        struct waiter *v = realloc(w->v, cap * sizeof *v);
        if (!v) {
            w->oom = 1;
            return;
        }
        w->v = v;
        w->cap = cap;
    }
    w->v[w->n] = (struct waiter){s, c, -1, 0};
    *(uint32_t *)ptt_hmap_get(&w->at,
                              ptt_key2((uint64_t)(uint32_t)s->pid, (uint64_t)(uint32_t)s->tid),
                              sizeof(uint32_t)) = ++w->n;
}

/* The first waiter of a cycle the walk from k closes, or -1. Each waiter waits for one thread at
 * most: following them from k either ends, or meets a waiter seen in an earlier walk (no new
 * cycle), or one seen in this walk (a cycle, which that one is on). */
static int32_t cycle_from(struct waiters *w, unsigned k)
{
    int32_t i = (int32_t)k;
    while (i >= 0 && !w->v[i].mark) {
        w->v[i].mark = (int)k + 1;
        i = w->v[i].next;
    }
    return i >= 0 && w->v[i].mark == (int)k + 1 ? i : -1;
}

/* Report the cycle through waiter first, if each of its threads waited min_ticks at least and
 * it was not reported: its size, else 0. */
static unsigned report_cycle(struct ptt_hang *h, struct waiters *w, int32_t first,
                             uint64_t min_ticks, struct report *r)
{
    unsigned size = 0;
    int32_t i = first, key = first;
    do {
        if ((int64_t)(r->now - w->v[i].c->in.ticks) < (int64_t)min_ticks)
            return 0;
        if (w->v[i].s->tid < w->v[key].s->tid)
            key = i; /* the same cycle has the same key, whichever thread the walk met first */
        size++;
        i = w->v[i].next;
    } while (i != first);
    struct stream *ks = w->v[key].s;
    uint32_t *seen = ptt_hmap_get(
        &h->cycles, ptt_key2((uint64_t)(uint32_t)ks->pid, (uint64_t)(uint32_t)ks->tid), 8);
    if (seen[1])
        return 0;
    seen[0] = (uint32_t)ks->pid; /* forget_pid finds it by them */
    seen[1] = ks->serial;
    name_started(h);
    if (size == 1)
        fprintf(r->f, "ptt: hang: deadlock in pid %d: a thread waits for itself:\n", ks->pid);
    else
        fprintf(r->f, "ptt: hang: deadlock in pid %d: %u threads wait for each other:\n", ks->pid,
                size);
    i = key;
    do {
        report_thread(h, w->v[i].s, w->v[i].c, r);
        i = w->v[i].next;
    } while (i != key);
    fflush(r->f);
    return size;
}

unsigned ptt_hang_deadlocks(struct ptt_hang *h, struct ptt_daemon *d, FILE *f, uint64_t min_ns,
                            double ns_per_tick)
{
    struct waiters w = {0};
    each_blocked(h, add_waiter, &w);
    for (unsigned k = 0; k < w.n; k++) {
        const struct ptt_open *c = w.v[k].c;
        uint32_t *j = ptt_hmap_get(
            &w.at, ptt_key2((uint64_t)(uint32_t)w.v[k].s->pid, (uint64_t)(uint32_t)c->owner), 0);
        /* A lock's owner as its wait began: an edge only while that thread holds it still (it
         * may have changed hands since, the waiter waiting on) */
        struct stream *o = j ? w.v[*j - 1].s : NULL;
        if (o && !is_join(c->in.info) && !ptt_tthread_holds(o->calls, c->object) &&
            !(c->in.info->okind == PTT_CLASS_sem && sem_held(o, c->object)))
            j = NULL;
        w.v[k].next = j ? (int32_t)*j - 1 : -1;
    }
    struct report r = {d, f, ptt_ticks(d->clock_tsc), ns_per_tick};
    uint64_t min_ticks = (uint64_t)((double)min_ns / ns_per_tick);
    unsigned found = 0;
    for (unsigned k = 0; k < w.n; k++) {
        int32_t first = cycle_from(&w, k);
        if (first >= 0)
            found += report_cycle(h, &w, first, min_ticks, &r);
    }
    free(w.v);
    ptt_hmap_free(&w.at, NULL);
    return found;
}

static unsigned add_pid(int *pids, unsigned n, int pid)
{
    unsigned j;
    for (j = 0; j < n && pids[j] != pid; j++)
        ;
    if (j == n)
        pids[n++] = pid;
    return n;
}

unsigned ptt_hang_pids(const struct ptt_hang *h, int *pids, unsigned max)
{
    unsigned n = 0;
    for (uint32_t i = 0; i < h->n && n < max; i++)
        if (h->p[i].live)
            n = add_pid(pids, n, h->p[i].s->pid);
    uint64_t starved = starvations(h);
    for (size_t i = 0; i < h->streams.cap && n < max; i++) {
        const struct stream *s = ptt_hmap_slot(&h->streams, i);
        if (unheld_blocked(s, starved))
            n = add_pid(pids, n, s->pid);
    }
    return n;
}

/* State and CPU time (user + system, in clock ticks) of a thread: 0, or -1 when it is gone. */
static int read_task(int pid, int tid, char *state, uint64_t *cpu)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/task/%d/stat", pid, tid);
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *p = strrchr(buf, ')'); /* the name may hold anything but ends before it */
    unsigned long long ut, st;
    if (!p || sscanf(p + 1, " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", state, &ut,
                     &st) != 3)
        return -1;
    *cpu = ut + st;
    return 0;
}

static void mark_blocked(struct ptt_hang *h, struct stream *s, struct ptt_open *c, void *arg)
{
    (void)c, (void)arg;
    ptt_hmap_get(&h->blocked, ptt_key2((uint64_t)(uint32_t)s->pid, (uint64_t)(uint32_t)s->tid), 1);
}

static int in_traced_call(struct ptt_hang *h, int pid, int tid)
{
    return ptt_hmap_get(&h->blocked, ptt_key2((uint64_t)(uint32_t)pid, (uint64_t)(uint32_t)tid),
                        0) != NULL;
}

/* One thread: 1 if it counts as blocked (or is gone), else 0 with why. */
static int task_blocked(struct ptt_hang *h, int pid, int tid, int restart, char *why, size_t len)
{
    char state;
    uint64_t cpu;
    if (read_task(pid, tid, &state, &cpu) || state == 'Z' || state == 'X' || state == 'x')
        return 1;
    if (restart) {
        if (h->ntasks == h->cap) {
            unsigned cap = h->cap ? 2 * h->cap : 64;
            struct task *t = realloc(h->tasks, cap * sizeof *t);
            if (!t)
                return 0;
            h->tasks = t;
            h->cap = cap;
        }
        h->tasks[h->ntasks++] = (struct task){pid, tid, cpu};
        return 1;
    }
    if (state == 'T' || state == 't') {
        if (!h->stopped[0])
            snprintf(h->stopped, sizeof h->stopped, "pid %d thread %s", pid,
                     ptt_fmt_thread((char[300]){0}, 300, h->names, pid, tid));
        return 1;
    }
    unsigned i;
    for (i = 0; i < h->ntasks && (h->tasks[i].pid != pid || h->tasks[i].tid != tid); i++)
        ;
    char tb[300];
    ptt_fmt_thread(tb, sizeof tb, h->names, pid, tid);
    if (state == 'R' || i == h->ntasks || h->tasks[i].cpu != cpu)
        snprintf(why, len, "pid %d thread %s is running", pid, tb);
    else if (!in_traced_call(h, pid, tid))
        snprintf(why, len, "pid %d thread %s is not in a traced call (state %c)", pid, tb, state);
    else
        return 1;
    return 0;
}

int ptt_hang_settled(struct ptt_hang *h, const int *pids, unsigned npids, int restart, char *why,
                     size_t len)
{
    h->stopped[0] = 0;
    if (restart) {
        h->ntasks = 0;
    } else {
        name_started(h); /* for the thread named in why */
        ptt_hmap_free(&h->blocked, NULL);
        each_blocked(h, mark_blocked, NULL);
    }
    int settled = 1;
    for (unsigned i = 0; i < npids && settled; i++) {
        char dir[64];
        snprintf(dir, sizeof dir, "/proc/%d/task", pids[i]);
        DIR *d = opendir(dir);
        if (!d)
            continue; /* gone */
        struct dirent *e;
        while (settled && (e = readdir(d)))
            if (e->d_name[0] >= '1' && e->d_name[0] <= '9')
                settled = task_blocked(h, pids[i], atoi(e->d_name), restart, why, len);
        closedir(d);
    }
    return settled && !restart;
}

const char *ptt_hang_stopped(const struct ptt_hang *h)
{
    return h->stopped;
}

static void stream_free(void *p)
{
    free(((struct stream *)p)->start);
    free(((struct stream *)p)->sems);
    free(((struct stream *)p)->dec);
    free(((struct stream *)p)->pdec);
}

void ptt_hang_free(struct ptt_hang *h)
{
    if (h) {
        for (uint32_t i = 0; i < h->n; i++)
            unpeek(&h->p[i]); /* a gone stream goes with its last peek */
        free(h->tasks);
        free(h->forget);
        ptt_hmap_free(&h->kept, NULL);
        ptt_hmap_free(&h->images, NULL);
        ptt_hmap_free(&h->blocked, NULL);
        ptt_hmap_free(&h->cycles, NULL);
        ptt_hmap_free(&h->sem_kind, NULL);
        free(h->unnamed);
        ptt_tracker_free(h->calls);
        ptt_names_free(h->names);
        ptt_hmap_free(&h->streams, stream_free);
    }
    free(h);
}
