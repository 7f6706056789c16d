/* The checker (src/analysis/check*.c) fed events made here: the shapes the corpus of tests/progs
 * cannot make on demand (a thousand-lock cycle, a pthread_t handed to the next thread, a trace
 * that lost events, an error repeated), each with the findings it must give, exactly. */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "src/analysis/check.h"
#include "ptt_fields.h"

#define PID 40

struct run {
    struct ptt_check *c;
    int64_t ns;
    struct ptt_finding **f;
    size_t n;
};

#define EV(r, tid, id, ...) \
    ev(r, tid, id, sizeof((uint64_t[]){__VA_ARGS__}) / 8, (uint64_t[]){__VA_ARGS__})
static void ev(struct run *r, int32_t tid, uint16_t id, unsigned n, const uint64_t *a)
{
    struct ptt_ev e;
    memset(&e, 0, sizeof e);
    e.id = id;
    e.info = ptt_evinfo(id);
    assert_non_null(e.info);
    e.ns = ++r->ns;
    e.pid = PID;
    e.tid = tid;
    e.nargs = n;
    memcpy(e.args, a, n * sizeof *a);
    ptt_check_event(r->c, &e);
}

static void start(struct run *r)
{
    memset(r, 0, sizeof *r);
    r->c = ptt_check_new(NULL);
    EV(r, PID, PTT_EV_PROCESS_START, 1, 0);
}

/* Thread tid starts with handle h (the main thread created it). */
static void thread(struct run *r, int32_t tid, uint64_t h, int detached)
{
    EV(r, PID, PTT_EV_THREAD_CREATE_IN, 0x100, 0, 0x4000, 0, 0, (uint64_t)detached, 0, 0, 1,
       0x5000);
    EV(r, tid, PTT_EV_THREAD_START, 0x4000, 0, PID, h);
    EV(r, PID, PTT_EV_THREAD_CREATE_OUT, 0, h);
}

static void lock(struct run *r, int32_t tid, uint64_t m, uint64_t site)
{
    EV(r, tid, PTT_EV_MUTEX_LOCK_IN, m, site);
    EV(r, tid, PTT_EV_MUTEX_LOCK_OUT, 0);
}

static void unlock(struct run *r, int32_t tid, uint64_t m)
{
    EV(r, tid, PTT_EV_MUTEX_UNLOCK_IN, m, 0x7000);
    EV(r, tid, PTT_EV_MUTEX_UNLOCK_OUT, 0);
}

static void end_thread(struct run *r, int32_t tid)
{
    EV(r, tid, PTT_EV_THREAD_END, 0, 0);
}

static void finish(struct run *r)
{
    EV(r, PID, PTT_EV_PROCESS_EXIT, 0);
    r->f = ptt_check_end(r->c, &r->n);
}

static unsigned count(const struct run *r, enum ptt_fkind k)
{
    unsigned n = 0;
    for (size_t i = 0; i < r->n; i++)
        n += r->f[i]->kind == k;
    return n;
}

/* A cycle through 1000 locks, each edge by its own thread: one finding, all locks counted, the
 * first 32 edges shown. */
static void test_long_cycle(void **state)
{
    (void)state;
    struct run r;
    start(&r);
    enum { N = 1000 };
    for (int i = 0; i < N; i++) {
        int32_t tid = 1000 + i;
        thread(&r, tid, 0x9000 + 0x100 * (uint64_t)i, 0);
        lock(&r, tid, 0x10000 + 64 * (uint64_t)i, 0x6000);
        lock(&r, tid, 0x10000 + 64 * (uint64_t)((i + 1) % N), 0x6010);
        unlock(&r, tid, 0x10000 + 64 * (uint64_t)((i + 1) % N));
        unlock(&r, tid, 0x10000 + 64 * (uint64_t)i);
        end_thread(&r, tid);
    }
    finish(&r);
    assert_int_equal(r.n, 1);
    assert_int_equal(r.f[0]->kind, PTT_FK_LOCK_ORDER);
    assert_non_null(strstr(r.f[0]->summary, "1000 locks"));
    assert_int_equal(r.f[0]->nsteps, 64);
    assert_int_equal(r.f[0]->nthreads, 32);
    ptt_check_free(r.c);
}

/* Opposite orders: under a common gate lock, nothing; one edge made once outside the gate, the
 * cycle. */
static void test_gate(void **state)
{
    (void)state;
    for (int outside = 0; outside < 2; outside++) {
        struct run r;
        start(&r);
        thread(&r, 2, 0x9100, 0);
        thread(&r, 3, 0x9200, 0);
        uint64_t gate = 0x100, a = 0x200, b = 0x300;
        lock(&r, 2, gate, 1);
        lock(&r, 2, a, 2);
        lock(&r, 2, b, 3);
        unlock(&r, 2, b);
        unlock(&r, 2, a);
        unlock(&r, 2, gate);
        if (!outside)
            lock(&r, 3, gate, 4);
        lock(&r, 3, b, 5);
        lock(&r, 3, a, 6);
        unlock(&r, 3, a);
        unlock(&r, 3, b);
        if (!outside)
            unlock(&r, 3, gate);
        end_thread(&r, 2);
        end_thread(&r, 3);
        finish(&r);
        assert_int_equal(r.n, (size_t)outside);
        if (outside)
            assert_int_equal(r.f[0]->kind, PTT_FK_LOCK_ORDER);
        ptt_check_free(r.c);
    }
}

/* A handle given again: thread 2 (detached) ends, thread 3 gets its pthread_t; the join of that
 * handle is thread 3's, which is joinable: no misuse. A second join of it is one. */
static void test_handle_reuse(void **state)
{
    (void)state;
    struct run r;
    start(&r);
    uint64_t h = 0x7f0000001000;
    thread(&r, 2, h, 1);
    end_thread(&r, 2);
    thread(&r, 3, h, 0);
    end_thread(&r, 3);
    for (int i = 0; i < 2; i++) {
        EV(&r, PID, PTT_EV_THREAD_JOIN_IN, h, 0x5100 + (uint64_t)i);
        EV(&r, PID, PTT_EV_THREAD_JOIN_OUT, i ? ESRCH : 0, 0);
    }
    finish(&r);
    assert_int_equal(r.n, 1);
    assert_int_equal(r.f[0]->kind, PTT_FK_MISUSE);
    assert_string_equal(r.f[0]->what, "second join of a thread");
    assert_int_equal(r.f[0]->objects[0].tid, 3);
    assert_int_equal(r.f[0]->steps[0].site, 0x5101);
    ptt_check_free(r.c);
}

/* A thread that starts and ends before its creation returns: still the thread of its handle,
 * so its second join is one. */
static void test_ended_before_created(void **state)
{
    (void)state;
    struct run r;
    start(&r);
    uint64_t h = 0x7f0000002000;
    EV(&r, PID, PTT_EV_THREAD_CREATE_IN, 0x100, 0, 0x4000, 0, 0, 0, 0, 0, 1, 0x5000);
    EV(&r, 2, PTT_EV_THREAD_START, 0x4000, 0, PID, h);
    end_thread(&r, 2);
    EV(&r, PID, PTT_EV_THREAD_CREATE_OUT, 0, h);
    for (int i = 0; i < 2; i++) {
        EV(&r, PID, PTT_EV_THREAD_JOIN_IN, h, 0x5100 + (uint64_t)i);
        EV(&r, PID, PTT_EV_THREAD_JOIN_OUT, i ? ESRCH : 0, 0);
    }
    finish(&r);
    assert_int_equal(r.n, 1);
    assert_string_equal(r.f[0]->what, "second join of a thread");
    assert_int_equal(r.f[0]->objects[0].tid, 2);
    ptt_check_free(r.c);
}

/* An unlock of a mutex this thread never locked: a misuse in a whole trace, nothing once events
 * were lost (the lock may be among them). */
static void test_lost_events(void **state)
{
    (void)state;
    for (int lost = 0; lost < 2; lost++) {
        struct run r;
        start(&r);
        if (lost)
            EV(&r, PID, PTT_EV_TRACE_LOST, 10);
        unlock(&r, PID, 0x100);
        finish(&r);
        assert_int_equal(count(&r, PTT_FK_MISUSE), lost ? 0 : 1);
        ptt_check_free(r.c);
    }
}

/* The same error at one site, five times: one finding counted 5; a trylock's EBUSY: none. */
static void test_error_count(void **state)
{
    (void)state;
    struct run r;
    start(&r);
    for (int i = 0; i < 5; i++) {
        EV(&r, PID, PTT_EV_MUTEX_LOCK_IN, 0x100, 0x6000);
        EV(&r, PID, PTT_EV_MUTEX_LOCK_OUT, EINVAL);
        EV(&r, PID, PTT_EV_MUTEX_TRYLOCK_IN, 0x200, 0x6100);
        EV(&r, PID, PTT_EV_MUTEX_TRYLOCK_OUT, EBUSY);
    }
    finish(&r);
    assert_int_equal(r.n, 1);
    assert_int_equal(r.f[0]->kind, PTT_FK_ERROR);
    assert_int_equal(r.f[0]->err, EINVAL);
    assert_int_equal(r.f[0]->count, 5);
    ptt_check_free(r.c);
}

/* Thread 2 joins thread 3, which waits for a mutex thread 2 holds: a deadlock through a join,
 * its objects the mutex and the thread joined. */
static void test_join_deadlock(void **state)
{
    (void)state;
    struct run r;
    start(&r);
    thread(&r, 2, 0x9100, 0);
    thread(&r, 3, 0x9200, 0);
    lock(&r, 2, 0x100, 1);
    EV(&r, 3, PTT_EV_MUTEX_LOCK_IN, 0x100, 2);
    EV(&r, 3, PTT_EV_MUTEX_WAIT, 0x100, 2);
    EV(&r, 2, PTT_EV_THREAD_JOIN_IN, 0x9200, 3);
    EV(&r, 2, PTT_EV_TRACE_UNFINISHED, PTT_EV_THREAD_JOIN_IN);
    EV(&r, 3, PTT_EV_TRACE_UNFINISHED, PTT_EV_MUTEX_LOCK_IN);
    EV(&r, PID, PTT_EV_PROCESS_EXIT, 9); /* killed */
    r.f = ptt_check_end(r.c, &r.n);
    assert_int_equal(r.n, 1);
    assert_int_equal(r.f[0]->kind, PTT_FK_DEADLOCK);
    assert_int_equal(r.f[0]->nthreads, 2);
    assert_int_equal(r.f[0]->nobjects, 2);
    assert_int_equal(r.f[0]->objects[0].cls, PTT_CLASS_thread);
    assert_int_equal(r.f[0]->objects[0].tid, 3);
    assert_int_equal(r.f[0]->objects[1].addr, 0x100);
    ptt_check_free(r.c);
}

/* ptt trace -p: main was inside a condvar wait when ptt trace attached (CALL_BEFORE_ATTACH).
 * The wait's mutex was taken before the attach, and so was another one main unlocks: neither
 * the wait without the mutex held nor the unlocks are findings. */
static void test_before_attach(void **state)
{
    (void)state;
    struct run r;
    start(&r);
    EV(&r, PID, PTT_EV_CALL_BEFORE_ATTACH, PTT_EV_COND_WAIT_IN);
    EV(&r, PID, PTT_EV_COND_WAIT_IN, 0x300, 0x100, 1);
    EV(&r, PID, PTT_EV_COND_WAIT_OUT, 0);
    unlock(&r, PID, 0x100);
    unlock(&r, PID, 0x200);
    r.f = ptt_check_end(r.c, &r.n);
    assert_int_equal(r.n, 0);
    ptt_check_free(r.c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_long_cycle),           cmocka_unit_test(test_gate),
        cmocka_unit_test(test_handle_reuse),         cmocka_unit_test(test_lost_events),
        cmocka_unit_test(test_error_count),          cmocka_unit_test(test_join_deadlock),
        cmocka_unit_test(test_ended_before_created), cmocka_unit_test(test_before_attach),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
