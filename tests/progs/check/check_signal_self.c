/* Expected findings:
 *   hang: object c (a condvar its only waiter broadcast before it waited: no lost wake-up of
 *         another thread's signal), with m; thread "worker"; line check:wait.
 * Hangs: the worker broadcasts, then waits without testing a predicate; main joins it. */
#include "../progs.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;

static void *worker(void *arg)
{
    (void)arg;
    put_tid("worker");
    fflush(stdout);
    pthread_mutex_lock(&m);
    pthread_cond_broadcast(&c); /* check:broadcast */
    pthread_cond_wait(&c, &m);  /* check:wait */
    pthread_mutex_unlock(&m);
    return NULL;
}

int main(void)
{
    pthread_t t;
    put_tid("main");
    put_addr("m", &m);
    put_addr("c", &c);
    CHECK(pthread_create(&t, NULL, worker, NULL));
    pthread_join(t, NULL);
    return 0;
}
