/* The trace clock, read the same way by libptt and ptt trace. */
#ifndef PTT_CLOCK_H
#define PTT_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Ticks of the TSC when tsc is set (invariant TSC only), else CLOCK_MONOTONIC nanoseconds
 * (through the vDSO: no system call). */
static inline uint64_t ptt_ticks(int tsc)
{
#if defined(__x86_64__) || defined(__i386__)
    if (__builtin_expect(tsc, 1))
        return __builtin_ia32_rdtsc(); /* <x86intrin.h>'s __rdtsc, without its 50,000 lines */
#else
    (void)tsc;
#endif
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif
