/* Semaphores, unnamed and named. The value is read (sem_getvalue) before and after waits and
 * posts. A wait tries without blocking first, to see whether it has to wait; since glibc's
 * sem_wait acts on a pending cancellation even when it need not block, so does that path. */
#define PTT_ONLY_CLASS PTT_CLASS_sem /* every event here is of this class (record.h) */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <semaphore.h>
#include <stdarg.h>

#include "libptt.h"

static uint64_t value_of(sem_t *s)
{
    int v = 0;
    if (s)
        REAL(sem_getvalue)(s, &v);
    return PTT_I(v);
}

enum kind { PLAIN, TIMED, CLOCK };

static int wait_sem(sem_t *s, enum kind k, clockid_t clock, const struct timespec *abstime)
{
    int tried = k == PLAIN || ptt_timeout_ok(clock, abstime);
    if (tried) {
        int saved = errno;
        REAL(pthread_testcancel)();
        if (REAL(sem_trywait)(s) == 0)
            return 0;
        if (errno != EAGAIN)
            return -1;
        errno = saved; /* a wait that then succeeds leaves errno as it found it */
        PTT_CALL_WAITS();
        PTT_REC(SEM_BLOCK, PTT_U(s));
        PTT_BLOCKS();
    }
    int r = k == PLAIN   ? REAL(sem_wait)(s)
            : k == TIMED ? REAL(sem_timedwait)(s, abstime)
                         : REAL(sem_clockwait)(s, clock, abstime);
    if (tried && r == 0)
        PTT_REC(SEM_ACQUIRED, PTT_U(s));
    return r;
}

PTT_EXPORT int sem_init(sem_t *s, int pshared, unsigned value)
{
    if (!ptt_on())
        return REAL(sem_init)(s, pshared, value);
    PTT_CALL_IN(call, SEM_INIT, PTT_U(s), (uint64_t)(pshared != 0), (uint64_t)value, PTT_SITE);
    int r = REAL(sem_init)(s, pshared, value);
    PTT_CALL_OUT(call, SEM_INIT, PTT_I(r), PTT_ERRNO(r));
    return r;
}

PTT_EXPORT int sem_destroy(sem_t *s)
{
    if (!ptt_on())
        return REAL(sem_destroy)(s);
    PTT_CALL_IN(call, SEM_DESTROY, PTT_U(s), PTT_SITE);
    int r = REAL(sem_destroy)(s);
    PTT_CALL_OUT(call, SEM_DESTROY, PTT_I(r), PTT_ERRNO(r));
    return r;
}

PTT_EXPORT sem_t *sem_open(const char *name, int oflag, ...)
{
    mode_t mode = 0;
    unsigned value = 0;
    if (oflag & O_CREAT) {
        va_list ap;
        va_start(ap, oflag);
        mode = va_arg(ap, mode_t);
        value = va_arg(ap, unsigned);
        va_end(ap);
    }
    if (!ptt_on())
        return REAL(sem_open)(name, oflag, mode, value);
    PTT_REC_STR(SEM_OPEN_IN, name, PTT_I(oflag), (uint64_t)mode, (uint64_t)value, PTT_SITE);
    sem_t *r = REAL(sem_open)(name, oflag, mode, value);
    PTT_REC(SEM_OPEN_OUT, PTT_U(r), PTT_ERRNO(r == SEM_FAILED));
    return r;
}

PTT_EXPORT int sem_close(sem_t *s)
{
    if (!ptt_on())
        return REAL(sem_close)(s);
    PTT_CALL_IN(call, SEM_CLOSE, PTT_U(s), PTT_SITE);
    int r = REAL(sem_close)(s);
    PTT_CALL_OUT(call, SEM_CLOSE, PTT_I(r), PTT_ERRNO(r));
    return r;
}

PTT_EXPORT int sem_unlink(const char *name)
{
    if (!ptt_on())
        return REAL(sem_unlink)(name);
    PTT_REC_STR(SEM_UNLINK_IN, name);
    int r = REAL(sem_unlink)(name);
    PTT_REC(SEM_UNLINK_OUT, PTT_I(r), PTT_ERRNO(r));
    return r;
}

PTT_EXPORT int sem_wait(sem_t *s)
{
    if (!ptt_on())
        return REAL(sem_wait)(s);
    PTT_CALL_IN(call, SEM_WAIT, PTT_U(s), value_of(s), PTT_SITE);
    int r = wait_sem(s, PLAIN, CLOCK_REALTIME, NULL);
    PTT_CALL_OUT(call, SEM_WAIT, PTT_I(r), PTT_ERRNO(r), value_of(s));
    return r;
}

PTT_EXPORT int sem_trywait(sem_t *s)
{
    if (!ptt_on())
        return REAL(sem_trywait)(s);
    PTT_CALL_IN(call, SEM_TRYWAIT, PTT_U(s), value_of(s), PTT_SITE);
    int r = REAL(sem_trywait)(s);
    PTT_CALL_OUT(call, SEM_TRYWAIT, PTT_I(r), PTT_ERRNO(r), value_of(s));
    return r;
}

PTT_EXPORT int sem_timedwait(sem_t *s, const struct timespec *abstime)
{
    if (!ptt_on())
        return REAL(sem_timedwait)(s, abstime);
    PTT_CALL_IN(call, SEM_TIMEDWAIT, PTT_U(s), value_of(s), ptt_ts_arg(abstime), PTT_SITE);
    int r = wait_sem(s, TIMED, CLOCK_REALTIME, abstime);
    PTT_CALL_OUT(call, SEM_TIMEDWAIT, PTT_I(r), PTT_ERRNO(r), value_of(s));
    return r;
}

PTT_EXPORT int sem_clockwait(sem_t *s, clockid_t clock, const struct timespec *abstime)
{
    if (!ptt_on())
        return REAL(sem_clockwait)(s, clock, abstime);
    PTT_CALL_IN(call, SEM_CLOCKWAIT, PTT_U(s), value_of(s), PTT_I(clock), ptt_ts_arg(abstime),
                PTT_SITE);
    int r = wait_sem(s, CLOCK, clock, abstime);
    PTT_CALL_OUT(call, SEM_CLOCKWAIT, PTT_I(r), PTT_ERRNO(r), value_of(s));
    return r;
}

PTT_EXPORT int sem_post(sem_t *s)
{
    if (!ptt_on())
        return REAL(sem_post)(s);
    PTT_CALL_IN(call, SEM_POST, PTT_U(s), value_of(s), PTT_SITE);
    int r = REAL(sem_post)(s);
    PTT_CALL_OUT(call, SEM_POST, PTT_I(r), PTT_ERRNO(r), value_of(s));
    return r;
}

PTT_EXPORT int sem_getvalue(sem_t *s, int *v)
{
    if (!ptt_on())
        return REAL(sem_getvalue)(s, v);
    PTT_CALL_IN(call, SEM_GETVALUE, PTT_U(s));
    int r = REAL(sem_getvalue)(s, v);
    PTT_CALL_OUT(call, SEM_GETVALUE, PTT_I(r), PTT_ERRNO(r), r == 0 ? PTT_I(*v) : 0);
    return r;
}
