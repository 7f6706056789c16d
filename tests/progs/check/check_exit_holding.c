/* Expected findings:
 *   misuse (thread ending holding a lock): object m; thread "worker"; line check:worker_lock.
 *   misuse (process ending holding a lock): object p; thread "main"; line check:main_lock.
 * Does not hang. */
#include "../progs.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER, p = PTHREAD_MUTEX_INITIALIZER;

static void *worker(void *arg)
{
    (void)arg;
    put_tid("worker");
    pthread_mutex_lock(&m); /* check:worker_lock */
    return NULL;
}

int main(void)
{
    pthread_t t;
    put_tid("main");
    put_addr("m", &m);
    put_addr("p", &p);
    CHECK(pthread_create(&t, NULL, worker, NULL));
    CHECK(pthread_join(t, NULL));
    pthread_mutex_lock(&p); /* check:main_lock */
    return 0;
}
