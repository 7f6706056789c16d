/* Barriers: the release of each waiter, and which one was the serial thread. */
#define PTT_ONLY_CLASS PTT_CLASS_barrier /* every event here is of this class (record.h) */
#define _GNU_SOURCE
#include <pthread.h>

#include "libptt.h"

PTT_EXPORT int pthread_barrier_init(pthread_barrier_t *b, const pthread_barrierattr_t *a,
                                    unsigned count)
{
    if (!ptt_on())
        return REAL(pthread_barrier_init)(b, a, count);
    PTT_CALL_IN(call, BARRIER_INIT, PTT_U(b), PTT_U(a), (uint64_t)count, PTT_SITE);
    int r = REAL(pthread_barrier_init)(b, a, count);
    PTT_CALL_OUT(call, BARRIER_INIT, PTT_I(r));
    return r;
}

PTT_EXPORT int pthread_barrier_wait(pthread_barrier_t *b)
{
    if (!ptt_on())
        return REAL(pthread_barrier_wait)(b);
    PTT_REC(BARRIER_WAIT_IN, PTT_U(b), PTT_SITE);
    PTT_BLOCKS();
    int r = REAL(pthread_barrier_wait)(b);
    if (r == 0 || r == PTHREAD_BARRIER_SERIAL_THREAD)
        PTT_REC(BARRIER_RELEASED, PTT_U(b), (uint64_t)(r == PTHREAD_BARRIER_SERIAL_THREAD));
    PTT_REC(BARRIER_WAIT_OUT, PTT_I(r));
    return r;
}

PTT_EXPORT int pthread_barrier_destroy(pthread_barrier_t *b)
{
    if (!ptt_on())
        return REAL(pthread_barrier_destroy)(b);
    PTT_REC(BARRIER_DESTROY_IN, PTT_U(b), PTT_SITE);
    int r = REAL(pthread_barrier_destroy)(b);
    PTT_REC(BARRIER_DESTROY_OUT, PTT_I(r));
    return r;
}
