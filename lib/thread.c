/* Threads: create (through a start wrapper that records the start and end of the user
 * function), exit, join, tryjoin, timedjoin, detach. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>

#include "libptt.h"

/* What the start wrapper needs from pthread_create; held only until the new thread starts.
 * A static array, not malloc: the application's allocator may lock traced mutexes. */
struct start_slot {
    _Atomic int busy;
    int32_t creator;
    void *(*fn)(void *);
    void *arg;
};
#define PTT_START_SLOTS 1024
static struct start_slot slots[PTT_START_SLOTS];
static _Atomic unsigned slot_hint;

static struct start_slot *slot_get(void)
{
    unsigned h = atomic_fetch_add_explicit(&slot_hint, 1, memory_order_relaxed);
    for (unsigned k = 0; k < PTT_START_SLOTS; k++) {
        struct start_slot *s = &slots[(h + k) % PTT_START_SLOTS];
        int zero = 0;
        if (atomic_compare_exchange_strong(&s->busy, &zero, 1))
            return s;
    }
    return 0;
}

enum { END_RETURN = 0, END_EXIT = 1, END_CANCEL = 2 };

struct end_ctx {
    int returned;
    void *value;
};

/* Runs when the user function returns and when the thread unwinds (pthread_exit, cancel).
 * Registered with glibc's C pthread_cleanup_push, which needs no unwinder personality, so libptt
 * links against libc alone. */
static void thread_end(void *arg)
{
    struct end_ctx *c = arg;
    struct ptt_thread *t = &ptt_self;
    if (t->nest) { /* asynchronously cancelled inside an event: go back to its start */
        ptt_discard_partial(t);
        t->nest = 0;
    }
    if (ptt_on()) {
        ptt_report_lost(t);
        int how = c->returned ? END_RETURN : t->exiting ? END_EXIT : END_CANCEL;
        uint64_t v = how == END_RETURN ? PTT_U(c->value)
                     : how == END_EXIT ? t->exit_value
                                       : PTT_U(PTHREAD_CANCELED);
        PTT_REC_LIGHT(THREAD_END, v, (uint64_t)how);
    }
    ptt_thread_release(t);
    ptt_call_give(t); /* after the hand-over: a thread killed between keeps it, not a stranger */
    t->guard = PTT_GUARD_ENDED; /* THREAD_END is the thread's last event */
}

/* std::thread's start routine gets its _State object: its vtable names the callable's type, the
 * words after it hold the callable and its arguments (for std::thread(f, args...), f is one of
 * them). The object has two words at least; the next ones are read only in the page of the
 * second, which is mapped: a word past the object is harmless, a fault is not. */
static void state_words(const void *arg, uint64_t w[4])
{
    const uint64_t *o = arg;
    uintptr_t page = (uintptr_t)&o[1] >> 12;
    for (unsigned i = 0; i < 4 && (i < 2 || (uintptr_t)&o[i] >> 12 == page); i++)
        w[i] = o[i];
}

static void *thread_main(void *v)
{
    struct start_slot *s = v;
    void *(*fn)(void *) = s->fn;
    void *arg = s->arg;
    int32_t creator = s->creator;
    atomic_store_explicit(&s->busy, 0, memory_order_release);
    struct end_ctx c = {0, 0};
    if (ptt_on()) {
        uint64_t w[4] = {0, 0, 0, 0};
        if (arg && ptt_in_libstdcxx(PTT_U(fn)))
            state_words(arg, w);
        PTT_REC_LIGHT(THREAD_START, PTT_U(fn), PTT_U(arg), PTT_I(creator), PTT_U(pthread_self()),
                      w[0], w[1], w[2], w[3]);
    }
    pthread_cleanup_push(thread_end, &c);
    c.value = fn(arg);
    c.returned = 1;
    pthread_cleanup_pop(1);
    return c.value;
}

PTT_EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *),
                              void *arg)
{
    if (!ptt_on())
        return REAL(pthread_create)(th, attr, fn, arg);
    /* The attribute settings that matter (0 stack size: the default). */
    size_t stack = 0;
    int detach = PTHREAD_CREATE_JOINABLE, policy = SCHED_OTHER, inherit = PTHREAD_INHERIT_SCHED;
    struct sched_param sp = {0};
    if (attr) {
        pthread_attr_getstacksize(attr, &stack);
        pthread_attr_getdetachstate(attr, &detach);
        pthread_attr_getschedpolicy(attr, &policy);
        pthread_attr_getschedparam(attr, &sp);
        pthread_attr_getinheritsched(attr, &inherit);
    }
    PTT_REC(THREAD_CREATE_IN, PTT_U(th), PTT_U(attr), PTT_U(fn), PTT_U(arg), (uint64_t)stack,
            (uint64_t)(detach == PTHREAD_CREATE_DETACHED), PTT_I(policy), PTT_I(sp.sched_priority),
            (uint64_t)(inherit == PTHREAD_INHERIT_SCHED), PTT_SITE);
    struct start_slot *s = slot_get();
    int r;
    if (s) {
        if (!ptt_self.tid) /* known from now on */
            ptt_self.tid = ptt_gettid();
        s->creator = ptt_self.tid;
        s->fn = fn;
        s->arg = arg;
        r = REAL(pthread_create)(th, attr, thread_main, s);
        if (r)
            atomic_store(&s->busy, 0);
    } else { /* over a thousand threads starting at once: this one starts unwrapped */
        r = REAL(pthread_create)(th, attr, fn, arg);
    }
    PTT_REC(THREAD_CREATE_OUT, PTT_I(r), r ? 0 : PTT_U(*th));
    return r;
}

PTT_EXPORT void pthread_exit(void *v)
{
    if (ptt_on()) {
        PTT_REC(THREAD_EXIT_IN, PTT_U(v));
        ptt_self.exiting = 1;
        ptt_self.exit_value = PTT_U(v);
    }
    REAL(pthread_exit)(v);
    __builtin_unreachable();
}

PTT_EXPORT int pthread_join(pthread_t th, void **ret)
{
    if (!ptt_on())
        return REAL(pthread_join)(th, ret);
    PTT_REC(THREAD_JOIN_IN, PTT_U(th), PTT_SITE);
    if (PTT_RECORDS(THREAD_JOIN_IN)) /* its IN in the sub-buffer handed over */
        PTT_BLOCKS();
    void *v = 0;
    int r = REAL(pthread_join)(th, &v);
    if (r == 0 && ret)
        *ret = v;
    PTT_REC(THREAD_JOIN_OUT, PTT_I(r), PTT_U(v));
    return r;
}

PTT_EXPORT int pthread_tryjoin_np(pthread_t th, void **ret)
{
    if (!ptt_on())
        return REAL(pthread_tryjoin_np)(th, ret);
    PTT_CALL_IN(call, THREAD_TRYJOIN_NP, PTT_U(th));
    void *v = 0;
    int r = REAL(pthread_tryjoin_np)(th, &v);
    if (r == 0 && ret)
        *ret = v;
    PTT_CALL_OUT(call, THREAD_TRYJOIN_NP, PTT_I(r), PTT_U(v));
    return r;
}

PTT_EXPORT int pthread_timedjoin_np(pthread_t th, void **ret, const struct timespec *abstime)
{
    if (!ptt_on())
        return REAL(pthread_timedjoin_np)(th, ret, abstime);
    PTT_REC(THREAD_TIMEDJOIN_NP_IN, PTT_U(th), ptt_ts_arg(abstime), PTT_SITE);
    if (PTT_RECORDS(THREAD_TIMEDJOIN_NP_IN)) /* its IN in the sub-buffer handed over */
        PTT_BLOCKS();
    void *v = 0;
    int r = REAL(pthread_timedjoin_np)(th, &v, abstime);
    if (r == 0 && ret)
        *ret = v;
    PTT_REC(THREAD_TIMEDJOIN_NP_OUT, PTT_I(r), PTT_U(v));
    return r;
}

PTT_EXPORT int pthread_detach(pthread_t th)
{
    if (!ptt_on())
        return REAL(pthread_detach)(th);
    PTT_CALL_IN(call, THREAD_DETACH, PTT_U(th), PTT_SITE);
    int r = REAL(pthread_detach)(th);
    PTT_CALL_OUT(call, THREAD_DETACH, PTT_I(r));
    return r;
}
