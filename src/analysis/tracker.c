/* Each thread's open calls and held objects (tracker.h), from the events' roles. */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/hmap.h"
#include "util/util.h"
#include "analysis/tracker_feed.h"
#include "ptt_fields.h"

struct ptt_tracker {
    enum ptt_tracker_key key;
    int calls_only;
    struct ptt_hmap threads;
};

void *ptt_tracker_grow(void *p, unsigned *cap, size_t size)
{
    unsigned n = *cap ? 2 * *cap : 8;
    p = realloc(p, n * size);
    if (!p) {
        ptt_out_of_memory();
    }
    *cap = n;
    return p;
}

struct ptt_tracker *ptt_tracker_new(int key)
{
    struct ptt_tracker *t = calloc(1, sizeof *t);
    if (!t) {
        ptt_out_of_memory();
    }
    t->key = (enum ptt_tracker_key)(key & ~PTT_TRACK_CALLS_ONLY);
    t->calls_only = (key & PTT_TRACK_CALLS_ONLY) != 0;
    return t;
}

static void thread_free(void *p)
{
    struct ptt_tthread *th = p;
    free(th->open);
    free(th->held);
}

void ptt_tracker_free(struct ptt_tracker *t)
{
    if (!t)
        return;
    ptt_hmap_free(&t->threads, thread_free);
    free(t);
}

struct ptt_tthread *ptt_tracker_thread(struct ptt_tracker *t, int32_t pid, uint32_t key)
{
    return ptt_hmap_get(&t->threads, ptt_key2((uint64_t)(uint32_t)pid, key), 0);
}

struct ptt_tthread *ptt_tracker_next(struct ptt_tracker *t, size_t *i)
{
    while (*i < t->threads.cap) {
        struct ptt_tthread *th = ptt_hmap_slot(&t->threads, (*i)++);
        if (th)
            return th;
    }
    return NULL;
}

struct ptt_open *ptt_tthread_call(struct ptt_tthread *th)
{
    for (unsigned i = th->nopen; i-- > 0;)
        if (!th->open[i].frame)
            return &th->open[i];
    return NULL;
}

void ptt_tthread_trim(struct ptt_tthread *th)
{
    if (th->nopen)
        return;
    free(th->open);
    th->open = NULL;
    th->open_cap = 0;
}

void ptt_tracker_forget(struct ptt_tracker *t, struct ptt_tthread *th)
{
    void *p = ptt_hmap_del(&t->threads, ptt_key2((uint64_t)(uint32_t)th->pid, th->key));
    if (p) {
        thread_free(p);
        free(p);
    }
}

int ptt_open_timed(const struct ptt_open *o)
{
    const struct ptt_evinfo *e = o->in.info;
    for (unsigned i = 0; e && i < e->nargs && i < o->in.nargs; i++)
        if (e->fields[i].type == PTT_F_ABSTIME && o->in.args[i])
            return 1;
    return 0;
}

void ptt_tthread_drop(struct ptt_tthread *th, uint64_t object)
{
    struct ptt_held *h = ptt_tthread_holds(th, object);
    if (h)
        *h = th->held[--th->nheld];
}

unsigned ptt_tracker_readers(struct ptt_tracker *t, int32_t pid, uint64_t object, int32_t *tids,
                             unsigned max)
{
    unsigned n = 0;
    size_t i = 0;
    for (struct ptt_tthread *th; (th = ptt_tracker_next(t, &i));) {
        struct ptt_held *h = th->pid == pid ? ptt_tthread_holds(th, object) : NULL;
        if (!h || !h->shared)
            continue;
        if (n < max) { /* in order of tid: the same text whatever the table's order */
            unsigned k = n;
            for (; k > 0 && tids[k - 1] > th->tid; k--)
                tids[k] = tids[k - 1];
            tids[k] = th->tid;
        }
        n++;
    }
    return n;
}

/* Calls left without returning: the innermost one, or all (frames too). */
static void unwind(struct ptt_tthread *th, int all, struct ptt_track *res)
{
    unsigned i = 0;
    if (!all) {
        struct ptt_open *c = ptt_tthread_call(th);
        if (!c)
            return;
        i = (unsigned)(c - th->open);
    }
    if (i == th->nopen)
        return;
    res->what |= PTT_TRK_CLOSED;
    res->closed = &th->open[i];
    res->nclosed = all ? th->nopen - i : 1;
    res->unfinished = 1;
    th->nopen = i;
}

/* A CONTENDED event: the acquire it is inside must wait, from now on. */
static void contended(struct ptt_tthread *th, const struct ptt_ev *ev, struct ptt_track *res)
{
    if (!th->nopen || th->open[th->nopen - 1].frame)
        return;
    struct ptt_open *c = &th->open[th->nopen - 1];
    c->contended = 1;
    uint64_t owner;
    if (ptt_ev_role_get(ev, PTT_RF_OWNER, &owner))
        c->has_owner = 1, c->owner = owner;
    c->holders = ptt_ev_role(ev, PTT_RF_COUNT, 0);
    if (c->block != PTT_OPEN_RUNNING)
        return;
    c->block = PTT_OPEN_CONTENDED;
    c->block_ns = ev->ns;
    c->block_cls = ev->info->okind;
    res->what |= PTT_TRK_BLOCKED;
    res->blocked = c;
}

/* A frame ends: the innermost one (the calls inside it stay open: their OUT events close them). */
static void frame_end(struct ptt_tthread *th)
{
    unsigned i = th->nopen;
    while (i-- > 0 && !th->open[i].frame)
        ;
    if (i == (unsigned)-1)
        return;
    memmove(&th->open[i], &th->open[i + 1], (th->nopen - i - 1) * sizeof *th->open);
    th->nopen--;
}

void ptt_tracker_state(struct ptt_tthread *th, const struct ptt_ev *ev, struct ptt_track *res)
{
    switch (ev->info->role) {
    case PTT_ROLE_CONTENDED:
        if (!th->calls_only)
            contended(th, ev, res);
        return;
    case PTT_ROLE_FRAME_BEGIN:
        res->what |= PTT_TRK_OPENED;
        res->opened = push(th, ev, 1);
        return;
    case PTT_ROLE_FRAME_END: frame_end(th); return;
    case PTT_ROLE_THREAD_START: th->ended = 0; return;
    case PTT_ROLE_THREAD_END:
        unwind(th, 1, res); /* unwound: cancelled, pthread_exit */
        th->ended = 1;
        return;
    default: break;
    }
    switch (ev->id) { /* written by the reader */
    case PTT_EV_TRACE_UNFINISHED: unwind(th, 0, res); break;
    case PTT_EV_THREAD_CANCELLED: unwind(th, 1, res); break;
    case PTT_EV_CALL_BEFORE_ATTACH: /* the IN event it names comes next */
        th->before_attach = (uint16_t)ptt_ev_arg(ev, PTT_F(CALL_BEFORE_ATTACH, call), 0);
        break;
    default: break;
    }
}

struct ptt_tthread *ptt_tracker_get(struct ptt_tracker *t, const struct ptt_ev *ev)
{
    uint32_t key = t->key == PTT_TRACK_TID ? (uint32_t)ev->tid : ev->serial;
    struct ptt_tthread *th =
        ptt_hmap_get(&t->threads, ptt_key2((uint64_t)(uint32_t)ev->pid, key), sizeof *th);
    th->pid = ev->pid;
    th->tid = ev->tid;
    th->key = key;
    th->calls_only = t->calls_only;
    return th;
}

unsigned ptt_tracker_event(struct ptt_tracker *t, const struct ptt_ev *ev, struct ptt_track *res)
{
    if (!ev->info) {
        if (res)
            memset(res, 0, sizeof *res);
        return 0;
    }
    return ptt_tracker_feed(ptt_tracker_get(t, ev), ev, res);
}

/* PTT_TRACK_CALLS_ONLY, for the reader (every event of every thread): a call's IN pushes its
 * header, its OUT pops it; the rest as for the others. (ptt_tracker_calls does the common cases
 * in line.) */
static unsigned calls_only(struct ptt_tthread *th, const struct ptt_ev *ev)
{
    const struct ptt_evinfo *e = ev->info;
    struct ptt_track res;
    if (e->kind == PTT_KIND_IN) {
        if (!e->noreturn)
            push(th, ev, 0);
        return 0;
    }
    res.what = 0;
    if (e->kind == PTT_KIND_OUT)
        on_out(th, ev, &res);
    else
        ptt_tracker_state(th, ev, &res);
    return 0;
}

unsigned ptt_tracker_feed(struct ptt_tthread *th, const struct ptt_ev *ev, struct ptt_track *res)
{
    if (th->calls_only && ev->info) /* the caller wants no result */
        return calls_only(th, ev);
    return ptt_tracker_feed_inline(th, ev, res);
}
