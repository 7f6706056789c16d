/* Spinlocks: a lock that finds the lock taken records SPIN_WAIT, then SPIN_ACQUIRED when it gets
 * it: the spin time is the time between the two. */
#define PTT_ONLY_CLASS PTT_CLASS_spin /* every event here is of this class (record.h) */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>

#include "libptt.h"

PTT_EXPORT int pthread_spin_init(pthread_spinlock_t *l, int pshared)
{
    if (!ptt_on())
        return REAL(pthread_spin_init)(l, pshared);
    PTT_CALL_IN(call, SPIN_INIT, PTT_U(l), (uint64_t)(pshared == PTHREAD_PROCESS_SHARED), PTT_SITE);
    int r = REAL(pthread_spin_init)(l, pshared);
    PTT_CALL_OUT(call, SPIN_INIT, PTT_I(r));
    return r;
}

PTT_EXPORT int pthread_spin_lock(pthread_spinlock_t *l)
{
    if (!ptt_on())
        return REAL(pthread_spin_lock)(l);
    PTT_CALL_IN(call, SPIN_LOCK, PTT_U(l), PTT_SITE);
    int r = REAL(pthread_spin_trylock)(l);
    if (r == EBUSY) {
        PTT_CALL_WAITS();
        PTT_REC(SPIN_WAIT, PTT_U(l));
        PTT_BLOCKS();
        r = REAL(pthread_spin_lock)(l);
        if (r == 0)
            PTT_REC(SPIN_ACQUIRED, PTT_U(l));
    }
    PTT_CALL_OUT(call, SPIN_LOCK, PTT_I(r));
    return r;
}

PTT_EXPORT int pthread_spin_trylock(pthread_spinlock_t *l)
{
    if (!ptt_on())
        return REAL(pthread_spin_trylock)(l);
    PTT_CALL_IN(call, SPIN_TRYLOCK, PTT_U(l), PTT_SITE);
    int r = REAL(pthread_spin_trylock)(l);
    PTT_CALL_OUT(call, SPIN_TRYLOCK, PTT_I(r));
    return r;
}

PTT_EXPORT int pthread_spin_unlock(pthread_spinlock_t *l)
{
    if (!ptt_on())
        return REAL(pthread_spin_unlock)(l);
    PTT_CALL_IN(call, SPIN_UNLOCK, PTT_U(l), PTT_SITE);
    int r = REAL(pthread_spin_unlock)(l);
    PTT_CALL_OUT(call, SPIN_UNLOCK, PTT_I(r));
    return r;
}

PTT_EXPORT int pthread_spin_destroy(pthread_spinlock_t *l)
{
    if (!ptt_on())
        return REAL(pthread_spin_destroy)(l);
    PTT_CALL_IN(call, SPIN_DESTROY, PTT_U(l), PTT_SITE);
    int r = REAL(pthread_spin_destroy)(l);
    PTT_CALL_OUT(call, SPIN_DESTROY, PTT_I(r));
    return r;
}
