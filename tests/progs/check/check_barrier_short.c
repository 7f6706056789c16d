/* Expected findings:
 *   hang: object b (a barrier of 3 that only 2 threads reach); threads "main" and "worker";
 *         lines check:main_wait, check:worker_wait.
 * Hangs. */
#include "../progs.h"

static pthread_barrier_t b;

static void *worker(void *arg)
{
    (void)arg;
    put_tid("worker");
    fflush(stdout);
    pthread_barrier_wait(&b); /* check:worker_wait */
    return NULL;
}

int main(void)
{
    pthread_t t;
    put_tid("main");
    CHECK(pthread_barrier_init(&b, NULL, 3));
    put_addr("b", &b);
    fflush(stdout);
    CHECK(pthread_create(&t, NULL, worker, NULL));
    pthread_barrier_wait(&b); /* check:main_wait */
    pthread_join(t, NULL);
    return 0;
}
