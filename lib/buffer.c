/* Slow path of recording: taking and handing off sub-buffers, back-pressure and losses.
 * Runs once per sub-buffer (thousands of events), never while holding anything the
 * application could hold, and calls no cancellation point. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "libptt.h"

/* Set when threads waited long for a sub-buffer while the daemon was alive: every sub-buffer
 * is held by a live thread (more threads than sub-buffers). Events are then dropped, and
 * counted, until one comes free, rather than the application hanging. */
static int starved;

static uint32_t pool_pop(struct ptt_pool *p)
{
    uint64_t h = atomic_load_explicit(&p->free_head, memory_order_acquire);
    for (;;) {
        uint32_t i = (uint32_t)h;
        if (i == PTT_POOL_EMPTY)
            return PTT_POOL_EMPTY;
        /* A stale link read here makes the CAS fail: the tag changed since. */
        uint32_t next = __atomic_load_n(&ptt_pool_desc(p, i)->next, __ATOMIC_RELAXED);
        uint64_t nh = (((h >> 32) + 1) << 32) | next;
        if (atomic_compare_exchange_weak_explicit(&p->free_head, &h, nh, memory_order_acq_rel,
                                                  memory_order_acquire))
            return i;
    }
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Sleep without being a cancellation point (nanosleep is one). */
static void pause_us(long us)
{
    struct timespec d = {0, us * 1000};
    syscall(SYS_nanosleep, &d, NULL);
}

/* Whether ptt trace is gone: its heartbeat has not moved for a second (it ticks every few ms)
 * and its process no longer exists. A daemon merely slow (a slow disk) is waited for. Checked
 * each time a thread takes a sub-buffer, so a dead daemon is noticed within a sub-buffer's worth
 * of events, without waiting for the pool to run dry. */
static _Atomic uint64_t hb_value, hb_since;

static int daemon_gone(struct ptt_pool *p, uint64_t now)
{
    uint64_t hb = atomic_load_explicit(&p->heartbeat, memory_order_relaxed);
    if (hb != atomic_load_explicit(&hb_value, memory_order_relaxed) ||
        !atomic_load_explicit(&hb_since, memory_order_relaxed)) {
        atomic_store_explicit(&hb_value, hb, memory_order_relaxed);
        atomic_store_explicit(&hb_since, now, memory_order_relaxed);
        return 0;
    }
    if (now - atomic_load_explicit(&hb_since, memory_order_relaxed) < 1000000000u)
        return 0;
    return kill(p->daemon_pid, 0) < 0 && errno == ESRCH;
}

/* Nobody drains any more: stop recording in this process, which runs on at full speed, and
 * remove the pool's name that ptt trace could not. */
static void abandon(void)
{
    ptt_active = 0;
    ptt_forget_pool();
}

/* Take a free sub-buffer, waiting for the daemon when the pool is exhausted (the default), or
 * giving up at once with --overflow=discard. */
static uint32_t take_buffer(struct ptt_pool *p)
{
    uint64_t t0 = mono_ns();
    if (daemon_gone(p, t0)) {
        abandon();
        return PTT_POOL_EMPTY;
    }
    uint32_t i = pool_pop(p);
    if (i != PTT_POOL_EMPTY || p->overflow == PTT_OVERFLOW_DISCARD || starved) {
        if (i != PTT_POOL_EMPTY)
            starved = 0;
        return i;
    }
    long us = 20;
    while ((i = pool_pop(p)) == PTT_POOL_EMPTY) {
        pause_us(us);
        if (us < 1000)
            us *= 2;
        uint64_t now = mono_ns();
        if (daemon_gone(p, now)) {
            abandon();
            break;
        }
        if (now - t0 > 10000000000u) {
            starved = 1;
            break;
        }
    }
    atomic_fetch_add_explicit(&p->wait_ns, mono_ns() - t0, memory_order_relaxed);
    atomic_fetch_add_explicit(&p->waits, 1, memory_order_relaxed);
    return i;
}

static void hand_over(struct ptt_desc *d, uint32_t len)
{
    atomic_store_explicit(&d->committed, len, memory_order_release);
    atomic_store_explicit(&d->state, PTT_BUF_READY, memory_order_release);
}

static void hand_off(struct ptt_thread *t)
{
    hand_over(t->desc, (uint32_t)(t->pos - t->data));
    t->desc = 0;
}

void ptt_drop(struct ptt_thread *t)
{
    t->lost++;
    atomic_fetch_add_explicit(&ptt_pool->lost, 1, memory_order_relaxed);
}

/* Write one event at the current position, at nesting level 1, space known to be there. */
static void put(struct ptt_thread *t, uint16_t id, unsigned n, const uint64_t *a)
{
    uint64_t ts = ptt_now();
    uint64_t *w = (uint64_t *)t->pos, *args = w + 1;
    uint64_t d = ts - t->last;
    struct ptt_event h = {id, (uint16_t)(8 + 8 * n), (uint32_t)d};
    if (d > UINT32_MAX) {
        h.id |= PTT_EVF_ABS;
        h.size += 8;
        h.dts = 0;
        *args++ = ts;
    }
    for (unsigned i = 0; i < n; i++)
        args[i] = a[i];
    uint64_t hv;
    __builtin_memcpy(&hv, &h, 8);
    __atomic_store_n(w, hv, __ATOMIC_RELEASE); /* the header last, as in ptt_write */
    t->last = ts;
    t->last_data = t->data;
    t->pos += h.size;
}

/* Make sub-buffer i (taken with take_buffer) the thread's. */
static void install_taken(struct ptt_thread *t, struct ptt_pool *p, uint32_t i)
{
    struct ptt_desc *d = ptt_pool_desc(p, i);
    if (!t->serial) {
        t->serial = atomic_fetch_add(&p->next_serial, 1) + 1;
        t->tid = (int32_t)syscall(SYS_gettid);
    }
    d->pid = ptt_pid;
    d->tid = t->tid;
    d->serial = t->serial;
    d->seq = t->seq++;
    t->last = d->base_ts = ptt_now();
    atomic_store_explicit(&d->state, PTT_BUF_OWNED, memory_order_release);
    t->desc = d;
    t->data = t->pos = t->last_data = (uintptr_t)ptt_pool_data(p, i);
}

/* Take a sub-buffer and make it the thread's: -1 if none could be had. */
static int install(struct ptt_thread *t, struct ptt_pool *p)
{
    uint32_t i = take_buffer(p);
    if (i == PTT_POOL_EMPTY)
        return -1;
    install_taken(t, p, i);
    return 0;
}

/* Called with t->nest == 1 when the event does not fit: switch sub-buffers and record it. */
void ptt_record_slow(struct ptt_thread *t, uint16_t id, unsigned n, const uint64_t *a)
{
    struct ptt_pool *p = ptt_pool;
    int saved_errno = errno;
    if (!p || !ptt_active) {
        t->end = 0;
        errno = saved_errno;
        return;
    }
    /* The next sub-buffer first: taking it can take microseconds (more when the pool is
     * exhausted), and meanwhile signal handlers still record in the current one, or move to a
     * sub-buffer of their own (ptt_record_nested: ours has no slot of this event in it). */
    uint32_t i = take_buffer(p);
    if (i != PTT_POOL_EMPTY) /* its first page, mapped now: a fault there would deliver the
                                pending signals inside the switch below */
        __atomic_store_n((uint64_t *)ptt_pool_data(p, i), 0, __ATOMIC_RELAXED);
    t->end = 0; /* from here a signal handler recording meanwhile drops its event instead */
    atomic_signal_fence(memory_order_seq_cst);
    if (t->desc)
        hand_off(t);
    if (i == PTT_POOL_EMPTY) {
        ptt_drop(t);
        errno = saved_errno;
        return;
    }
    install_taken(t, p, i);
    /* One instruction: a handler dropping an event meanwhile adds to what we report, or later. */
    uint64_t lost = __atomic_exchange_n(&t->lost, 0, __ATOMIC_RELAXED);
    if (lost)
        put(t, PTT_EV_TRACE_LOST, 1, &lost);
    put(t, id, n, a);
    atomic_signal_fence(memory_order_seq_cst);
    t->end = t->data + p->buf_size;
    errno = saved_errno;
}

/* An event of a signal handler that interrupted another event (t->nest == 2) does not fit. The
 * interrupted event has its slot reserved in this sub-buffer and will write it when the handler
 * returns: the sub-buffer is parked, not handed over, until then (ptt_unpark); the handler
 * goes on in a new one. Deeper nesting, or a handler arriving while the thread switches
 * sub-buffers, drops its event (counted). */
void ptt_record_nested(struct ptt_thread *t, uint16_t id, unsigned n, const uint64_t *a)
{
    struct ptt_pool *p = ptt_pool;
    /* Only a handler of the first level, once per interrupted event (the interrupted event may
     * have retried its reservation in the sub-buffer we moved to), and only when the interrupted
     * event's slot, if any, is whole in this sub-buffer: it may then write it there. */
    if (t->nest != 2 || !p || !ptt_active || !t->end || !t->desc || t->pos > t->end || t->parked) {
        ptt_drop(t);
        return;
    }
    int saved_errno = errno;
    t->end = 0; /* a handler interrupting this one drops its event */
    atomic_signal_fence(memory_order_seq_cst);
    t->parked = t->desc;
    t->parked_data = t->data;
    t->parked_len = (uint32_t)(t->pos - t->data);
    t->desc = 0;
    if (install(t, p)) { /* as it was: the interrupted event finds its sub-buffer */
        t->desc = t->parked;
        t->parked = 0;
        t->parked_len = 0;
        atomic_signal_fence(memory_order_seq_cst);
        t->end = t->data + p->buf_size;
        ptt_drop(t);
        errno = saved_errno;
        return;
    }
    /* Until the interrupted event is done, the base time is its business: write absolute. */
    uint64_t ts = ptt_now(), *w = (uint64_t *)t->pos;
    struct ptt_event h = {(uint16_t)(id | PTT_EVF_ABS | PTT_EVF_NEST), (uint16_t)(16 + 8 * n), 0};
    w[1] = ts;
    for (unsigned k = 0; k < n; k++)
        w[2 + k] = a[k];
    uint64_t hv;
    __builtin_memcpy(&hv, &h, 8);
    __atomic_store_n(w, hv, __ATOMIC_RELEASE);
    t->pos += h.size;
    atomic_signal_fence(memory_order_seq_cst);
    t->end = t->data + p->buf_size;
    errno = saved_errno;
}

/* The interrupted event is written: hand its sub-buffer over. (The thread's next event carries
 * an absolute time: its base, t->last, is in the parked sub-buffer: last_data says so.) */
void ptt_unpark(struct ptt_thread *t)
{
    t->nest++;
    atomic_signal_fence(memory_order_seq_cst);
    /* The length is read while parked is set: once it is cleared, a handler may park the
     * current sub-buffer and overwrite parked_len (it is handed over at the next event). */
    struct ptt_desc *d = t->parked;
    uint32_t len = t->parked_len;
    atomic_signal_fence(memory_order_seq_cst);
    if (d) {
        t->parked_len = 0;
        t->parked = 0;
        hand_over(d, len);
    }
    atomic_signal_fence(memory_order_seq_cst);
    t->nest--;
}

void ptt_write_async(struct ptt_thread *t, uint16_t id, unsigned n, const uint64_t *a)
{
    int old = PTHREAD_CANCEL_ASYNCHRONOUS;
    REAL(pthread_setcanceltype)(PTHREAD_CANCEL_DEFERRED, &old);
    ptt_write_now(t, id, n, a);
    REAL(pthread_setcanceltype)(old, &old); /* a pending cancellation acts here, after it */
}

void ptt_report_lost(struct ptt_thread *t)
{
    /* Only where it fits: a TRACE_LOST dropped in turn would count as a lost event of the
     * program's (the total, exact, is in the pool either way). */
    if (!t->lost || !t->desc || t->pos + 32 > t->end)
        return;
    uint64_t lost = __atomic_exchange_n(&t->lost, 0, __ATOMIC_RELAXED);
    if (lost)
        PTT_REC(TRACE_LOST, lost);
}

void ptt_discard_partial(struct ptt_thread *t)
{
    if (!t->desc || t->pos <= t->data)
        return;
    uintptr_t p = t->data, end = t->pos < t->end ? t->pos : t->end;
    while (p + 8 <= end) {
        struct ptt_event h;
        __builtin_memcpy(&h, (void *)p, 8);
        if (!h.size || p + h.size > end)
            break;
        p += h.size;
    }
    for (uintptr_t q = p; q < end; q += 8)
        *(uint64_t *)q = 0;
    t->pos = p;
}

void ptt_thread_release(struct ptt_thread *t)
{
    /* As in the slow path: a signal handler recording meanwhile is nested, so it drops its
     * event rather than switching sub-buffers under us. */
    t->nest++;
    t->end = 0; /* first: a handler can no longer park the sub-buffer we are handing over */
    atomic_signal_fence(memory_order_seq_cst);
    if (t->parked) { /* an event was cut short (cancelled) inside a handler's switch */
        hand_over(t->parked, t->parked_len);
        t->parked_len = 0;
        t->parked = 0;
    }
    if (t->desc) {
        hand_off(t);
        t->data = t->pos = 0;
    }
    atomic_signal_fence(memory_order_seq_cst);
    t->nest--;
}
