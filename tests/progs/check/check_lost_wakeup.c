/* Expected findings:
 *   hang: object c (a condvar signalled before its only wait began: a lost wake-up), with m;
 *         threads "main" (signals) and "waiter"; lines check:signal, check:wait.
 * Hangs: the waiter starts only after the signal, and waits without testing a predicate. */
#include "../progs.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;

static void *waiter(void *arg)
{
    (void)arg;
    put_tid("waiter");
    fflush(stdout);
    pthread_mutex_lock(&m);
    pthread_cond_wait(&c, &m); /* check:wait */
    pthread_mutex_unlock(&m);
    return NULL;
}

int main(void)
{
    pthread_t t;
    put_tid("main");
    put_addr("m", &m);
    put_addr("c", &c);
    pthread_mutex_lock(&m);
    pthread_cond_signal(&c); /* check:signal */
    pthread_mutex_unlock(&m);
    CHECK(pthread_create(&t, NULL, waiter, NULL));
    pthread_join(t, NULL);
    return 0;
}
