/* once_work: pthread_once calls that run their routine, which is the thread's own work, and one
 * that waits for another thread's. main runs three routines: once_join's joins thread sleeper
 * (asleep 100 ms), once_busy's computes for 100 ms, once_slow's sleeps 150 ms while thread
 * waiter calls pthread_once(&once_slow) and waits for it. The sleeper is named after its
 * function, wider than ptt stat's thread column. */
#include <stdatomic.h>
#include <time.h>

#include "progs.h"

static pthread_once_t once_join = PTHREAD_ONCE_INIT, once_busy = PTHREAD_ONCE_INIT,
                      once_slow = PTHREAD_ONCE_INIT;
static atomic_int slow_began;

static void *sleeper_of_a_hundred_milliseconds(void *arg) /* a name wider than stat's column */
{
    wait_blocked(getpid(), (void *)pthread_self(), 1024); /* main in its join (on our tid) */
    usleep(100000);
    return arg;
}

static void init_join(void)
{
    pthread_t t;
    CHECK(pthread_create(&t, NULL, sleeper_of_a_hundred_milliseconds, NULL));
    CHECK(pthread_join(t, NULL));
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void init_busy(void)
{
    static volatile unsigned long sink;
    uint64_t t0 = now_ns();
    while (now_ns() - t0 < 100000000u)
        for (int i = 0; i < 10000; i++)
            sink += (unsigned long)i;
}

static void init_slow(void)
{
    atomic_store(&slow_began, 1);
    usleep(150000);
}

static void *waiter(void *arg)
{
    while (!atomic_load(&slow_began))
        usleep(1000);
    CHECK(pthread_once(&once_slow, init_slow)); /* main runs it: this one waits */
    return arg;
}

int main(void)
{
    pthread_t w;
    CHECK(pthread_create(&w, NULL, waiter, NULL));
    CHECK(pthread_setname_np(w, "waiter"));
    CHECK(pthread_once(&once_join, init_join));
    CHECK(pthread_once(&once_busy, init_busy));
    CHECK(pthread_once(&once_slow, init_slow));
    CHECK(pthread_join(w, NULL));
    put_line("done=1");
    return 0;
}
