/* Helpers of the end-to-end test programs (tests/e2e drives them).
 *
 * A program prints one "key=value" line per fact the test checks:
 *   "@key=value" holds a value that changes from run to run (an address, a thread id, a time),
 *                which the test compares with the fields of the trace's events;
 *   "key=value"  holds a result (a return value, errno after the call), which must be the same
 *                traced and untraced.
 * Addresses are printed as 0x%lx, the way ptt view prints them (%p would print "(nil)" for 0). */
#ifndef PTT_TEST_PROGS_H
#define PTT_TEST_PROGS_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* also set by CMakeLists.txt, for the headers a program includes first */
#endif
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

/* errno is set to this before each checked call: a traced call must leave errno as the real
 * routine left it. */
#define ERRNO_SENTINEL 4242

static inline __attribute__((format(printf, 1, 2))) void put_line(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    flockfile(stdout);
    vprintf(fmt, ap);
    putchar('\n');
    funlockfile(stdout);
    va_end(ap);
}

static inline void put_addr(const char *key, const volatile void *p)
{
    put_line("@%s=0x%" PRIxPTR, key, (uintptr_t)p);
}

/* A pointer the program chose (a thread's value): the same in every run. */
static inline void put_value(const char *key, const void *p)
{
    put_line("%s=0x%" PRIxPTR, key, (uintptr_t)p);
}

static inline void put_fn(const char *key, void *(*fn)(void *))
{
    put_line("@%s=0x%" PRIxPTR, key, (uintptr_t)fn);
}

static inline void put_pthread(const char *key, pthread_t t)
{
    put_line("@%s=0x%lx", key, (unsigned long)t);
}

/* The calling thread's kernel id, under the key "tid_<name>". */
static inline void put_tid(const char *name)
{
    put_line("@tid_%s=%d", name, (int)gettid());
}

/* An absolute time as ptt view prints an abstime field: seconds.nanoseconds of the total number
 * of nanoseconds (tv_nsec may be out of range on purpose). */
static inline void put_abstime(const char *key, const struct timespec *ts)
{
    uint64_t ns = (uint64_t)ts->tv_sec * 1000000000u + (uint64_t)ts->tv_nsec;
    put_line("@%s=%" PRIu64 ".%09" PRIu64, key, ns / 1000000000u, ns % 1000000000u);
}

static inline void put_result(const char *key, int r, int e)
{
    flockfile(stdout);
    printf("%s=%d\n%s.errno=%d\n", key, r, key, e);
    funlockfile(stdout);
}

/* Call EXPR (a routine returning int), print its result and errno after it under KEY, and give
 * the result. */
#define CALL(key, expr)          \
    ({                           \
        errno = ERRNO_SENTINEL;  \
        int r_ = (expr);         \
        int e_ = errno;          \
        put_result(key, r_, e_); \
        r_;                      \
    })

/* Stop the program when a set-up step (not under test) fails. */
#define CHECK(expr)                                                                      \
    do {                                                                                 \
        int c_ = (expr);                                                                 \
        if (c_) {                                                                        \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #expr, strerror(c_)); \
            exit(99);                                                                    \
        }                                                                                \
    } while (0)

/* Now plus ms milliseconds on clock. */
static inline struct timespec in_ms(clockid_t clock, long ms)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (ms % 1000) * 1000000;
    if (ts.tv_nsec >= 1000000000) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000;
    }
    return ts;
}

static inline void nap(void)
{
    struct timespec d = {0, 200000};
    nanosleep(&d, NULL);
}

/* A flag one thread sets and another waits for, through no traced routine (libptt traces
 * semaphores too). */
static inline void set_flag(int *f)
{
    __atomic_store_n(f, 1, __ATOMIC_RELEASE);
}

static inline void wait_flag(int *f)
{
    while (!__atomic_load_n(f, __ATOMIC_ACQUIRE))
        nap();
}

/* The waits below look inside glibc's objects (as libptt does for a mutex's owner), so that a
 * program knows that another thread is blocked, without a sleep that might be too short. */

/* Until a thread is blocked in the lock of m (glibc marks a locked mutex with waiters 2). Only
 * for a mutex taken without a wait: one taken by a waiter woken is 2 already (wait_blocked). */
static inline void wait_mutex_waiter(pthread_mutex_t *m)
{
    while (__atomic_load_n(&m->__data.__lock, __ATOMIC_ACQUIRE) != 2)
        nap();
}

/* Until n threads wait on c and none holds m: they are all inside pthread_cond_wait, past the
 * release of the mutex (a waiter is counted in __wrefs, in steps of 8, before it releases m). */
static inline void wait_cond_waiters(pthread_cond_t *c, pthread_mutex_t *m, unsigned n)
{
    while (__atomic_load_n(&c->__data.__wrefs, __ATOMIC_ACQUIRE) >> 3 != n ||
           __atomic_load_n(&m->__data.__lock, __ATOMIC_ACQUIRE) != 0)
        nap();
}

/* Until the thread with kernel id tid sleeps in a futex wait on a word of the object at obj (size
 * bytes): it is blocked inside the routine that waits on that object (the kernel shows the system
 * call a thread sleeps in, and its first argument, in /proc/self/task/TID/syscall). */
static inline void wait_blocked(pid_t tid, const void *obj, size_t size)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/self/task/%d/syscall", (int)tid);
    for (;; nap()) {
        FILE *f = fopen(path, "r");
        if (!f) {
            perror(path);
            exit(99);
        }
        long nr = -1;
        unsigned long addr = 0;
        int n = fgets(line, sizeof line, f) ? sscanf(line, "%ld %lx", &nr, &addr) : 0;
        fclose(f);
        if (n == 2 && nr == SYS_futex && addr >= (uintptr_t)obj && addr < (uintptr_t)obj + size)
            return;
    }
}

/* Until the thread with kernel id tid is gone: the kernel has then cleared its id in the
 * pthread_t, so a join does not wait, and its last events are recorded. */
static inline void wait_thread_gone(pid_t tid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d", (int)tid);
    while (access(path, F_OK) == 0)
        nap();
}

#endif
