/* Cancellation requests and settings. Where a thread is cancelled is seen from the trace: the
 * thread's start wrapper records THREAD_END (cancelled) after its cleanup handlers, and the
 * reader names the call it was inside (THREAD_CANCELLED). */
#define PTT_ONLY_CLASS PTT_CLASS_cancel /* every event here is of this class (record.h) */
#define _GNU_SOURCE
#include <pthread.h>

#include "libptt.h"

PTT_EXPORT int pthread_cancel(pthread_t th)
{
    if (!ptt_on())
        return REAL(pthread_cancel)(th);
    PTT_CALL_IN(call, THREAD_CANCEL, PTT_U(th));
    int r = REAL(pthread_cancel)(th);
    PTT_CALL_OUT(call, THREAD_CANCEL, PTT_I(r));
    return r;
}

PTT_EXPORT int pthread_setcancelstate(int state, int *old)
{
    if (!ptt_on())
        return REAL(pthread_setcancelstate)(state, old);
    PTT_CALL_IN(call, THREAD_SETCANCELSTATE, PTT_I(state));
    int o = 0;
    int r = REAL(pthread_setcancelstate)(state, old ? old : &o);
    PTT_CALL_OUT(call, THREAD_SETCANCELSTATE, PTT_I(r), PTT_I(old ? *old : o));
    return r;
}

PTT_EXPORT int pthread_setcanceltype(int type, int *old)
{
    if (!ptt_on()) {
        int r = REAL(pthread_setcanceltype)(type, old);
        if (r == 0)
            ptt_self.async_cancel = type == PTHREAD_CANCEL_ASYNCHRONOUS;
        return r;
    }
    PTT_CALL_IN(call, THREAD_SETCANCELTYPE, PTT_I(type));
    int o = 0;
    int r = REAL(pthread_setcanceltype)(type, old ? old : &o);
    if (r == 0)
        ptt_self.async_cancel = type == PTHREAD_CANCEL_ASYNCHRONOUS;
    PTT_CALL_OUT(call, THREAD_SETCANCELTYPE, PTT_I(r), PTT_I(old ? *old : o));
    return r;
}

PTT_EXPORT void pthread_testcancel(void)
{
    if (!ptt_on()) {
        REAL(pthread_testcancel)();
        return;
    }
    PTT_CALL_IN0(call, THREAD_TESTCANCEL);
    REAL(pthread_testcancel)();
    PTT_CALL_OUT0(call, THREAD_TESTCANCEL);
}
