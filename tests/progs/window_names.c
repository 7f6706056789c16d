/* A mutex and a condvar on the stack (no symbol: named by where they are first used): main
 * locks the mutex, sleeps 0.1 s, then waits 1 ms on the condvar with it and unlocks it. Viewed
 * from --from=0.05, the mutex first shows as the condvar wait's mutex, an argument no name is
 * learned from, and then in its unlock, which names it (tests/e2e/test_filters.py). */
#include "progs.h"

int main(void)
{
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t c = PTHREAD_COND_INITIALIZER;
    CHECK(pthread_mutex_lock(&m));
    usleep(100000);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 1000000;
    if (ts.tv_nsec >= 1000000000) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000;
    }
    int r = pthread_cond_timedwait(&c, &m, &ts);
    CHECK(r == ETIMEDOUT ? 0 : r);
    CHECK(pthread_mutex_unlock(&m));
    put_line("@m=%p", (void *)&m);
    return 0;
}
