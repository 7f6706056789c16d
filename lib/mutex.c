/* Mutexes. A lock first tries without blocking, so that a lock that has to wait is seen
 * (MUTEX_WAIT, with the owner's thread id) together with the moment it is acquired. */
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
    PTT_REC(MUTEX_INIT_IN, PTT_U(m), PTT_U(a));
    int r = REAL(pthread_mutex_init)(m, a);
    PTT_REC(MUTEX_INIT_OUT, PTT_I(r));
    return r;
}

PTT_EXPORT int pthread_mutex_lock(pthread_mutex_t *m)
{
    if (!ptt_on())
        return REAL(pthread_mutex_lock)(m);
    PTT_REC(MUTEX_LOCK_IN, PTT_U(m));
    int r = REAL(pthread_mutex_trylock)(m);
    if (r == EBUSY) {
        PTT_REC(MUTEX_WAIT, PTT_U(m), owner_of(m));
        r = REAL(pthread_mutex_lock)(m);
        if (r == 0 || r == EOWNERDEAD)
            PTT_REC(MUTEX_ACQUIRED, PTT_U(m));
    }
    PTT_REC(MUTEX_LOCK_OUT, PTT_I(r));
    return r;
}

PTT_EXPORT int pthread_mutex_trylock(pthread_mutex_t *m)
{
    if (!ptt_on())
        return REAL(pthread_mutex_trylock)(m);
    PTT_REC(MUTEX_TRYLOCK_IN, PTT_U(m));
    int r = REAL(pthread_mutex_trylock)(m);
    PTT_REC(MUTEX_TRYLOCK_OUT, PTT_I(r));
    return r;
}

PTT_EXPORT int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abstime)
{
    if (!ptt_on())
        return REAL(pthread_mutex_timedlock)(m, abstime);
    PTT_REC(MUTEX_TIMEDLOCK_IN, PTT_U(m), ptt_ts_arg(abstime));
    int r = REAL(pthread_mutex_trylock)(m);
    if (r == EBUSY) {
        PTT_REC(MUTEX_WAIT, PTT_U(m), owner_of(m));
        r = REAL(pthread_mutex_timedlock)(m, abstime);
        if (r == 0 || r == EOWNERDEAD)
            PTT_REC(MUTEX_ACQUIRED, PTT_U(m));
    }
    PTT_REC(MUTEX_TIMEDLOCK_OUT, PTT_I(r));
    return r;
}

PTT_EXPORT int pthread_mutex_unlock(pthread_mutex_t *m)
{
    if (!ptt_on())
        return REAL(pthread_mutex_unlock)(m);
    PTT_REC(MUTEX_UNLOCK_IN, PTT_U(m));
    int r = REAL(pthread_mutex_unlock)(m);
    PTT_REC(MUTEX_UNLOCK_OUT, PTT_I(r));
    return r;
}

PTT_EXPORT int pthread_mutex_destroy(pthread_mutex_t *m)
{
    if (!ptt_on())
        return REAL(pthread_mutex_destroy)(m);
    PTT_REC(MUTEX_DESTROY_IN, PTT_U(m));
    int r = REAL(pthread_mutex_destroy)(m);
    PTT_REC(MUTEX_DESTROY_OUT, PTT_I(r));
    return r;
}
