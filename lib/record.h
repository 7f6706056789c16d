/* The recording hot path: no lock, no system call, no allocation, async-signal-safe.
 *
 * Each thread owns a sub-buffer of the shared pool (struct ptt_thread, initial-exec TLS).
 * Recording an event: read the clock, encode the record (common/codec.h: varints, the time as
 * a delta, objects, sites and threads as slots of the sub-buffer's dictionary), reserve its bytes
 * with one non-locked xadd (a single instruction, so a signal handler on this thread sees the
 * reservation done or not done), count it in the thread, write it, the length byte last. Nothing
 * else is published per event: sub-buffers are zeroed before reuse and a writer hands its
 * sub-buffer over with its length and its counts (events, losses marked, whether it names
 * things), so that ptt trace copies it without reading it.
 *
 * Signal handlers: an event that interrupted another event of the same thread (nest > 1) is
 * written out of line with every signal blocked (ptt_write_nested: two system calls, only for
 * the events of a handler that landed inside an event), after it, whole, with its time stamp and
 * without the dictionary, which the interrupted event may be changing (PTT_CODEC_NEST); so is a
 * switch of sub-buffers (once per sub-buffer). Only one event of a
 * thread is then ever in progress, with at most one slot reserved and not yet written.
 *
 * Calls (PTT_CALL_IN, PTT_CALL_OUT): a call with a one-record form (PTT_CALL in
 * common/events.def) records nothing when it starts: its IN's arguments and entry time wait in
 * the thread's call slot (struct ptt_call), and when it returns one record holds the whole call.
 * Any event recorded on the thread meanwhile at nest 1 (a wait inside the call, a signal
 * handler's event, the thread's end when it is cancelled inside) first writes the IN, at its
 * entry time ("flushes" it), and the call then ends with its OUT: the thread's events keep the
 * order they had. Calls begun inside another event (nest > 0: a signal handler's) or while the
 * slot is taken, and calls in asynchronous cancellation mode, write their IN at once. */
#ifndef PTT_RECORD_H
#define PTT_RECORD_H

#include <stdatomic.h>
#include <stdint.h>

#include "../common/clock.h"
#include "../common/codec.h"
#include "../common/event.h"
#include "../common/pool.h"

struct ptt_thread {
    /* pos and end side by side, 16-byte aligned: the slow path changes both with one
     * instruction (ptt_record_slow). */
    _Alignas(16) uintptr_t pos; /* next byte to reserve, tagged (PTT_POS_TAG) */
    uintptr_t end;       /* end of the sub-buffer; 0 while there is none (forces the slow path) */
    uint64_t last;       /* time stamp of the last base event */
    uintptr_t last_data; /* the sub-buffer (data) that base event is in: elsewhere it means
                            nothing, and the next event carries an absolute time */
    uint32_t nest;       /* events being recorded on this thread (>1: inside a signal handler) */
    uint32_t guard;      /* not traced, when not 0 (PTT_GUARD_*): the thread has ended and only its
                            teardown runs (glibc's unwinder calls pthread_once), or libptt is
                            unwinding its stack for a backtrace (libgcc's unwinder does too) */
    uintptr_t data;      /* start of the sub-buffer's data */
    struct ptt_desc *desc;
    /* What the sub-buffer is handed over with (struct ptt_desc), counted as its records are
     * written: each one before its length byte. */
    uint32_t nev;    /* its events (a call's one record: 2) */
    uint8_t named;   /* it holds an event that names things (ptt_ev_names) */
    uint8_t walk;    /* nev, marked and named may be wrong: a signal handler switched sub-buffers
                        while an event was being written, or one was cut short (the drain reads
                        the records instead) */
    uint8_t opening; /* the first switch with signals open is storing the counts of its own
                        sub-buffer, over those of any a handler took meanwhile: whatever is
                        handed over until it is done is walked (install_first in buffer.c) */
    uint64_t marked; /* the counts of its TRACE_LOST events */
    uint64_t lost;   /* dropped events not yet reported in the stream */
    uint32_t serial;
    uint32_t seq;
    int32_t tid;
    uint64_t exit_value; /* argument of pthread_exit, for THREAD_END */
    uint32_t exiting;
    uint32_t async_cancel; /* asynchronous cancellation is on: write with it deferred */
    /* A signal handler filled the sub-buffer while the event it interrupted had its slot
     * reserved there and not yet written: that sub-buffer waits here, parked_len bytes long,
     * until the interrupted event is done (see record_nested in buffer.c). */
    struct ptt_desc *parked;
    uintptr_t parked_data;
    uintptr_t parked_tag; /* the tag pos had in it: a slot reserved under another tag is not
                             in it, even at the same address (a sub-buffer used again) */
    uint32_t parked_len;
    /* The call begun and not yet recorded (see the top of this file): the thread's slot in the
     * pool (common/pool.h), taken with its first sub-buffer (NULL before, or when none was left).
     * Only a thread's own code at nest 0 fills it, and only an event at nest 1 writes or ends it: a
     * signal handler that records finds it either free, being filled (left alone: the call's entry
     * comes after the handler), or pending (written: its IN). call_seq: the call's number (odd):
     * its end tells that the slot still holds it. */
    struct ptt_call *call;
    uint32_t call_seq;
    /* The dictionary of the compact encoding (common/codec.h), for the sub-buffer whose pos tag
     * is dict_tag (any other value: empty it first). dict_used: 0 while it has never held a
     * value (a new thread's, zeroed with its TLS): nothing to empty then. */
    uintptr_t dict_tag;
    uint8_t dict_used;
    uint64_t dict[PTT_DICT_SLOTS];
};

extern __thread struct ptt_thread ptt_self __attribute__((tls_model("initial-exec")));

/* Process-wide state, written at start-up, fork and daemon death; read on every event. */
extern int ptt_active;               /* 1 while recording */
extern int ptt_clock_tsc;            /* time stamps from the TSC (else CLOCK_MONOTONIC) */
extern _Atomic uint64_t *ptt_masks;  /* the pool's masks (common/pool.h) */
extern unsigned ptt_backtrace_depth; /* --backtrace=N, 0: none */

enum { PTT_SLOT_AGAIN, PTT_SLOT_PAST_END };
int ptt_record_slow(struct ptt_thread *t, uintptr_t w, uintptr_t size, unsigned events);
int ptt_moved(struct ptt_thread *t, uintptr_t w, uintptr_t size);
void ptt_write_nested(struct ptt_thread *t, uint16_t id, unsigned n, const uint64_t *a);
void ptt_unpark(struct ptt_thread *t);
void ptt_write_async(struct ptt_thread *t, uint16_t id, unsigned n, const uint64_t *a);
/* ptt_write out of line: for the rare paths of the calls' macros (a call begun inside an event,
 * ended after a longjmp out of a handler), which inlined in every interposer made libptt's build
 * slow and its code large for nothing the common path runs. */
void ptt_write_any(struct ptt_thread *t, uint16_t id, unsigned n, const uint64_t *a);
void ptt_call_flush(struct ptt_thread *t);
/* Give the thread's call slot back (it ends; it took it at its first sub-buffer). */
void ptt_call_give(struct ptt_thread *t);
void ptt_call_end_async(struct ptt_thread *t, uint32_t seq, uint16_t out, unsigned m,
                        const uint64_t *b);
/* Why events were dropped: the pool's counters (common/pool.h) and the END record. */
void ptt_drop(struct ptt_thread *t, unsigned why, unsigned n);
/* Count an event that names things, or a TRACE_LOST of count arg, in the thread's sub-buffer. */
void ptt_count_rare(struct ptt_thread *t, uint16_t id, uint64_t arg);
void ptt_record_backtrace(void);

static inline uint64_t ptt_now(void)
{
    return ptt_ticks(ptt_clock_tsc);
}

/* Above the address (pools are mapped below 2^48), t->pos carries a tag that every switch of
 * sub-buffers changes: an event that reserved its slot tells from it whether a signal handler
 * moved the thread to another sub-buffer since (ptt_moved), with no ABA. */
#define PTT_POS_ADDR ((1ull << 48) - 1)
#define PTT_POS_TAG (~PTT_POS_ADDR)

static inline uintptr_t ptt_pos(const struct ptt_thread *t)
{
    return t->pos & PTT_POS_ADDR;
}

/* Reserve size bytes: one instruction, so it cannot be torn by a signal handler. Returns the
 * tagged position reserved. */
static inline uintptr_t ptt_reserve(struct ptt_thread *t, uintptr_t size)
{
#if defined(__x86_64__)
    uintptr_t p = size;
    __asm__ volatile("xaddq %0, %1" : "+r"(p), "+m"(t->pos) : : "memory");
    return p;
#else
    return __atomic_fetch_add(&t->pos, size, __ATOMIC_RELAXED);
#endif
}

/* n more at *v, in one instruction: a signal handler of the thread that counts too (at nest > 1)
 * runs before or after it, never in the middle. */
static inline void ptt_count(uint32_t *v, uint32_t n)
{
#if defined(__x86_64__)
    __asm__ volatile("addl %1, %0" : "+m"(*v) : "ir"(n));
#else
    __atomic_fetch_add(v, n, __ATOMIC_RELAXED);
#endif
}

/* What ptt_put writes: an event at the present time; an event at a time taken earlier (a call's
 * IN, flushed); or a whole call (its entry, its duration up to now, its IN's arguments a and its
 * OUT's b). */
enum { PTT_PUT_NOW, PTT_PUT_AT, PTT_PUT_CALL };

/* The record's bytes from r to slot, the length byte, which publishes it, last: in a few
 * overlapping moves, without calling out, none past the record (a signal handler may be writing
 * the next one) nor on its length byte before the end. */
static inline __attribute__((always_inline)) void ptt_copy_record(uint8_t *slot, const uint8_t *r,
                                                                  uintptr_t size)
{
    uintptr_t n = size - 1;
    uint8_t *d = slot + 1;
    const uint8_t *s = r + 1;
    uint64_t v8;
    uint32_t v4;
    if (n >= 8) {
        for (uintptr_t i = 0; i + 8 < n; i += 8) {
            __builtin_memcpy(&v8, s + i, 8);
            __builtin_memcpy(d + i, &v8, 8);
        }
        __builtin_memcpy(&v8, s + n - 8, 8);
        __builtin_memcpy(d + n - 8, &v8, 8);
    } else if (n >= 4) {
        __builtin_memcpy(&v4, s, 4);
        __builtin_memcpy(d, &v4, 4);
        __builtin_memcpy(&v4, s + n - 4, 4);
        __builtin_memcpy(d + n - 4, &v4, 4);
    } else {
        for (uintptr_t i = 0; i < n; i++)
            d[i] = s[i];
    }
    __atomic_store_n(slot, r[0], __ATOMIC_RELEASE);
}

/* Write one record at nest 1 (common/codec.h): n arguments a, then m arguments b. A time taken
 * earlier (t0) is not put before the base event's: the base moved since only if a signal handler
 * recorded between the time stamp and the record, which then comes after the handler's events.
 * The dictionary is the sub-buffer's: it is emptied when the tag of pos says the sub-buffer is
 * another (only records at nest 1 use it, so a handler never sees it half changed; a record
 * encoded and not written, because a handler moved the thread, is encoded again after emptying
 * it). Meta records use none: the drain reads TRACE_LOST's count without following it. */
static inline __attribute__((always_inline)) void ptt_put(struct ptt_thread *t, int how,
                                                          uint16_t id, uint64_t t0, unsigned n,
                                                          const uint64_t *a, unsigned m,
                                                          const uint64_t *b)
{
    uint8_t buf[PTT_CODEC_MAX], *rec;
    uint64_t ts, d, now = 0, last, dur = 0;
    uintptr_t size, w, p, end, data, tag;
    const int call = how == PTT_PUT_CALL, dict = PTT_CLASS_OF(id) != 0;
retry:
    for (;;) {
        /* The sub-buffer as it is before our reservation: a signal handler may move the thread
         * to a new one (parking this one, see record_nested in buffer.c) at any point; the tag of
         * pos tells (a sub-buffer's address does not: it may be handed over and come back). */
        tag = t->pos & PTT_POS_TAG;
        atomic_signal_fence(memory_order_seq_cst);
        data = t->data;
        atomic_signal_fence(memory_order_seq_cst); /* data, then end: see ptt_moved */
        end = t->end;
        atomic_signal_fence(memory_order_seq_cst);
        if (__builtin_expect(!end, 0)) {
            /* No sub-buffer (a thread's first event): take one before encoding, which would be
             * done again there (another dictionary, an absolute time). Nothing is reserved: a
             * handler that takes one meanwhile is handed over as after a reservation. */
            if (!ptt_record_slow(t, t->pos, 0, 1 + (unsigned)call))
                return;
            continue;
        }
        ts = how == PTT_PUT_NOW ? ptt_now() : t0;
        if (call)
            now = ptt_now();
        last = t->last;
        d = ts - last;
        atomic_signal_fence(memory_order_seq_cst);
        int abs = 0;
        if (__builtin_expect(t->last_data != data, 0))
            abs = 1; /* the base is in another sub-buffer */
        else if (__builtin_expect((int64_t)d < 0, 0)) {
            if (how == PTT_PUT_NOW)
                abs = 1; /* the clock of another CPU */
            else
                ts = last, d = 0;
        }
        if (call)
            dur = (int64_t)(now - ts) > 0 ? now - ts : 0;
        if (__builtin_expect(t->dict_tag != tag, 0)) {
            /* A thread's first sub-buffer finds it empty still: no 512 bytes to clear for a
             * thread of a few events. Marked used before any slot is filled (a record cut short
             * by a cancellation leaves it marked). */
            if (t->dict_used)
                __builtin_memset(t->dict, 0, sizeof t->dict);
            t->dict_used = 1;
            t->dict_tag = tag;
            atomic_signal_fence(memory_order_seq_cst);
        }
        uint8_t *body = buf + 3, *q = body;
        uint32_t head = ptt_head_word(id); /* a constant where id is */
        /* the flags: the low bits of the varint's first byte (set before the store: one store) */
        uint32_t hw = head | (abs ? PTT_CODEC_ABS : 0);
        __builtin_memcpy(q, &hw, 4);
        q += head >> 24;
        q = ptt_put_varint(q, abs ? ts : d);
        if (call)
            q = ptt_put_varint(q, dur);
#pragma GCC unroll 16 /* n and m are constants where the event is known: no loop counter */
        for (unsigned i = 0; i < n; i++)
            q = dict ? ptt_put_val(q, a[i], t->dict) : ptt_put_lit(q, a[i]);
#pragma GCC unroll 16
        for (unsigned i = 0; i < m; i++)
            q = dict ? ptt_put_val(q, b[i], t->dict) : ptt_put_lit(q, b[i]);
        rec = ptt_codec_close(body, q, &size);
        w = ptt_reserve(t, size);
        p = w & PTT_POS_ADDR;
        atomic_signal_fence(memory_order_seq_cst);
        if (__builtin_expect((w & PTT_POS_TAG) == tag, 1))
            break;
        /* A handler moved the thread between our reading of the tag and the reservation. */
        if (ptt_moved(t, w, size) == PTT_SLOT_PAST_END) {
            end = 0;
            break;
        }
    }
    if (__builtin_expect(p + size > end, 0)) {
        if (ptt_record_slow(t, w, size, 1 + (unsigned)call))
            goto retry; /* in the new sub-buffer, as any event */
    } else {
        /* last, then where: a handler between them makes them disagree. Where is mostly the
         * same sub-buffer already: a load and a branch in place of a store (stores weigh on
         * this path: docs/performance.md). */
        t->last = ts + dur;
        atomic_signal_fence(memory_order_seq_cst);
        if (__builtin_expect(t->last_data != data, 0))
            t->last_data = data;
        /* Counted before it is whole: a handler that finds no record in progress hands the
         * sub-buffer over with exact counts (record_nested in buffer.c). Events that name things
         * and TRACE_LOST are rare: for an id known at compile time, the test is a constant, and
         * an event that names things (a thread's start and end) sets its flag in one store. */
        ptt_count(&t->nev, 1 + (unsigned)call);
        if (__builtin_constant_p(id) && ptt_ev_names(id))
            t->named = 1;
        else if (__builtin_expect(ptt_ev_names(id) || id == PTT_EV_TRACE_LOST, 0))
            ptt_count_rare(t, id, n ? a[0] : 0);
        atomic_signal_fence(memory_order_seq_cst);
        /* The length last: the daemon reads a dead process's sub-buffer up to the first empty
         * length, so a record cut short by a kill is never taken for a whole one; and a handler
         * tells a slot not yet written by its zero length (record_nested in buffer.c). */
        ptt_copy_record((uint8_t *)p, rec, size);
    }
}

/* The end of an event at nest 1: a sub-buffer a handler parked meanwhile goes now. */
static inline __attribute__((always_inline)) void ptt_unnest(struct ptt_thread *t)
{
    atomic_signal_fence(memory_order_seq_cst);
    if (--t->nest == 0 && __builtin_expect(t->parked != 0, 0))
        ptt_unpark(t);
}

static inline __attribute__((always_inline)) void ptt_write_now(struct ptt_thread *t, uint16_t id,
                                                                unsigned n, const uint64_t *a)
{
    uint32_t nest = ++t->nest;
    atomic_signal_fence(memory_order_seq_cst);
    if (__builtin_expect(nest != 1, 0)) { /* a handler inside an event: out of line */
        ptt_write_nested(t, id, n, a);
        atomic_signal_fence(memory_order_seq_cst);
        --t->nest;
        return;
    }
    if (__builtin_expect(t->call && t->call->state == PTT_CALL_PENDING, 0))
        ptt_call_flush(t); /* a call has begun and recorded nothing: its IN first */
    ptt_put(t, PTT_PUT_NOW, id, 0, n, a, 0, 0);
    ptt_unnest(t);
}

static inline __attribute__((always_inline)) void ptt_write(struct ptt_thread *t, uint16_t id,
                                                            unsigned n, const uint64_t *a)
{
    /* A thread in asynchronous cancellation mode could be cancelled in the middle of an event:
     * its events are written with cancellation deferred (as the paper's tool did for all). */
    if (__builtin_expect(t->async_cancel, 0))
        ptt_write_async(t, id, n, a);
    else
        ptt_write_now(t, id, n, a);
}

/* A call begins: its IN waits in the call slot, and its number is returned; or, when the call is
 * begun inside an event (a signal handler's) or the slot is taken, its IN is written now and 0
 * is returned. */
static inline __attribute__((always_inline)) uint32_t
ptt_call_begin(struct ptt_thread *t, uint16_t id, unsigned n, const uint64_t *a)
{
    struct ptt_call *c = t->call; /* none: the pool had no slot left for the thread */
    if (__builtin_expect(!c || (t->nest | c->state | t->async_cancel), 0)) {
        ptt_write_any(t, id, n, a);
        return 0;
    }
    c->state = PTT_CALL_CLAIMED;
    atomic_signal_fence(memory_order_seq_cst);
    c->id = id;
    c->n = (uint16_t)n;
    for (unsigned i = 0; i < n; i++)
        c->a[i] = a[i];
    uint32_t seq = (t->call_seq + 2) | 1; /* never 0: 0 is "no call" */
    t->call_seq = seq;
    c->t0 = ptt_now();
    atomic_signal_fence(memory_order_seq_cst);
    c->state = PTT_CALL_PENDING;
    atomic_signal_fence(memory_order_seq_cst);
    return seq;
}

/* The call is going to wait: its IN is written now (the CONTENDED event that says so would
 * write it too, but it is not recorded at the light level), so that a thread blocked in it is
 * seen, and a thread that never returns from it still has it. */
static inline __attribute__((always_inline)) void ptt_call_waits(struct ptt_thread *t)
{
    if (__builtin_expect(!t->call || t->call->state != PTT_CALL_PENDING || t->nest, 0))
        return;
    ++t->nest;
    atomic_signal_fence(memory_order_seq_cst);
    if (t->call->state == PTT_CALL_PENDING) /* a handler may have written it meanwhile */
        ptt_call_flush(t);
    ptt_unnest(t);
}
#define PTT_CALL_WAITS() ptt_call_waits(&ptt_self)

/* The call numbered seq returns: one record for the whole call if the slot still holds it, else
 * its OUT (its IN was written when something else was recorded). Its IN event in and the
 * number n of its arguments are the slot's: given here as the constants they are at the call's
 * end, where the record is encoded. */
static inline __attribute__((always_inline)) void ptt_call_finish(struct ptt_thread *t,
                                                                  uint32_t seq, uint16_t in,
                                                                  unsigned n, uint16_t out,
                                                                  unsigned m, const uint64_t *b)
{
    struct ptt_call *c = t->call;
    uint32_t nest = ++t->nest;
    atomic_signal_fence(memory_order_seq_cst);
    if (__builtin_expect(nest != 1, 0)) { /* only after a longjmp out of a handler in an event */
        --t->nest;
        if (c && c->state == PTT_CALL_PENDING && t->call_seq == seq) {
            c->state = PTT_CALL_FREE;
            ptt_write_any(t, c->id, c->n, c->a);
        }
        ptt_write_any(t, out, m, b);
        return;
    }
    if (__builtin_expect(c && c->state == PTT_CALL_PENDING && t->call_seq == seq, 1)) {
        /* Free before the record: a thread killed between the two leaves neither a pending IN
         * that the drain would add after the whole call, nor (a few instructions) the call. No
         * handler changes the slot meanwhile: theirs record at nest > 1. */
        c->state = PTT_CALL_FREE;
        atomic_signal_fence(memory_order_seq_cst);
        ptt_put(t, PTT_PUT_CALL, (uint16_t)(in | PTT_EV_CALL), c->t0, n, c->a, m, b);
    } else {
        ptt_put(t, PTT_PUT_NOW, out, 0, m, b, 0, 0);
    }
    ptt_unnest(t);
}

static inline __attribute__((always_inline)) void ptt_call_end(struct ptt_thread *t, uint32_t seq,
                                                               uint16_t in, unsigned n,
                                                               uint16_t out, unsigned m,
                                                               const uint64_t *b)
{
    if (__builtin_expect(t->async_cancel, 0))
        ptt_call_end_async(t, seq, out, m, b);
    else
        ptt_call_finish(t, seq, in, n, out, m, b);
}

/* Whether event NAME is recorded now: its class and kind, as ptt ctl last set them. */
#define PTT_RECORDS(name) PTT_RECORDS_AT_(PTT_STATE_##name, name)
#define PTT_RECORDS_AT_(slot, name)                                   \
    ((atomic_load_explicit(&ptt_masks[slot], memory_order_relaxed) >> \
      PTT_CLASS_OF(PTT_EV_##name)) &                                  \
     1)

/* In a file of one class (PTT_ONLY_CLASS, see ptt_on), an event of another class would never be
 * recorded while that class is off: refused at compile time. */
#ifdef PTT_ONLY_CLASS
#define PTT_SAME_CLASS_(name) \
    _Static_assert(PTT_CLASS_OF(PTT_EV_##name) == PTT_ONLY_CLASS, #name " is of another class")
#else
#define PTT_SAME_CLASS_(name) _Static_assert(1, "")
#endif

/* Record event NAME with its arguments; the count is checked against the table at compile time. */
#define PTT_NARGS_(...) (sizeof((uint64_t[]){0, __VA_ARGS__}) / sizeof(uint64_t) - 1)
#define PTT_REC(name, ...) PTT_REC_AT_(PTT_STATE_##name, name, __VA_ARGS__)
/* PTT_REC at the light level too, whatever the event's kind: a thread's start and end, without
 * which a reader knows neither the thread's pthread_t (what pthread_setname_np and a join name)
 * nor its start routine. */
#define PTT_REC_LIGHT(name, ...) PTT_REC_AT_(0, name, __VA_ARGS__)
#define PTT_REC_AT_(slot, name, ...)                                                             \
    do {                                                                                         \
        _Static_assert(PTT_NARGS_(__VA_ARGS__) == PTT_NARGS_##name, "argument count of " #name); \
        PTT_SAME_CLASS_(name);                                                                   \
        if (PTT_RECORDS_AT_(slot, name)) {                                                       \
            const uint64_t ptt_a_[] = {__VA_ARGS__};                                             \
            ptt_write(&ptt_self, PTT_EV_##name, PTT_NARGS_##name, ptt_a_);                       \
        }                                                                                        \
    } while (0)
#define PTT_REC0(name)                                                     \
    do {                                                                   \
        _Static_assert(PTT_NARGS_##name == 0, "argument count of " #name); \
        PTT_SAME_CLASS_(name);                                             \
        if (PTT_RECORDS(name))                                             \
            ptt_write(&ptt_self, PTT_EV_##name, 0, 0);                     \
    } while (0)

/* A call of routine STEM (STEM_IN, STEM_OUT, a PTT_CALL line in the table) begins: TOK is
 * declared, for the PTT_CALL_OUT that ends it; the arguments are STEM_IN's. PTT_CALL_IN_IF: only
 * if compact holds, else its IN is written at once (a call that is going to wait). */
#define PTT_CALL_IN(tok, stem, ...) PTT_CALL_IN_IF(tok, 1, stem, __VA_ARGS__)
#define PTT_CALL_IN_IF(tok, compact, stem, ...)                                                   \
    uint32_t tok = 0;                                                                             \
    do {                                                                                          \
        _Static_assert(PTT_NARGS_(__VA_ARGS__) == PTT_NARGS_##stem##_IN, "arguments of " #stem);  \
        PTT_SAME_CLASS_(stem##_IN);                                                               \
        _Static_assert((int)PTT_CALLOUT_##stem##_IN == (int)PTT_EV_##stem##_OUT,                  \
                       "PTT_CALL of " #stem);                                                     \
        _Static_assert(PTT_NARGS_##stem##_IN <= PTT_CALL_MAX_ARGS, "arguments of " #stem);        \
        if (PTT_RECORDS(stem##_IN)) {                                                             \
            const uint64_t ptt_a_[] = {__VA_ARGS__};                                              \
            if (compact)                                                                          \
                tok =                                                                             \
                    ptt_call_begin(&ptt_self, PTT_EV_##stem##_IN, PTT_NARGS_##stem##_IN, ptt_a_); \
            else                                                                                  \
                ptt_write(&ptt_self, PTT_EV_##stem##_IN, PTT_NARGS_##stem##_IN, ptt_a_);          \
        }                                                                                         \
    } while (0)
#define PTT_CALL_IN0(tok, stem)                                                  \
    uint32_t tok = 0;                                                            \
    do {                                                                         \
        _Static_assert(PTT_NARGS_##stem##_IN == 0, "arguments of " #stem);       \
        PTT_SAME_CLASS_(stem##_IN);                                              \
        _Static_assert((int)PTT_CALLOUT_##stem##_IN == (int)PTT_EV_##stem##_OUT, \
                       "PTT_CALL of " #stem);                                    \
        if (PTT_RECORDS(stem##_IN))                                              \
            tok = ptt_call_begin(&ptt_self, PTT_EV_##stem##_IN, 0, 0);           \
    } while (0)
/* The call of PTT_CALL_IN's TOK returns; the arguments are STEM_OUT's. */
#define PTT_CALL_OUT(tok, stem, ...)                                                              \
    do {                                                                                          \
        _Static_assert(PTT_NARGS_(__VA_ARGS__) == PTT_NARGS_##stem##_OUT, "arguments of " #stem); \
        if (tok) {                                                                                \
            const uint64_t ptt_b_[] = {__VA_ARGS__};                                              \
            ptt_call_end(&ptt_self, tok, PTT_EV_##stem##_IN, PTT_NARGS_##stem##_IN,               \
                         PTT_EV_##stem##_OUT, PTT_NARGS_##stem##_OUT, ptt_b_);                    \
        } else if (PTT_RECORDS(stem##_OUT)) {                                                     \
            const uint64_t ptt_b_[] = {__VA_ARGS__};                                              \
            ptt_write(&ptt_self, PTT_EV_##stem##_OUT, PTT_NARGS_##stem##_OUT, ptt_b_);            \
        }                                                                                         \
    } while (0)
#define PTT_CALL_OUT0(tok, stem)                                                    \
    do {                                                                            \
        _Static_assert(PTT_NARGS_##stem##_OUT == 0, "arguments of " #stem);         \
        if (tok)                                                                    \
            ptt_call_end(&ptt_self, tok, PTT_EV_##stem##_IN, PTT_NARGS_##stem##_IN, \
                         PTT_EV_##stem##_OUT, 0, 0);                                \
        else if (PTT_RECORDS(stem##_OUT))                                           \
            ptt_write(&ptt_self, PTT_EV_##stem##_OUT, 0, 0);                        \
    } while (0)

/* Pack up to PTT_STR_MAX - 1 bytes of s and a NUL into words; returns the number of words. */
#define PTT_STR_MAX 256 /* file paths of modules */
#define PTT_STR_WORDS (PTT_STR_MAX / 8)
static inline unsigned ptt_pack_str(uint64_t *w, const char *s)
{
    char *b = (char *)w;
    unsigned i = 0;
    if (s)
        for (; i < PTT_STR_MAX - 1 && s[i]; i++)
            b[i] = s[i];
    unsigned words = i / 8 + 1;
    for (; i < words * 8; i++)
        b[i] = 0;
    return words;
}

/* Record event NAME whose last field is a string (type str in the table): the fixed arguments,
 * then the string's bytes (truncated to PTT_STR_MAX - 1). */
#define PTT_REC_STR(name, str, ...)                                                              \
    do {                                                                                         \
        _Static_assert(PTT_NARGS_(__VA_ARGS__) == PTT_NARGS_##name, "argument count of " #name); \
        PTT_SAME_CLASS_(name);                                                                   \
        if (PTT_RECORDS(name)) {                                                                 \
            uint64_t ptt_a_[PTT_NARGS_##name + PTT_STR_WORDS] = {__VA_ARGS__};                   \
            unsigned ptt_k_ = ptt_pack_str(ptt_a_ + PTT_NARGS_##name, (str));                    \
            ptt_write(&ptt_self, PTT_EV_##name, PTT_NARGS_##name + ptt_k_, ptt_a_);              \
        }                                                                                        \
    } while (0)

/* Why a thread's calls are not traced (ptt_thread.guard): it has ended; libptt is taking a
 * backtrace, whose unwinder calls pthread_once and may lock (a signal handler that runs meanwhile
 * is the program's: the trampoline lifts this bit while it runs, signal.c). */
#define PTT_GUARD_ENDED 1u
#define PTT_GUARD_UNWIND 2u

/* Whether the calling thread records: libptt is active and not calling out. */
static inline int ptt_on_any(void)
{
    return __builtin_expect(ptt_active && !ptt_self.guard, 1);
}

/* ptt_on_any, for an interposer whose events are all of class cls and which keeps nothing up to
 * date for a later start: off as soon as cls is not recorded, its bit in masks[0] clear (masks[1]
 * is never more than masks[0]). Before a pool is attached ptt_masks is all zeros, and while
 * stopped (ptt ctl stop) masks[0] holds meta alone: the call then goes straight on after one load
 * and a branch, as with libptt merely preloaded. */
static inline int ptt_on_class(unsigned cls)
{
    if (__builtin_expect(!((atomic_load_explicit(&ptt_masks[0], memory_order_relaxed) >> cls) & 1),
                         0))
        return 0;
    return ptt_on_any();
}

/* The interposers' test. A file whose events are all of one class defines PTT_ONLY_CLASS before
 * its includes (each PTT_REC and PTT_CALL_IN checks it at compile time): ptt_on_class of it. */
static inline int ptt_on(void)
{
#ifdef PTT_ONLY_CLASS
    return ptt_on_class(PTT_ONLY_CLASS);
#else
    return ptt_on_any();
#endif
}

#define PTT_U(x) ((uint64_t)(uintptr_t)(x))
#define PTT_I(x) ((uint64_t)(int64_t)(x))

#endif
