/* Condition variables. The waiter's wake-up (COND_WOKEN) is recorded as soon as the wait
 * returns, the mutex held again. */
#define PTT_ONLY_CLASS PTT_CLASS_cond /* every event here is of this class (record.h) */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>

#include "libptt.h"

PTT_EXPORT int pthread_cond_init(pthread_cond_t *c, const pthread_condattr_t *a)
{
    if (!ptt_on())
        return REAL(pthread_cond_init)(c, a);
    PTT_CALL_IN(call, COND_INIT, PTT_U(c), PTT_U(a), PTT_SITE);
    int r = REAL(pthread_cond_init)(c, a);
    PTT_CALL_OUT(call, COND_INIT, PTT_I(r));
    return r;
}

PTT_EXPORT int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
    if (!ptt_on())
        return REAL(pthread_cond_wait)(c, m);
    PTT_REC(COND_WAIT_IN, PTT_U(c), PTT_U(m), PTT_SITE);
    PTT_BLOCKS();
    int r = REAL(pthread_cond_wait)(c, m);
    if (r == 0 || r == ETIMEDOUT) /* it waited, and holds the mutex again */
        PTT_REC(COND_WOKEN, PTT_U(c), PTT_U(m), PTT_I(r));
    PTT_REC(COND_WAIT_OUT, PTT_I(r));
    return r;
}

PTT_EXPORT int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
                                      const struct timespec *abstime)
{
    if (!ptt_on())
        return REAL(pthread_cond_timedwait)(c, m, abstime);
    PTT_REC(COND_TIMEDWAIT_IN, PTT_U(c), PTT_U(m), ptt_ts_arg(abstime), PTT_SITE);
    PTT_BLOCKS();
    int r = REAL(pthread_cond_timedwait)(c, m, abstime);
    if (r == 0 || r == ETIMEDOUT) /* it waited, and holds the mutex again */
        PTT_REC(COND_WOKEN, PTT_U(c), PTT_U(m), PTT_I(r));
    PTT_REC(COND_TIMEDWAIT_OUT, PTT_I(r));
    return r;
}

PTT_EXPORT int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock,
                                      const struct timespec *abstime)
{
    if (!ptt_on())
        return REAL(pthread_cond_clockwait)(c, m, clock, abstime);
    PTT_REC(COND_CLOCKWAIT_IN, PTT_U(c), PTT_U(m), PTT_I(clock), ptt_ts_arg(abstime), PTT_SITE);
    PTT_BLOCKS();
    int r = REAL(pthread_cond_clockwait)(c, m, clock, abstime);
    if (r == 0 || r == ETIMEDOUT) /* it waited, and holds the mutex again */
        PTT_REC(COND_WOKEN, PTT_U(c), PTT_U(m), PTT_I(r));
    PTT_REC(COND_CLOCKWAIT_OUT, PTT_I(r));
    return r;
}

PTT_EXPORT int pthread_cond_signal(pthread_cond_t *c)
{
    if (!ptt_on())
        return REAL(pthread_cond_signal)(c);
    PTT_CALL_IN(call, COND_SIGNAL, PTT_U(c), PTT_SITE);
    int r = REAL(pthread_cond_signal)(c);
    PTT_CALL_OUT(call, COND_SIGNAL, PTT_I(r));
    return r;
}

PTT_EXPORT int pthread_cond_broadcast(pthread_cond_t *c)
{
    if (!ptt_on())
        return REAL(pthread_cond_broadcast)(c);
    PTT_CALL_IN(call, COND_BROADCAST, PTT_U(c), PTT_SITE);
    int r = REAL(pthread_cond_broadcast)(c);
    PTT_CALL_OUT(call, COND_BROADCAST, PTT_I(r));
    return r;
}

PTT_EXPORT int pthread_cond_destroy(pthread_cond_t *c)
{
    if (!ptt_on())
        return REAL(pthread_cond_destroy)(c);
    PTT_REC(COND_DESTROY_IN, PTT_U(c), PTT_SITE);
    int r = REAL(pthread_cond_destroy)(c);
    PTT_REC(COND_DESTROY_OUT, PTT_I(r));
    return r;
}
