/* Expected findings:
 *   misuse (join of a detached thread): object the thread "detached"; thread "main";
 *          line check:join (glibc returns EINVAL: reported as this misuse, not as an error).
 * Does not hang: the detached thread is still alive during the join (it waits on go). */
#include "../progs.h"
#include <semaphore.h>

static sem_t go, gone;

static void *detached(void *arg)
{
    (void)arg;
    put_tid("detached");
    sem_wait(&go);
    sem_post(&gone);
    return NULL;
}

int main(void)
{
    pthread_t t;
    pthread_attr_t a;
    put_tid("main");
    CHECK(sem_init(&go, 0, 0));
    CHECK(sem_init(&gone, 0, 0));
    CHECK(pthread_attr_init(&a));
    CHECK(pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED));
    CHECK(pthread_create(&t, &a, detached, NULL));
    put_pthread("detached", t);
    CALL("join", pthread_join(t, NULL)); /* check:join */
    sem_post(&go);
    sem_wait(&gone);
    return 0;
}
