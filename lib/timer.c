/* POSIX timers. A SIGEV_THREAD timer runs its notification function in threads glibc starts
 * itself (not through pthread_create): the function is wrapped to show which thread runs it, also
 * by a timer_create of a stopped session (for its notifications after ptt ctl start); the other
 * calls are off as soon as class timer is not recorded (ptt_on_class, record.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <time.h>

#include "libptt.h"

/* What the wrapper needs, for the life of the process: a notification may still be on its way
 * after timer_delete, so a slot is never reused. Past the last slot, timers are not wrapped. */
struct timer_slot {
    void (*fn)(union sigval);
    union sigval value;
    _Atomic uint64_t timer;
};
#define PTT_TIMER_SLOTS 256
static struct timer_slot slots[PTT_TIMER_SLOTS];
static _Atomic unsigned nslots;

static void trampoline(union sigval v)
{
    struct timer_slot *s = v.sival_ptr;
    uint64_t timer = atomic_load(&s->timer);
    PTT_REC(TIMER_THREAD_START, timer, PTT_U(s->fn), PTT_U(s->value.sival_ptr));
    s->fn(s->value);
    PTT_REC(TIMER_THREAD_END, timer);
}

static uint64_t ts_ns(const struct timespec *t)
{
    return (uint64_t)t->tv_sec * 1000000000u + (uint64_t)t->tv_nsec;
}

PTT_EXPORT int timer_create(clockid_t clock, struct sigevent *sev, timer_t *id)
{
    if (!ptt_on())
        return REAL(timer_create)(clock, sev, id);
    int notify = sev ? sev->sigev_notify : SIGEV_SIGNAL;
    int sig = sev ? (notify == SIGEV_SIGNAL || notify == SIGEV_THREAD_ID ? sev->sigev_signo : 0)
                  : SIGALRM;
    void (*fn)(union sigval) = notify == SIGEV_THREAD ? sev->sigev_notify_function : 0;
    PTT_CALL_IN(call, TIMER_CREATE, PTT_I(clock), PTT_I(notify), PTT_I(sig), PTT_U(fn));
    struct sigevent mine;
    struct timer_slot *s = 0;
    if (fn) {
        unsigned n = atomic_fetch_add(&nslots, 1);
        if (n < PTT_TIMER_SLOTS) {
            s = &slots[n];
            s->fn = fn;
            s->value = sev->sigev_value;
            mine = *sev;
            mine.sigev_notify_function = trampoline;
            mine.sigev_value.sival_ptr = s;
            sev = &mine;
        }
    }
    int r = REAL(timer_create)(clock, sev, id);
    if (r == 0 && s)
        atomic_store(&s->timer, PTT_U(*id));
    PTT_CALL_OUT(call, TIMER_CREATE, PTT_I(r), PTT_ERRNO(r), r == 0 ? PTT_U(*id) : 0);
    return r;
}

PTT_EXPORT int timer_settime(timer_t id, int flags, const struct itimerspec *v,
                             struct itimerspec *old)
{
    if (!ptt_on_class(PTT_CLASS_timer))
        return REAL(timer_settime)(id, flags, v, old);
    PTT_CALL_IN(call, TIMER_SETTIME, PTT_U(id), PTT_I(flags), v ? ts_ns(&v->it_value) : 0,
                v ? ts_ns(&v->it_interval) : 0);
    int r = REAL(timer_settime)(id, flags, v, old);
    PTT_CALL_OUT(call, TIMER_SETTIME, PTT_I(r), PTT_ERRNO(r));
    return r;
}

PTT_EXPORT int timer_delete(timer_t id)
{
    if (!ptt_on_class(PTT_CLASS_timer))
        return REAL(timer_delete)(id);
    PTT_CALL_IN(call, TIMER_DELETE, PTT_U(id));
    int r = REAL(timer_delete)(id);
    PTT_CALL_OUT(call, TIMER_DELETE, PTT_I(r), PTT_ERRNO(r));
    return r;
}
