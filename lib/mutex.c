/* Mutexes. A lock first tries without blocking, so that a lock that has to wait is seen
 * (MUTEX_WAIT, with the owner's thread id) together with the moment it is acquired. */
#define PTT_ONLY_CLASS PTT_CLASS_mutex /* every event here is of this class (record.h) */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>

#include "libptt.h"

/* The owner's kernel thread id, as glibc keeps it in the mutex (0 if unknown). */
static inline uint64_t owner_of(pthread_mutex_t *m)
{
#ifdef __GLIBC__
    return PTT_I(__atomic_load_n(&m->__data.__owner, __ATOMIC_RELAXED));
#else
    (void)m;
    return 0;
#endif
}

PTT_EXPORT int pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *a)
{
    if (!ptt_on())
        return REAL(pthread_mutex_init)(m, a);
    PTT_CALL_IN(call, MUTEX_INIT, PTT_U(m), PTT_U(a), PTT_SITE);
    int r = REAL(pthread_mutex_init)(m, a);
    if (r == 0) { /* what the attribute made of it */
        int type = PTHREAD_MUTEX_DEFAULT, proto = PTHREAD_PRIO_NONE, robust = 0, shared = 0;
        if (a) {
            pthread_mutexattr_gettype(a, &type);
            pthread_mutexattr_getprotocol(a, &proto);
            pthread_mutexattr_getrobust(a, &robust);
            pthread_mutexattr_getpshared(a, &shared);
        }
        PTT_REC(MUTEX_INIT, PTT_U(m), PTT_I(type), PTT_I(proto),
                (uint64_t)(robust == PTHREAD_MUTEX_ROBUST),
                (uint64_t)(shared == PTHREAD_PROCESS_SHARED));
    }
    PTT_CALL_OUT(call, MUTEX_INIT, PTT_I(r));
    return r;
}

/* Whether a lock of m by the thread that owns it (owner, as read) fails at once with EDEADLK:
 * an error-checking mutex. glibc keeps the type in the low bits of __kind under every variant
 * (robust 16, priority inheritance 32, protection 64, shared 128, elision 256 and 512 above
 * them) and answers EDEADLK for each before waiting; a normal one relocked really deadlocks,
 * a recursive one succeeds at the first try. */
static inline int relock_fails(pthread_mutex_t *m, uint64_t owner)
{
#ifdef __GLIBC__
    enum { KIND_MASK = 3 }; /* glibc's PTHREAD_MUTEX_KIND_MASK_NP, not exported */
    return owner && owner == PTT_I(ptt_self.tid) &&
           (__atomic_load_n(&m->__data.__kind, __ATOMIC_RELAXED) & KIND_MASK) ==
               PTHREAD_MUTEX_ERRORCHECK_NP;
#else
    (void)m, (void)owner;
    return 0;
#endif
}

enum lock_kind { LOCK_PLAIN, LOCK_TIMED, LOCK_CLOCK };

/* Lock, trying without blocking first when that cannot change glibc's answer (a timeout it would
 * refuse up front is left to it), so that a lock that has to wait is seen with its owner. */
static inline __attribute__((always_inline)) int
lock(pthread_mutex_t *m, enum lock_kind k, clockid_t clock, const struct timespec *abstime)
{
    int tried = k == LOCK_PLAIN || ptt_timeout_ok(clock, abstime);
    int r = tried ? REAL(pthread_mutex_trylock)(m) : EBUSY;
    if (r != EBUSY)
        return r;
    uint64_t owner = tried ? owner_of(m) : 0;
    if (tried && relock_fails(m, owner))
        tried = 0; /* EDEADLK at once: no wait to record */
    if (tried) {
        PTT_CALL_WAITS();
        PTT_REC(MUTEX_WAIT, PTT_U(m), owner);
        PTT_BLOCKS();
    }
    r = k == LOCK_PLAIN   ? REAL(pthread_mutex_lock)(m)
        : k == LOCK_TIMED ? REAL(pthread_mutex_timedlock)(m, abstime)
                          : REAL(pthread_mutex_clocklock)(m, clock, abstime);
    if (tried && (r == 0 || r == EOWNERDEAD))
        PTT_REC(MUTEX_ACQUIRED, PTT_U(m));
    return r;
}

PTT_EXPORT int pthread_mutex_lock(pthread_mutex_t *m)
{
    if (!ptt_on())
        return REAL(pthread_mutex_lock)(m);
    PTT_CALL_IN(call, MUTEX_LOCK, PTT_U(m), PTT_SITE);
    int r = lock(m, LOCK_PLAIN, CLOCK_REALTIME, NULL);
    PTT_CALL_OUT(call, MUTEX_LOCK, PTT_I(r));
    return r;
}

PTT_EXPORT int pthread_mutex_trylock(pthread_mutex_t *m)
{
    if (!ptt_on())
        return REAL(pthread_mutex_trylock)(m);
    PTT_CALL_IN(call, MUTEX_TRYLOCK, PTT_U(m), PTT_SITE);
    int r = REAL(pthread_mutex_trylock)(m);
    PTT_CALL_OUT(call, MUTEX_TRYLOCK, PTT_I(r));
    return r;
}

PTT_EXPORT int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abstime)
{
    if (!ptt_on())
        return REAL(pthread_mutex_timedlock)(m, abstime);
    PTT_CALL_IN(call, MUTEX_TIMEDLOCK, PTT_U(m), ptt_ts_arg(abstime), PTT_SITE);
    int r = lock(m, LOCK_TIMED, CLOCK_REALTIME, abstime);
    PTT_CALL_OUT(call, MUTEX_TIMEDLOCK, PTT_I(r));
    return r;
}

PTT_EXPORT int pthread_mutex_clocklock(pthread_mutex_t *m, clockid_t clock,
                                       const struct timespec *abstime)
{
    if (!ptt_on())
        return REAL(pthread_mutex_clocklock)(m, clock, abstime);
    PTT_CALL_IN(call, MUTEX_CLOCKLOCK, PTT_U(m), PTT_I(clock), ptt_ts_arg(abstime), PTT_SITE);
    int r = lock(m, LOCK_CLOCK, clock, abstime);
    PTT_CALL_OUT(call, MUTEX_CLOCKLOCK, PTT_I(r));
    return r;
}

PTT_EXPORT int pthread_mutex_consistent(pthread_mutex_t *m)
{
    if (!ptt_on())
        return REAL(pthread_mutex_consistent)(m);
    PTT_CALL_IN(call, MUTEX_CONSISTENT, PTT_U(m), PTT_SITE);
    int r = REAL(pthread_mutex_consistent)(m);
    PTT_CALL_OUT(call, MUTEX_CONSISTENT, PTT_I(r));
    return r;
}

PTT_EXPORT int pthread_mutex_unlock(pthread_mutex_t *m)
{
    if (!ptt_on())
        return REAL(pthread_mutex_unlock)(m);
    PTT_CALL_IN(call, MUTEX_UNLOCK, PTT_U(m), PTT_SITE);
    int r = REAL(pthread_mutex_unlock)(m);
    PTT_CALL_OUT(call, MUTEX_UNLOCK, PTT_I(r));
    return r;
}

PTT_EXPORT int pthread_mutex_destroy(pthread_mutex_t *m)
{
    if (!ptt_on())
        return REAL(pthread_mutex_destroy)(m);
    PTT_CALL_IN(call, MUTEX_DESTROY, PTT_U(m), PTT_SITE);
    int r = REAL(pthread_mutex_destroy)(m);
    PTT_CALL_OUT(call, MUTEX_DESTROY, PTT_I(r));
    return r;
}
