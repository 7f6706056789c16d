/* The timeline through a time window (tl_window.h). */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/tl_window.h"
#include "util/util.h"

/* What began before the window, or its latest value there: told when the window begins. */
struct tl_pending {
    enum { P_PROCESS, P_THREAD, P_OWNER, P_COUNTER } kind;
    int met;   /* 0: just made */
    int ended; /* a process or thread that ended before the window */
    int32_t pid, tid;
    uint64_t obj;
    int cls;
    const char *what;
    int64_t value;
    char *name;
};

static struct tl_pending *pending(struct tl_window *w, int kind, int32_t pid, uint64_t x)
{
    uint64_t key = ptt_key2(ptt_key2((uint64_t)kind, (uint64_t)(uint32_t)pid), x);
    struct tl_pending *p = ptt_hmap_get(&w->pending, key, sizeof *p);
    if (p->met)
        return p;
    p->met = 1;
    if (w->n == w->cap) {
        w->cap = w->cap ? 2 * w->cap : 64;
        w->order = ptt_must(realloc(w->order, w->cap * sizeof *w->order));
    }
    w->order[w->n++] = p;
    p->kind = kind;
    p->pid = pid;
    return p;
}

/* The window begins: what began before and goes on, at its start. */
static void open_window(struct tl_window *w)
{
    const struct ptt_tl_callbacks *cb = w->cb;
    w->open = 1;
    for (size_t i = 0; i < w->n; i++) {
        struct tl_pending *p = w->order[i];
        if (p->ended)
            continue;
        switch (p->kind) {
        case P_PROCESS:
            if (cb->process)
                cb->process(w->arg, p->pid, w->from, 1);
            break;
        case P_THREAD:
            if (cb->thread)
                cb->thread(w->arg, p->pid, p->tid, w->from, 1, p->name);
            break;
        case P_OWNER:
            if (cb->owner && p->tid) /* free: as every object starts */
                cb->owner(w->arg, p->pid, p->obj, p->cls, p->tid, w->from);
            break;
        case P_COUNTER:
            if (cb->counter)
                cb->counter(w->arg, p->pid, p->obj, p->cls, p->what, w->from, p->value);
            break;
        }
    }
}

/* Whether a callback at time ns is inside the window (opening it at its first). */
static int inside(struct tl_window *w, int64_t ns)
{
    if (ns < w->from)
        return 0;
    if (!w->open)
        open_window(w);
    return 1;
}

static void w_event(void *arg, const struct ptt_ev *ev)
{
    struct tl_window *w = arg;
    if (!inside(w, ev->ns)) {
        if (w->cb->before)
            w->cb->before(w->arg, ev);
    } else if (w->cb->event)
        w->cb->event(w->arg, ev);
}

static void w_process(void *arg, int32_t pid, int64_t ns, int begin)
{
    struct tl_window *w = arg;
    if (inside(w, ns)) {
        if (w->cb->process)
            w->cb->process(w->arg, pid, ns, begin);
        return;
    }
    pending(w, P_PROCESS, pid, 0)->ended = !begin;
}

static void w_thread(void *arg, int32_t pid, int32_t tid, int64_t ns, int begin, const char *name)
{
    struct tl_window *w = arg;
    if (inside(w, ns)) {
        if (w->cb->thread)
            w->cb->thread(w->arg, pid, tid, ns, begin, name);
        return;
    }
    struct tl_pending *p = pending(w, P_THREAD, pid, (uint32_t)tid);
    p->tid = tid;
    p->ended = !begin;
    if (begin && name && !p->name)
        p->name = strdup(name);
}

static void w_call(void *arg, const struct ptt_ev *in, int64_t end_ns, int how)
{
    struct tl_window *w = arg;
    if (!w->cb->call || !inside(w, end_ns))
        return;
    if (in->ns >= w->from) {
        w->cb->call(w->arg, in, end_ns, how);
        return;
    }
    struct ptt_ev at; /* begun before: from the window's start */
    memcpy(&at, in, offsetof(struct ptt_ev, args) + in->nargs * sizeof in->args[0]);
    at.ns = w->from;
    w->cb->call(w->arg, &at, end_ns, how);
}

static void w_state(void *arg, int32_t pid, int32_t tid, enum ptt_tl_state state, int64_t from,
                    int64_t to, uint64_t object, uint16_t call)
{
    struct tl_window *w = arg;
    if (w->cb->state && inside(w, to))
        w->cb->state(w->arg, pid, tid, state, from < w->from ? w->from : from, to, object, call);
}

static void w_link(void *arg, enum ptt_tl_link kind, int32_t pid, int32_t from_tid, int64_t from_ns,
                   int32_t to_tid, int64_t to_ns, uint64_t object)
{
    struct tl_window *w = arg;
    if (w->cb->link && inside(w, to_ns))
        w->cb->link(w->arg, kind, pid, from_tid, from_ns < w->from ? w->from : from_ns, to_tid,
                    to_ns, object);
}

static void w_owner(void *arg, int32_t pid, uint64_t object, int cls, int32_t tid, int64_t ns)
{
    struct tl_window *w = arg;
    if (inside(w, ns)) {
        if (w->cb->owner)
            w->cb->owner(w->arg, pid, object, cls, tid, ns);
        return;
    }
    struct tl_pending *p = pending(w, P_OWNER, pid, object);
    p->obj = object;
    p->cls = cls;
    p->tid = tid;
}

static void w_counter(void *arg, int32_t pid, uint64_t object, int cls, const char *what,
                      int64_t ns, int64_t value)
{
    struct tl_window *w = arg;
    if (inside(w, ns)) {
        if (w->cb->counter)
            w->cb->counter(w->arg, pid, object, cls, what, ns, value);
        return;
    }
    struct tl_pending *p = pending(w, P_COUNTER, pid, object ^ (uint64_t)(uintptr_t)what);
    p->obj = object;
    p->cls = cls;
    p->what = what;
    p->value = value;
}

const struct ptt_tl_callbacks ptt_tl_window_callbacks = {
    .event = w_event,
    .process = w_process,
    .thread = w_thread,
    .call = w_call,
    .state = w_state,
    .link = w_link,
    .owner = w_owner,
    .counter = w_counter,
};

static void pending_free(void *p)
{
    free(((struct tl_pending *)p)->name);
}

void ptt_tl_window_free(struct tl_window *w)
{
    ptt_hmap_free(&w->pending, pending_free);
    free(w->order);
}
