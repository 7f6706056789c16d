/* Thread identity and scheduling: names (later tools name threads by them), priorities,
 * affinity, yields. */
#define PTT_ONLY_CLASS PTT_CLASS_sched /* every event here is of this class (record.h) */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <sys/prctl.h>

#include "libptt.h"

PTT_EXPORT int pthread_setname_np(pthread_t th, const char *name)
{
    if (!ptt_on())
        return REAL(pthread_setname_np)(th, name);
    PTT_REC_STR(THREAD_SETNAME_NP_IN, name, PTT_U(th));
    int r = REAL(pthread_setname_np)(th, name);
    PTT_REC(THREAD_SETNAME_NP_OUT, PTT_I(r));
    return r;
}

PTT_EXPORT int pthread_setschedparam(pthread_t th, int policy, const struct sched_param *p)
{
    if (!ptt_on())
        return REAL(pthread_setschedparam)(th, policy, p);
    PTT_CALL_IN(call, THREAD_SETSCHEDPARAM, PTT_U(th), PTT_I(policy), PTT_I(p->sched_priority));
    int r = REAL(pthread_setschedparam)(th, policy, p);
    PTT_CALL_OUT(call, THREAD_SETSCHEDPARAM, PTT_I(r));
    return r;
}

PTT_EXPORT int pthread_setschedprio(pthread_t th, int prio)
{
    if (!ptt_on())
        return REAL(pthread_setschedprio)(th, prio);
    PTT_CALL_IN(call, THREAD_SETSCHEDPRIO, PTT_U(th), PTT_I(prio));
    int r = REAL(pthread_setschedprio)(th, prio);
    PTT_CALL_OUT(call, THREAD_SETSCHEDPRIO, PTT_I(r));
    return r;
}

PTT_EXPORT int pthread_setaffinity_np(pthread_t th, size_t size, const cpu_set_t *set)
{
    if (!ptt_on())
        return REAL(pthread_setaffinity_np)(th, size, set);
    uint64_t m = 0; /* CPUs 0..63 */
    for (int c = 0; c < 64 && (size_t)c < size * 8; c++)
        if (CPU_ISSET_S(c, size, set))
            m |= 1ull << c;
    PTT_CALL_IN(call, THREAD_SETAFFINITY_NP, PTT_U(th), m);
    int r = REAL(pthread_setaffinity_np)(th, size, set);
    PTT_CALL_OUT(call, THREAD_SETAFFINITY_NP, PTT_I(r));
    return r;
}

/* glibc's header redirects pthread_yield to sched_yield; binaries built before it still call
 * pthread_yield@GLIBC_2.2.5, a compat symbol that dlsym(RTLD_DEFAULT) does not find: so is ours
 * (lib/libptt.map). */
PTT_EXPORT int ptt_pthread_yield(void);
__asm__(".symver ptt_pthread_yield, pthread_yield@GLIBC_2.2.5");
PTT_EXPORT int ptt_pthread_yield(void)
{
    if (!ptt_on())
        return REAL(pthread_yield)();
    PTT_CALL_IN0(call, THREAD_YIELD);
    int r = REAL(pthread_yield)();
    PTT_CALL_OUT(call, THREAD_YIELD, PTT_I(r));
    return r;
}

/* prctl(PR_SET_NAME) names the calling thread, as pthread_setname_np does (glibc's reaches the
 * kernel without this symbol: no event twice); Python programs call it through ctypes or the
 * prctl module. prctl takes up to four more words, whatever the option: all four are read and
 * passed on, as glibc's and musl's own prctl wrappers do. ISO C leaves reading a word not passed
 * undefined; the Linux ABIs give whatever its register or stack slot holds, which the kernel
 * ignores for an option that does not use it. */
PTT_EXPORT int prctl(int option, ...)
{
    va_list ap;
    va_start(ap, option);
    unsigned long a2 = va_arg(ap, unsigned long), a3 = va_arg(ap, unsigned long),
                  a4 = va_arg(ap, unsigned long), a5 = va_arg(ap, unsigned long);
    va_end(ap);
    if (option != PR_SET_NAME || !ptt_on())
        return REAL(prctl)(option, a2, a3, a4, a5);
    /* The name is read only once the kernel took it: then it read the same bytes (up to 15, or a
     * NUL) without a fault, and no system call of ours is needed; before, the argument may be no
     * string at all (EFAULT, never a crash of ours). Both events come after the call, which
     * never blocks. */
    int r = REAL(prctl)(option, a2, a3, a4, a5), e = errno;
    char name[16] = "";
    const char *s = (const char *)a2;
    for (int i = 0; r == 0 && i < 15 && s[i]; i++)
        name[i] = s[i];
    PTT_REC_STR(PRCTL_IN, name, PTT_I(option));
    PTT_REC(PRCTL_OUT, PTT_I(r), (uint64_t)(r ? e : 0));
    errno = e;
    return r;
}

PTT_EXPORT int sched_yield(void)
{
    if (!ptt_on())
        return REAL(sched_yield)();
    PTT_CALL_IN0(call, SCHED_YIELD);
    int r = REAL(sched_yield)();
    PTT_CALL_OUT(call, SCHED_YIELD, PTT_I(r));
    return r;
}
