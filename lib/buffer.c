/* Slow path of recording: taking and handing off sub-buffers, back-pressure and losses.
 * Runs once per sub-buffer (thousands of events), never while holding anything the
 * application could hold, and calls no cancellation point. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
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

/* d more sub-buffers held by the writers (struct ptt_pool: owned), and pressure set or cleared
 * at its edges. Two writers crossing them at once may leave it wrong until the next count. Never
 * with --overflow=discard: a thread that handed its sub-buffer over as it blocked, and then had
 * its next events dropped, would seem to the hang watch to be blocked still. */
static void count_owned(struct ptt_pool *p, int32_t d)
{
    int32_t n = atomic_fetch_add_explicit(&p->owned, d, memory_order_relaxed) + d;
    if (p->overflow != PTT_OVERFLOW_BLOCK)
        return;
    int on = atomic_load_explicit(&p->pressure, memory_order_relaxed) != 0;
    if (on ? n < (int32_t)PTT_PRESSURE_OFF(p->nbufs) : n >= (int32_t)PTT_PRESSURE_ON(p->nbufs))
        atomic_store_explicit(&p->pressure, !on, memory_order_relaxed);
}

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
                                                  memory_order_acquire)) {
            count_owned(p, 1);
            return i;
        }
    }
}

/* The bytes of a sub-buffer a writer writes: all but the room left for the IN of a call it may
 * die in (common/pool.h), which the drain then writes. */
static uintptr_t room(const struct ptt_pool *p)
{
    return p->buf_size - PTT_CALL_ROOM;
}

/* The call slots' free list (common/pool.h): pushed by the threads that end and by the drain,
 * popped by the threads at their first sub-buffer; tagged as free_head. */
static uint32_t slot_pop(struct ptt_pool *p)
{
    uint64_t h = atomic_load_explicit(&p->slot_head, memory_order_acquire);
    for (;;) {
        uint32_t i = (uint32_t)h;
        if (i >= p->nbufs)
            return PTT_POOL_EMPTY;
        uint32_t next = __atomic_load_n(&ptt_pool_desc(p, i)->call.next, __ATOMIC_RELAXED);
        uint64_t nh = (((h >> 32) + 1) << 32) | next;
        if (atomic_compare_exchange_weak_explicit(&p->slot_head, &h, nh, memory_order_acq_rel,
                                                  memory_order_acquire))
            return i;
    }
}

static void slot_push(struct ptt_pool *p, uint32_t i)
{
    ptt_slot_push(&p->slot_head, &ptt_pool_desc(p, i)->call, i);
}

static uint32_t slot_index(struct ptt_pool *p, const struct ptt_call *c)
{
    return (uint32_t)(((const char *)c - (const char *)ptt_pool_desc(p, 0)) /
                      (ptrdiff_t)sizeof(struct ptt_desc));
}

/* The thread's call slot, taken once: at its first sub-buffer (a thread that records anything
 * will likely call), so that each sub-buffer it writes names it from the start. One instruction
 * makes it the thread's: a handler that took one meanwhile keeps its own, ours goes back. None
 * left: the thread's calls write their IN at once. */
static void take_slot(struct ptt_thread *t, struct ptt_pool *p)
{
    uint32_t i = slot_pop(p);
    if (i == PTT_POOL_EMPTY)
        return;
    struct ptt_call *c = &ptt_pool_desc(p, i)->call, *none = NULL;
    c->state = PTT_CALL_FREE;
    atomic_store_explicit(&c->owner, t->serial, memory_order_relaxed);
    if (!__atomic_compare_exchange_n(&t->call, &none, c, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
        atomic_store_explicit(&c->owner, 0, memory_order_relaxed);
        slot_push(p, i);
    }
}

/* A sub-buffer the thread takes after this (a signal handler's event) names the slot still, for
 * a thread no longer its owner: the drain leaves it alone (died_in_call). */
void ptt_call_give(struct ptt_thread *t)
{
    struct ptt_pool *p = ptt_pool;
    struct ptt_call *c = t->call;
    uint32_t mine = t->serial;
    t->call = NULL;
    if (p && c &&
        atomic_compare_exchange_strong_explicit(&c->owner, &mine, 0, memory_order_relaxed,
                                                memory_order_relaxed))
        slot_push(p, slot_index(p, c));
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Sleep until sub-buffers are freed after `seen` was read of freed (ptt_pool_freed wakes as
 * many waiters as it freed, ptt_pool_abandon all), or for WAIT_MS at most, to look whether ptt
 * trace is still there should it and its guardian have been killed. Woken only when there is
 * something to take: thousands of threads polling took the CPU the drain needed to free them
 * any (10,000 threads leaving a barrier at once, with 2,048 sub-buffers, waited 10 s). Through
 * syscall(), which is no cancellation point. */
#define WAIT_MS 100
static void wait_freed(struct ptt_pool *p, uint32_t seen)
{
    struct timespec d = {0, WAIT_MS * 1000000};
    atomic_fetch_add_explicit(&p->sleepers, 1, memory_order_seq_cst);
    syscall(SYS_futex, &p->freed, FUTEX_WAIT, seen, &d, NULL, 0);
    atomic_fetch_sub_explicit(&p->sleepers, 1, memory_order_relaxed);
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

/* No free sub-buffer while the guardian still reserves the pool's rest: wake it, once until it
 * looks (it may be sleeping up to 16 ms, a second after an idle spell; a burst of new threads,
 * each taking a sub-buffer, would otherwise wait that long). The pid comes from a pool of the
 * user's: a signal the thread could send anyway. */
static int wake_reserver(struct ptt_pool *p)
{
    int32_t pid = atomic_load_explicit(&p->reserver_pid, memory_order_relaxed);
    if (pid > 0 && !atomic_exchange_explicit(&p->reserve_wanted, 1, memory_order_relaxed))
        kill(pid, SIGURG);
    return pid > 0;
}

/* No free sub-buffer: have the drain take its turn now rather than after its sleep (up to 5 ms
 * while busy), once until it does. The pid comes from the pool, as in hand_over. */
static void wake_drain(struct ptt_pool *p)
{
    if (!atomic_exchange_explicit(&p->drain_wanted, 1, memory_order_relaxed))
        kill(p->daemon_pid, SIGURG);
}

/* Take a free sub-buffer, waiting for the daemon when the pool is exhausted (the default), or
 * giving up at once with --overflow=discard. */
static uint32_t take_buffer(struct ptt_pool *p, uint64_t *waited)
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
    int growing = wake_reserver(p);
    wake_drain(p);
    for (;;) {
        uint32_t seen = atomic_load_explicit(&p->freed, memory_order_acquire);
        if ((i = pool_pop(p)) != PTT_POOL_EMPTY)
            break;
        wait_freed(p, seen);
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
    uint64_t ns = mono_ns() - t0;
    atomic_fetch_add_explicit(&p->wait_ns, ns, memory_order_relaxed);
    atomic_fetch_add_explicit(&p->waits, 1, memory_order_relaxed);
    if (growing)
        atomic_fetch_add_explicit(&p->reserve_waits, 1, memory_order_relaxed);
    if (waited)
        *waited = ns;
    return i;
}

/* What a sub-buffer is handed over with besides its length: its counts (struct ptt_desc). */
struct counts {
    uint32_t nev, flags;
    uint64_t marked;
};

/* The counts of the thread's sub-buffer, which it leaves. */
static struct counts counts_of(const struct ptt_thread *t)
{
    return (struct counts){
        t->nev, (t->named ? PTT_DESC_NAMED : 0) | (t->walk || t->opening ? PTT_DESC_WALK : 0),
        t->marked};
}

/* A sub-buffer the thread moves to, whose first records (nev events, TRACE_LOST's count marked)
 * are written. walk: its counts will be wrong (see record_nested). */
static void counts_start(struct ptt_thread *t, uint32_t nev, uint64_t marked, int walk)
{
    t->nev = nev;
    t->marked = marked;
    t->named = 0;
    t->walk = (uint8_t)walk;
}

static const struct counts unknown = {0, PTT_DESC_WALK, 0};

void ptt_count_rare(struct ptt_thread *t, uint16_t id, uint64_t arg)
{
    if (id == PTT_EV_TRACE_LOST)
        __atomic_fetch_add(&t->marked, arg, __ATOMIC_RELAXED); /* as ptt_count */
    else
        t->named = 1;
}

/* Set sub-buffer d's ready bit (common/pool.h), where the daemon left room for the bits. */
static void set_ready(struct ptt_pool *p, struct ptt_desc *d)
{
    uint64_t i = (uint64_t)(d - ptt_pool_desc(p, 0));
    if (i >= p->nbufs ||
        p->desc_offset + (uint64_t)p->nbufs * sizeof *d + PTT_POOL_READY_BYTES(p->nbufs) >
            p->data_offset)
        return; /* not ours to touch: the daemon's periodic full scan finds it READY */
    atomic_fetch_or_explicit(&ptt_pool_ready(p)[i / 64], 1ull << (i % 64), memory_order_release);
}

static void hand_over(struct ptt_desc *d, uint32_t len, struct counts c)
{
    d->nevents = c.nev;
    d->marked = c.marked;
    d->flags = c.flags;
    atomic_store_explicit(&d->committed, len, memory_order_release);
    atomic_store_explicit(&d->state, PTT_BUF_READY, memory_order_release);
    struct ptt_pool *p = ptt_pool;
    if (p) {
        set_ready(p, d);
        count_owned(p, -1);
    }
    /* The state and its bit, then idle (the daemon sets idle, then looks for READY ones): one
     * of the two sees the other's store. One signal per idle spell, from the first to clear
     * it. */
    atomic_thread_fence(memory_order_seq_cst);
    if (p && atomic_load_explicit(&p->idle, memory_order_relaxed) &&
        atomic_exchange_explicit(&p->idle, 0, memory_order_relaxed))
        kill(p->daemon_pid, SIGURG);
}

static void hand_off(struct ptt_thread *t, uint32_t also)
{
    struct counts c = counts_of(t);
    c.flags |= also;
    hand_over(t->desc, (uint32_t)(ptt_pos(t) - t->data), c);
    t->desc = 0;
}

/* n events dropped (a call's record holds two): counted for their thread (TRACE_LOST) and in the
 * pool, by reason. take_buffer failed for one of three: ptt trace is gone (abandon),
 * --overflow=discard, or starvation. */
void ptt_drop(struct ptt_thread *t, unsigned why, unsigned n)
{
    struct ptt_pool *p = ptt_pool;
    t->lost += n;
    if (!p)
        return;
    if (why == PTT_LOST_NWHY)
        why = !ptt_active                           ? PTT_LOST_DAEMON
              : p->overflow == PTT_OVERFLOW_DISCARD ? PTT_LOST_DISCARD
                                                    : PTT_LOST_STARVED;
    atomic_fetch_add_explicit(&p->lost_why[why], n, memory_order_relaxed);
    atomic_fetch_add_explicit(&p->lost, n, memory_order_relaxed);
}

#if defined(__x86_64__)
/* Set the thread's pos and end (side by side, 16-byte aligned: record.h) to pos1 and end1 if they
 * still hold pos0 and end0, in one instruction: a signal handler on the thread sees both changed or
 * neither. Another thread never writes them. */
#define PTT_SWAP_POS_END 1
static int swap_pos_end(struct ptt_thread *t, uintptr_t pos0, uintptr_t end0, uintptr_t pos1,
                        uintptr_t end1)
{
    uint8_t ok;
    __asm__ volatile("lock cmpxchg16b %1\n\tsete %0"
                     : "=q"(ok), "+m"(*(uintptr_t(*)[2]) & t->pos), "+a"(pos0), "+d"(end0)
                     : "b"(pos1), "c"(end1)
                     : "memory", "cc");
    return ok;
}
#endif

/* Every signal of the thread blocked, or the mask back as it was: one system call each,
 * async-signal-safe (the kernel's 64-bit mask; it never blocks SIGKILL and SIGSTOP). */
static uint64_t block_signals(void)
{
    uint64_t all = ~0ull, old = 0;
    syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, &old, sizeof all);
    return old;
}

static void restore_signals(uint64_t old)
{
    syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, sizeof old);
}

/* Give the thread its tid and number, at its first sub-buffer. This runs with signals open (the
 * slow path's prepare), and a handler recording here takes its own first sub-buffer: it must find
 * the thread either unnumbered, and number it whole itself, or numbered with its tid set. So the
 * tid first (the same whoever asks), then the number, set with one instruction only if none was
 * set meanwhile: the thread keeps the first one set (the other is unused, none is shared). */
static void identify(struct ptt_thread *t, struct ptt_pool *p)
{
    t->tid = ptt_gettid();
    atomic_signal_fence(memory_order_seq_cst);
    uint32_t serial = atomic_fetch_add(&p->next_serial, 1) + 1, none = 0;
    __atomic_compare_exchange_n(&t->serial, &none, serial, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

/* Ready sub-buffer d (taken with take_buffer) for the thread, before it becomes the thread's:
 * all but its number, which orders it among the thread's sub-buffers, and which a signal handler
 * could take meanwhile. */
static void prepare(struct ptt_thread *t, struct ptt_pool *p, struct ptt_desc *d)
{
    if (!__atomic_load_n(&t->serial, __ATOMIC_RELAXED))
        identify(t, p);
    atomic_signal_fence(memory_order_seq_cst); /* the serial, then the tid: see identify */
    if (!t->call)
        take_slot(t, p);
    d->slot = t->call ? slot_index(p, t->call) + 1 : 0;
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

/* A meta record of one argument at w, its time stamp ts counted from *last (which becomes ts):
 * the bytes written. Its length byte last, released: a reader of the sub-buffer sees it whole. */
static uintptr_t put_meta(uint8_t *w, uint16_t id, uint64_t arg, uint64_t ts, uint64_t *last)
{
    uint8_t buf[32], *body = buf + 3, *q = body;
    int abs = (int64_t)(ts - *last) < 0;
    q = ptt_put_varint(q, (uint64_t)id << 2 | (abs ? PTT_CODEC_ABS : 0));
    q = ptt_put_varint(q, abs ? ts : ts - *last);
    q = ptt_put_lit(q, arg);
    uintptr_t size;
    const uint8_t *rec = ptt_codec_close(body, q, &size);
    ptt_copy_record(w, rec, size);
    *last = ts;
    return size;
}

/* Ready taken sub-buffer i for the thread, where no handler goes: the events it dropped so far
 * first (TRACE_LOST), then the time it waited for the sub-buffer (TRACE_BUFFER_WAIT: only when
 * the pool was exhausted and it blocked, never on the fast path). Returns the bytes written, and
 * the time stamp the next event counts from in *last, their counts in *c. (Also maps its first
 * page now: a fault inside the switch would deliver the pending signals there.) */
static uintptr_t open_buffer(struct ptt_thread *t, struct ptt_pool *p, uint32_t i, uint64_t *last,
                             uint64_t waited, struct counts *c)
{
    struct ptt_desc *d = ptt_pool_desc(p, i);
    uint8_t *w0 = ptt_pool_data(p, i);
    prepare(t, p, d);
    *last = d->base_ts;
    uint64_t lost = __atomic_exchange_n(&t->lost, 0, __ATOMIC_RELAXED);
    *c = (struct counts){(lost != 0) + (waited != 0), 0, lost};
    if (!lost && !waited) {
        __atomic_store_n(w0, 0, __ATOMIC_RELAXED);
        return 0;
    }
    uint64_t ts = ptt_now();
    uintptr_t used = 0;
    if (lost)
        used += put_meta(w0, PTT_EV_TRACE_LOST, lost, ts, last);
    if (waited)
        used += put_meta(w0 + used, PTT_EV_TRACE_BUFFER_WAIT, waited, ts, last);
    return used;
}

/* The number of the sub-buffer whose data starts at data. */
static uint32_t buffer_index(struct ptt_pool *p, uintptr_t data)
{
    return (uint32_t)((data - (uintptr_t)ptt_pool_data(p, 0)) / p->buf_size);
}

/* The thread's first sub-buffer (it has none: end is 0), prepared sub-buffer i, made its own with
 * signals open, once per thread: what handlers do not read first (record_nested finds the
 * sub-buffer from end, not from desc and data), then pos and end in one instruction, only if no
 * handler recorded meanwhile. 0: one did, and took a sub-buffer; the switch is then made the usual
 * way (its number, claimed here into *claimed, is kept there only if no handler took one since:
 * see number). Handlers do read the counts and the next number: those are claimed with one
 * instruction, or marked (opening). */
static int install_first(struct ptt_thread *t, struct ptt_pool *p, uint32_t i, uintptr_t used,
                         uint64_t last, const struct counts *c, uint32_t *claimed)
{
#ifdef PTT_SWAP_POS_END
    uintptr_t cur = t->pos;
    atomic_signal_fence(memory_order_seq_cst);
    if (t->end || t->parked)
        return 0;
    /* From here a handler that takes a sub-buffer (and fills others after it) may see its counts
     * replaced by ours below, the swap failing only later: each one handed over meanwhile is
     * walked. Set before our counts, cleared after the swap, or by resync when it fails. */
    t->opening = 1;
    atomic_signal_fence(memory_order_seq_cst);
    struct ptt_desc *d = ptt_pool_desc(p, i);
    uintptr_t data = (uintptr_t)ptt_pool_data(p, i);
    t->desc = d;
    t->data = t->last_data = data;
    t->last = last;
    /* before the swap: a handler recording after it counts into the new sub-buffer (one that
     * recorded before takes a sub-buffer of its own, starts its counts, and the swap fails) */
    counts_start(t, c->nev, c->marked, 0);
    /* The number last, in one instruction: a handler numbering its sub-buffer (switch_to) does so
     * before or after, never with the same number, which a load and a store apart would allow. A
     * handler between it and the swap leaves it unused (see number). */
    uint32_t seq = __atomic_fetch_add(&t->seq, 1, __ATOMIC_RELAXED);
    *claimed = seq;
    d->seq = seq;
    atomic_signal_fence(memory_order_seq_cst);
    if (!swap_pos_end(t, cur, 0, ((cur & PTT_POS_TAG) + PTT_POS_ADDR + 1) | (data + used),
                      data + room(p)))
        return 0;
    atomic_signal_fence(memory_order_seq_cst);
    t->opening = 0; /* the counts are the new sub-buffer's, and no handler took another */
    return 1;
#else
    (void)t, (void)p, (void)i, (void)used, (void)last, (void)c, (void)claimed;
    return 0;
#endif
}

/* The number of the sub-buffer the thread switches to (signals blocked): the one install_first
 * claimed if no handler took one since (theirs were before it: it follows them), else the next.
 * (A claimed number a handler's followed is left unused: the sub-buffer comes after theirs.) */
static uint32_t number(struct ptt_thread *t, uint32_t claimed)
{
    if (claimed != PTT_SEQ_UNSET && t->seq == claimed + 1)
        return claimed;
    return t->seq++;
}

/* After install_first lost to a handler, which may have run before its stores to desc and data:
 * the sub-buffer the thread holds is the one its end says, none while end is 0. (Signals
 * blocked.) */
static void resync(struct ptt_thread *t, struct ptt_pool *p)
{
    t->opening = 0;
    if (!t->end) {
        t->desc = 0;
        return;
    }
    uint32_t i = buffer_index(p, t->end - room(p));
    t->desc = ptt_pool_desc(p, i);
    t->data = (uintptr_t)ptt_pool_data(p, i);
    t->walk = 1; /* install_first's counts_start may have replaced the handler's counts */
}

/* Called with t->nest == 1 when the record (of events events) whose slot was reserved at w
 * (tagged) does not fit, or when the thread has no sub-buffer (size 0, nothing reserved, w the
 * pos read): switch sub-buffers. Returns 1 when it is to be reserved again, in the new one; 0
 * when it is dropped (counted) or not recorded. */
int ptt_record_slow(struct ptt_thread *t, uintptr_t w, uintptr_t size, unsigned events)
{
    struct ptt_pool *p = ptt_pool;
    int saved_errno = errno;
    if (!p || !ptt_active) {
        uint64_t mask = block_signals();
        t->end = 0;
        if (t->pos == w + size)
            t->pos = w; /* undo */
        restore_signals(mask);
        errno = saved_errno;
        return 0;
    }
    /* The next sub-buffer ready first, signals open: taking it can take microseconds (more when
     * the pool is exhausted, the time ptt trace takes to free one). A handler recording meanwhile
     * finds our slot past the end: it hands this sub-buffer over without it, and moves on to
     * another (record_nested). */
    uint64_t waited = 0;
    uint32_t i = take_buffer(p, &waited);
    uintptr_t used = 0;
    uint64_t last = 0;
    struct counts c = {0, 0, 0};
    if (i != PTT_POOL_EMPTY)
        used = open_buffer(t, p, i, &last, waited, &c);
    int first = i != PTT_POOL_EMPTY && !t->end;
    uint32_t claimed = PTT_SEQ_UNSET;
    if (first && install_first(t, p, i, used, last, &c, &claimed)) {
        errno = saved_errno;
        return 1;
    }
    /* The switch itself, signals blocked (once per sub-buffer): no handler sees it half done. */
    uint64_t mask = block_signals();
    if (first) /* a handler took a sub-buffer during install_first: see there */
        resync(t, p);
    else if (!t->end) /* none taken (i is empty): desc may be the one a release_open under us */
        t->desc = 0;  /* hands over itself, after its swap and before forgetting it */
    uintptr_t cur = t->pos;
    struct ptt_desc *old = t->desc;
    /* Nobody moved us: our slot, the last reservation, is no part of the old sub-buffer.
     * Otherwise a handler handed that one over without it, and the one it moved to holds its
     * whole events. */
    uintptr_t to = cur == w + size ? w : cur;
    uint32_t len = old ? (uint32_t)((to & PTT_POS_ADDR) - t->data) : 0;
    struct counts oc = counts_of(t); /* our slot was not counted: it was not written */
    if (i == PTT_POOL_EMPTY) {
        t->end = 0;
        t->pos = to;
        t->desc = 0;
        ptt_drop(t, PTT_LOST_NWHY, events);
    } else {
        struct ptt_desc *d = ptt_pool_desc(p, i);
        d->seq = number(t, claimed);
        t->desc = d;
        t->data = t->last_data = (uintptr_t)ptt_pool_data(p, i);
        t->last = last;
        t->pos = ((cur & PTT_POS_TAG) + PTT_POS_ADDR + 1) | (t->data + used); /* a new tag */
        t->end = t->data + room(p);
        counts_start(t, c.nev, c.marked, t->parked != 0); /* see record_nested */
    }
    restore_signals(mask);
    if (old) /* no handler reaches it now */
        hand_over(old, len, oc);
    errno = saved_errno;
    return i != PTT_POOL_EMPTY;
}

/* A signal handler moved the thread to another sub-buffer before the reservation of an event,
 * at w (tagged), and after it read data and end: its slot is not where they say, and its time
 * delta means nothing there. Fill the slot with padding and reserve again; past the end of the
 * current sub-buffer, the event does not fit: switch. Handlers are done by now, and hand over no
 * sub-buffer with this slot in it unwritten (record_nested parks it). */
static void pad(uintptr_t p, uintptr_t size)
{
    uint8_t *r = (uint8_t *)p, head = PTT_EV_TRACE_PAD << 2; /* the rest stays as it is */
    if (size - 1 < PTT_CODEC_LONG) {
        r[1] = head;
        __atomic_store_n(r, (uint8_t)(size - 1), __ATOMIC_RELEASE);
    } else {
        r[1] = (uint8_t)(size - 3);
        r[2] = (uint8_t)((size - 3) >> 8);
        r[3] = head;
        __atomic_store_n(r, (uint8_t)PTT_CODEC_LONG, __ATOMIC_RELEASE);
    }
}

int ptt_moved(struct ptt_thread *t, uintptr_t w, uintptr_t size)
{
    uintptr_t p = w & PTT_POS_ADDR, end = t->end;
    atomic_signal_fence(memory_order_seq_cst); /* end, then the tag: both of the same one */
    if (!((t->pos ^ w) & PTT_POS_TAG)) {       /* in the current sub-buffer */
        if (p + size > end)
            return PTT_SLOT_PAST_END;
        pad(p, size);
        return PTT_SLOT_AGAIN;
    }
    /* Moved again since: the slot is in the parked sub-buffer (reserved under its tag, counted
     * in its length), or past the end of one handed over without it. */
    if (t->parked && (w & PTT_POS_TAG) == t->parked_tag && p - t->parked_data < t->parked_len)
        pad(p, size);
    return PTT_SLOT_AGAIN;
}

/* Where the whole records from data end, before limit: at a slot reserved and not yet written
 * (its length is still zero, as the daemon leaves a sub-buffer it frees), or at limit. */
static uintptr_t whole_end(uintptr_t data, uintptr_t limit)
{
    uintptr_t q = data;
    while (q < limit && __atomic_load_n((uint8_t *)q, __ATOMIC_ACQUIRE)) {
        size_t n = ptt_codec_size((const uint8_t *)q, limit - q);
        if (!n)
            break;
        q += n;
    }
    return q;
}

/* A record of a signal handler, encoded into buf (PTT_CODEC_MAX bytes): with its time stamp,
 * since the base time belongs to the interrupted event, and without the dictionary, which the
 * interrupted event may be changing. Returns where it starts; *size its bytes. */
static uint8_t *encode_nested(uint8_t *buf, uint16_t id, unsigned n, const uint64_t *a,
                              uintptr_t *size)
{
    uint8_t *body = buf + 3, *q = body;
    q = ptt_put_varint(q, (uint64_t)id << 2 | PTT_CODEC_NEST | PTT_CODEC_ABS);
    q = ptt_put_varint(q, ptt_now());
    for (unsigned k = 0; k < n; k++)
        q = ptt_put_lit(q, a[k]);
    return ptt_codec_close(body, q, size);
}

/* Write a handler's record (of event id, its first argument arg) at pos, which has room. */
static void put_nested(struct ptt_thread *t, const uint8_t *rec, uintptr_t size, uint16_t id,
                       uint64_t arg)
{
    ptt_count(&t->nev, 1);
    if (ptt_ev_names(id) || id == PTT_EV_TRACE_LOST)
        ptt_count_rare(t, id, arg);
    ptt_copy_record((uint8_t *)ptt_pos(t), rec, size);
    t->pos += size;
}

/* The event of a signal handler does not fit (or the thread has no sub-buffer): move on to a
 * new one. Signals are blocked, so the one event in progress is the interrupted one, at nest 1,
 * and it has at most one slot reserved and not yet written (a zero length). A sub-buffer that
 * holds such a slot is parked until that event is done (ptt_unpark); any other is handed over
 * at once, up to its last whole event (the reader orders a thread's sub-buffers by number). */
static void record_nested(struct ptt_thread *t, const uint8_t *rec, uintptr_t size, uint16_t id,
                          uint64_t arg)
{
    struct ptt_pool *p = ptt_pool;
    if (!p || !ptt_active) {
        ptt_drop(t, PTT_LOST_DAEMON, 1);
        return;
    }
    uintptr_t pos = ptt_pos(t), len = 0;
    int park = 0;
    /* The sub-buffer the thread holds is the one its end says, none while end is 0: not desc and
     * data, which the interrupted event may be storing its own in (install_first: its swap then
     * fails), and which still name the last one handed over after release_open. */
    uintptr_t end = t->end, data = end ? end - room(p) : 0;
    struct ptt_desc *cur = end ? ptt_pool_desc(p, buffer_index(p, data)) : 0;
    if (cur) {
        if (pos > end) {
            /* The interrupted event reserved past the end and has not switched yet: its slot,
             * never to be written, is no part of this sub-buffer (it learns so from the tag of
             * pos, ptt_moved). */
            len = whole_end(data, end) - data;
        } else {
            len = pos - data;
            park = whole_end(data, pos) != pos;
        }
    }
    if (park && t->parked) {
        /* The slot here is the interrupted event's one: the parked sub-buffer no longer holds
         * one (it wrote it, or padded it and reserved again). */
        uintptr_t pend = t->parked_data + t->parked_len;
        if (whole_end(t->parked_data, pend) != pend) {
            ptt_drop(t, PTT_LOST_HANDLER, 1); /* never seen: two slots in progress */
            return;
        }
        hand_over(t->parked, t->parked_len, unknown);
        t->parked = 0;
        t->parked_len = 0;
    }
    uint32_t i = take_buffer(p, NULL);
    if (i == PTT_POOL_EMPTY) {
        ptt_drop(t, PTT_LOST_NWHY, 1);
        return;
    }
    if (park) {
        t->parked = cur;
        t->parked_data = data;
        t->parked_tag = t->pos & PTT_POS_TAG;
        t->parked_len = (uint32_t)len;
    } else if (cur) {
        hand_over(cur, (uint32_t)len, counts_of(t)); /* exact: no record in progress */
    }
    install_taken(t, p, i);
    /* The record in progress in a parked sub-buffer is counted there, or in whichever sub-buffer
     * is the thread's when it resumes (other handlers may switch again meanwhile): while one is
     * parked, every sub-buffer taken is walked by the drain, as the parked one is. So is one
     * taken while the thread had none (!cur): the thread may be inside install_first or
     * release_open, whose counts are not this sub-buffer's. */
    counts_start(t, 0, 0, t->parked != 0 || !cur);
    t->end = t->data + room(p);
    put_nested(t, rec, size, id, arg);
}

/* An event at nest > 1: a signal handler's, inside an event of its thread (or of a handler's).
 * Written with every signal blocked, so no other handler sees it half done. */
void ptt_write_nested(struct ptt_thread *t, uint16_t id, unsigned n, const uint64_t *a)
{
    int saved_errno = errno;
    uint64_t mask = block_signals();
    uint8_t buf[PTT_CODEC_MAX];
    uintptr_t size;
    const uint8_t *rec = encode_nested(buf, id, n, a, &size);
    uint64_t arg = n ? a[0] : 0;
    if (t->end && ptt_pos(t) + size <= t->end)
        put_nested(t, rec, size, id, arg);
    else
        record_nested(t, rec, size, id, arg);
    restore_signals(mask);
    errno = saved_errno;
}

/* The interrupted event is written: hand its sub-buffer over. (The thread's next event carries
 * an absolute time: its base, t->last, is in the parked sub-buffer: last_data says so.) */
void ptt_unpark(struct ptt_thread *t)
{
    int saved_errno = errno;
    uint64_t mask = block_signals();
    if (t->parked) /* a handler may have handed it over meanwhile */
        hand_over(t->parked, t->parked_len, unknown);
    t->parked = 0;
    t->parked_len = 0;
    restore_signals(mask);
    errno = saved_errno;
}

void ptt_write_async(struct ptt_thread *t, uint16_t id, unsigned n, const uint64_t *a)
{
    int old = PTHREAD_CANCEL_ASYNCHRONOUS;
    REAL(pthread_setcanceltype)(PTHREAD_CANCEL_DEFERRED, &old);
    ptt_write_now(t, id, n, a);
    REAL(pthread_setcanceltype)(old, &old); /* a pending cancellation acts here, after it */
}

void ptt_write_any(struct ptt_thread *t, uint16_t id, unsigned n, const uint64_t *a)
{
    ptt_write(t, id, n, a);
}

/* An event at nest 1 while a call waits in the slot: its IN goes first, at its entry. No handler
 * writes or ends the slot meanwhile (they record at nest > 1). */
void ptt_call_flush(struct ptt_thread *t)
{
    struct ptt_call *c = t->call;
    c->state = PTT_CALL_FREE; /* first, as in ptt_call_finish: the drain never writes it twice */
    atomic_signal_fence(memory_order_seq_cst);
    ptt_put(t, PTT_PUT_AT, c->id, c->t0, c->n, c->a, 0, 0);
}

void ptt_call_end_async(struct ptt_thread *t, uint32_t seq, uint16_t out, unsigned m,
                        const uint64_t *b)
{
    int old = PTHREAD_CANCEL_ASYNCHRONOUS;
    REAL(pthread_setcanceltype)(PTHREAD_CANCEL_DEFERRED, &old);
    ptt_call_finish(t, seq, t->call ? t->call->id : 0, t->call ? t->call->n : 0, out, m, b);
    REAL(pthread_setcanceltype)(old, &old);
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
    uintptr_t end = pos < t->end ? pos : t->end, p = whole_end(t->data, end);
    for (uintptr_t q = p; q < end; q++)
        *(uint8_t *)q = 0;
    t->pos = (t->pos & PTT_POS_TAG) | p;
    t->dict_tag = 1; /* the cut record may have filled slots: no tag is 1 */
    if (p != pos)
        t->walk = 1; /* the cut record may have been counted */
}

/* Hand the thread's sub-buffer over with signals open: pos and end cleared in one instruction if
 * no handler recorded since they were read (else read again). A handler from then on finds no
 * sub-buffer (end is 0) and takes its own, as after a release ever. 0: left to the usual way. */
static int release_open(struct ptt_thread *t, uint32_t also)
{
#ifdef PTT_SWAP_POS_END
    for (;;) {
        /* pos and end first: a handler that moves the thread after they are read changes pos,
         * and the swap fails; read after desc and data, they could be of another sub-buffer. */
        uintptr_t pos = t->pos, end = t->end;
        atomic_signal_fence(memory_order_seq_cst);
        uintptr_t data = t->data;
        struct ptt_desc *d = t->desc;
        struct counts c = counts_of(t); /* a handler counting after this moves pos too */
        c.flags |= also;
        atomic_signal_fence(memory_order_seq_cst);
        if (!end || t->parked || !d)
            return 0;
        if (swap_pos_end(t, pos, end, pos & PTT_POS_TAG, 0)) {
            /* Forgotten, unless a handler took a sub-buffer since (one instruction too), before
             * it is handed over: once freed, it could be a handler's again. */
            struct ptt_desc *mine = d;
            __atomic_compare_exchange_n(&t->desc, &mine, NULL, 0, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED);
            hand_over(d, (uint32_t)((pos & PTT_POS_ADDR) - data), c);
            return 1;
        }
    }
#else
    (void)t;
    return 0;
#endif
}

/* Hand the sub-buffer over with flags also (PTT_DESC_BLOCKED). */
static void release(struct ptt_thread *t, uint32_t also)
{
    /* Nothing held (a thread that recorded nothing: a stopped session): no system call. A
     * handler that takes a sub-buffer after this look is one that records after the release,
     * as ever: the daemon takes that sub-buffer when the thread is gone. */
    if (!t->desc && !t->parked)
        return;
    int saved_errno = errno;
    if (release_open(t, also)) { /* the usual case: no system call */
        errno = saved_errno;
        return;
    }
    /* Signals blocked: a handler recording meanwhile would take a sub-buffer under us. */
    uint64_t mask = block_signals();
    t->end = 0;
    if (t->parked) { /* an event was cut short (cancelled) inside a handler's switch */
        hand_over(t->parked, t->parked_len, unknown);
        t->parked_len = 0;
        t->parked = 0;
    }
    if (t->desc) {
        hand_off(t, also);
        /* The tag stays, to go on counting: the dictionary of a sub-buffer is known by it. */
        t->pos &= PTT_POS_TAG;
        t->data = 0;
    }
    restore_signals(mask);
    errno = saved_errno;
}

void ptt_thread_release(struct ptt_thread *t)
{
    release(t, 0);
}

void ptt_release_blocked(struct ptt_thread *t)
{
    release(t, PTT_DESC_BLOCKED);
}
