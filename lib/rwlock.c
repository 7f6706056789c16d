/* Read-write locks. As for mutexes, a lock is tried without blocking first (when that cannot
 * change glibc's answer) so that a lock that has to wait is seen, with the writer that holds it
 * and the number of readers. */
#define PTT_ONLY_CLASS PTT_CLASS_rwlock /* every event here is of this class (record.h) */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>

#include "libptt.h"

enum mode { RD = 0, WR = 1 };
enum kind { PLAIN, TIMED, CLOCK };

/* Who holds it, as glibc keeps it (racy, for the record only). */
static uint64_t writer_of(pthread_rwlock_t *l)
{
#ifdef __GLIBC__
    return PTT_I(__atomic_load_n(&l->__data.__cur_writer, __ATOMIC_RELAXED));
#else
    (void)l;
    return 0;
#endif
}

static uint64_t readers_of(pthread_rwlock_t *l)
{
#ifdef __GLIBC__
    return __atomic_load_n(&l->__data.__readers, __ATOMIC_RELAXED) >> 3; /* READER_SHIFT */
#else
    (void)l;
    return 0;
#endif
}

static inline __attribute__((always_inline)) int
lock(pthread_rwlock_t *l, enum mode m, enum kind k, clockid_t clock, const struct timespec *abstime)
{
    int tried = k == PLAIN || ptt_timeout_ok(clock, abstime);
    int r = !tried    ? EBUSY
            : m == WR ? REAL(pthread_rwlock_trywrlock)(l)
                      : REAL(pthread_rwlock_tryrdlock)(l);
    if (r != EBUSY)
        return r;
    uint64_t writer = tried ? writer_of(l) : 0;
    if (writer && writer == PTT_I(ptt_self.tid))
        tried = 0; /* held for writing by the caller: glibc says EDEADLK at once, no wait */
    if (tried) {
        PTT_CALL_WAITS();
        PTT_REC(RWLOCK_WAIT, PTT_U(l), (uint64_t)m, writer, readers_of(l));
        PTT_BLOCKS();
    }
    if (m == WR)
        r = k == PLAIN   ? REAL(pthread_rwlock_wrlock)(l)
            : k == TIMED ? REAL(pthread_rwlock_timedwrlock)(l, abstime)
                         : REAL(pthread_rwlock_clockwrlock)(l, clock, abstime);
    else
        r = k == PLAIN   ? REAL(pthread_rwlock_rdlock)(l)
            : k == TIMED ? REAL(pthread_rwlock_timedrdlock)(l, abstime)
                         : REAL(pthread_rwlock_clockrdlock)(l, clock, abstime);
    if (tried && r == 0)
        PTT_REC(RWLOCK_ACQUIRED, PTT_U(l), (uint64_t)m);
    return r;
}

PTT_EXPORT int pthread_rwlock_init(pthread_rwlock_t *l, const pthread_rwlockattr_t *a)
{
    if (!ptt_on())
        return REAL(pthread_rwlock_init)(l, a);
    PTT_CALL_IN(call, RWLOCK_INIT, PTT_U(l), PTT_U(a), PTT_SITE);
    int r = REAL(pthread_rwlock_init)(l, a);
    PTT_CALL_OUT(call, RWLOCK_INIT, PTT_I(r));
    return r;
}

PTT_EXPORT int pthread_rwlock_rdlock(pthread_rwlock_t *l)
{
    if (!ptt_on())
        return REAL(pthread_rwlock_rdlock)(l);
    PTT_CALL_IN(call, RWLOCK_RDLOCK, PTT_U(l), PTT_SITE);
    int r = lock(l, RD, PLAIN, CLOCK_REALTIME, NULL);
    PTT_CALL_OUT(call, RWLOCK_RDLOCK, PTT_I(r));
    return r;
}

PTT_EXPORT int pthread_rwlock_tryrdlock(pthread_rwlock_t *l)
{
    if (!ptt_on())
        return REAL(pthread_rwlock_tryrdlock)(l);
    PTT_CALL_IN(call, RWLOCK_TRYRDLOCK, PTT_U(l), PTT_SITE);
    int r = REAL(pthread_rwlock_tryrdlock)(l);
    PTT_CALL_OUT(call, RWLOCK_TRYRDLOCK, PTT_I(r));
    return r;
}

PTT_EXPORT int pthread_rwlock_timedrdlock(pthread_rwlock_t *l, const struct timespec *abstime)
{
    if (!ptt_on())
        return REAL(pthread_rwlock_timedrdlock)(l, abstime);
    PTT_CALL_IN(call, RWLOCK_TIMEDRDLOCK, PTT_U(l), ptt_ts_arg(abstime), PTT_SITE);
    int r = lock(l, RD, TIMED, CLOCK_REALTIME, abstime);
    PTT_CALL_OUT(call, RWLOCK_TIMEDRDLOCK, PTT_I(r));
    return r;
}

PTT_EXPORT int pthread_rwlock_clockrdlock(pthread_rwlock_t *l, clockid_t clock,
                                          const struct timespec *abstime)
{
    if (!ptt_on())
        return REAL(pthread_rwlock_clockrdlock)(l, clock, abstime);
    PTT_CALL_IN(call, RWLOCK_CLOCKRDLOCK, PTT_U(l), PTT_I(clock), ptt_ts_arg(abstime), PTT_SITE);
    int r = lock(l, RD, CLOCK, clock, abstime);
    PTT_CALL_OUT(call, RWLOCK_CLOCKRDLOCK, PTT_I(r));
    return r;
}

PTT_EXPORT int pthread_rwlock_wrlock(pthread_rwlock_t *l)
{
    if (!ptt_on())
        return REAL(pthread_rwlock_wrlock)(l);
    PTT_CALL_IN(call, RWLOCK_WRLOCK, PTT_U(l), PTT_SITE);
    int r = lock(l, WR, PLAIN, CLOCK_REALTIME, NULL);
    PTT_CALL_OUT(call, RWLOCK_WRLOCK, PTT_I(r));
    return r;
}

PTT_EXPORT int pthread_rwlock_trywrlock(pthread_rwlock_t *l)
{
    if (!ptt_on())
        return REAL(pthread_rwlock_trywrlock)(l);
    PTT_CALL_IN(call, RWLOCK_TRYWRLOCK, PTT_U(l), PTT_SITE);
    int r = REAL(pthread_rwlock_trywrlock)(l);
    PTT_CALL_OUT(call, RWLOCK_TRYWRLOCK, PTT_I(r));
    return r;
}

PTT_EXPORT int pthread_rwlock_timedwrlock(pthread_rwlock_t *l, const struct timespec *abstime)
{
    if (!ptt_on())
        return REAL(pthread_rwlock_timedwrlock)(l, abstime);
    PTT_CALL_IN(call, RWLOCK_TIMEDWRLOCK, PTT_U(l), ptt_ts_arg(abstime), PTT_SITE);
    int r = lock(l, WR, TIMED, CLOCK_REALTIME, abstime);
    PTT_CALL_OUT(call, RWLOCK_TIMEDWRLOCK, PTT_I(r));
    return r;
}

PTT_EXPORT int pthread_rwlock_clockwrlock(pthread_rwlock_t *l, clockid_t clock,
                                          const struct timespec *abstime)
{
    if (!ptt_on())
        return REAL(pthread_rwlock_clockwrlock)(l, clock, abstime);
    PTT_CALL_IN(call, RWLOCK_CLOCKWRLOCK, PTT_U(l), PTT_I(clock), ptt_ts_arg(abstime), PTT_SITE);
    int r = lock(l, WR, CLOCK, clock, abstime);
    PTT_CALL_OUT(call, RWLOCK_CLOCKWRLOCK, PTT_I(r));
    return r;
}

PTT_EXPORT int pthread_rwlock_unlock(pthread_rwlock_t *l)
{
    if (!ptt_on())
        return REAL(pthread_rwlock_unlock)(l);
    PTT_CALL_IN(call, RWLOCK_UNLOCK, PTT_U(l), PTT_SITE);
    int r = REAL(pthread_rwlock_unlock)(l);
    PTT_CALL_OUT(call, RWLOCK_UNLOCK, PTT_I(r));
    return r;
}

PTT_EXPORT int pthread_rwlock_destroy(pthread_rwlock_t *l)
{
    if (!ptt_on())
        return REAL(pthread_rwlock_destroy)(l);
    PTT_CALL_IN(call, RWLOCK_DESTROY, PTT_U(l), PTT_SITE);
    int r = REAL(pthread_rwlock_destroy)(l);
    PTT_CALL_OUT(call, RWLOCK_DESTROY, PTT_I(r));
    return r;
}
