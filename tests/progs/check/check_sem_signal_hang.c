/* Expected findings:
 *   hang: object s (a semaphore made with the value 1, but posted by another thread than the one
 *         that took it: a signal, not a lock, so nobody is said to hold it); thread "main";
 *         line check:wait.
 * Hangs. */
#include "../progs.h"
#include <semaphore.h>

static sem_t s;

static void *poster(void *arg)
{
    (void)arg;
    sem_post(&s);
    return NULL;
}

int main(void)
{
    pthread_t x;
    put_tid("main");
    CHECK(sem_init(&s, 0, 1));
    put_addr("s", &s);
    fflush(stdout);
    sem_wait(&s);
    CHECK(pthread_create(&x, NULL, poster, NULL));
    CHECK(pthread_join(x, NULL));
    sem_wait(&s);
    sem_wait(&s); /* check:wait */
    return 0;
}
