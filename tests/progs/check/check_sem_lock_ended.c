/* Expected findings:
 *   hang: object s (a semaphore made with the value 1, used as a lock); threads "main" (waits
 *         for it) and "t" (took it and ended without posting it); lines check:take, check:wait.
 * Hangs. */
#include "../progs.h"
#include <semaphore.h>

static sem_t s;

static void *t(void *arg)
{
    (void)arg;
    put_tid("t");
    fflush(stdout);
    sem_wait(&s); /* check:take */
    return NULL;
}

int main(void)
{
    pthread_t x;
    put_tid("main");
    CHECK(sem_init(&s, 0, 1));
    put_addr("s", &s);
    fflush(stdout);
    CHECK(pthread_create(&x, NULL, t, NULL));
    CHECK(pthread_join(x, NULL));
    sem_wait(&s); /* check:wait */
    return 0;
}
