/* The tracker of open calls and held objects (src/analysis/tracker.c): fed events as the reader
 * gives them, it says what each did and what every thread is doing. */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "src/analysis/tracker.h"
#include "ptt_fields.h"

#define PID 40
#define TID 41

static struct ptt_ev make(uint16_t id, int64_t ns, unsigned n, const uint64_t *a)
{
    struct ptt_ev ev;
    memset(&ev, 0, sizeof ev);
    ev.id = id;
    ev.info = ptt_evinfo(id);
    assert_non_null(ev.info);
    ev.ns = ns;
    ev.ticks = (uint64_t)ns * 3;
    ev.pid = PID;
    ev.tid = TID;
    ev.serial = 1;
    ev.nargs = n;
    memcpy(ev.args, a, n * sizeof *a);
    return ev;
}

/* Feed one event of the thread: what it did. */
#define FEED(t, res, id, ns, ...) \
    feed(t, res, id, ns, sizeof((uint64_t[]){__VA_ARGS__}) / 8, (uint64_t[]){__VA_ARGS__})
static unsigned feed(struct ptt_tracker *t, struct ptt_track *res, uint16_t id, int64_t ns,
                     unsigned n, const uint64_t *a)
{
    struct ptt_ev ev = make(id, ns, n, a);
    return ptt_tracker_event(t, &ev, res);
}

static struct ptt_tthread *thread(struct ptt_tracker *t)
{
    struct ptt_tthread *th = ptt_tracker_thread(t, PID, 1);
    assert_non_null(th);
    return th;
}

/* 40 calls inside each other (more than any former stack kept: 8 and 16), each closed by its OUT
 * event in turn, innermost first, with its IN event, object and site. */
static void test_deep_nesting(void **state)
{
    (void)state;
    struct ptt_tracker *t = ptt_tracker_new(PTT_TRACK_SERIAL);
    struct ptt_track r;
    for (unsigned i = 0; i < 40; i++) {
        assert_int_equal(FEED(t, &r, PTT_EV_MUTEX_LOCK_IN, i, 0x1000 + i, 0x400000 + i),
                         PTT_TRK_OPENED);
        assert_int_equal(r.opened->object, 0x1000 + i);
        assert_int_equal(r.opened->site, 0x400000 + i);
    }
    struct ptt_tthread *th = thread(t);
    assert_int_equal(th->nopen, 40);
    assert_int_equal(ptt_tthread_call(th)->object, 0x1000 + 39);
    for (unsigned i = 40; i-- > 0;) {
        unsigned what = FEED(t, &r, PTT_EV_MUTEX_LOCK_OUT, 100, 0);
        assert_int_equal(what, PTT_TRK_CLOSED | PTT_TRK_ACQUIRED);
        assert_int_equal(r.nclosed, 1);
        assert_false(r.unfinished);
        assert_int_equal(r.closed->in.id, PTT_EV_MUTEX_LOCK_IN);
        assert_int_equal(r.closed->object, 0x1000 + i);
        assert_int_equal(r.closed->in.ns, i);
        assert_int_equal(r.acquired->object, 0x1000 + i);
    }
    assert_int_equal(th->nopen, 0);
    assert_int_equal(th->nheld, 40);
    ptt_tracker_free(t);
}

/* A recursive mutex locked 3 times is held until its third unlock, since its first lock. */
static void test_recursive_mutex(void **state)
{
    (void)state;
    struct ptt_tracker *t = ptt_tracker_new(PTT_TRACK_SERIAL);
    struct ptt_track r;
    for (int i = 0; i < 3; i++) {
        FEED(t, &r, PTT_EV_MUTEX_LOCK_IN, 10 * i, 0xa, 0);
        assert_true(FEED(t, &r, PTT_EV_MUTEX_LOCK_OUT, 10 * i + 1, 0) & PTT_TRK_ACQUIRED);
        assert_int_equal(r.acquired->count, i + 1);
    }
    struct ptt_tthread *th = thread(t);
    assert_int_equal(th->nheld, 1);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(FEED(t, &r, PTT_EV_MUTEX_UNLOCK_IN, 50 + i, 0xa), PTT_TRK_OPENED);
        FEED(t, &r, PTT_EV_MUTEX_UNLOCK_OUT, 50 + i, 0);
        assert_int_equal(ptt_tthread_holds(th, 0xa)->count, 2 - i);
    }
    assert_int_equal(FEED(t, &r, PTT_EV_MUTEX_UNLOCK_IN, 60, 0xa),
                     PTT_TRK_OPENED | PTT_TRK_RELEASED);
    assert_int_equal(r.released.object, 0xa);
    assert_int_equal(r.released.cls, PTT_CLASS_mutex);
    assert_int_equal(r.released.ns, 1); /* since the first lock returned */
    assert_int_equal(r.released.ticks, 3);
    assert_null(ptt_tthread_holds(th, 0xa));
    assert_int_equal(th->nheld, 0);
    /* A lock that failed, a trylock that found it taken, a semaphore: nothing held. */
    FEED(t, &r, PTT_EV_MUTEX_LOCK_IN, 70, 0xb, 0);
    assert_int_equal(FEED(t, &r, PTT_EV_MUTEX_LOCK_OUT, 71, EDEADLK), PTT_TRK_CLOSED);
    FEED(t, &r, PTT_EV_MUTEX_TRYLOCK_IN, 72, 0xb, 0);
    assert_int_equal(FEED(t, &r, PTT_EV_MUTEX_TRYLOCK_OUT, 73, EBUSY), PTT_TRK_CLOSED);
    FEED(t, &r, PTT_EV_SEM_WAIT_IN, 74, 0xc, 1, 0);
    assert_int_equal(FEED(t, &r, PTT_EV_SEM_WAIT_OUT, 75, 0, 0, 0), PTT_TRK_CLOSED);
    assert_int_equal(th->nheld, 0);
    /* A robust mutex whose owner died is held all the same. */
    FEED(t, &r, PTT_EV_MUTEX_LOCK_IN, 80, 0xd, 0);
    assert_int_equal(FEED(t, &r, PTT_EV_MUTEX_LOCK_OUT, 81, EOWNERDEAD),
                     PTT_TRK_CLOSED | PTT_TRK_ACQUIRED);
    ptt_tracker_free(t);
}

/* Read locks of a rwlock count; a write lock is not shared. */
static void test_rwlock_counts(void **state)
{
    (void)state;
    struct ptt_tracker *t = ptt_tracker_new(PTT_TRACK_SERIAL);
    struct ptt_track r;
    for (int i = 0; i < 2; i++) {
        FEED(t, &r, PTT_EV_RWLOCK_RDLOCK_IN, i, 0xe, 0);
        FEED(t, &r, PTT_EV_RWLOCK_RDLOCK_OUT, i, 0);
    }
    struct ptt_tthread *th = thread(t);
    struct ptt_held *h = ptt_tthread_holds(th, 0xe);
    assert_non_null(h);
    assert_int_equal(h->count, 2);
    assert_true(h->shared);
    assert_int_equal(h->cls, PTT_CLASS_rwlock);
    assert_int_equal(FEED(t, &r, PTT_EV_RWLOCK_UNLOCK_IN, 5, 0xe), PTT_TRK_OPENED);
    assert_int_equal(ptt_tthread_holds(th, 0xe)->count, 1);
    FEED(t, &r, PTT_EV_RWLOCK_UNLOCK_OUT, 5, 0);
    assert_true(FEED(t, &r, PTT_EV_RWLOCK_UNLOCK_IN, 6, 0xe) & PTT_TRK_RELEASED);
    assert_true(r.released.shared);
    FEED(t, &r, PTT_EV_RWLOCK_UNLOCK_OUT, 6, 0);
    FEED(t, &r, PTT_EV_RWLOCK_WRLOCK_IN, 7, 0xe, 0);
    FEED(t, &r, PTT_EV_RWLOCK_WRLOCK_OUT, 8, 0);
    h = ptt_tthread_holds(th, 0xe);
    assert_int_equal(h->count, 1);
    assert_false(h->shared);
    ptt_tracker_free(t);
}

/* One event of thread tid (its serial: tid too). */
static void feed_tid(struct ptt_tracker *t, int32_t tid, uint16_t id, unsigned n, const uint64_t *a)
{
    struct ptt_ev ev = make(id, 1, n, a);
    ev.tid = tid;
    ev.serial = (uint32_t)tid;
    ptt_tracker_event(t, &ev, NULL);
}

/* The threads reading a rwlock, in order of tid, each hold with the site it was taken at; a
 * writer's wait keeps the number of readers it saw. */
static void test_rwlock_readers(void **state)
{
    (void)state;
    struct ptt_tracker *t = ptt_tracker_new(PTT_TRACK_SERIAL);
    for (int32_t tid = 52; tid >= 51; tid--) {
        feed_tid(t, tid, PTT_EV_RWLOCK_RDLOCK_IN, 2, (uint64_t[]){0xe, 0x1000 + (uint64_t)tid});
        feed_tid(t, tid, PTT_EV_RWLOCK_RDLOCK_OUT, 1, (uint64_t[]){0});
    }
    feed_tid(t, 53, PTT_EV_RWLOCK_WRLOCK_IN, 2, (uint64_t[]){0xf, 0x2000});
    feed_tid(t, 53, PTT_EV_RWLOCK_WRLOCK_OUT, 1, (uint64_t[]){0});
    feed_tid(t, 54, PTT_EV_RWLOCK_WRLOCK_IN, 2, (uint64_t[]){0xe, 0x3000});
    feed_tid(t, 54, PTT_EV_RWLOCK_WAIT, 4, (uint64_t[]){0xe, 1, 0, 2});
    int32_t tids[4];
    assert_int_equal(ptt_tracker_readers(t, PID, 0xe, tids, 4), 2);
    assert_int_equal(tids[0], 51);
    assert_int_equal(tids[1], 52);
    assert_int_equal(ptt_tracker_readers(t, PID, 0xe, tids, 1), 2); /* counted past max */
    assert_int_equal(ptt_tracker_readers(t, PID, 0xf, tids, 4), 0); /* written, not read */
    assert_int_equal(ptt_tracker_readers(t, PID + 1, 0xe, tids, 4), 0);
    assert_int_equal(ptt_tthread_holds(ptt_tracker_thread(t, PID, 51), 0xe)->site, 0x1000 + 51);
    assert_int_equal(ptt_tthread_holds(ptt_tracker_thread(t, PID, 53), 0xf)->site, 0x2000);
    struct ptt_open *w = ptt_tthread_call(ptt_tracker_thread(t, PID, 54));
    assert_non_null(w);
    assert_int_equal(w->holders, 2);
    assert_int_equal(w->owner, 0);
    ptt_tracker_free(t);
}

/* A signal handler runs inside a lock call: its own calls nest in the frame, the lock call's OUT
 * closes the lock call, a CONTENDED while the handler runs is nobody's. */
static void test_handler_frame(void **state)
{
    (void)state;
    struct ptt_tracker *t = ptt_tracker_new(PTT_TRACK_SERIAL);
    struct ptt_track r;
    FEED(t, &r, PTT_EV_MUTEX_LOCK_IN, 10, 0xa, 0);
    assert_int_equal(FEED(t, &r, PTT_EV_SIGNAL_DELIVERED, 11, 10, 0, 0), PTT_TRK_OPENED);
    assert_true(r.opened->frame);
    struct ptt_tthread *th = thread(t);
    assert_int_equal(ptt_tthread_call(th)->object, 0xa); /* frames are not calls */
    assert_int_equal(FEED(t, &r, PTT_EV_MUTEX_WAIT, 12, 0xa, 77), 0);
    FEED(t, &r, PTT_EV_MUTEX_LOCK_IN, 13, 0xb, 0);
    assert_int_equal(th->nopen, 3);
    FEED(t, &r, PTT_EV_MUTEX_LOCK_OUT, 14, 0);
    assert_int_equal(r.closed->object, 0xb);
    FEED(t, &r, PTT_EV_MUTEX_UNLOCK_IN, 15, 0xb);
    FEED(t, &r, PTT_EV_MUTEX_UNLOCK_OUT, 16, 0);
    assert_int_equal(FEED(t, &r, PTT_EV_SIGNAL_HANDLED, 17, 10), 0);
    assert_int_equal(th->nopen, 1);
    assert_int_equal(FEED(t, &r, PTT_EV_MUTEX_WAIT, 18, 0xa, 77), PTT_TRK_BLOCKED);
    assert_int_equal(r.blocked->object, 0xa);
    assert_int_equal(FEED(t, &r, PTT_EV_MUTEX_LOCK_OUT, 30, 0), PTT_TRK_CLOSED | PTT_TRK_ACQUIRED);
    assert_int_equal(r.closed->object, 0xa);
    assert_int_equal(r.closed->block, PTT_OPEN_CONTENDED);
    assert_int_equal(r.closed->block_ns, 18);
    assert_int_equal(r.closed->block_cls, PTT_CLASS_mutex);
    assert_true(r.closed->contended);
    assert_true(r.closed->has_owner);
    assert_int_equal(r.closed->owner, 77);
    assert_int_equal(th->nopen, 0);
    ptt_tracker_free(t);
}

/* A thread that ends inside calls and holding a mutex: its calls close unfinished, innermost
 * last, the mutex is still reported held; iteration finds it. */
static void test_end_with_calls_open(void **state)
{
    (void)state;
    struct ptt_tracker *t = ptt_tracker_new(PTT_TRACK_SERIAL);
    struct ptt_track r;
    FEED(t, &r, PTT_EV_MUTEX_LOCK_IN, 1, 0xa, 0);
    FEED(t, &r, PTT_EV_MUTEX_LOCK_OUT, 2, 0);
    FEED(t, &r, PTT_EV_MUTEX_LOCK_IN, 3, 0xb, 0);
    FEED(t, &r, PTT_EV_BARRIER_WAIT_IN, 4, 0xc, 0);
    assert_int_equal(FEED(t, &r, PTT_EV_THREAD_END, 9, 0, 1), PTT_TRK_CLOSED);
    assert_int_equal(r.nclosed, 2);
    assert_true(r.unfinished);
    assert_int_equal(r.closed[0].object, 0xb);
    assert_int_equal(r.closed[1].object, 0xc);
    assert_int_equal(r.closed[1].block, PTT_OPEN_WAITS); /* a barrier waits from its start */
    assert_int_equal(r.closed[1].block_ns, 4);
    size_t i = 0;
    struct ptt_tthread *th = ptt_tracker_next(t, &i);
    assert_non_null(th);
    assert_null(ptt_tracker_next(t, &i));
    assert_true(th->ended);
    assert_int_equal(th->pid, PID);
    assert_int_equal(th->tid, TID);
    assert_int_equal(th->nopen, 0);
    assert_int_equal(th->nheld, 1);
    assert_int_equal(th->held[0].object, 0xa);
    ptt_tracker_free(t);
}

/* A condvar wait releases its mutex and waits from its start; the thread is cancelled inside it
 * (the reader's THREAD_CANCELLED): closed unfinished, the mutex not held again. A timed wait
 * that timed out holds it again. TRACE_UNFINISHED closes the innermost call only. */
static void test_cancelled_in_wait(void **state)
{
    (void)state;
    struct ptt_tracker *t = ptt_tracker_new(PTT_TRACK_SERIAL);
    struct ptt_track r;
    FEED(t, &r, PTT_EV_MUTEX_LOCK_IN, 1, 0xa, 0);
    FEED(t, &r, PTT_EV_MUTEX_LOCK_OUT, 2, 0);
    FEED(t, &r, PTT_EV_COND_TIMEDWAIT_IN, 3, 0xc, 0xa, 0, 0);
    assert_int_equal(FEED(t, &r, PTT_EV_COND_TIMEDWAIT_OUT, 4, ETIMEDOUT),
                     PTT_TRK_CLOSED | PTT_TRK_ACQUIRED);
    assert_int_equal(r.acquired->object, 0xa);
    assert_int_equal(FEED(t, &r, PTT_EV_COND_WAIT_IN, 5, 0xc, 0xa, 0),
                     PTT_TRK_OPENED | PTT_TRK_RELEASED);
    assert_int_equal(r.released.object, 0xa);
    assert_int_equal(r.opened->block, PTT_OPEN_WAITS);
    assert_int_equal(r.opened->block_cls, PTT_CLASS_cond);
    assert_int_equal(FEED(t, &r, PTT_EV_THREAD_CANCELLED, 9, PTT_EV_COND_WAIT_IN), PTT_TRK_CLOSED);
    assert_int_equal(r.nclosed, 1);
    assert_true(r.unfinished);
    assert_int_equal(r.closed->in.id, PTT_EV_COND_WAIT_IN);
    struct ptt_tthread *th = thread(t);
    assert_int_equal(th->nopen, 0);
    assert_int_equal(th->nheld, 0);
    assert_int_equal(FEED(t, &r, PTT_EV_THREAD_END, 9, 0, 2), 0);

    /* Another thread: a call its lost OUT left open under a lock call; the trace ends. */
    struct ptt_ev ev = make(PTT_EV_MUTEX_LOCK_IN, 20, 2, (uint64_t[]){0xd, 0});
    ev.serial = 2;
    ptt_tracker_event(t, &ev, &r);
    ev = make(PTT_EV_MUTEX_UNLOCK_IN, 21, 1, (uint64_t[]){0xe});
    ev.serial = 2;
    ptt_tracker_event(t, &ev, &r);
    ev = make(PTT_EV_TRACE_UNFINISHED, 30, 1, (uint64_t[]){PTT_EV_MUTEX_UNLOCK_IN});
    ev.serial = 2;
    assert_int_equal(ptt_tracker_event(t, &ev, &r), PTT_TRK_CLOSED);
    assert_int_equal(r.nclosed, 1);
    assert_int_equal(r.closed->in.id, PTT_EV_MUTEX_UNLOCK_IN);
    assert_int_equal(ptt_tracker_thread(t, PID, 2)->nopen, 1);
    ptt_tracker_free(t);
}

/* ptt trace -p: CALL_BEFORE_ATTACH marks the call of the next IN event, the one it names, as
 * begun before the attach; a condvar wait whose mutex was not known (0) holds nothing when it
 * returns. The mark is for that call only. */
static void test_before_attach(void **state)
{
    (void)state;
    struct ptt_tracker *t = ptt_tracker_new(PTT_TRACK_SERIAL);
    struct ptt_track r;
    assert_int_equal(FEED(t, &r, PTT_EV_CALL_BEFORE_ATTACH, 1, PTT_EV_COND_WAIT_IN), 0);
    assert_int_equal(FEED(t, &r, PTT_EV_COND_WAIT_IN, 1, 0xc, 0, 0), PTT_TRK_OPENED);
    assert_true(r.opened->before_attach);
    assert_int_equal(r.opened->block, PTT_OPEN_WAITS);
    assert_int_equal(FEED(t, &r, PTT_EV_COND_WAIT_OUT, 5, 0), PTT_TRK_CLOSED);
    assert_true(r.closed->before_attach);
    assert_int_equal(thread(t)->nheld, 0);
    FEED(t, &r, PTT_EV_CALL_BEFORE_ATTACH, 6, PTT_EV_THREAD_JOIN_IN); /* its IN not recorded */
    FEED(t, &r, PTT_EV_MUTEX_LOCK_IN, 6, 0xa, 0);
    assert_false(r.opened->before_attach);
    assert_int_equal(FEED(t, &r, PTT_EV_MUTEX_LOCK_OUT, 7, 0), PTT_TRK_CLOSED | PTT_TRK_ACQUIRED);
    ptt_tracker_free(t);
}

/* An OUT event closes the innermost call of its routine; the calls above it lost theirs. */
static void test_lost_out(void **state)
{
    (void)state;
    struct ptt_tracker *t = ptt_tracker_new(PTT_TRACK_TID);
    struct ptt_track r;
    FEED(t, &r, PTT_EV_MUTEX_LOCK_IN, 1, 0xa, 0);
    FEED(t, &r, PTT_EV_MUTEX_UNLOCK_IN, 2, 0xb);
    assert_int_equal(FEED(t, &r, PTT_EV_COND_SIGNAL_OUT, 3, 0), 0); /* never entered */
    FEED(t, &r, PTT_EV_MUTEX_LOCK_OUT, 4, 0);
    assert_int_equal(r.closed->object, 0xa);
    struct ptt_tthread *th = ptt_tracker_thread(t, PID, TID); /* by tid */
    assert_non_null(th);
    assert_int_equal(th->nopen, 0);
    ptt_tracker_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deep_nesting),      cmocka_unit_test(test_recursive_mutex),
        cmocka_unit_test(test_rwlock_counts),     cmocka_unit_test(test_rwlock_readers),
        cmocka_unit_test(test_handler_frame),     cmocka_unit_test(test_end_with_calls_open),
        cmocka_unit_test(test_cancelled_in_wait), cmocka_unit_test(test_lost_out),
        cmocka_unit_test(test_before_attach),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
