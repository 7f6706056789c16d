/* Expected findings:
 *   misuse (destroying a barrier in use): object b (a barrier of 2); thread "main" destroys it
 *          while "worker" waits on it; line check:destroy.
 *   hang: object b, which never fills; thread "worker"; line check:wait.
 * Hangs: glibc's pthread_barrier_destroy waits for the round to complete, which never comes. */
#include "../progs.h"

static pthread_barrier_t b;
static pid_t worker_tid;

static void *worker(void *arg)
{
    (void)arg;
    put_tid("worker");
    __atomic_store_n(&worker_tid, gettid(), __ATOMIC_RELEASE);
    pthread_barrier_wait(&b); /* check:wait */
    return NULL;
}

int main(void)
{
    pthread_t t;
    put_tid("main");
    CHECK(pthread_barrier_init(&b, NULL, 2));
    put_addr("b", &b);
    CHECK(pthread_create(&t, NULL, worker, NULL));
    while (!__atomic_load_n(&worker_tid, __ATOMIC_ACQUIRE))
        nap();
    wait_blocked(worker_tid, &b, sizeof b);
    fflush(stdout);
    CALL("destroy", pthread_barrier_destroy(&b)); /* check:destroy */
    fflush(stdout);
    pthread_join(t, NULL);
    return 0;
}
