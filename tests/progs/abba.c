/* An ABBA deadlock: t1 holds A and locks B, t2 holds B and locks A, main joins t1. Prints the
 * threads' ids, the mutexes' addresses and t1's pthread_t, flushed once all three are blocked.
 * abba tick: a timer thread also wakes from a 20 ms timed wait for ever, as a program's
 * housekeeping does, so that the program never goes quiet. */
#include <time.h>

#include "progs.h"

static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER, b = PTHREAD_MUTEX_INITIALIZER;
static int a_held, b_held, tid1, tid2;

static void *t1(void *arg)
{
    __atomic_store_n(&tid1, (int)gettid(), __ATOMIC_RELEASE);
    pthread_mutex_lock(&a); /* site:t1_lock_a */
    set_flag(&a_held);
    wait_flag(&b_held);
    pthread_mutex_lock(&b); /* site:t1_lock_b */
    return arg;
}

static void *t2(void *arg)
{
    __atomic_store_n(&tid2, (int)gettid(), __ATOMIC_RELEASE);
    pthread_mutex_lock(&b); /* site:t2_lock_b */
    set_flag(&b_held);
    wait_flag(&a_held);
    pthread_mutex_lock(&a); /* site:t2_lock_a */
    return arg;
}

static void *tick(void *arg)
{
    static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
    pthread_mutex_lock(&m);
    for (;;) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 20000000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&c, &m, &ts);
    }
    return arg;
}

int main(int argc, char **argv)
{
    pthread_t th1, th2, ticker;
    if (argc > 1 && !strcmp(argv[1], "tick"))
        CHECK(pthread_create(&ticker, NULL, tick, NULL));
    put_line("@pid=%d", (int)getpid());
    put_addr("A", &a);
    put_addr("B", &b);
    CHECK(pthread_create(&th1, NULL, t1, NULL));
    CHECK(pthread_create(&th2, NULL, t2, NULL));
    put_pthread("th1", th1);
    wait_flag(&a_held);
    wait_flag(&b_held);
    put_line("@tid_t1=%d", tid1);
    put_line("@tid_t2=%d", tid2);
    wait_blocked(tid1, &b, sizeof b);
    wait_blocked(tid2, &a, sizeof a);
    fflush(stdout);
    pthread_join(th1, NULL); /* never returns */ /* site:join */
    return 1;
}
