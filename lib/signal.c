/* Signals: sending, masks, synchronous waits, and the delivery of a signal to a handler, seen by
 * wrapping the handlers the program installs (no signal of our own: the program's handler runs
 * from a trampoline that records its start and end; sigaction reports the program's handler).
 * The calls are off as soon as class signal is not recorded (ptt_on_class, record.h); sigaction
 * is not: a handler installed while stopped is wrapped too, for its deliveries after a start. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "libptt.h"

/* Signals 1..64 as a mask, bit n-1 for signal n. */
static uint64_t mask_of(const sigset_t *set)
{
    uint64_t m = 0;
    if (set)
        for (int s = 1; s <= 64 && s < _NSIG; s++)
            if (sigismember(set, s) == 1)
                m |= 1ull << (s - 1);
    return m;
}

PTT_EXPORT int pthread_kill(pthread_t th, int sig)
{
    if (!ptt_on_class(PTT_CLASS_signal))
        return REAL(pthread_kill)(th, sig);
    PTT_CALL_IN(call, THREAD_KILL, PTT_U(th), PTT_I(sig));
    int r = REAL(pthread_kill)(th, sig);
    PTT_CALL_OUT(call, THREAD_KILL, PTT_I(r));
    return r;
}

PTT_EXPORT int pthread_sigqueue(pthread_t th, int sig, const union sigval v)
{
    if (!ptt_on_class(PTT_CLASS_signal))
        return REAL(pthread_sigqueue)(th, sig, v);
    PTT_CALL_IN(call, THREAD_SIGQUEUE, PTT_U(th), PTT_I(sig), PTT_U(v.sival_ptr));
    int r = REAL(pthread_sigqueue)(th, sig, v);
    PTT_CALL_OUT(call, THREAD_SIGQUEUE, PTT_I(r));
    return r;
}

PTT_EXPORT int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
    if (!ptt_on_class(PTT_CLASS_signal))
        return REAL(pthread_sigmask)(how, set, old);
    PTT_CALL_IN(call, THREAD_SIGMASK, PTT_I(how), mask_of(set));
    sigset_t o;
    sigemptyset(&o);
    int r = REAL(pthread_sigmask)(how, set, old ? old : &o);
    PTT_CALL_OUT(call, THREAD_SIGMASK, PTT_I(r), r == 0 ? mask_of(old ? old : &o) : 0);
    return r;
}

PTT_EXPORT int sigwait(const sigset_t *set, int *sig)
{
    if (!ptt_on_class(PTT_CLASS_signal))
        return REAL(sigwait)(set, sig);
    PTT_REC(SIGNAL_WAIT_IN, mask_of(set));
    if (PTT_RECORDS(SIGNAL_WAIT_IN)) /* its IN in the sub-buffer handed over */
        PTT_BLOCKS();
    int r = REAL(sigwait)(set, sig);
    PTT_REC(SIGNAL_WAIT_OUT, PTT_I(r), r == 0 ? PTT_I(*sig) : 0);
    return r;
}

PTT_EXPORT int sigwaitinfo(const sigset_t *set, siginfo_t *info)
{
    if (!ptt_on_class(PTT_CLASS_signal))
        return REAL(sigwaitinfo)(set, info);
    PTT_REC(SIGNAL_WAITINFO_IN, mask_of(set));
    if (PTT_RECORDS(SIGNAL_WAITINFO_IN)) /* its IN in the sub-buffer handed over */
        PTT_BLOCKS();
    siginfo_t i;
    memset(&i, 0, sizeof i);
    int r = REAL(sigwaitinfo)(set, info ? info : &i);
    PTT_REC(SIGNAL_WAITINFO_OUT, PTT_I(r), PTT_ERRNO(r < 0),
            r > 0 ? PTT_I((info ? info : &i)->si_pid) : 0);
    return r;
}

PTT_EXPORT int sigtimedwait(const sigset_t *set, siginfo_t *info, const struct timespec *timeout)
{
    if (!ptt_on_class(PTT_CLASS_signal))
        return REAL(sigtimedwait)(set, info, timeout);
    PTT_REC(SIGNAL_TIMEDWAIT_IN, mask_of(set), ptt_ts_arg(timeout));
    if (PTT_RECORDS(SIGNAL_TIMEDWAIT_IN)) /* its IN in the sub-buffer handed over */
        PTT_BLOCKS();
    siginfo_t i;
    memset(&i, 0, sizeof i);
    int r = REAL(sigtimedwait)(set, info ? info : &i, timeout);
    PTT_REC(SIGNAL_TIMEDWAIT_OUT, PTT_I(r), PTT_ERRNO(r < 0),
            r > 0 ? PTT_I((info ? info : &i)->si_pid) : 0);
    return r;
}

/* The program's handlers, by signal. */
static struct {
    _Atomic(void *) handler;
    _Atomic int flags; /* the program's sa_flags (SA_SIGINFO tells how to call it) */
} app[_NSIG];

static void trampoline(int sig, siginfo_t *si, void *uc)
{
    int saved = errno;
    uint32_t unwinding = ptt_self.guard & PTT_GUARD_UNWIND; /* the handler is the program's */
    ptt_self.guard &= ~PTT_GUARD_UNWIND;
    PTT_REC(SIGNAL_DELIVERED, PTT_I(sig), si ? PTT_I(si->si_code) : 0, si ? PTT_I(si->si_pid) : 0);
    errno = saved;
    void *h = atomic_load(&app[sig].handler);
    if (atomic_load(&app[sig].flags) & SA_SIGINFO)
        ((void (*)(int, siginfo_t *, void *))h)(sig, si, uc);
    else if (h != (void *)SIG_DFL && h != (void *)SIG_IGN)
        ((void (*)(int))h)(sig);
    saved = errno;
    PTT_REC(SIGNAL_HANDLED, PTT_I(sig));
    errno = saved;
    ptt_self.guard |= unwinding;
}

static int wrappable(int sig, const struct sigaction *act)
{
    return act && sig > 0 && sig < _NSIG && act->sa_handler != SIG_DFL &&
           act->sa_handler != SIG_IGN;
}

PTT_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    if (!ptt_active || sig <= 0 || sig >= _NSIG)
        return REAL(sigaction)(sig, act, old);
    void *prev_h = atomic_load(&app[sig].handler);
    int prev_f = atomic_load(&app[sig].flags);
    struct sigaction mine, o;
    const struct sigaction *use = act;
    if (wrappable(sig, act)) {
        mine = *act;
        mine.sa_sigaction = trampoline;
        mine.sa_flags |= SA_SIGINFO;
        atomic_store(&app[sig].flags, act->sa_flags);
        atomic_store(&app[sig].handler, (act->sa_flags & SA_SIGINFO) ? (void *)act->sa_sigaction
                                                                     : (void *)act->sa_handler);
        use = &mine;
    }
    int r = REAL(sigaction)(sig, use, &o);
    if (r != 0 && use == &mine) { /* refused: forget it */
        atomic_store(&app[sig].handler, prev_h);
        atomic_store(&app[sig].flags, prev_f);
    }
    if (r == 0 && old) {
        *old = o;
        if (o.sa_sigaction == trampoline) { /* report the program's own handler */
            /* The kernel's flags (SA_RESTORER...), but SA_SIGINFO as the program set it. */
            old->sa_flags = (o.sa_flags & ~SA_SIGINFO) | (prev_f & SA_SIGINFO);
            if (prev_f & SA_SIGINFO)
                old->sa_sigaction = (void (*)(int, siginfo_t *, void *))prev_h;
            else
                old->sa_handler = (void (*)(int))prev_h;
        }
    }
    return r;
}

/* ptt trace -p detaches: the program's own handlers back in the kernel where the trampoline is,
 * so that the program finds them there as it installed them. */
void ptt_signals_restore(void)
{
    for (int sig = 1; sig < _NSIG; sig++) {
        struct sigaction cur;
        if (REAL(sigaction)(sig, NULL, &cur) || cur.sa_sigaction != trampoline)
            continue;
        int f = atomic_load(&app[sig].flags);
        void *h = atomic_load(&app[sig].handler);
        cur.sa_flags = (cur.sa_flags & ~SA_SIGINFO) | (f & SA_SIGINFO);
        if (f & SA_SIGINFO)
            cur.sa_sigaction = (void (*)(int, siginfo_t *, void *))h;
        else
            cur.sa_handler = (void (*)(int))h;
        REAL(sigaction)(sig, &cur, NULL);
    }
}

/* glibc's signal() calls its internal sigaction: catch it here, with signal()'s BSD semantics. */
PTT_EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
    if (handler == SIG_ERR) {
        errno = EINVAL;
        return SIG_ERR;
    }
    struct sigaction act, old;
    memset(&act, 0, sizeof act);
    act.sa_handler = handler;
    sigemptyset(&act.sa_mask);
    sigaddset(&act.sa_mask, sig);
    act.sa_flags = SA_RESTART;
    if (sigaction(sig, &act, &old) < 0)
        return SIG_ERR;
    return old.sa_handler;
}
