/* Thread-specific data (class key, off by default: getspecific and setspecific are hot in real
 * programs) and pthread_once (who runs the init routine, who waits for it). Two classes: each
 * interposer is off as soon as its own is not recorded (ptt_on_class, record.h). */
#define _GNU_SOURCE
#include <pthread.h>

#include "libptt.h"

PTT_EXPORT int pthread_key_create(pthread_key_t *k, void (*destructor)(void *))
{
    if (!ptt_on_class(PTT_CLASS_key))
        return REAL(pthread_key_create)(k, destructor);
    PTT_CALL_IN(call, KEY_CREATE, PTT_U(k), PTT_U(destructor));
    int r = REAL(pthread_key_create)(k, destructor);
    PTT_CALL_OUT(call, KEY_CREATE, PTT_I(r), r == 0 ? (uint64_t)*k : 0);
    return r;
}

PTT_EXPORT int pthread_key_delete(pthread_key_t k)
{
    if (!ptt_on_class(PTT_CLASS_key))
        return REAL(pthread_key_delete)(k);
    PTT_CALL_IN(call, KEY_DELETE, (uint64_t)k);
    int r = REAL(pthread_key_delete)(k);
    PTT_CALL_OUT(call, KEY_DELETE, PTT_I(r));
    return r;
}

/* gcc 12 finds v "may be used uninitialized" in the call below since the recorder's call slot
 * came in (glibc declares the routine with access (none, 2)): v is the parameter, passed on. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
PTT_EXPORT int pthread_setspecific(pthread_key_t k, const void *v)
{
    if (!ptt_on_class(PTT_CLASS_key))
        return REAL(pthread_setspecific)(k, v);
    PTT_CALL_IN(call, THREAD_SETSPECIFIC, (uint64_t)k, PTT_U(v));
    int (*real)(pthread_key_t, const void *) = REAL(pthread_setspecific);
    int r = real(k, v);
    PTT_CALL_OUT(call, THREAD_SETSPECIFIC, PTT_I(r));
    return r;
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

PTT_EXPORT void *pthread_getspecific(pthread_key_t k)
{
    if (!ptt_on_class(PTT_CLASS_key))
        return REAL(pthread_getspecific)(k);
    PTT_CALL_IN(call, THREAD_GETSPECIFIC, (uint64_t)k);
    void *r = REAL(pthread_getspecific)(k);
    PTT_CALL_OUT(call, THREAD_GETSPECIFIC, PTT_U(r));
    return r;
}

/* pthread_once runs the init routine in the calling thread: the trampoline finds the routine in
 * this thread's TLS (saved and restored around nested calls). */
struct once_call {
    pthread_once_t *once;
    void (*init)(void);
    int ran;
};
static __thread struct once_call once_cur __attribute__((tls_model("initial-exec")));

static void once_trampoline(void)
{
    struct once_call c = once_cur;
    PTT_REC(ONCE_RUN, PTT_U(c.once), PTT_U(c.init));
    c.init();
    PTT_REC(ONCE_DONE, PTT_U(c.once));
    once_cur.ran = 1;
}

PTT_EXPORT int pthread_once(pthread_once_t *once, void (*init)(void))
{
    if (!ptt_on_class(PTT_CLASS_once))
        return REAL(pthread_once)(once, init);
    /* glibc's state word: bit 1 done, bit 0 running (the init routine of another thread). */
    int st = __atomic_load_n((int *)once, __ATOMIC_ACQUIRE);
    /* Done already: it returns at once (else it may wait for another thread's init routine). */
    PTT_CALL_IN_IF(call, st & 2, THREAD_ONCE, PTT_U(once), PTT_U(init),
                   (uint64_t)(st & 2   ? 2
                              : st & 1 ? 1
                                       : 0));
    if (st == 1 && PTT_RECORDS(THREAD_ONCE_IN))
        PTT_BLOCKS(); /* another thread runs the routine: this one waits for it */
    struct once_call saved = once_cur;
    once_cur = (struct once_call){once, init, 0};
    int r = REAL(pthread_once)(once, once_trampoline);
    int ran = once_cur.ran;
    once_cur = saved;
    PTT_CALL_OUT(call, THREAD_ONCE, PTT_I(r), (uint64_t)ran);
    return r;
}
