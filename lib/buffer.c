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
        if (i >= p->nbufs) /* empty, or no index of the pool's */
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

/* Whether ptt trace is gone: the pool is marked abandoned (by ptt trace at its end, or by its
 * guardian when it died), or its heartbeat has not moved for 50 ms (it ticks every few ms) and
 * its process no longer exists (the guardian was killed too). A daemon merely slow (a slow disk)
 * is waited for. Checked each time a thread takes a sub-buffer and at each round of a wait for
 * one, so a dead daemon is noticed within a sub-buffer's worth of events. */
static _Atomic uint64_t hb_value, hb_since;

static int daemon_gone(struct ptt_pool *p, uint64_t now)
{
    if (atomic_load_explicit(&p->abandoned, memory_order_relaxed))
        return 1;
    uint64_t hb = atomic_load_explicit(&p->heartbeat, memory_order_relaxed);
    if (hb != atomic_load_explicit(&hb_value, memory_order_relaxed) ||
        !atomic_load_explicit(&hb_since, memory_order_relaxed)) {
        atomic_store_explicit(&hb_value, hb, memory_order_relaxed);
        atomic_store_explicit(&hb_since, now, memory_order_relaxed);
        return 0;
    }
    if (now - atomic_load_explicit(&hb_since, memory_order_relaxed) < 50000000u)
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
    hand_over(t->desc, (uint32_t)(ptt_pos(t) - t->data));
    t->desc = 0;
}

void ptt_drop(struct ptt_thread *t)
{
    t->lost++;
    atomic_fetch_add_explicit(&ptt_pool->lost, 1, memory_order_relaxed);
}

/* Ready sub-buffer d (taken with take_buffer) for the thread, before it becomes the thread's:
 * all but its number, which orders it among the thread's sub-buffers, and which a signal handler
 * could take meanwhile. */
static void prepare(struct ptt_thread *t, struct ptt_pool *p, struct ptt_desc *d)
{
    if (!t->serial) {
        t->serial = atomic_fetch_add(&p->next_serial, 1) + 1;
        t->tid = (int32_t)syscall(SYS_gettid);
    }
    d->pid = ptt_pid;
    d->tid = t->tid;
    d->serial = t->serial;
    d->base_ts = ptt_now();
    atomic_store_explicit(&d->state, PTT_BUF_OWNED, memory_order_release);
}

/* Make prepared sub-buffer i the thread's: its first used bytes are written already, the last
 * event there stamped last (or its base time). */
static void switch_to(struct ptt_thread *t, struct ptt_pool *p, uint32_t i, uintptr_t used,
                      uint64_t last)
{
    struct ptt_desc *d = ptt_pool_desc(p, i);
    d->seq = t->seq++;
    t->last = last;
    t->desc = d;
    t->data = t->last_data = (uintptr_t)ptt_pool_data(p, i);
    t->pos = ((t->pos & PTT_POS_TAG) + PTT_POS_ADDR + 1) | (t->data + used); /* a new tag */
}

/* Make sub-buffer i (taken with take_buffer) the thread's. */
static void install_taken(struct ptt_thread *t, struct ptt_pool *p, uint32_t i)
{
    struct ptt_desc *d = ptt_pool_desc(p, i);
    prepare(t, p, d);
    switch_to(t, p, i, 0, d->base_ts);
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

/* {pos, end} = {npos, nend} if they are {pos, end}, in one instruction (a signal handler sees
 * the one pair or the other). */
static int swap_pos_end(struct ptt_thread *t, uintptr_t pos, uintptr_t end, uintptr_t npos,
                        uintptr_t nend)
{
#if defined(__x86_64__)
    unsigned char ok;
    __asm__ volatile("lock cmpxchg16b (%[at])\n\tsete %[ok]"
                     : [ok] "=q"(ok), "+a"(pos), "+d"(end)
                     : [at] "r"(&t->pos), "b"(npos), "c"(nend)
                     : "memory", "cc");
    return ok;
#else
    /* Two stores: a handler between them (pos still in the old sub-buffer, end 0) drops its
     * event. */
    if (t->pos != pos || t->end != end)
        return 0;
    t->end = nend;
    atomic_signal_fence(memory_order_seq_cst);
    t->pos = npos;
    return 1;
#endif
}

/* Called with t->nest == 1 when the event whose slot was reserved at w (tagged) does not fit:
 * switch sub-buffers. Returns 1 when the event is to be reserved again, in the new one; 0 when
 * it is dropped (counted) or not recorded. */
int ptt_record_slow(struct ptt_thread *t, uintptr_t w, uintptr_t size)
{
    struct ptt_pool *p = ptt_pool;
    int saved_errno = errno;
    if (!p || !ptt_active) {
        t->end = 0;
        atomic_signal_fence(memory_order_seq_cst);
        if (t->pos == w + size)
            t->pos = w; /* undo */
        errno = saved_errno;
        return 0;
    }
    /* The next sub-buffer ready first: taking it can take microseconds (more when the pool is
     * exhausted), and meanwhile signal handlers still record: in a sub-buffer of their own, this
     * one handed over without our slot (ptt_record_nested). Only the few stores of the switch
     * itself are closed to them. */
    uint32_t i = take_buffer(p);
    uintptr_t used = 0;
    uint64_t last = 0;
    if (i != PTT_POOL_EMPTY) {
        /* Written before it is ours, where no handler goes: the events dropped so far, first.
         * (Also maps its first page now: a fault inside the switch below would deliver the
         * pending signals there.) */
        struct ptt_desc *d = ptt_pool_desc(p, i);
        uint64_t *w0 = (uint64_t *)ptt_pool_data(p, i);
        prepare(t, p, d);
        last = d->base_ts;
        uint64_t lost = __atomic_exchange_n(&t->lost, 0, __ATOMIC_RELAXED);
        if (lost) {
            uint64_t ts = ptt_now(), dts = ts - last;
            struct ptt_event h = {PTT_EV_TRACE_LOST, 16, (uint32_t)dts};
            if (dts > UINT32_MAX) {
                h = (struct ptt_event){PTT_EV_TRACE_LOST | PTT_EVF_ABS, 24, 0};
                w0[1] = ts;
                w0[2] = lost;
            } else {
                w0[1] = lost;
            }
            uint64_t hv;
            __builtin_memcpy(&hv, &h, 8);
            __atomic_store_n(w0, hv, __ATOMIC_RELEASE);
            used = h.size;
            last = ts;
        } else {
            __atomic_store_n(w0, 0, __ATOMIC_RELAXED);
        }
    }
    if (i == PTT_POOL_EMPTY) {
        t->end = 0; /* a signal handler recording meanwhile drops its event (counted) */
        atomic_signal_fence(memory_order_seq_cst);
        struct ptt_desc *old = t->desc;
        uint32_t len = (uint32_t)(ptt_pos(t) - t->data);
        if (t->pos == w + size) { /* nobody moved us: our slot is the last reservation */
            len = (uint32_t)((w & PTT_POS_ADDR) - t->data);
            t->pos = w;
        }
        t->desc = 0;
        if (old)
            hand_over(old, len);
        ptt_drop(t);
        errno = saved_errno;
        return 0;
    }
    /* The switch. First, in one instruction, pos to the new sub-buffer and end to 0: a signal
     * handler then records after pos (ptt_record_nested) while the rest changes. Compared
     * with the pos and end we read: a handler that moved us since (the tag of pos changed)
     * sends us round again. */
    uintptr_t ndata = (uintptr_t)ptt_pool_data(p, i), cur, odata;
    struct ptt_desc *old, *d = ptt_pool_desc(p, i);
    t->switching_desc = d;
    t->switching_moves = 0;
    t->switching = ndata;
    atomic_signal_fence(memory_order_seq_cst);
    for (;;) {
        cur = t->pos;
        uintptr_t cend = t->end;
        old = t->desc;
        odata = t->data;
        /* Numbered again at each round: after any sub-buffer a handler took meanwhile. */
        d->seq = __atomic_fetch_add(&t->seq, 1, __ATOMIC_RELAXED);
        atomic_signal_fence(memory_order_seq_cst);
        uintptr_t npos = ((cur & PTT_POS_TAG) + PTT_POS_ADDR + 1) | (ndata + used);
        if (swap_pos_end(t, cur, cend, npos, 0))
            break;
    }
    /* Nobody moved us: our slot, the last reservation, is no part of the old sub-buffer.
     * Otherwise a handler handed that one over without it, and its own holds whole events. */
    uint32_t len = (uint32_t)(((cur == w + size ? w : cur) & PTT_POS_ADDR) - odata);
    /* Then the rest, and end last, in one instruction with pos as it is then: a handler that
     * recorded or moved on meanwhile sends us round again. */
    for (;;) {
        uintptr_t now = t->pos, sw = t->switching;
        t->desc = t->switching_desc;
        t->data = sw;
        /* The time base too, before end: once end is set, a handler's own switch sets it. Of the
         * events we wrote first (a handler's do not move it); in a sub-buffer a handler moved
         * us to, none: the next event carries an absolute time. */
        t->last = last;
        t->last_data = t->switching_moves ? 0 : ndata; /* not by address: it may be ours again */
        atomic_signal_fence(memory_order_seq_cst);
        if (swap_pos_end(t, now, 0, now, sw + p->buf_size))
            break;
    }
    t->switching = 0;
    if (old) /* no handler reaches it now */
        hand_over(old, len);
    errno = saved_errno;
    return 1;
}

/* A signal handler moved the thread to another sub-buffer around the reservation of an event,
 * at w (tagged): where is its slot? */
int ptt_moved(struct ptt_thread *t, uintptr_t w, uintptr_t size)
{
    uintptr_t p = w & PTT_POS_ADDR, end = t->end;
    atomic_signal_fence(memory_order_seq_cst); /* end, then the tag: both of the same one */
    if (!((t->pos ^ w) & PTT_POS_TAG)) {
        /* Moved before the reservation: the slot is in the current sub-buffer, where our time
         * delta means nothing, and handlers may have written after it: fill it with padding,
         * and reserve again. Past its end, the event does not fit: switch. */
        if (p + size > end)
            return PTT_SLOT_PAST_END;
        struct ptt_event pad = {PTT_EV_TRACE_PAD, (uint16_t)size, 0};
        uint64_t pv;
        __builtin_memcpy(&pv, &pad, 8);
        __atomic_store_n((uint64_t *)p, pv, __ATOMIC_RELEASE);
        return PTT_SLOT_AGAIN;
    }
    /* Moved after it: the slot is in the parked sub-buffer (reserved under its tag), counted in
     * its length, and the event's data and end agree (both were read before); or in a
     * sub-buffer handed over without it (the slot was past the end: ptt_record_nested), which
     * may be in use again, parked even: the tag tells. */
    if ((w & PTT_POS_TAG) == t->parked_tag && p - t->parked_data < t->parked_len)
        return PTT_SLOT_PARKED;
    return PTT_SLOT_AGAIN;
}

/* Where the whole events from data end, before limit: at a slot reserved and not yet written
 * (its header is still zero, as the daemon leaves a sub-buffer it frees), or at limit. */
static uintptr_t whole_end(uintptr_t data, uintptr_t limit)
{
    uintptr_t q = data;
    while (q + 8 <= limit) {
        uint64_t v = __atomic_load_n((uint64_t *)q, __ATOMIC_RELAXED);
        struct ptt_event h;
        __builtin_memcpy(&h, &v, 8);
        if (!v || h.size < 8 || h.size % 8 || q + h.size > limit)
            break;
        q += h.size;
    }
    return q;
}

/* An event of a signal handler that interrupted another event (t->nest == 2) does not fit. The
 * interrupted event has its slot reserved in this sub-buffer and will write it when the handler
 * returns: the sub-buffer is parked, not handed over, until then (ptt_unpark); the handler
 * goes on in a new one. When the handler fills that one too, it holds the handler's whole
 * events only, unless the interrupted event reserved a slot there after an earlier handler: it
 * is then handed over at once (the reader orders a thread's sub-buffers by number), and the
 * handler goes on in a third. Deeper nesting, a slot of the interrupted event in the full
 * sub-buffer, or a handler arriving while the thread switches sub-buffers, drops its event
 * (counted). */
void ptt_record_nested(struct ptt_thread *t, uint16_t id, unsigned n, const uint64_t *a)
{
    struct ptt_pool *p = ptt_pool;
    uintptr_t size = 16 + 8 * (uintptr_t)n, at = ptt_pos(t), sw = t->switching;
    if (t->nest == 2 && p && !t->end && sw && at - sw <= p->buf_size) {
        /* The interrupted event is switching sub-buffers, and pos is in the new one already:
         * after it, whatever the rest of the switch has done; when it is full, in another,
         * which the switch adopts. */
        if (at + size > sw + p->buf_size) {
            int saved_errno = errno;
            uint32_t i = take_buffer(p);
            errno = saved_errno;
            if (i == PTT_POOL_EMPTY) {
                ptt_drop(t);
                return;
            }
            struct ptt_desc *d = ptt_pool_desc(p, i);
            prepare(t, p, d);
            d->seq = __atomic_fetch_add(&t->seq, 1, __ATOMIC_RELAXED);
            hand_over(t->switching_desc, (uint32_t)(at - sw));
            t->switching_desc = d;
            t->switching_moves++;
            t->switching = at = (uintptr_t)ptt_pool_data(p, i);
            t->pos = ((t->pos & PTT_POS_TAG) + PTT_POS_ADDR + 1) | at;
        }
        uint64_t *w = (uint64_t *)at;
        struct ptt_event h = {(uint16_t)(id | PTT_EVF_ABS | PTT_EVF_NEST), (uint16_t)size, 0};
        w[1] = ptt_now();
        for (unsigned k = 0; k < n; k++)
            w[2 + k] = a[k];
        uint64_t hv;
        __builtin_memcpy(&hv, &h, 8);
        __atomic_store_n(w, hv, __ATOMIC_RELEASE);
        t->pos += size;
        return;
    }
    /* Only a handler of the first level. */
    if (t->nest != 2 || !p || !ptt_active || !t->end || !t->desc) {
        ptt_drop(t);
        return;
    }
    uintptr_t pos = ptt_pos(t), len = 0;
    int park = 0;
    if (pos > t->end) {
        /* The interrupted event reserved past the end and has not switched yet: its slot, never
         * to be written, is no part of this sub-buffer (the event learns so from the tag of
         * pos, ptt_moved); the whole events before it are. */
        len = whole_end(t->data, t->end) - t->data;
    } else if (t->parked) {
        /* Filled again while the interrupted event is still parked: this one holds the
         * handlers' whole events only, unless the interrupted event reserved a slot here after
         * an earlier handler returned. */
        if (t->desc == t->parked || whole_end(t->data, pos) != pos) {
            ptt_drop(t);
            return;
        }
        len = pos - t->data;
    } else {
        park = 1; /* the interrupted event's slot, if any, is whole in here */
    }
    int saved_errno = errno;
    t->end = 0; /* a handler interrupting this one drops its event */
    atomic_signal_fence(memory_order_seq_cst);
    if (!park) {
        uint32_t i = take_buffer(p);
        if (i == PTT_POOL_EMPTY) {
            atomic_signal_fence(memory_order_seq_cst);
            t->end = t->data + p->buf_size;
            ptt_drop(t);
            errno = saved_errno;
            return;
        }
        hand_over(t->desc, (uint32_t)len);
        t->desc = 0;
        install_taken(t, p, i);
    } else {
        t->parked = t->desc;
        t->parked_data = t->data;
        t->parked_tag = t->pos & PTT_POS_TAG;
        t->parked_len = (uint32_t)(pos - t->data);
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
    }
    /* Until the interrupted event is done, the base time is its business: write absolute. */
    uint64_t ts = ptt_now(), *w = (uint64_t *)ptt_pos(t);
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
    if (!t->lost || !t->desc || ptt_pos(t) + 32 > t->end)
        return;
    uint64_t lost = __atomic_exchange_n(&t->lost, 0, __ATOMIC_RELAXED);
    if (lost)
        PTT_REC(TRACE_LOST, lost);
}

void ptt_discard_partial(struct ptt_thread *t)
{
    uintptr_t pos = ptt_pos(t);
    if (!t->desc || pos <= t->data)
        return;
    uintptr_t p = t->data, end = pos < t->end ? pos : t->end;
    while (p + 8 <= end) {
        struct ptt_event h;
        __builtin_memcpy(&h, (void *)p, 8);
        if (!h.size || p + h.size > end)
            break;
        p += h.size;
    }
    for (uintptr_t q = p; q < end; q += 8)
        *(uint64_t *)q = 0;
    t->pos = (t->pos & PTT_POS_TAG) | p;
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
